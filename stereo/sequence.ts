import type { Raster } from '../data/raster';
import { optionError } from '../data/errors';
import { FlowCarry } from '../gpu/move/flowCarry';
import { pyramidLevels } from './coarseToFine';
import { Matcher, resolveParams, type MatchOptions, type MatchResult } from './match';
import type { MatchParams } from './params';
import { checkMatchOptions, matchArguments } from './matchOptions';
import { poolThreads, stripPool } from './stripRunner';
import type { StripPool } from './matchTypes';
import type { FrameStart } from './warmStart';
import { estimateForOptions, type MemoryEstimate } from './memoryPlan';

/**
 * Frames of a stereo sequence matched one after another, each starting
 * from the previous frame's result: its labels (every view's) and, on the
 * device, its per-label flows (dynamic cuts, gpu/move/flowCarry.ts),
 * shifted as its left image moved against the previous one.
 * The rule that keeps a warm start from making a frame worse is
 * stereo/warmStart.ts's; keyframes add a comparison of final energies.
 *
 * A SequenceMatcher holds one sequence's state and nothing else holds
 * any: made once from the match options, then compute(left, right) per
 * frame, dispose() at the end (it frees the carried device flows and its
 * Matcher's program and strip threads). The frames are matched by one
 * Matcher, which keeps the device program between the frames' solvers
 * (same shape, same options), so only the flows need carrying; frames
 * matched coarse to fine share its strip threads.
 */
export interface SequenceOptions extends Omit<MatchOptions, 'initialLabels' | 'resume' | 'warmStart' | 'initSource' | 'onCycle'> {
  /** Start each frame from the previous one (default true); false matches every frame on its own (the baseline). */
  warm?: boolean;
  /** Cycles of a frame that starts warm (default 1: its start is already the previous frame's optimum). */
  warmCycles?: number | 'converge';
  /**
   * Every keyframe-th frame (0, k, 2k, …) that started warm is matched
   * again from a fresh start, and the result with the lower final energy
   * kept: 1 guarantees every frame's energy is at most an independent
   * match's, at about twice the cost; 0 (default) never.
   */
  keyframe?: number;
}

/** One frame's result: the match kept, how it started, and what a keyframe compared. */
export interface FrameResult {
  /** 0-based index of the frame in the sequence. */
  index: number;
  result: MatchResult;
  /** 'fallback' when the warm start's initial energy was the higher, or a keyframe's fresh match ended lower (`keyframe`). */
  start: FrameStart;
  /** A keyframe's fresh match: its final energy, and which was kept. */
  keyframe?: { freshEnergy: number; kept: 'warm' | 'fresh' };
  /** Wall time of the frame (both matches of a keyframe). */
  ms: number;
}

const SEQUENCE_KEYS = ['warm', 'warmCycles', 'keyframe'] as const;

/** Pixels of a frame from which a sequence filters the median in bands on threads (below, a frame's serial median takes a few ms, less than the bands' messages and copies). */
export const MEDIAN_POOL_PIXELS = 100_000;

export class SequenceMatcher {
  private readonly flows = new FlowCarry();
  private readonly base: MatchOptions;
  /** The base options' parameters, resolved once (the frames share them). */
  private readonly params: MatchParams;
  /** Made at the first frame, when its size says whether the sequence starts threads for the median (see compute). */
  private matcher?: Matcher;
  /** The threads this sequence started (closed by dispose()); none for small frames or where the caller gave a pool. */
  private pool?: StripPool;
  private readonly warm: boolean;
  private readonly warmCycles: number | 'converge';
  private readonly keyframe: number;
  private previous?: { left: Raster; labels: Uint16Array; shift?: [number, number] };
  private frames = 0;
  private disposed = false;

  constructor(options: SequenceOptions) {
    const { warm = true, warmCycles = 1, keyframe = 0, ...rest } = options;
    if (typeof warm !== 'boolean') throw optionError('type', 'sequence', 'warm', warm, 'true or false');
    if (warmCycles !== 'converge' && !(Number.isInteger(warmCycles) && warmCycles >= 1)) throw optionError('range', 'sequence', 'warmCycles', warmCycles, "an integer ≥ 1 or 'converge'");
    if (!(Number.isInteger(keyframe) && keyframe >= 0)) throw optionError('range', 'sequence', 'keyframe', keyframe, 'an integer ≥ 0 (0: no keyframes)');
    for (const k of ['initialLabels', 'resume', 'warmStart', 'onCycle'] as const) {
      if ((rest as Record<string, unknown>)[k] !== undefined) throw optionError('type', 'sequence', k, (rest as Record<string, unknown>)[k], `no ${k}: a sequence starts each frame from the previous one (options: match()'s and ${SEQUENCE_KEYS.join(', ')})`);
    }
    checkMatchOptions(rest);
    this.base = rest;
    this.params = resolveParams(rest);
    this.warm = warm;
    this.warmCycles = warmCycles;
    this.keyframe = keyframe;
  }

