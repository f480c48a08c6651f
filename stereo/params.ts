import type { CostKind, BorderRule, CensusWindow } from '../costs';
import type { SmoothnessKind } from '../data/energy';
import type { GraphVariant } from '../expansion/binaryStep';
import type { LabelOrder } from '../expansion/labelOrder';
import { optionError } from '../data/errors';

/** Which solver runs the binary cuts: the backend registry's names (gpu/runtime/backends.ts). */
export { BACKENDS, type BackendName } from '../gpu/runtime/backends';

export type InitKind = 'wta' | 'zero';

/**
 * Where data costs come from: a W·H·L volume built up front, or computed per
 * label when needed (on the GPU from the images), or 'auto': on demand when
 * the volume would exceed MAX_VOLUME_ENTRIES.
 */
export type CostsMode = 'auto' | 'volume' | 'on-demand';
export const COSTS_MODES: readonly CostsMode[] = ['auto', 'volume', 'on-demand'];
/** 2^28 int32 costs = 1 GiB: beyond it a volume is not built. */
export const MAX_VOLUME_ENTRIES = 2 ** 28;

/** Everything that shapes the energy and its minimisation. */
export interface MatchParams {
  cost: CostKind;
  /** Data-cost truncation τ (8-bit scale, summed over channels); undefined = the cost kind's default. */
  tau?: number;
  border: BorderRule;
  /** Census window (cost census); undefined = 7×7. */
  censusWindow?: CensusWindow;
  lambda: number;
  smoothness: SmoothnessKind;
  /** Truncation T of the smoothness term, in disparities. */
  truncation: number;
  cueThreshold: number;
  /** 1 disables the static cue. */
  cueFactor: number;
  init: InitKind;
  /** WTA window (odd). */
  window: number;
  order: LabelOrder;
  graph: GraphVariant;
  cycles: number | 'converge';
  seed: number;
  /** Skip moves that cannot lower the energy (nothing changed since the label's last expansion). */
  skipUnchanged: boolean;
  costs: CostsMode;
  /** Left–right consistency check (stereo/leftRightCheck.ts): match the mirrored pair too and mark pixels whose views differ by more than 1. */
  lrCheck: boolean;
  /** Fill the pixels the check marks from their row neighbours (the farther of the two); off leaves them invalid. */
  lrFill: boolean;
  /** After the row fill, each marked pixel takes the colour-weighted median of the filled disparities around it (stereo/medianFill.ts). */
  lrMedian: boolean;
  /** Sub-pixel refinement (stereo/subpixel.ts): a parabola through the box-summed costs at d − 1, d, d + 1; written to PFM outputs. */
  subpixel: boolean;
  /**
   * Pyramid levels (stereo/coarseToFine.ts): 1 matches the pair as it is;
   * N > 1 matches it at 1/2^(N−1) of its size, then refines each finer
   * level within bands around the coarser map; 'auto' picks the fewest
   * levels whose coarsest holds at most COARSEST_PIXELS pixels (1 for
   * benchmark-sized pairs).
   */
  levels: number | 'auto';
  /** α-expansion cycles at each finer level of the pyramid (`cycles` is the coarsest's): its start is already the coarser optimum, so one cycle gives what two do. */
  levelCycles: number | 'converge';
}

/**
 * Defaults for a pair we know nothing about: the setting `stereocut tune`
 * chose on the ten shared Middlebury scenes (lowest mean bad > 1 px in each
 * scene's region among the settings that beat OpenCV's StereoSGBM on every
 * scene; search, in-sample and leave-one-scene-out figures in
 * BENCHMARKS.md, "Accuracy"): 7×7 census truncated at 26 bits, λ 5, cue threshold 12,
 * two cycles, left–right check with row fill.
 */
export const DEFAULT_PARAMS: MatchParams = {
  cost: 'census',
  border: 'clamp',
  lambda: 5,
  smoothness: 'linear',
  truncation: 2,
  cueThreshold: 12,
  cueFactor: 2,
  init: 'wta',
  window: 9,
  order: 'frequent',
  graph: 'reversed',
  cycles: 2,
  seed: 1,
  skipUnchanged: true,
  costs: 'auto',
  lrCheck: true,
  lrFill: true,
  lrMedian: true,
  subpixel: false,
  levels: 'auto',
  levelCycles: 1,
};

/** Validates a width-dependent label range (the costs check the rest); errors name match()'s options. */
export function checkNdisp(ndisp: number, width: number, minDisp = 0): void {
  if (!Number.isInteger(minDisp) || minDisp < 0) throw optionError(typeof minDisp === 'number' ? 'range' : 'type', 'match', 'minDisp', minDisp, 'an integer ≥ 0');
  if (minDisp > 0) {
    if (minDisp >= width) throw optionError('range', 'match', 'minDisp', minDisp, `an integer below the image width ${width}`);
    if (!Number.isInteger(ndisp) || ndisp <= 0 || minDisp + ndisp > width) {
      throw optionError('range', 'match', 'ndisp', ndisp, `an integer ≥ 1 whose largest disparity minDisp + ndisp − 1 is below the image width ${width} (minDisp ${minDisp})`);
    }
    return;
  }
  if (!Number.isInteger(ndisp) || ndisp <= 0 || ndisp >= width) {
    throw optionError(typeof ndisp === 'number' ? 'range' : 'type', 'match', 'ndisp', ndisp, `an integer with 0 < ndisp < the image width ${width}`);
  }
}
