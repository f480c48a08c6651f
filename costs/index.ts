export { toIntensity8, validateRaster, type IntensityImage } from './intensity';
export {
  COST_KINDS,
  defaultTau,
  maxRawCost,
  resolveDataCostOptions,
  type BorderRule,
  type CostKind,
  type DataCostOptions,
  type ResolvedDataCostOptions,
} from './costOptions';
export { DataCostMatcher, MAX_LABELS, computeDataCostSlice, computeDataCostVolume, validateNdisp } from './dataCost';
export {
  DEFAULT_CUE_FACTOR,
  DEFAULT_CUE_THRESHOLD,
  computeSmoothnessWeights,
  costScale,
  type SmoothnessOptions,
  type SmoothnessWeights,
} from './smoothness';
export { boxFilter, wtaFromMatcher, wtaFromSlices, wtaInit } from './wta';
export { buildStereoEnergy, imagesTerm, type StereoEnergy, type StereoEnergyOptions } from './energyTerms';
