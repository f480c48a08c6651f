/**
 * The library entry point (package "main"): what a TypeScript script needs
 * to compute, score and tune disparity maps.
 *
 *   import { loadScene, match, evaluate } from 'stereocut';
 *   async function main(): Promise<void> {
 *     const scene = await loadScene('data/middlebury/teddy');
 *     const r = await match(scene.left, scene.right, { ndisp: scene.ndisp });
 *     const score = evaluate(disparityInPixels(r), scene, { thresholds: [1, 2] });
 *   }
 *   main();
 *
 * match() also takes image paths (match('im2.png', 'im6.png', { ndisp: 64 })),
 * and matchScene() a scene folder (matchScene('data/middlebury/teddy')).
 */
import { evaluateDisparity, type Evaluation, type EvaluateOptions } from '../data/metrics';
import type { Scene } from '../data/sceneTypes';

export { match, resolveParams, disparityInPixels, type MatchOptions, type MatchResult, type MatchEvent, type PhaseTimes } from './match';
export { INVALID_DISPARITY } from './leftRightCheck';
export { matchScene, type SceneMatch } from './sceneMatch';
export { DEFAULT_PARAMS, BACKENDS, type MatchParams, type BackendName } from './params';
export { SCENE_PARAMS, sceneParamsFor } from './sceneParams';
export { loadScene, listSceneDirs, sceneFoldersOf } from '../data/scene';
export { toDepth, toPointCloud, readCalibration, calibrationFromCalib, type StereoCalibration, type DisparitySource } from './depth';
export { writePly, encodePly, type PointCloud } from '../data/ply';
export { readCalib, type Calib } from '../data/calib';
export { confidenceMap, badByConfidence } from './confidence';
export { colorScaleImage } from './colorScale';
export { generateSyntheticScene } from '../data/synthetic';
export { readImage, writePng, writePfm, readDisparityFile } from '../data/imageIO';
export { readSmrf, writeSmrf } from '../data/smrf';
export { errorImage, colorizeDisparity, type Evaluation, type RegionScore } from '../data/metrics';
export type { Raster } from '../data/raster';
export type { Scene, SceneMasks } from '../data/sceneTypes';
export type { MrfEnergy } from '../data/energy';
export { alphaExpansion } from '../expansion/alphaExpansion';
export { tune, type TuneOptions } from './tune/tune';
export { runBench, type BenchOptions } from './bench/runBench';

/** Ground truth as a loaded scene (its masks are used) or a bare map (+Infinity = unknown). */
export type GroundTruthInput = Scene | { width: number; height: number; data: Float32Array };

/**
 * Middlebury scores of a disparity map: bad-pixel % per threshold over the
 * known pixels and over each mask the scene has (nonocc/all/disc), plus the
 * average and RMS error.
 */
export function evaluate(disparity: ArrayLike<number>, groundTruth: GroundTruthInput, options: EvaluateOptions = {}): Evaluation {
  if (typeof groundTruth === 'string') throw new TypeError(`evaluate: pass the scene from await loadScene('${String(groundTruth)}'), or a map { width, height, data }, not a path`);
  if (!groundTruth || typeof groundTruth !== 'object') throw new TypeError(`evaluate: the ground truth must be a scene from loadScene() or a map { width, height, data }, got ${String(groundTruth)}`);
  if ('left' in groundTruth) {
    if (!groundTruth.groundTruth) throw new Error(`evaluate: scene ${groundTruth.name} has no ground truth`);
    return evaluateDisparity(disparity, groundTruth.groundTruth, groundTruth.left.width, groundTruth.left.height, {
      masks: groundTruth.masks, nonoccDerived: groundTruth.nonoccDerived, ...options,
    });
  }
  return evaluateDisparity(disparity, groundTruth.data, groundTruth.width, groundTruth.height, options);
}
