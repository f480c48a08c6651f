import type { Scene } from '../data/sceneTypes';
import { loadScene } from '../data/scene';
import { evaluateDisparity, type Evaluation } from '../data/metrics';
import { disparityInPixels, match, type MatchOptions, type MatchResult } from './match';
import { sceneParamsFor } from './sceneParams';
import type { MatchParams } from './params';

export interface SceneMatch {
  scene: Scene;
  result: MatchResult;
  /** Scores over known / nonocc / all / disc at the thresholds asked for; undefined without ground truth. */
  evaluation?: Evaluation;
  /** Whether the scene got its own parameters (sceneParams.ts) rather than the defaults. */
  sceneParams: boolean;
}

/**
 * Matches a scene (loaded, or the path of its folder) with its per-scene
 * parameters (sceneParams.ts) under the caller's overrides, and scores it
 * when it has ground truth (unless `evaluate` is false: then the caller
 * scores it with evaluateScene when it suits it).
 */
export async function matchScene(
  sceneOrFolder: Scene | string,
  overrides: Partial<MatchParams> = {},
  options: Omit<MatchOptions, keyof MatchParams | 'ndisp'> & { thresholds?: number[]; sceneParams?: boolean; evaluate?: boolean } = {},
): Promise<SceneMatch> {
  const scene = typeof sceneOrFolder === 'string' ? await loadScene(sceneOrFolder) : sceneOrFolder;
  if (!scene || typeof scene !== 'object' || !scene.left || !scene.right) {
    throw new TypeError(`matchScene: expected a scene folder path or a scene from loadScene(), got ${describeValue(sceneOrFolder)}`);
  }
  const { thresholds, sceneParams: useSceneParams, evaluate, ...rest } = options;
  const own = useSceneParams === false ? {} : sceneParamsFor(scene.name);
  const result = await match(scene.left, scene.right, { ...own, ...overrides, ...rest, ndisp: scene.ndisp, minDisp: scene.minDisp ?? 0 });
  return { scene, result, evaluation: evaluate === false ? undefined : evaluateScene(scene, result, thresholds), sceneParams: Object.keys(own).length > 0 };
}

/** The scores of a scene's match over known / nonocc / all / disc at `thresholds` (the metrics' default when absent); undefined without ground truth. */
export function evaluateScene(scene: Scene, result: MatchResult, thresholds?: number[]): Evaluation | undefined {
  return scene.groundTruth
    ? evaluateDisparity(disparityInPixels(result), scene.groundTruth, result.width, result.height, { thresholds, masks: scene.masks, nonoccDerived: scene.nonoccDerived })
    : undefined;
}

/** "a number (3)", "undefined", "an object with keys a, b": what a caller from JavaScript passed instead. */
export function describeValue(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v === 'object') return `an object with keys ${Object.keys(v).slice(0, 6).join(', ') || '(none)'}`;
  return `a ${typeof v} (${String(v).slice(0, 40)})`;
}
