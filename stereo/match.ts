import type { Raster } from '../data/raster';
import { medianBandCount, medianFill, medianFillInBands } from './medianFill';
import { leftRightCheck, mirrorRows } from './leftRightCheck';
import { refineSubpixel } from './subpixel';
import { checkMatchMemory, defaultMemoryLimit, estimateForOptions, type MemoryEstimate } from './memoryPlan';
import { checkMatchOptions, matchArguments } from './matchOptions';
import { ProgramStore } from '../gpu/move/keptPrograms';
import { pyramidLevels } from './coarseToFine';
import { stripPool, stripThreads } from './stripRunner';
import { resolveParams } from './paramSchema';
import type { MatchParams } from './params';
import { matchPyramid } from './matchPyramid';
import type { MatchOptions, MatchPlan, MatchResult, StripPool } from './matchTypes';
import { placeBackend, type BackendPlacement } from '../gpu/runtime/backends';

/*
 * match() and what its callers use with it: the parameters (params.ts),
 * its starting labels (startingLabels.ts), one level's energy and
 * match of one or both views (matchViews.ts), coarse to fine (matchPyramid.ts) and the types
 * (matchTypes.ts).
 */
export type { InitRecord, MatchEvent, MatchOptions, MatchResult, MatchResume, PhaseTimes } from './matchTypes';
export { resolveParams } from './paramSchema';
export { costsOnDemand } from '../data/energy';
export { initialLabeling, startingLabels } from './startingLabels';
export { costOptions, costsLeftToDevice, labelsToDisparity, stereoEnergy, volumeTooLarge, warmUpForBackend } from './matchViews';
export { levelTruncation } from './matchPyramid';

/** What a pair's compute may add to its matcher's options: where this pair starts, and what is told as it runs. */
export type PairOptions = Pick<MatchOptions, 'initialLabels' | 'initSource' | 'resume' | 'onCycle' | 'onEvent' | 'onMove' | 'warmStart'>;
const PAIR_KEYS: ReadonlyArray<keyof PairOptions> = ['initialLabels', 'initSource', 'resume', 'onCycle', 'onEvent', 'onMove', 'warmStart'];

/**
 * A matcher of one setting (OpenCV's StereoMatcher, as a graph cut):
 * made once from match()'s options, then compute(left, right) for any
 * number of pairs, then dispose(). It holds what its matches keep between
 * them, and nothing else in the process does:
 * - the device program (kernels, compiled plans, WTA and energy pipelines)
 *   of the last pair's shape (a ProgramStore): the next pair of that size
 *   refills it instead of compiling its own;
 * - the threads of the finer levels (a strip pool), started by the first
 *   pair matched coarse to fine; they also filter the median's bands of
 *   its finest level, and those of a pair at one level when the caller
 *   gives the pool (a SequenceMatcher does, for frames of 0.1 MP or more).
 * A store or pool given in the options is the caller's: used, never
 * released. Two matchers never share anything but what their caller gives
 * both. compute() calls may overlap; each takes the kept program alone.
 */
export class Matcher {
  /** The options' parameters, checked and resolved once: every pair and every level of it reads these. */
  readonly params: MatchParams;
  private readonly programs: ProgramStore;
  private readonly ownsPrograms: boolean;
  private pool?: StripPool;
  /** Where the backend runs, placed at the first pair and kept for the others. */
  private place?: Promise<BackendPlacement>;
  private disposed = false;
  /** The pairs in flight: dispose() waits for them, so that no solver keeps a program in a store already released. */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly options: MatchOptions) {
    // Every parameter too, by its schema entry (the checks resolveParams makes).
    checkMatchOptions(options);
    this.params = resolveParams(options);
    this.ownsPrograms = options.programs === undefined;
    this.programs = options.programs ?? new ProgramStore();
  }

  /** The disparity of one rectified pair (match()'s result), with `pair`'s start and listeners for this pair alone. */
  compute(leftImage: Raster | string, rightImage: Raster | string, pair: PairOptions = {}): Promise<MatchResult> {
    if (this.disposed) return Promise.reject(new Error('Matcher: compute() after dispose()'));
    const run = this.run(leftImage, rightImage, pair);
    this.inFlight.add(run);
    const settled = (): void => { this.inFlight.delete(run); };
    run.then(settled, settled);
    return run;
  }

  private async run(leftImage: Raster | string, rightImage: Raster | string, pair: PairOptions): Promise<MatchResult> {
    for (const k of Object.keys(pair)) {
      if (!(PAIR_KEYS as readonly string[]).includes(k)) throw new TypeError(`Matcher.compute: '${k}' is a matcher's option, not a pair's (a pair's: ${PAIR_KEYS.join(', ')})`);
    }
    const options: MatchOptions = { ...this.options, ...pair, programs: this.programs };
    // The matcher's own options were checked when it was made; a pair's are checked with them.
    if (Object.keys(pair).length > 0) checkMatchOptions(options);
    const { left, right } = await matchArguments(leftImage, rightImage, options);
    if (left.width === right.width && left.height === right.height && Number.isInteger(options.ndisp) && options.ndisp > 0) {
      const what = `match: the ${left.width}×${left.height} pair with ${options.ndisp} disparities`;
      checkMatchMemory(what, this.memoryEstimate(left.width, left.height, left.channels), options.maxMemory ?? defaultMemoryLimit(), 'maxMemory');
    }
    if (!options.stripPool && pyramidLevels(left.width, left.height, this.params.levels) > 1) {
      this.pool ??= stripPool(stripThreads(left.width * left.height));
      options.stripPool = this.pool;
    }
    const place = await (this.place ??= placeBackend(this.options.backend ?? 'auto'));
    return matchPair(left, right, options, { params: this.params, place });
  }

  /**
   * What a pair of this size would hold at its peak (memoryPlan.ts), from
   * this matcher's disparities, parameters and backend: what compute()
   * checks against maxMemory before any work, and what a caller that knows
   * the size from the files' headers checks before decoding them.
   */
  memoryEstimate(width: number, height: number, channels: number): MemoryEstimate {
    return estimateForOptions(this.options, this.params, width, height, channels);
  }

  /** Releases what the matcher holds (its kept program, its threads) once its pairs in flight have settled; compute() is refused after. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await Promise.allSettled([...this.inFlight]);
    if (this.ownsPrograms) this.programs.release();
    const pool = this.pool;
    this.pool = undefined;
    await pool?.close();
  }
}

/** A Matcher for `params` (the algorithm's: ndisp, lambda, cost, …) and `run` (how and where it runs: backend, gpu, costs, maxMemory, …), both as match() takes them. */
export function createMatcher(params: MatchOptions, run: Partial<MatchOptions> = {}): Matcher {
  return new Matcher({ ...params, ...run });
}