  /** The next frame's match, started from the previous frame's where that applies (one level, same size). */
  async compute(leftImage: Raster | string, rightImage: Raster | string): Promise<FrameResult> {
    if (this.disposed) throw new Error('SequenceMatcher: compute() after dispose()');
    const t0 = performance.now();
    const index = this.frames++;
    const { left, right } = await matchArguments(leftImage, rightImage, this.base);
    this.matcher ??= this.matcherFor(left.width * left.height);
    // A warm start is at one level: frames that coarse to fine would match (above 0.5 MP with levels auto) are matched on their own.
    const levels = pyramidLevels(left.width, left.height, this.params.levels);
    const warmable = this.warm && levels === 1;
    const prev = this.previous;
    if (!warmable || !prev || prev.left.width !== left.width || prev.left.height !== left.height) {
      this.previous = undefined;
      this.flows.drop();
    }
    const { labels, shift, left: previousLeft } = this.previous ?? {};
    let result = await this.matcher.compute(left, right, warmable ? { warmStart: { labels, shift, previousLeft, cycles: this.warmCycles, flows: this.flows } } : {});
    let start: FrameStart = result.warmStart?.start ?? 'cold';
    let keyframe: FrameResult['keyframe'];
    if (start === 'warm' && this.keyframe > 0 && index % this.keyframe === 0) {
      // A fresh match without the carried flows (it leaves them alone); the lower final energy is kept.
      const fresh = await this.matcher.compute(left, right, { warmStart: {} });
      const lower = fresh.finalEnergy.total < result.finalEnergy.total;
      keyframe = { freshEnergy: fresh.finalEnergy.total, kept: lower ? 'fresh' : 'warm' };
      if (lower) {
        result = fresh;
        start = 'fallback';
      }
    }
    const w = result.warmStart;
    // The left image is kept as given, not copied (a copy costs more than the shift it serves): a caller who decodes the
    // next frame into the same buffer gets a poorer shift, never a worse frame (the energy rule of warmStart.ts still holds).
    this.previous = warmable && w ? { left, labels: w.labels, shift: w.start === 'warm' ? w.shift : undefined } : undefined;
    return { index, result, start, ...(keyframe ? { keyframe } : {}), ms: performance.now() - t0 };
  }

  /**
   * The sequence's matcher. Frames of MEDIAN_POOL_PIXELS or more whose
   * check fills with the median get threads for its bands, started now so
   * that they load while the first frame runs: a sequence is many frames,
   * so their start is paid once (a single match() does not start them).
   */
  private matcherFor(pixels: number): Matcher {
    const p = this.params;
    if (!this.base.stripPool && pixels >= MEDIAN_POOL_PIXELS && p.lrCheck && p.lrFill && p.lrMedian) {
      const threads = poolThreads();
      if (threads > 1) this.pool = stripPool(threads);
    }
    return new Matcher(this.pool ? { ...this.base, stripPool: this.pool } : this.base);
  }

  /** What a frame of this size would hold at its peak (Matcher.memoryEstimate, for the sequence's options): what a caller that knows the size from the frames' headers checks before decoding them. */
  memoryEstimate(width: number, height: number, channels: number): MemoryEstimate {
    return estimateForOptions(this.base, this.params, width, height, channels);
  }

  /** Frees what the sequence holds (the carried device flows, its matcher's program and threads); compute is refused after. */
  async dispose(): Promise<void> {
    this.flows.drop();
    this.previous = undefined;
    this.disposed = true;
    await this.matcher?.dispose();
    await this.pool?.close();
    this.pool = undefined;
  }
}

/** A SequenceMatcher for `options` (match()'s options without a given start, and SequenceOptions' own). */
export function createSequenceMatcher(options: SequenceOptions): SequenceMatcher {
  return new SequenceMatcher(options);
}
