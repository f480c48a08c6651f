import { optionError } from '../data/errors';
/**
 * The data-cost options: kinds, border rule, census window, disparity range,
 * default truncations and their validation. Shared by the cost computation
 * (dataCost.ts) and the worker jobs that carry options to other threads
 * (parallelCosts.ts).
 */
import { censusBits, DEFAULT_CENSUS_WINDOW, validateCensusWindow, type CensusWindow } from './census';

/**
 * Per-pixel matching costs D_p(d): left pixel (x,y) against right pixel
 * (x−d, y), on 8-bit-scale integer samples (see intensity.ts).
 *
 *   sad        Σ_c |L − R|
 *   ssd        Σ_c (L − R)²
 *   sad+sgrad  Σ_c |L − R| + |∂x L − ∂x R| + |∂y L − ∂y R|
 *   census     Hamming distance of the census codes of a w×h window
 *              (census.ts; grey from RGB, bit = neighbour < centre)
 *
 * Gradients are forward differences on each channel of each image,
 * ∂x I(x,y) = I(x+1,y) − I(x,y) and ∂y I(x,y) = I(x,y+1) − I(x,y), taken as 0
 * in the last column (∂x) and last row (∂y), where the next sample does not
 * exist. The right image's gradient is read at the matched pixel (x−d, y).
 *
 * Every raw cost is truncated, D = min(raw, τ), then multiplied by the
 * integer cost scale (see smoothness.ts, costScale): D = min(raw·s, round(τ·s)).
 * Truncation keeps occluded or mismatched pixels from dominating the energy.
 *
 * Disparity range: label l is disparity minDisp + l (options --min-disp,
 * --max-disp), so a pair whose disparities lie in M..N needs N − M + 1
 * labels instead of N + 1. Every routine here takes labels and adds minDisp.
 */
export type CostKind = 'sad' | 'ssd' | 'sad+sgrad' | 'census';

export const COST_KINDS: readonly CostKind[] = ['sad', 'ssd', 'sad+sgrad', 'census'];

/**
 * What a left pixel whose match x−d falls left of the right image gets.
 *  'clamp' the cost against the right image's column 0, as if that column
 *          extended to the left (the default).
 *  'tau'   the truncated maximum τ: "no evidence", the same for every
 *          invalid disparity of the pixel.
 * Measured on Middlebury tsukuba, venus, teddy and cones (bad pixels
 * |d − gt| > 1 over all known pixels, default truncations), 'clamp' was
 * never worse: with 9×9 WTA equal on tsukuba (its ground truth excludes an
 * 18-pixel border, wider than its 16 labels reach) and 0.6–0.8 points better
 * on the other three; after 4 cycles of α-expansion (BK, truncated linear
 * T = 2, the scene settings of stereo/sceneParams.ts) equal on tsukuba and
 * 0.45 / 2.1 / 2.0 points better on venus / teddy / cones, with
 * non-occluded pixels equal within 0.3 points. Why: near the left border
 * 'tau' charges the maximum to every disparity that reaches past column 0,
 * so the whole strip x < d is pushed to small disparities (and in WTA the
 * aggregation window spreads that bias inward), whereas the clamped
 * comparison against column 0 is usually below τ and leaves the smoothness
 * term free to carry the neighbours' disparity into the strip.
 */
export type BorderRule = 'tau' | 'clamp';

/**
 * When the volume and the WTA of a pair go to worker threads
 * (parallelCosts.ts, COST_THREADING the defaults): volumes of at least
 * `minEntries` entries on machines of at least `minCores` cores, one thread
 * per `entriesPerThread` entries up to `maxThreads`, a job given up after
 * `timeoutMs`; code run from the TypeScript sources (the tests) only with
 * `fromSource`. Tests and benchmarks give others; the threads never change
 * a value.
 */
export interface CostThreading {
  minEntries: number;
  minCores: number;
  maxThreads: number;
  entriesPerThread: number;
  timeoutMs: number;
  fromSource: boolean;
}

