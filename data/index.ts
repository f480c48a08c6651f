/**
 * The data layer's public surface: image and float-map files in and out,
 * Middlebury scene folders, synthetic scenes with exact ground truth, and
 * Middlebury-style scores. Other folders may import the modules directly;
 * this file only gathers them.
 */
export type { Raster } from './raster';
export type { Scene, SceneLayout, SceneMasks } from './sceneTypes';
export { writeFileAtomic } from './atomicWrite';
export { parsePnm, encodePnm } from './pnm';
export { parsePfm, encodePfm } from './pfm';
export { encodePng } from './pngEncode';
export {
  detectFormat,
  decodeImage,
  readImage,
  readFileBytes,
  encodePngBytes,
  writePng,
  writePfm,
  writePnm,
  disparityFromRaster,
  readDisparityFile,
  type ImageFormat,
  type DisparityMap,
} from './imageIO';
export { parseCalib, readCalib, type Calib } from './calib';
export { loadScene, listSceneDirs, sceneLayoutOf, deriveNonocc, middlebury2005Scale, type LoadSceneOptions } from './scene';
export { seededRandom, type Rng } from './random';
export {
  generateSyntheticScene,
  generateSynthetic,
  type SyntheticOptions,
  type SyntheticResult,
  type SyntheticSurface,
  type SyntheticTexture,
} from './synthetic';
export {
  evaluateDisparity,
  regionScore,
  errorImage,
  colorizeDisparity,
  type Evaluation,
  type EvaluateOptions,
  type RegionName,
  type RegionScore,
} from './metrics';
