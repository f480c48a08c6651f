import type { Scene } from '../data/sceneTypes';
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
 * Matches a loaded scene with its per-scene parameters (sceneParams.ts) under
 * the caller's overrides, and scores it when it has ground truth.
 */
export async function matchScene(
  scene: Scene,
  overrides: Partial<MatchParams>,
  options: Omit<MatchOptions, keyof MatchParams | 'ndisp'> & { thresholds?: number[]; sceneParams?: boolean } = {},
): Promise<SceneMatch> {
  const { thresholds, sceneParams: useSceneParams, ...rest } = options;
  const own = useSceneParams === false ? {} : sceneParamsFor(scene.name);
  const result = await match(scene.left, scene.right, { ...own, ...overrides, ...rest, ndisp: scene.ndisp, minDisp: scene.minDisp ?? 0 });
  const evaluation = scene.groundTruth
    ? evaluateDisparity(disparityInPixels(result), scene.groundTruth, result.width, result.height, { thresholds, masks: scene.masks, nonoccDerived: scene.nonoccDerived })
    : undefined;
  return { scene, result, evaluation, sceneParams: Object.keys(own).length > 0 };
}