export interface DataCostOptions {
  /** Cost kind (option --cost). Default 'sad'. */
  kind?: CostKind;
  /** Truncation τ on the 8-bit scale (option --tau). Default defaultTau(kind, channels). */
  tau?: number;
  /** Integer cost scale s ≥ 1 multiplying every cost. Default 1. */
  scale?: number;
  /** Rule for x−d < 0. Default 'clamp'. */
  border?: BorderRule;
  /** Census window (option --census-window). Default 7×7. Used by kind 'census' only. */
  censusWindow?: CensusWindow;
  /** Disparity of label 0 (option --min-disp). Default 0. */
  minDisp?: number;
  /** When the volume and the WTA go to worker threads; absent: COST_THREADING (parallelCosts.ts). */
  threads?: Partial<CostThreading>;
}

/**
 * Default truncations (the paper gives none). Per channel: 20 grey levels for
 * SAD, 20² for SSD so that both saturate at the same intensity error, and 40
 * for SAD+SGRAD, whose raw value adds two gradient differences of the same
 * order as the intensity difference at a mismatch. Multiplied by the channel
 * count since every kind sums over channels. Checked with 9×9 WTA on
 * tsukuba, venus, teddy and cones against half and double these values: the
 * defaults were best or within 0.6 points of the best on every scene, while
 * the alternatives each lost 1–3.5 points somewhere.
 */
export function defaultTau(kind: CostKind, channels: number, censusWindow: CensusWindow = DEFAULT_CENSUS_WINDOW): number {
  if (kind === 'census') return defaultCensusTau(censusWindow);
  const perChannel = kind === 'sad' ? 20 : kind === 'ssd' ? 400 : 40;
  return perChannel * channels;
}

/**
 * Census truncation: 13/24 of the code's bits (26 of the 48 bits of 7×7),
 * so that windows of every size saturate at the same fraction of differing
 * comparisons; 26 for 7×7 is the value `stereocut tune` chose on the ten
 * shared scenes (BENCHMARKS.md, "Accuracy"). Census costs do not depend on the
 * channel count.
 */
export function defaultCensusTau(w: CensusWindow): number {
  return Math.round((censusBits(w) * 13) / 24);
}

/**
 * One energy scale for grey and colour pairs. The SAD-family costs sum over
 * channels, so a grey pair's costs (and default τ) are a third of its colour
 * twin's while λ and the cue threshold are not: with the same λ a grey pair
 * was smoothed three times harder. In the energy (buildStereoEnergy) a grey
 * pair's SAD-family costs therefore count their one channel three times, as
 * if it were replicated into R, G and B: the data term of a grey image equals
 * the data term of the same image stored as RGB with R = G = B, for the
 * default τ (20·C, 400·C, 40·C) and for any τ given as τ_RGB = 3·τ_grey.
 * An integer weight, so energies stay exact. Census costs count differing
 * bits of one grey code, the same for both (weight 1). The cue threshold
 * compares the largest channel difference, which R = G = B leaves unchanged.
 */
export function channelWeight(kind: CostKind, channels: number): number {
  return channels === 1 && kind !== 'census' ? 3 : 1;
}

/**
 * λ on one scale for every cost kind. The data term of each kind is measured
 * in its own unit (a census bit, a grey level summed over channels, its
 * square, …), so one λ weighed smoothness very differently against each: the
 * census default λ 5 smoothed SAD almost not at all. λ is therefore counted
 * in units of 1/26 of a kind's default truncation at three channels, the
 * census 7×7's τ of 26 bits being the reference: the energy is
 *   den · D + num · λ · w · V,   num / den = defaultTau(kind, 3) / 26,
 * which ranks labelings as D + λ · (τ_kind / 26) · w · V does, with integer
 * terms only (energies exact). Census is the reference at every window
 * (num = den = 1: its energies are those of λ in bits). The unit depends on
 * the kind alone, never on a given --tau, so a τ search does not move λ.
 * The cue threshold compares intensities, which no cost kind changes.
 */
export interface SmoothnessUnit {
  /** Multiplies the smoothness weights. */
  num: number;
  /** Multiplies the data costs. */
  den: number;
}

/** The census 7×7 default truncation the other kinds' λ is measured against. */
export const LAMBDA_REFERENCE_TAU = 26;

export function smoothnessUnit(kind: CostKind): SmoothnessUnit {
  if (kind === 'census') return { num: 1, den: 1 };
  const num = defaultTau(kind, 3);
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const g = gcd(num, LAMBDA_REFERENCE_TAU);
  return { num: num / g, den: LAMBDA_REFERENCE_TAU / g };
}

