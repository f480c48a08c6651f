import type { EnergyBreakdown } from '../data/energy';
import type { FlowCarry } from '../expansion/gpuFlowCarry';

/**
 * A frame of a sequence started from the previous frame's result
 * (MatchOptions.warmStart; stereo/sequence.ts drives it). The rule that
 * keeps a warm start from making a frame worse is here, in one place:
 *
 * the frame's fresh initial labeling (the WTA, or zeros, as `init` says)
 * is computed as for any match, and the previous frame's labels are taken
 * only when their energy under this frame's energy is at most the fresh
 * labeling's; otherwise the frame starts fresh ('fallback'), its labels
 * and its flows, as an independent match would.
 *
 * What that guarantees: α-expansion never raises the energy, so a warm
 * frame ends at or below the fresh start's energy. It does not promise an
 * end at or below an independent match's end (both are local minima);
 * keyframes (SequenceOptions.keyframe) compare the ends themselves.
 */
export interface WarmStart {
  /** Every view's labels stacked, as the previous frame left them (its result's warmStart.labels); absent on a first frame. */
  labels?: Uint16Array;
  /** Cycles of a frame that starts warm (default: the params' cycles). */
  cycles?: number | 'converge';
  /** The device moves' flows of the previous frame (expansion/gpuFlowCarry.ts); dropped when the frame starts fresh. */
  flows?: FlowCarry;
}

/** How a frame started: from the previous frame's labels, fresh (no previous labels), or fresh because the warm start's energy was higher. */
export type FrameStart = 'warm' | 'cold' | 'fallback';

/** What a match given a warmStart reports (MatchResult.warmStart). */
export interface WarmStartRecord {
  start: FrameStart;
  /** The previous frame's labels' energy under this frame's energy (absent on a first frame). */
  warmEnergy?: number;
  /** The fresh initial labeling's energy (absent on a first frame). */
  freshEnergy?: number;
  /** The cycles that ran from the start. */
  cycles: number | 'converge';
  /** Every view's final labels stacked: the next frame's warmStart.labels. */
  labels: Uint16Array;
}

/**
 * The initial labels of a frame: the warm ones when their energy is at
 * most the fresh ones' (see WarmStart), with what was compared. `fresh`
 * and `energyOf` are the match's own (the device's WTA and energy where
 * the solver offers them); `n` is the stacked views' pixel count.
 */
export async function chooseStart(
  warm: WarmStart | undefined, n: number, fresh: () => Promise<Uint16Array>, energyOf: (labels: Uint16Array) => Promise<EnergyBreakdown>,
): Promise<{ initial: Uint16Array; record: Omit<WarmStartRecord, 'labels' | 'cycles'> }> {
  const freshLabels = await fresh();
  if (!warm?.labels) {
    warm?.flows?.drop();
    return { initial: freshLabels, record: { start: 'cold' } };
  }
  if (warm.labels.length !== n) throw new RangeError(`warmStart.labels: ${warm.labels.length} labels, the frame's views have ${n}`);
  const warmEnergy = (await energyOf(warm.labels)).total;
  const freshEnergy = (await energyOf(freshLabels)).total;
  if (warmEnergy <= freshEnergy) return { initial: warm.labels.slice(), record: { start: 'warm', warmEnergy, freshEnergy } };
  warm.flows?.drop();
  return { initial: freshLabels, record: { start: 'fallback', warmEnergy, freshEnergy } };
}
