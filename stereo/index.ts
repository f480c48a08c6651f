/**
 * The library entry point (package "main"): what a TypeScript script needs
 * to compute and score disparity maps; parameter studies are the
 * application's (app/tune/tune.ts), exported as 'stereocut/tune'.
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
import { shownValue } from '../data/errors';
import { closestName } from './didYouMean';

export { match, createMatcher, Matcher, resolveParams, disparityInPixels, type MatchOptions, type MatchResult, type MatchEvent, type PairOptions, type PhaseTimes } from './match';
export { ProgramStore } from '../gpu/move/keptPrograms';
export { createSequenceMatcher, SequenceMatcher, type SequenceOptions, type FrameResult } from './sequence';
export { panFrames, type PanOptions, type PanFrame } from '../data/panSequence';
export type { WarmStartRecord, FrameStart } from './warmStart';
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
export { levelEnergy, bandsFromCoarse, levelShapes, pyramidLevels, type LevelView, type LevelShape, type LevelReport } from './coarseToFine';
export { halfSize } from '../data/raster';
export { stripPool, stripThreads } from './stripRunner';
export type { StripPool } from './matchTypes';
export { BandedMoveSolver } from '../expansion/bandedMoves';
export type { BandedTerm } from '../data/energy';

/** Ground truth as a loaded scene (its masks are used) or a bare map (+Infinity = unknown). */
export type GroundTruthInput = Scene | { width: number; height: number; data: Float32Array };

/**
 * Middlebury scores of a disparity map: bad-pixel % per threshold over the
 * known pixels and over each mask the scene has (nonocc/all/disc), plus the
 * average and RMS error.
 */
export function evaluate(disparity: ArrayLike<number>, groundTruth: GroundTruthInput, options: EvaluateOptions = {}): Evaluation {
  if (typeof groundTruth === 'string') throw new TypeError(`evaluate: pass the scene from await loadScene('${String(groundTruth)}'), or a map { width, height, data }, not a path`);
  checkEvaluateOptions(options);
  const scene = groundTruth && typeof groundTruth === 'object' && 'left' in groundTruth ? groundTruth : undefined;
  if (scene && !scene.groundTruth) throw new Error(`evaluate: scene ${scene.name} has no ground truth`);
  const map = (scene ? { width: scene.left.width, height: scene.left.height, data: scene.groundTruth } : groundTruth ?? {}) as Partial<{ width: unknown; height: unknown; data: unknown }>;
  const size = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v > 0;
  if (!size(map.width) || !size(map.height) || !(map.data instanceof Float32Array)) {
    throw new TypeError(`evaluate: the ground truth must be a scene from loadScene() or a map { width, height, data: Float32Array } (+Infinity = unknown), got ${shownValue(groundTruth)}`);
  }
  const [w, h, data] = [map.width as number, map.height as number, map.data];
  if (data.length !== w * h) throw new RangeError(`evaluate: the ground truth map is ${w}×${h} but its data has ${data.length} values, expected ${w * h}`);
  if (!disparity || typeof disparity !== 'object' || typeof disparity.length !== 'number') {
    throw new TypeError(`evaluate: the disparity must be an array of ${w * h} disparities (r.disparity, or disparityInPixels(r)), got ${shownValue(disparity)}`);
  }
  if (disparity.length !== w * h) throw new RangeError(`evaluate: the disparity has ${disparity.length} values, expected ${w * h} for the ${w}×${h} ground truth`);
  const sceneOptions = scene ? { masks: scene.masks, nonoccDerived: scene.nonoccDerived } : {};
  return evaluateDisparity(disparity, data, w, h, { ...sceneOptions, ...options });
}

const EVALUATE_OPTIONS = ['thresholds', 'masks', 'nonoccDerived', 'regions', 'customMasks'];

/** evaluate()'s options: an object of known keys (a misspelled one is named, with the closest). */
function checkEvaluateOptions(options: unknown): void {
  if (!options || typeof options !== 'object' || Array.isArray(options)) throw new TypeError(`evaluate: options must be an object such as { thresholds: [1, 2] }, got ${shownValue(options)}`);
  for (const key of Object.keys(options)) {
    if (EVALUATE_OPTIONS.includes(key)) continue;
    const near = closestName(key, EVALUATE_OPTIONS);
    throw new TypeError(`evaluate: unknown option '${key}'${near ? `; did you mean ${near}?` : ''} (options: ${EVALUATE_OPTIONS.join(', ')})`);
  }
  // The thresholds are checked where they are used (data/metrics.ts evaluateDisparity).
}
