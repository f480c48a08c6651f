export { toIntensity8, validateRaster, type IntensityImage } from './intensity';
export { censusGrey, censusGreyOfRaster, censusRowsInto, censusTransform, censusBits, censusWords, parseCensusWindow, popcount32, MAX_CENSUS_SIDE, validateCensusWindow, DEFAULT_CENSUS_WINDOW, type CensusWindow, type CensusCodes } from './census';
export {
  COST_KINDS,
  defaultTau,
  channelWeight,
  smoothnessUnit,
  LAMBDA_REFERENCE_TAU,
  type SmoothnessUnit,
  defaultCensusTau,
  maxRawCost,
  resolveDataCostOptions,
  type BorderRule,
  type CostKind,
  type DataCostOptions,
  type ResolvedDataCostOptions,
  type CostThreading,
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
export { buildStereoEnergy, imagesTerm, mirroredSwappedEnergy, stackEnergies, stereoCues, stereoWeights, viewEnergy, weightsOfStereoCues, type GivenWeights, type StereoEnergy, type StereoEnergyOptions } from './energyTerms';
