import { MAX_LABELS, type DataCostMatcher } from './dataCost';
import { optionError } from '../data/errors';
import { wtaOnThreads, wtaSlicesOnThreads } from './parallelCosts';
import type { CostThreading } from './costOptions';

/**
 * Local winner-take-all: each pixel takes the disparity whose cost, summed
 * over a window×window box around it, is smallest (ties → the smallest
 * disparity). The box is clipped at the image borders; since every
 * disparity of a pixel is summed over the same clipped box, no normalisation
 * is needed for the comparison. Used to start α-expansion from a good
 * labeling instead of all zeros (the paper's 9×9 aggregation).
 */

function validateWta(width: number, height: number, labels: number, window: number): void {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0) {
    throw new Error(`wta: bad size ${width}×${height}`);
  }
  if (!Number.isInteger(labels) || labels < 1 || labels > MAX_LABELS) {
    throw optionError('range', 'wta', 'ndisp', labels, `an integer in 1..${MAX_LABELS}`);
  }
  checkWtaWindow(window, 'wta');
}

/** A WTA window, as the host's and the device's WTA take it: an odd integer ≥ 1; the error names `where`. */
export function checkWtaWindow(window: unknown, where: string): asserts window is number {
  if (typeof window !== 'number' || !Number.isInteger(window) || window < 1 || window % 2 === 0) {
    throw optionError(typeof window === 'number' ? 'range' : 'type', where, 'window', window, 'an odd integer ≥ 1');
  }
}

/**
 * Box sums of one W·H cost slice over a window×window box clipped at the
 * borders: horizontal running sums into `tmp`, then vertical running sums
 * kept per column in `col`, written to `out`. O(1) per pixel whatever the
 * window. Sums are doubles: exact for integers up to 2^53, where an int32
 * sum of a large window of large costs could overflow.
 */
export function boxFilter(
  slice: ArrayLike<number>,
  width: number,
  height: number,
  window: number,
  out: Float64Array,
  tmp: Float64Array,
  col: Float64Array,
): void {
  boxFilterRows(slice, width, height, window, tmp, col, (y, sums) => out.set(sums, y * width));
}

/**
 * The box filter, handing each finished output row to `emit(y, sums)` (sums
 * has the row's W box sums; valid only during the call), so WTA can compare
 * a row while it is in cache instead of storing the whole filtered slice.
 */
function boxFilterRows(
  slice: ArrayLike<number>,
  width: number,
  height: number,
  window: number,
  tmp: Float64Array,
  col: Float64Array,
  emit: (y: number, sums: Float64Array) => void,
): void {
  const W = width;
  const H = height;
  const r = (window - 1) >> 1;
  // Horizontal pass: tmp[y,x] = Σ slice[y, x−r..x+r] (clipped).
  for (let y = 0; y < H; y++) {
    const row = y * W;
    let s = 0;
    const pre = r < W ? r : W;
    for (let x = 0; x < pre; x++) s += slice[row + x];
    for (let x = 0; x < W; x++) {
      const add = x + r;
      if (add < W) s += slice[row + add];
      const drop = x - r - 1;
      if (drop >= 0) s -= slice[row + drop];
      tmp[row + x] = s;
    }
  }
  // Vertical pass: col[x] holds Σ tmp[y−r..y+r, x] (clipped) as y advances.
  col.fill(0, 0, W);
  const preRows = r < H ? r : H;
  for (let y = 0; y < preRows; y++) {
    const row = y * W;
    for (let x = 0; x < W; x++) col[x] += tmp[row + x];
  }
  for (let y = 0; y < H; y++) {
    const add = y + r;
    if (add < H) {
      const row = add * W;
      for (let x = 0; x < W; x++) col[x] += tmp[row + x];
    }
    const drop = y - r - 1;
    if (drop >= 0) {
      const row = drop * W;
      for (let x = 0; x < W; x++) col[x] -= tmp[row + x];
    }
    emit(y, col);
  }
}

/**
 * WTA from cost slices produced one disparity at a time, so the full volume
 * never has to exist: `slice(d, buf)` returns the W·H costs of disparity d
 * (it may fill and return `buf`). Keeps a running best cost and best label.
 */
