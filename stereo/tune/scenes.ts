import { loadScene } from '../../data/scene';
import { generateSyntheticScene, type SyntheticOptions } from '../../data/synthetic';
import type { Scene } from '../../data/sceneTypes';

/**
 * Scenes for tuning are named by a string so that worker threads can load
 * them on their own: a Middlebury scene folder, or `synthetic` with optional
 * generator settings, e.g. `synthetic:seed=3,width=96,height=64,ndisp=12`.
 */
export function parseSyntheticSpec(spec: string): SyntheticOptions | undefined {
  if (spec !== 'synthetic' && !spec.startsWith('synthetic:')) return undefined;
  const opts: SyntheticOptions = {};
  const body = spec.slice('synthetic'.length + 1);
  if (body === '') return opts;
  for (const part of body.split(',')) {
    const [k, v] = part.split('=');
    if (!['seed', 'width', 'height', 'ndisp'].includes(k) || v === undefined || !/^-?\d+$/.test(v)) {
      throw new Error(`scene ${spec}: expected synthetic:seed=N,width=N,height=N,ndisp=N (got '${part}')`);
    }
    (opts as Record<string, number>)[k] = Number(v);
  }
  return opts;
}

/** The name a scene spec will have in tables (folder name, or synthetic-<seed>). */
export function sceneLabel(spec: string, scene: Scene): string {
  const syn = parseSyntheticSpec(spec);
  if (syn) return spec === 'synthetic' ? 'synthetic' : `synthetic-${spec.slice('synthetic:'.length).replace(/=/g, '').replace(/,/g, '-')}`;
  return scene.name;
}

export async function loadSceneSpec(spec: string): Promise<Scene> {
  const syn = parseSyntheticSpec(spec);
  if (syn) return generateSyntheticScene(syn);
  return loadScene(spec);
}