/** Largest raw (untruncated) cost of a kind: gradients span −255..255, so their differences reach 510. */
export function maxRawCost(kind: CostKind, channels: number, censusWindow: CensusWindow = DEFAULT_CENSUS_WINDOW): number {
  if (kind === 'census') return censusBits(censusWindow);
  const perChannel = kind === 'sad' ? 255 : kind === 'ssd' ? 255 * 255 : 255 + 510 + 510;
  return perChannel * channels;
}

export interface ResolvedDataCostOptions {
  kind: CostKind;
  tau: number;
  scale: number;
  border: BorderRule;
  /** round(τ·scale): the largest cost any pixel gets. */
  maxCost: number;
  censusWindow: CensusWindow;
  minDisp: number;
  threads?: Partial<CostThreading>;
}

const INT32_MAX = 2 ** 31 - 1;

/** Validates options and fills in the defaults; errors name the option as DataCostOptions spells it. */
export function resolveDataCostOptions(options: DataCostOptions, channels: number): ResolvedDataCostOptions {
  const kind = options.kind ?? 'sad';
  if (!COST_KINDS.includes(kind)) {
    throw optionError('range', 'data costs', 'kind', kind, `one of ${COST_KINDS.join(', ')}`);
  }
  const censusWindow = validateCensusWindow(options.censusWindow ?? DEFAULT_CENSUS_WINDOW);
  const minDisp = options.minDisp ?? 0;
  if (!Number.isInteger(minDisp) || minDisp < 0) throw optionError('range', 'data costs', 'minDisp', minDisp, 'an integer ≥ 0');
  const tau = options.tau ?? defaultTau(kind, channels, censusWindow);
  if (typeof tau !== 'number' || !Number.isFinite(tau) || tau < 0) {
    throw optionError(typeof tau === 'number' ? 'range' : 'type', 'data costs', 'tau', tau, 'a finite number ≥ 0');
  }
  const scale = options.scale ?? 1;
  if (!Number.isInteger(scale) || scale < 1) throw new Error(`cost scale must be an integer ≥ 1 (got ${String(scale)})`);
  const border = options.border ?? 'clamp';
  if (border !== 'tau' && border !== 'clamp') {
    throw optionError('range', 'data costs', 'border', border, "'clamp' or 'tau'");
  }
  const maxCost = Math.round(tau * scale);
  if (maxCost > INT32_MAX) throw optionError('range', 'data costs', 'tau', tau, `a τ whose product with the cost scale ${scale} fits a 32-bit cost`);
  // The kernels clamp with int32 arithmetic, so every raw·scale must fit too.
  if (maxRawCost(kind, channels, censusWindow) * scale > INT32_MAX) {
    throw new Error(`cost scale ${scale} is too large: ${kind} costs times the scale would not fit 32 bits`);
  }
  if (options.threads !== undefined) checkThreading(options.threads);
  return { kind, tau, scale, border, maxCost, censusWindow, minDisp, ...(options.threads ? { threads: options.threads } : {}) };
}

const THREADING_KEYS: ReadonlyArray<keyof CostThreading> = ['minEntries', 'minCores', 'maxThreads', 'entriesPerThread', 'timeoutMs', 'fromSource'];

/** A caller's thread thresholds: known fields only, numbers ≥ 0 (Infinity turns the threads off), fromSource a boolean. */
function checkThreading(t: Partial<CostThreading>): void {
  if (typeof t !== 'object' || t === null) throw optionError('type', 'data costs', 'threads', t, `an object with some of ${THREADING_KEYS.join(', ')}`);
  for (const [k, v] of Object.entries(t)) {
    if (!(THREADING_KEYS as readonly string[]).includes(k)) throw optionError('type', 'data costs', `threads.${k}`, v, `no such field (fields: ${THREADING_KEYS.join(', ')})`);
    if (k === 'fromSource' ? typeof v !== 'boolean' : !(typeof v === 'number' && v >= 0)) {
      throw optionError(typeof v === (k === 'fromSource' ? 'boolean' : 'number') ? 'range' : 'type', 'data costs', `threads.${k}`, v, k === 'fromSource' ? 'true or false' : 'a number ≥ 0 (Infinity: never)');
    }
  }
}