export function wtaFromSlices(
  slice: (d: number, buf: Int32Array) => ArrayLike<number>,
  width: number,
  height: number,
  labels: number,
  window = 9,
): Uint16Array {
  validateWta(width, height, labels, window);
  const n = width * height;
  const best = new Float64Array(n).fill(Infinity);
  const label = new Uint16Array(n);
  wtaOverLabels(slice, width, height, window, 0, labels, best, label);
  return label;
}

/**
 * The WTA of a pair's costs over disparities 0..labels − 1 without a
 * volume (costs on demand): from slices computed on worker threads for
 * large pairs (costs/parallelCosts.ts), else slice by slice here; the
 * same labels either way.
 */
export function wtaFromMatcher(matcher: DataCostMatcher, labels: number, window = 9): Uint16Array {
  const { width, height } = matcher;
  validateWta(width, height, labels, window);
  return wtaSlicesOnThreads(matcher.left, matcher.right, matcher.options, width, height, labels, window)
    ?? wtaFromSlices((d, buf) => matcher.slice(d, buf), width, height, labels, window);
}

/**
 * The WTA of disparities from..to − 1 into `best` (box sums) and `label`,
 * which may hold a result already: a pixel takes a disparity only when its
 * sum is strictly smaller, so on a tie the earlier (smaller) one stays.
 * Worker threads run it over ranges of disparities (costs/parallelCosts.ts).
 */
export function wtaOverLabels(
  slice: (d: number, buf: Int32Array) => ArrayLike<number>,
  width: number,
  height: number,
  window: number,
  from: number,
  to: number,
  best: Float64Array,
  label: Uint16Array,
): void {
  const n = width * height;
  const buf = new Int32Array(n);
  const tmp = new Float64Array(n);
  const col = new Float64Array(width);
  let d = from;
  const compareRow = (y: number, sums: Float64Array): void => {
    for (let x = 0, p = y * width; x < width; x++, p++) {
      const v = sums[x];
      if (v < best[p]) {
        best[p] = v;
        label[p] = d;
      }
    }
  };
  for (d = from; d < to; d++) {
    const s = slice(d, buf);
    if (s.length !== n) throw new Error(`wta: slice for disparity ${d} has ${s.length} entries, expected ${n} (${width}×${height})`);
    boxFilterRows(s, width, height, window, tmp, col, compareRow);
  }
}

/** Labels gathered per pass over the volume by wtaInit (8 slices ≈ 5 MB at 450×375). */
const WTA_LABEL_BLOCK = 8;

/**
 * The WTA of a full cost volume over disparities from..to − 1, into `best`
 * and `label` (filled with +∞ and 0 by the caller).
 */
export function wtaVolumeRange(volume: Int32Array, width: number, height: number, labels: number, window: number, from: number, to: number, best: Float64Array, label: Uint16Array): void {
  const n = width * height;
  // Reading one label at a time strides through the whole volume once per
  // label; reading a block of consecutive labels per pixel touches each cache
  // line once per block instead.
  const block = Math.min(to - from, WTA_LABEL_BLOCK);
  const slices = Array.from({ length: block }, () => new Int32Array(n));
  let first = -1;
  wtaOverLabels(
    (d) => {
      if (first < 0 || d < first || d >= first + block) {
        first = d;
        const m = Math.min(block, to - d);
        for (let p = 0, i = d; p < n; p++, i += labels) {
          for (let k = 0; k < m; k++) slices[k][p] = volume[i + k];
        }
      }
      return slices[d - first];
    },
    width,
    height,
    window,
    from,
    to,
    best,
    label,
  );
}

/**
 * WTA on a full cost volume, index (y·W + x)·labels + d. Large volumes are
 * split by disparity over worker threads (costs/parallelCosts.ts), each
 * range's winners merged in order, which gives the same labels.
 */
export function wtaInit(volume: Int32Array, width: number, height: number, labels: number, window = 9, threads?: Partial<CostThreading>): Uint16Array {
  validateWta(width, height, labels, window);
  const n = width * height;
  if (volume.length !== n * labels) {
    throw new Error(`wta: cost volume has ${volume.length} entries, expected ${n * labels} (${width}×${height}×${labels})`);
  }
  const threaded = wtaOnThreads(volume, width, height, labels, window, threads);
  if (threaded) return threaded;
  const best = new Float64Array(n).fill(Infinity);
  const label = new Uint16Array(n);
  wtaVolumeRange(volume, width, height, labels, window, 0, labels, best, label);
  return label;
}
