import type { Raster } from '../data/raster';

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
 * at every level, with the same 11 × 11 samples, so its cost per marked
 * pixel does not grow with the resolution. Only marked pixels change; the
 * samples are the filled map's, marked ones included.
 */

/** Radius of the window, in pixels at the coarsest level (chosen with each scene left out in turn: BENCHMARKS.md). */
export const MEDIAN_RADIUS = 10;
/** Spacing of the window's samples, in pixels at the coarsest level. */
export const MEDIAN_SPACING = 2;
/** Mean absolute colour difference (0–255 per channel) at which a sample's weight falls by e. */
export const MEDIAN_COLOUR = 10;

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
  const { width: W, height: H, channels: ch } = left;
  if (disp.length !== W * H || marked.length !== W * H) throw new RangeError(`medianFill: a ${W}×${H} image needs ${W * H} disparities and marks, got ${disp.length} and ${marked.length}`);
  if (!(Number.isInteger(scale) && scale >= 1)) throw new RangeError(`medianFill: scale must be an integer ≥ 1, got ${scale}`);
  const out = disp.slice();
  const k = MEDIAN_RADIUS / MEDIAN_SPACING;
  const step = MEDIAN_SPACING * scale;
  const side = 2 * k + 1;
  // Weights by sample offset (distance in coarsest-level pixels) and by the sum of the channels' absolute differences.
  const spatial = new Uint32Array(side * side);
  for (let j = -k; j <= k; j++) for (let i = -k; i <= k; i++) spatial[(j + k) * side + i + k] = Math.round(UNIT * Math.exp(-Math.hypot(i, j) * MEDIAN_SPACING / MEDIAN_RADIUS));
  const colour = new Uint32Array(255 * ch + 1);
  for (let s = 0; s < colour.length; s++) colour[s] = Math.round(UNIT * Math.exp(-s / ch / MEDIAN_COLOUR));
  // The rows the windows read, as 0–255 samples (the colour table's unit).
  const r0 = Math.max(0, y0 - k * step);
  const r1 = Math.min(H, y1 + k * step);
  const img = new Uint8Array(W * H * ch);
  const toByte = 255 / left.maxval;
  for (let i = r0 * W * ch; i < r1 * W * ch; i++) img[i] = Math.round(left.data[i] * toByte);
  let maxD = 0;
  for (let i = 0; i < disp.length; i++) if (disp[i] > maxD) maxD = disp[i];
  // Weights are below 2^20 and a window has 121 samples: every sum fits an int32.
  const hist = new Int32Array(maxD + 1);
  for (let y = y0; y < y1; y++) {
    const jLo = Math.max(-k, -Math.floor(y / step));
    const jHi = Math.min(k, Math.floor((H - 1 - y) / step));
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      if (!marked[p]) continue;
      const iLo = Math.max(-k, -Math.floor(x / step));
      const iHi = Math.min(k, Math.floor((W - 1 - x) / step));
      let lo = maxD;
      let hi = 0;
      let total = 0;
      const pc = p * ch;
      for (let j = jLo; j <= jHi; j++) {
        const row = (y + j * step) * W + x;
        const srow = (j + k) * side + k;
        for (let i = iLo; i <= iHi; i++) {
          const q = row + i * step;
          const qc = q * ch;
          let diff = Math.abs(img[pc] - img[qc]);
          for (let c = 1; c < ch; c++) diff += Math.abs(img[pc + c] - img[qc + c]);
          const w = (colour[diff] * spatial[srow + i]) >> 10;
          const d = disp[q];
          hist[d] += w;
          total += w;
          if (d < lo) lo = d;
          if (d > hi) hi = d;
        }
      }
      // The smallest disparity whose cumulative weight reaches half the total; the bins used are cleared on the way.
      let acc = 0;
      let median = -1;
      for (let d = lo; d <= hi; d++) {
        acc += hist[d];
        hist[d] = 0;
        if (median < 0 && 2 * acc >= total) median = d;
      }
      out[p] = median;
    }
  }
  return out;
}
