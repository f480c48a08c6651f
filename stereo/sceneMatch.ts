import type { Scene } from '../data/sceneTypes';
import { loadScene } from '../data/scene';
import { evaluateDisparity, type Evaluation } from '../data/metrics';
import { match, type MatchOptions, type MatchResult } from './match';
import { sceneParamsFor } from './sceneParams';
import type { MatchParams } from './params';

export interface SceneMatch {
  scene: Scene;
  result: MatchResult;
  /** Scores over known / nonocc / all / disc at the thresholds asked for; undefined without ground truth. */
  evaluation?: Evaluation;
}

/**
 * Matches a scene (loaded, or the path of its folder) with its per-scene
 * parameters (sceneParams.ts) under the caller's overrides, and scores it
 * when it has ground truth.
 */
export async function matchScene(
  sceneOrFolder: Scene | string,
  overrides: Partial<MatchParams> = {},
  options: Omit<MatchOptions, keyof MatchParams | 'ndisp'> & { thresholds?: number[] } = {},
): Promise<SceneMatch> {
  const scene = typeof sceneOrFolder === 'string' ? await loadScene(sceneOrFolder) : sceneOrFolder;
  if (!scene || typeof scene !== 'object' || !scene.left || !scene.right) {
    throw new TypeError(`matchScene: expected a scene folder path or a scene from loadScene(), got ${describeValue(sceneOrFolder)}`);
  }
  const { thresholds, ...rest } = options;
  const result = await match(scene.left, scene.right, { ...sceneParamsFor(scene.name), ...overrides, ...rest, ndisp: scene.ndisp });
  const evaluation = scene.groundTruth
    ? evaluateDisparity(result.disparity, scene.groundTruth, result.width, result.height, { thresholds, masks: scene.masks, nonoccDerived: scene.nonoccDerived })
    : undefined;
  return { scene, result, evaluation };
}

/** "a number (3)", "undefined", "an object with keys a, b": what a caller from JavaScript passed instead. */
export function describeValue(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v === 'object') return `an object with keys ${Object.keys(v).slice(0, 6).join(', ') || '(none)'}`;
  return `a ${typeof v} (${String(v).slice(0, 40)})`;
}
