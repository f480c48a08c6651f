import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
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

/**
 * sha256 of a scene: a synthetic spec is its own content (the generator is
 * deterministic); a folder's content is every regular file directly inside it
 * (names not starting with '.'), in name order, each as name, size and bytes.
 */
export function sceneContentHash(spec: string): string {
  const h = createHash('sha256');
  if (parseSyntheticSpec(spec)) {
    h.update(`synthetic\0${spec}`);
    return h.digest('hex');
  }
  const names = fs.readdirSync(spec, { withFileTypes: true })
    .filter((e) => !e.name.startsWith('.') && fs.statSync(path.join(spec, e.name)).isFile())
    .map((e) => e.name)
    .sort();
  for (const name of names) {
    const bytes = fs.readFileSync(path.join(spec, name));
    h.update(`${name}\0${bytes.length}\0`);
    h.update(bytes);
  }
  return h.digest('hex');
}
