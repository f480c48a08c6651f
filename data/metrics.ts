import type { Raster } from './raster';
import type { SceneMasks } from './sceneTypes';
import { optionError } from './errors';

/**
 * Middlebury-style scores of a disparity map against ground truth.
 *
 * A pixel is bad at threshold t when |d − d_gt| > t (the v2 table's rule).
 * Regions: 'known' (every pixel with finite ground truth) and, where the
 * scene has them, the v2 masks nonocc / all / disc (intersected with known
 * ground truth, so an unknown pixel never counts).
 */
export type RegionName = 'known' | 'nonocc' | 'all' | 'disc';

export interface RegionScore {
  /** A RegionName, or the name of a custom mask. */
  region: string;
  /** Pixels evaluated. */
  pixels: number;
  /** Bad-pixel percentage per threshold, in the order of Evaluation.thresholds. */
  bad: number[];
  /** Mean |d − d_gt|. */
  avgError: number;
  /** sqrt(mean (d − d_gt)²). */
  rms: number;
}

export interface Evaluation {
  thresholds: number[];
  regions: RegionScore[];
  /** Set when the nonocc mask was derived from left-right consistency of two ground truths. */
  note?: string;
}

export interface EvaluateOptions {
  thresholds?: number[];
  masks?: SceneMasks;
  nonoccDerived?: boolean;
  /** Regions to report (default: known plus every mask present). */
  regions?: RegionName[];
  /** Further regions from mask images (non-zero = evaluated), reported under their names. */
  customMasks?: { name: string; mask: Uint8Array }[];
}

/** evaluate()'s thresholds, as any caller gave them (the library's entry relies on this check). */
function checkThresholds(t: unknown): asserts t is number[] {
  if (!Array.isArray(t)) throw optionError('type', 'evaluate', 'thresholds', t, 'an array of finite numbers ≥ 0, e.g. [1, 2]');
  if (t.length === 0) throw optionError('range', 'evaluate', 'thresholds', t, 'at least one threshold');
  for (const v of t) if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw optionError(typeof v === 'number' ? 'range' : 'type', 'evaluate', 'thresholds', v, 'finite numbers ≥ 0');
}

/**
 * Pixels, bad percentages (per threshold, in the given order), mean and RMS
 * error of each region (a mask, or undefined for every pixel), all in one
 * pass: each pixel's error is computed once and added to every region that
 * holds it, in pixel order, so each region's sums are the same additions in
 * the same order as a loop over that region alone, and its results are
 * identical to one. Instead of one comparison per threshold, a pixel adds 1 to
 * the bucket of the number of distinct thresholds it exceeds (|d − gt| NaN
 * exceeds them all, as `!(e <= t)` has it); a threshold's bad count is the sum
 * of the buckets above its rank, an exact integer either way.
 */
function regionStats(
  disparity: ArrayLike<number>,
  groundTruth: Float32Array,
  masks: (Uint8Array | undefined)[],
  thresholds: number[],
): Omit<RegionScore, 'region'>[] {
  const sorted = [...new Set(thresholds)].sort((a, b) => a - b);
  const m = sorted.length;
  const R = masks.length;
  const acc = new Float64Array(R * (m + 4));
  accumulateRegions(disparity, groundTruth, masks, Float64Array.from(sorted), acc);
  return masks.map((_, r) => {
    const base = r * (m + 4);
    const count = acc[base];
    // above[j]: pixels exceeding sorted[j], i.e. in a bucket above j.
    const above = new Float64Array(m);
    for (let j = m - 1, sum = 0; j >= 0; j--) {
      sum += acc[base + 3 + j + 1];
      above[j] = sum;
    }
    return {
      pixels: count,
      bad: thresholds.map((t) => (count ? (100 * above[sorted.indexOf(t)]) / count : 0)),
      avgError: count ? acc[base + 1] / count : 0,
      rms: count ? Math.sqrt(acc[base + 2] / count) : 0,
    };
  });
}

/**
 * regionStats' pass. Region r's accumulators sit at acc[r(m + 4) …]: pixels,
 * Σ|e|, Σe², then the m + 1 buckets (m thresholds, ascending in `sorted`).
 */
function accumulateRegions(d: ArrayLike<number>, gt: Float32Array, masks: (Uint8Array | undefined)[], sorted: Float64Array, acc: Float64Array): void {
  const m = sorted.length;
  const R = masks.length;
  const n = gt.length;
  for (let p = 0; p < n; p++) {
    const g = gt[p];
    if (!Number.isFinite(g)) continue;
    const e = Math.abs(d[p] - g);
    let k = 0;
    while (k < m && !(e <= sorted[k])) k++;
    for (let r = 0, base = 0; r < R; r++, base += m + 4) {
      const mask = masks[r];
      if (mask !== undefined && mask[p] === 0) continue;
      acc[base]++;
      acc[base + 1] += e;
      acc[base + 2] += e * e;
      acc[base + 3 + k]++;
    }
  }
}

