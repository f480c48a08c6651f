import type { Raster } from '../data/raster';
import type { MrfEnergy, SmoothnessKind } from '../expansion/energy';
import { DataCostMatcher, validateNdisp, type DataCostOptions } from './dataCost';
import { computeSmoothnessWeights, costScale, DEFAULT_CUE_FACTOR } from './smoothness';

export interface StereoEnergyOptions extends Omit<DataCostOptions, 'scale'> {
  /** Disparities 0..ndisp−1 (option --ndisp). */
  ndisp: number;
  /** λ (option --lambda). */
  lambda: number;
  cueThreshold?: number;
  /** 1 disables the static cue (the paper's Tsukuba and Venus settings). */
  cueFactor?: number;
  /** V of the energy. */
  smoothness: SmoothnessKind;
  /** Truncation T of V, in disparity units (ignored for Potts; option --truncation). */
  truncation: number;
  /**
   * Leave the W·H·L cost volume out (data = empty): costs are computed per
   * label when needed, from `matcher` (slices on the CPU, or on a GPU from the
   * same intensities). For pairs whose volume would not fit in memory.
   */
  onDemand?: boolean;
}

/**
 * The energy plus the cost scale its data and smoothness terms both carry,
 * and the matcher that computes any label's costs (data is empty when the
 * energy was built with onDemand).
 */
export type StereoEnergy = MrfEnergy & { scale: number; matcher: DataCostMatcher };

/**
 * Data costs and smoothness weights of a stereo pair as one MrfEnergy. The
 * one place where the integer cost scale (smoothness.ts) is chosen and applied
 * to both terms, so they can never disagree about it.
 */
export function buildStereoEnergy(left: Raster, right: Raster, options: StereoEnergyOptions): StereoEnergy {
  validateNdisp(options.ndisp);
  const { truncation, smoothness } = options;
  if (smoothness !== 'linear' && smoothness !== 'quadratic' && smoothness !== 'potts') {
    throw new Error(`--smoothness: unknown kind '${String(smoothness)}' (expected linear, quadratic, potts)`);
  }
  if (!Number.isInteger(truncation) || truncation < 0) {
    throw new Error(`--truncation: must be an integer ≥ 0 (got ${String(truncation)})`);
  }
  const scale = costScale(options.lambda, options.cueFactor ?? DEFAULT_CUE_FACTOR);
  const matcher = new DataCostMatcher(left, right, {
    kind: options.kind,
    tau: options.tau,
    border: options.border,
    censusWindow: options.censusWindow,
    minDisp: options.minDisp,
    scale,
  });
  const data = options.onDemand ? new Int32Array(0) : matcher.volume(options.ndisp);
  const { wH, wV } = computeSmoothnessWeights(left, {
    lambda: options.lambda,
    cueThreshold: options.cueThreshold,
    cueFactor: options.cueFactor,
    scale,
  });
  return {
    width: matcher.width,
    height: matcher.height,
    labels: options.ndisp,
    data,
    smoothness,
    truncation,
    wH,
    wV,
    scale,
    matcher,
  };
}
