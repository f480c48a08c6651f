import type { Raster } from '../data/raster';
import type { SharedStage } from '../data/sharedStage';

/**
 * The second half of filling what the left–right check marks: after the
 * row fill (leftRightCheck.ts), each marked pixel takes the weighted
 * median of the filled disparities around it, each weighted by how alike
 * its colour is to the pixel's and by its distance (the occlusion filling
 * of cost-volume filtering, Rhemann et al. 2011). The row fill alone
 * copies one neighbour's disparity along the row, which is right for an
 * occluded strip beside a foreground edge but leaves streaks where a
 * mismatch sits inside a surface; the median takes the surface that the
 * pixel's colour belongs to.
 *
 * The window is MEDIAN_RADIUS·f pixels each side, sampled every
 * MEDIAN_SPACING·f pixels, f the pyramid's scale (1 for a pair matched at
 * one level, 2 for its ×2 level, …): it covers the same part of the scene
 * at every level, with the same 5 × 5 samples, so its cost per marked
 * pixel does not grow with the resolution. Only marked pixels change; the
 * samples are the filled map's, marked ones included.
 */

/** Radius of the window, in pixels at the coarsest level (chosen with each scene left out in turn: BENCHMARKS.md). */
export const MEDIAN_RADIUS = 12;
/** Spacing of the window's samples, in pixels at the coarsest level. */
export const MEDIAN_SPACING = 6;
/** Mean absolute colour difference (0–255 per channel) at which a sample's weight falls by e. */
export const MEDIAN_COLOUR = 10;

/** The window at a level `scale` times the coarsest: k samples each side of the pixel, `step` pixels apart, reaching k·step pixels. */
function windowAt(scale: number): { k: number; step: number; reach: number } {
  const k = MEDIAN_RADIUS / MEDIAN_SPACING;
  const step = MEDIAN_SPACING * scale;
  return { k, step, reach: k * step };
}

/** Fixed-point unit of a weight: integer sums, so the median does not depend on the order of the samples. */
const UNIT = 1 << 10;

/**
 * `disp` with each pixel marked in `marked` replaced by the weighted
 * median of the window's samples of `disp`, on a pyramid level `scale`
 * times the coarsest; `left` is the view the map belongs to (same size).
 * Rows y0..y1−1 are computed (the rest copied), so that bands of rows can
 * be filtered apart and give the same map.
 */
export function medianFill(disp: Uint16Array, marked: Uint8Array, left: Raster, scale: number, y0 = 0, y1 = left.height): Uint16Array {
  const { width: W, height: H, channels: ch, data: img } = left;
  if (disp.length !== W * H || marked.length !== W * H) throw new RangeError(`medianFill: a ${W}×${H} image needs ${W * H} disparities and marks, got ${disp.length} and ${marked.length}`);
  if (!(Number.isInteger(scale) && scale >= 1)) throw new RangeError(`medianFill: scale must be an integer ≥ 1, got ${scale}`);
  if (ch !== 1 && ch !== 3) throw new RangeError(`medianFill: images of 1 or 3 channels, got ${ch}`);
  const out = disp.slice();
  const { k, step } = windowAt(scale);
  const side = 2 * k + 1;
  // Weights by sample offset (distance in coarsest-level pixels) and by the colour difference: the sum over the channels of |a − b| on the 0–255 scale, rounded.
  const spatial = new Uint32Array(side * side);
  for (let j = -k; j <= k; j++) for (let i = -k; i <= k; i++) spatial[(j + k) * side + i + k] = Math.round(UNIT * Math.exp(-Math.hypot(i, j) * MEDIAN_SPACING / MEDIAN_RADIUS));
  const colour = new Uint32Array(255 * ch + 1);
  for (let s = 0; s < colour.length; s++) colour[s] = Math.round(UNIT * Math.exp(-s / ch / MEDIAN_COLOUR));
  const toByte = 255 / left.maxval;
  // The window's samples kept sorted by disparity (an insertion sort of at most side² entries).
  const ds = new Uint16Array(side * side);
  const ws = new Int32Array(side * side);
  for (let y = y0; y < y1; y++) {
    const jLo = Math.max(-k, -Math.floor(y / step));
    const jHi = Math.min(k, Math.floor((H - 1 - y) / step));
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      if (!marked[p]) continue;
      const iLo = Math.max(-k, -Math.floor(x / step));
      const iHi = Math.min(k, Math.floor((W - 1 - x) / step));
      const pc = p * ch;
      // The pixel's own colour, once; a grey image's second and third are never read.
      const c0 = img[pc];
      const c1 = ch === 3 ? img[pc + 1] : 0;
      const c2 = ch === 3 ? img[pc + 2] : 0;
      let n = 0;
      let total = 0;
      for (let j = jLo; j <= jHi; j++) {
        const row = (y + j * step) * W + x;
        const srow = (j + k) * side + k;
        for (let i = iLo; i <= iHi; i++) {
          const q = row + i * step;
          const qc = q * ch;
          const sum = ch === 3 ? Math.abs(c0 - img[qc]) + Math.abs(c1 - img[qc + 1]) + Math.abs(c2 - img[qc + 2]) : Math.abs(c0 - img[qc]);
          // Weights are below 2^20 and a window has at most side² samples: every sum fits an int32.
          const w = (colour[Math.round(sum * toByte)] * spatial[srow + i]) >> 10;
          const d = disp[q];
          let e = n++;
          while (e > 0 && ds[e - 1] > d) {
            ds[e] = ds[e - 1];
            ws[e] = ws[e - 1];
            e--;
          }
          ds[e] = d;
          ws[e] = w;
          total += w;
        }
      }
      // The smallest disparity whose cumulative weight reaches half the total.
      let acc = 0;
      let e = 0;
      while (2 * (acc += ws[e]) < total) e++;
      out[p] = ds[e];
    }
  }
  return out;
}