export function evaluateDisparity(
  disparity: ArrayLike<number>,
  groundTruth: Float32Array,
  width: number,
  height: number,
  options: EvaluateOptions = {},
): Evaluation {
  const n = width * height;
  if (disparity.length !== n) throw new Error(`evaluation: the disparity map has ${disparity.length} pixels, the ground truth ${width}×${height} = ${n}`);
  if (groundTruth.length !== n) throw new Error(`evaluation: the ground truth has ${groundTruth.length} pixels, expected ${n}`);
  const thresholds = options.thresholds ?? [1];
  checkThresholds(thresholds);
  const masks = options.masks ?? {};
  const wanted = options.regions ?? (['known', 'nonocc', 'all', 'disc'] as RegionName[]).filter((r) => r === 'known' || masks[r]);
  const todo: { region: string; mask?: Uint8Array }[] = wanted.map((region) => {
    const mask = region === 'known' ? undefined : masks[region];
    if (region !== 'known' && !mask) throw optionError('range', 'evaluate', 'regions', region, `'known' or a region whose mask is given (there is no ${region} mask; masks given: ${Object.keys(masks).join(', ') || 'none'})`);
    return { region, mask };
  });
  for (const c of options.customMasks ?? []) todo.push({ region: c.name, mask: c.mask });
  for (const { region, mask } of todo) {
    if (mask && mask.length !== n) throw new Error(`evaluation: the ${region} mask has ${mask.length} pixels, expected ${n}`);
  }
  const stats = regionStats(disparity, groundTruth, todo.map((t) => t.mask), thresholds);
  const regions: RegionScore[] = todo.map(({ region }, r) => ({ region, ...stats[r] }));
  const note = options.nonoccDerived ? 'nonocc derived from left-right consistency of the two ground-truth maps' : undefined;
  return { thresholds, regions, note };
}

/** One region's score by name, or undefined. */
export function regionScore(e: Evaluation, region: RegionName): RegionScore | undefined {
  return e.regions.find((r) => r.region === region);
}

/**
 * The error image: the left image in grey, bad pixels (|d − gt| > threshold,
 * inside the mask when one is given) in red, unknown ground truth (or outside
 * the mask) dimmed to half brightness. The grey of a pixel is its channels
 * summed from 0 in channel order, divided by the channel count, times
 * 255 / maxval.
 */
export function errorImage(left: Raster, disparity: ArrayLike<number>, groundTruth: Float32Array, threshold: number, mask?: Uint8Array): Raster {
  return errorImageInto(new Float32Array(left.width * left.height * 3), left, disparity, groundTruth, threshold, mask);
}

/**
 * errorImage drawn into `out` (width × height × 3 samples, every one
 * written), for a caller that reuses one buffer for several images.
 */
export function errorImageInto(out: Float32Array, left: Raster, disparity: ArrayLike<number>, groundTruth: Float32Array, threshold: number, mask?: Uint8Array): Raster {
  const { width: W, height: H, channels: C } = left;
  checkRgbBuffer(out, W, H);
  errorPixels(out, W * H, left.data, C, 255 / left.maxval, disparity, groundTruth, threshold, mask);
  return { width: W, height: H, channels: 3, data: out, maxval: 255 };
}

function checkRgbBuffer(out: Float32Array, width: number, height: number): void {
  if (out.length !== width * height * 3) throw new Error(`image buffer: ${out.length} samples for a ${width}×${height} RGB image (expected ${width * height * 3})`);
}

/**
 * errorImage's loop over the first n pixels. The disparity is read and every
 * sample stored on every pixel, whichever way the pixel goes, so that the
 * code V8 compiles while the loop runs has met those accesses (code that
 * meets an access it has not seen is dropped, and the loop goes on
 * unoptimized).
 */
function errorPixels(out: Float32Array, n: number, src: Float32Array, C: number, s: number, d: ArrayLike<number>, gt: Float32Array, threshold: number, mask: Uint8Array | undefined): void {
  for (let p = 0, i = 0, o = 0; p < n; p++, o += 3) {
    let grey = 0;
    for (const end = i + C; i < end; i++) grey += src[i];
    grey = (grey / C) * s;
    const g = gt[p];
    const e = Math.abs(d[p] - g);
    const evaluated = g - g === 0 && (mask === undefined || mask[p] !== 0); // g − g is 0 exactly when g is finite
    const bad = evaluated && !(e <= threshold);
    const v = evaluated ? grey : grey * 0.5;
    out[o] = bad ? 255 : v;
    out[o + 1] = bad ? 0 : v;
    out[o + 2] = bad ? 0 : v;
  }
}

