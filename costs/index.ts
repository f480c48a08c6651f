export { toIntensity8, validateRaster, type IntensityImage } from './intensity';
export {
  COST_KINDS,
  DataCostMatcher,
  MAX_LABELS,
  computeDataCostSlice,
  computeDataCostVolume,
  defaultTau,
  maxRawCost,
  resolveDataCostOptions,
  validateNdisp,
  type BorderRule,
  type CostKind,
  type DataCostOptions,
  type ResolvedDataCostOptions,
} from './dataCost';
export {
  DEFAULT_CUE_FACTOR,
  DEFAULT_CUE_THRESHOLD,
  computeSmoothnessWeights,
  costScale,
  type SmoothnessOptions,
  type SmoothnessWeights,
} from './smoothness';
export { boxFilter, wtaFromMatcher, wtaFromSlices, wtaInit } from './wta';
export { buildStereoEnergy, type StereoEnergy, type StereoEnergyOptions } from './energyTerms';