/**
 * Rows y0..y1−1 of a sub-image (its rows, and the rows its windows read
 * above and below) to be filtered apart, as a thread takes them: plain
 * data only.
 */
export interface MedianBand {
  disp: Uint16Array;
  marked: Uint8Array;
  left: Raster;
  scale: number;
  y0: number;
  y1: number;
}

/** Filters bands, each to the filtered rows y0..y1−1 of its sub-image, in order. */
export type MedianRunner = (bands: MedianBand[]) => Promise<Uint16Array[]>;

/** Whether a thread's job is a band of the median fill (the strip threads also take strips). */
export function isMedianBand(job: object): job is MedianBand {
  return 'marked' in job && 'scale' in job;
}

/** A band's filtered rows (y0..y1−1 of its sub-image). */
export function medianBand(b: MedianBand): Uint16Array {
  const W = b.left.width;
  return medianFill(b.disp, b.marked, b.left, b.scale, b.y0, b.y1).slice(b.y0 * W, b.y1 * W);
}

/** Rows of a band, at least: each band also carries the rows its windows read beyond it (2·12·f), which a smaller band would mostly be. */
export const MEDIAN_BAND_ROWS = 64;

/** Bands for `threads` threads over `height` rows: one a thread, but none under MEDIAN_BAND_ROWS rows. */
export function medianBandCount(height: number, threads: number): number {
  return Math.max(1, Math.min(threads, Math.floor(height / MEDIAN_BAND_ROWS)));
}

/** Pixels of the largest map whose median a stage holds: what it holds stays for its pool's life, which a matcher of large pairs keeps between them. */
export const MEDIAN_STAGE_PIXELS = 1 << 20;

/**
 * medianFill over `count` bands of rows run by `run` (threads), joined:
 * the same map as one call, since a band carries every row its windows
 * read and the windows of a sub-image are those of the whole image. With
 * `stage` (a pool's), the bands are views of its shared copies.
 */
export async function medianFillInBands(disp: Uint16Array, marked: Uint8Array, left: Raster, scale: number, count: number, run: MedianRunner, stage?: SharedStage): Promise<Uint16Array> {
  const { width: W, height: H, channels: ch } = left;
  const { reach } = windowAt(scale);
  const rows = Math.ceil(H / count);
  // The map, its marks and its image copied into the stage once, and every band a view of them, instead of each band's
  // slices made (and moved to a thread) anew for every frame of a sequence; a map above MEDIAN_STAGE_PIXELS is not held.
  const held = disp.length <= MEDIAN_STAGE_PIXELS ? stage?.hold() ?? null : null;
  try {
    // Views of the stage's shared copies, or slices of the caller's arrays (moved to the threads).
    const part = <T extends Uint16Array | Uint8Array | Float32Array>(a: T, from: number, to: number): T => (held ? a.subarray(from, to) : a.slice(from, to)) as T;
    const src = held ? { disp: held.copy(0, disp), marked: held.copy(1, marked), left: held.raster(2, left) } : { disp, marked, left };
    const bands: MedianBand[] = [];
    for (let y = 0; y < H; y += rows) {
      const a = Math.max(0, y - reach);
      const b = Math.min(H, y + rows + reach);
      bands.push({
        disp: part(src.disp, a * W, b * W), marked: part(src.marked, a * W, b * W),
        left: { width: W, height: b - a, channels: ch, maxval: left.maxval, data: part(src.left.data, a * W * ch, b * W * ch) },
        scale, y0: y - a, y1: Math.min(H, y + rows) - a,
      });
    }
    const done = await run(bands);
    const out = new Uint16Array(W * H);
    for (let i = 0, y = 0; i < done.length; i++, y += rows) out.set(done[i], y * W);
    return out;
  } finally {
    held?.release();
  }
}