/**
 * Disparity of a rectified pair by α-expansion: data costs, smoothness
 * weights, an initial labeling, then `cycles` cycles of expansion moves.
 * A matcher made, used once and disposed: to match several pairs of one
 * size and setting, createMatcher keeps the device program between them.
 */
export async function match(leftImage: Raster | string, rightImage: Raster | string, options: MatchOptions): Promise<MatchResult> {
  // The matcher holds the pair's options too (initialLabels, listeners): it matches this one pair.
  const matcher = new Matcher(options);
  try {
    return await matcher.compute(leftImage, rightImage);
  } finally {
    await matcher.dispose();
  }
}

/** One pair, its images read, checked and their memory too, as `plan` says: the match of one or both views, the sub-pixel refinement. */
async function matchPair(left: Raster, right: Raster, options: MatchOptions, plan: MatchPlan): Promise<MatchResult> {
  const r = await checkedMatch(left, right, options, plan);
  if (!r.params.subpixel) return r;
  const t0 = performance.now();
  const p = r.params;
  const subpixel = refineSubpixel(left, right, r.disparity, r.minDisp, r.ndisp, { kind: p.cost, tau: p.tau, border: p.border, censusWindow: p.censusWindow }, p.window);
  const ms = performance.now() - t0;
  return { ...r, subpixel, times: { ...r.times, subpixelMs: ms, totalMs: r.times.totalMs + ms } };
}

/**
 * The integer disparity of the left view, with the left–right check when
 * asked for. The check's right view (the mirrored, swapped pair: its
 * left-view disparity, mirrored back, is the right view's) is matched
 * together with the left one, as one energy of the two views stacked
 * (costs/energyTerms.ts stackEnergies): each move solves both views' cuts
 * for its label at once, so the device runs one move per label instead of
 * two. The views share the label order, the cycles and the reported
 * energies (their sum); each view's map is that of its own energy. A
 * pyramid's coarsest level matches them apart instead, the right view
 * beside the next level's left strips (stereo/matchPyramid.ts).
 */
async function checkedMatch(left: Raster, right: Raster, options: MatchOptions, plan: MatchPlan): Promise<MatchResult> {
  const checked = plan.params.lrCheck;
  const { result: r, others } = await matchPyramid(left, right, checked ? 2 : 1, options, plan);
  if (!checked) return r;
  const t0 = performance.now();
  const dispRight = mirrorRows(others[0], r.width, r.height);
  const check = leftRightCheck(r.disparity, dispRight, r.width, r.height, r.params.lrFill);
  // The median's window is in coarsest-level pixels: f = 2^(levels − 1) at the finest level.
  const scale = r.pyramid ? 2 ** (r.pyramid.shapes.length - 1) : 1;
  if (r.params.lrFill && r.params.lrMedian) {
    // Filtered in bands on the strip threads, where the match has threads (a pyramid's, or those a sequence gives its frames).
    const pool = options.stripPool;
    check.disparity = pool?.median && pool.threads > 1
      ? await medianFillInBands(check.disparity, check.marked, left, scale, medianBandCount(left.height, pool.threads), pool.median, pool.medianStage)
      : medianFill(check.disparity, check.marked, left, scale);
  }
  const checkMs = performance.now() - t0;
  options.onEvent?.({ kind: 'leftRightCheck', ms: checkMs, inconsistent: check.invalid, filled: r.params.lrFill });
  return { ...r, disparity: check.disparity, inconsistentPixels: check.invalid, inconsistent: check.marked, times: { ...r.times, totalMs: r.times.totalMs + checkMs, checkMs } };
}

/** The disparity in pixels a result stands for: the sub-pixel map where refined, else the integer one (what PFM outputs and scores use). */
export function disparityInPixels(r: Pick<MatchResult, 'disparity' | 'subpixel'>): ArrayLike<number> {
  return r.subpixel ?? r.disparity;
}
