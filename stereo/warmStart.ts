import type { EnergyBreakdown } from '../data/energy';
import type { Raster } from '../data/raster';
import type { FlowCarry } from '../gpu/move/flowCarry';

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
 * A moving camera moves the image: the previous labels are shifted by
 * whole pixels (edges repeated into the uncovered border), by the shift
 * the previous frame chose or one of its four neighbours (one pixel left,
 * right, up, down); the device flows carried from the previous frame are
 * shifted with them (FlowCarry.shift). Given the previous frame's left
 * image (a SequenceMatcher gives it), the shift is the candidate under
 * which the two left images differ least (imageShift), and one energy is
 * computed for it; without, each candidate's energy is computed and the
 * lowest taken. A camera at rest keeps shift (0, 0).
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
  /** The device moves' flows of the previous frame (gpu/move/flowCarry.ts); dropped when the frame starts fresh. */
  flows?: FlowCarry;
  /** The shift the previous frame's warm start took (its record's shift), where this frame's search starts; default [0, 0]. */
  shift?: readonly [number, number];
  /** The previous frame's left image: the shift is then chosen by comparing it with this frame's (imageShift), not by five energies. */
  previousLeft?: Raster;
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
  /** The shift [dx, dy] of the previous labels that had the lowest energy (the warm start when start is 'warm'). */
  shift?: [number, number];
  /** The cycles that ran from the start. */
  cycles: number | 'converge';
  /** Every view's final labels stacked: the next frame's warmStart.labels. */
  labels: Uint16Array;
}

/** The grid of a frame's labels: `views` views of width × height stacked top to bottom, the second mirrored (the left–right check's). */
export interface ViewGrid { width: number; height: number; views: number }

/**
 * `labels` moved by (dx, dy) pixels in every view (a mirrored view by −dx),
 * the rows and columns uncovered taking the nearest edge's labels.
 */
export function shiftedLabels(labels: Uint16Array, g: ViewGrid, dx: number, dy: number): Uint16Array {
  const { width: W, height: H } = g;
  const out = new Uint16Array(labels.length);
  for (let v = 0; v < g.views; v++) {
    const sx = v === 1 ? -dx : dx;
    const base = v * W * H;
    for (let y = 0; y < H; y++) {
      const from = base + Math.min(H - 1, Math.max(0, y - dy)) * W;
      const row = base + y * W;
      // out[row + x] = labels[from + clamp(x − sx, 0, W − 1)], as one copy and one fill per row.
      const k = Math.min(W, Math.abs(sx));
      if (sx >= 0) {
        out.fill(labels[from], row, row + k);
        out.set(labels.subarray(from, from + W - k), row + k);
      } else {
        out.set(labels.subarray(from + k, from + W), row);
        out.fill(labels[from + W - 1], row + W - k, row + W);
      }
    }
  }
  return out;
}

/** The shifts a frame tries: the previous frame's, then one pixel left, right, up and down of it. */
function candidateShifts([sx, sy]: readonly [number, number]): Array<[number, number]> {
  return [[sx, sy], [sx - 1, sy], [sx + 1, sy], [sx, sy - 1], [sx, sy + 1]];
}

/**
 * Of the candidate shifts around `around`, the (dx, dy) under which
 * `current` differs least from `previous` moved by it: the mean absolute
 * difference of current(x, y) and previous(x − dx, y − dy) over every
 * other row and column where both exist, channels summed (the first
 * candidate on ties; one with no overlap is never taken unless all are so).
 * Images of one size and channel count.
 */
export function imageShift(previous: Raster, current: Raster, around: readonly [number, number] = [0, 0]): [number, number] {
  const { width: W, height: H, channels: C } = current;
  if (previous.width !== W || previous.height !== H || previous.channels !== C) {
    throw new RangeError(`imageShift: the previous image is ${previous.width}×${previous.height}×${previous.channels}, this one ${W}×${H}×${C}`);
  }
  const a = current.data;
  const b = previous.data;
  let best: [number, number] = [around[0], around[1]];
  let bestMean = Infinity;
  for (const [dx, dy] of candidateShifts(around)) {
    let sum = 0;
    let count = 0;
    for (let y = Math.max(0, dy); y < Math.min(H, H + dy); y += 2) {
      const rowA = y * W;
      const rowB = (y - dy) * W - dx;
      for (let x = Math.max(0, dx); x < Math.min(W, W + dx); x += 2) {
        const pa = (rowA + x) * C;
        const pb = (rowB + x) * C;
        for (let c = 0; c < C; c++) sum += Math.abs(a[pa + c] - b[pb + c]);
        count++;
      }
    }
    const mean = count > 0 ? sum / count : Infinity;
    if (mean < bestMean) {
      bestMean = mean;
      best = [dx, dy];
    }
  }
  return best;
}

/**
 * The initial labels of a frame: the warm ones (at the best of the shifts
 * tried) when their energy is at most the fresh ones' (see WarmStart),
 * with what was compared. `fresh` and `energyOf` are the match's own (the
 * device's WTA and energy where the solver offers them).
 */
export async function chooseStart(
  warm: WarmStart | undefined, grid: ViewGrid, fresh: () => Promise<Uint16Array>, energyOf: (labels: Uint16Array) => Promise<EnergyBreakdown>, left?: Raster,
): Promise<{ initial: Uint16Array; record: Omit<WarmStartRecord, 'labels' | 'cycles'> }> {
  const freshLabels = await fresh();
  if (!warm?.labels) {
    warm?.flows?.drop();
    return { initial: freshLabels, record: { start: 'cold' } };
  }
  const n = grid.width * grid.height * grid.views;
  if (warm.labels.length !== n) throw new RangeError(`warmStart.labels: ${warm.labels.length} labels, the frame's views have ${n}`);
  const around = warm.shift ?? [0, 0];
  const byImage = warm.previousLeft && left && warm.previousLeft.width === left.width && warm.previousLeft.height === left.height && warm.previousLeft.channels === left.channels;
  const shifts = byImage ? [imageShift(warm.previousLeft!, left!, around)] : candidateShifts(around);
  let best: { labels: Uint16Array; energy: number; shift: [number, number] } | undefined;
  for (const [dx, dy] of shifts) {
    if (Math.abs(dx) >= grid.width || Math.abs(dy) >= grid.height) continue;
    const labels = dx === 0 && dy === 0 ? warm.labels.slice() : shiftedLabels(warm.labels, grid, dx, dy);
    const energy = (await energyOf(labels)).total;
    if (!best || energy < best.energy) best = { labels, energy, shift: [dx, dy] };
  }
  const freshEnergy = (await energyOf(freshLabels)).total;
  // A shift as wide as the frame leaves nothing of the previous labels: the frame starts fresh.
  if (!best) {
    warm.flows?.drop();
    return { initial: freshLabels, record: { start: 'fallback', freshEnergy } };
  }
  const record = { warmEnergy: best.energy, freshEnergy, shift: best.shift };
  if (best.energy <= freshEnergy) {
    warm.flows?.shift(grid.width, grid.height, grid.views, best.shift[0], best.shift[1]);
    return { initial: best.labels, record: { start: 'warm', ...record } };
  }
  warm.flows?.drop();
  return { initial: freshLabels, record: { start: 'fallback', ...record } };
}