/**
 * Writes the Turbo-like colour of t ∈ [0, 1] (a polynomial fit of Google's
 * Turbo map, each channel clamped to [0, 255]) at out[o..o+2]. The clamp is
 * written as comparisons; for the finite values t ∈ [0, 1] gives it equals
 * Math.max(0, Math.min(255, v)), −0 included (it gives +0).
 */
function turboInto(out: Float32Array, o: number, t: number): void {
  const r = 34.61 + t * (1172.33 - t * (10793.56 - t * (33300.12 - t * (38394.49 - t * 14825.05))));
  const g = 23.31 + t * (557.33 + t * (1225.33 - t * (3574.96 - t * (1073.77 + t * 707.56))));
  const b = 27.2 + t * (3211.1 - t * (15327.97 - t * (27814.0 - t * (22569.18 - t * 6838.66))));
  out[o] = r > 0 ? (r < 255 ? r : 255) : 0;
  out[o + 1] = g > 0 ? (g < 255 ? g : 255) : 0;
  out[o + 2] = b > 0 ? (b < 255 ? b : 255) : 0;
}

/**
 * The colour table covers the disparities k / COLOR_STEPS, k = 0 … steps: a
 * label map's integers and the values of Middlebury's integer ground-truth
 * files at scales 1, 2, 4, 8 and 16 (quarter pixels for teddy and cones).
 */
const COLOR_STEPS = 16;
/** The table's largest size in entries (it also stays within the pixel count, so that building it never costs more than the image). */
const COLOR_TABLE_MAX = 1 << 16;

/**
 * Colour-mapped disparity (blue far … red near): t = d / maxDisparity clamped
 * to [0, 1]; non-finite values black. Most pixels take a colour computed
 * once, each computed by turboInto for the same t and stored as the output's
 * float32s, so every pixel gets the samples turboInto writes for it:
 * - a d with d · COLOR_STEPS an integer k in the table's range: entry k
 *   (multiplying by a power of two is exact, so k / COLOR_STEPS is d itself);
 * - d ≥ maxDisparity (then d / maxDisparity ≥ 1, rounding being monotone):
 *   the colour of t = 1; d < 0 (then t = 0): entry 0.
 * Every other finite d is computed on its own.
 */
export function colorizeDisparity(disparity: ArrayLike<number>, width: number, height: number, maxDisparity: number): Raster {
  return colorizeDisparityInto(new Float32Array(width * height * 3), disparity, width, height, maxDisparity);
}

/**
 * colorizeDisparity drawn into `out` (width × height × 3 samples, every one
 * written), for a caller that reuses one buffer for several images.
 */
export function colorizeDisparityInto(out: Float32Array, disparity: ArrayLike<number>, width: number, height: number, maxDisparity: number): Raster {
  checkRgbBuffer(out, width, height);
  const m = maxDisparity > 0 ? maxDisparity : 1;
  const steps = Math.min(Math.ceil(m) * COLOR_STEPS, width * height, COLOR_TABLE_MAX);
  const table = new Float32Array((steps + 2) * 3); // entries 0 … steps, then the colour of t = 1
  for (let k = 0; k <= steps; k++) turboInto(table, k * 3, Math.max(0, Math.min(1, k / COLOR_STEPS / m)));
  turboInto(table, (steps + 1) * 3, 1);
  colorPixels(out, disparity, width * height, m, table, steps);
  return { width, height, channels: 3, data: out, maxval: 255 };
}

/** colorizeDisparity's loop over the first n pixels. */
function colorPixels(out: Float32Array, d: ArrayLike<number>, n: number, m: number, table: Float32Array, steps: number): void {
  const top = (steps + 1) * 3;
  for (let p = 0, o = 0; p < n; p++, o += 3) {
    const x = d[p];
    const k = x * COLOR_STEPS;
    if (!(x - x === 0)) { // ±Infinity and NaN (x − x is NaN): black
      out[o] = 0; out[o + 1] = 0; out[o + 2] = 0;
      continue;
    }
    const j = k >= 0 && k <= steps && (k | 0) === k ? k * 3 : x >= m ? top : x < 0 ? 0 : -1;
    if (j >= 0) {
      out[o] = table[j]; out[o + 1] = table[j + 1]; out[o + 2] = table[j + 2];
    } else {
      turboInto(out, o, x / m); // 0 < x < m here, so 0 ≤ x / m ≤ 1: the clamp would change nothing
    }
  }
}
