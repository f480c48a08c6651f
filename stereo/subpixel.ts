import { boxFilter, DataCostMatcher, type DataCostOptions } from '../costs';
import type { Raster } from '../data/raster';
import { INVALID_DISPARITY } from './leftRightCheck';

/**
 * Sub-pixel refinement: the vertex of the parabola through the costs at
 * d − 1, d, d + 1 (the rule of OpenCV's block matchers and of SGM), on the
 * data costs summed over a window×window box (the same aggregation as the WTA
 * start, since single-pixel census costs are too coarse for a parabola):
 *
 *   d' = d + (C(d−1) − C(d+1)) / (2·(C(d−1) − 2·C(d) + C(d+1)))
 *
 * The offset is used only where the parabola opens upwards, and is clamped
 * to ±0.5 so the refined value stays in the label's own pixel interval.
 * Disparities at the ends of the range and invalid pixels keep their
 * integer value (invalid stays invalid, as +inf in the result).
 */
export function refineSubpixel(
  left: Raster, right: Raster, disparity: Uint16Array, minDisp: number, labels: number, costs: DataCostOptions, window: number,
): Float32Array {
  const matcher = new DataCostMatcher(left, right, { ...costs, minDisp, scale: 1 });
  const W = matcher.width;
  const H = matcher.height;
  const n = W * H;
  const cm = new Float64Array(n);
  const c0 = new Float64Array(n);
  const cp = new Float64Array(n);
  const label = new Int32Array(n);
  for (let i = 0; i < n; i++) label[i] = disparity[i] === INVALID_DISPARITY ? -10 : disparity[i] - minDisp;
  const slice = new Int32Array(n);
  const sums = new Float64Array(n);
  const tmp = new Float64Array(n);
  const col = new Float64Array(W);
  for (let l = 0; l < labels; l++) {
    matcher.slice(l, slice);
    boxFilter(slice, W, H, window, sums, tmp, col);
    for (let i = 0; i < n; i++) {
      const k = l - label[i];
      if (k === 0) c0[i] = sums[i];
      else if (k === 1) cp[i] = sums[i];
      else if (k === -1) cm[i] = sums[i];
    }
  }
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const l = label[i];
    if (l < 0) { out[i] = Infinity; continue; }
    out[i] = disparity[i];
    if (l === 0 || l === labels - 1) continue;
    const den = cm[i] - 2 * c0[i] + cp[i];
    if (!(den > 0)) continue;
    let delta = (cm[i] - cp[i]) / (2 * den);
    if (delta > 0.5) delta = 0.5;
    else if (delta < -0.5) delta = -0.5;
    out[i] = disparity[i] + delta;
  }
  return out;
}
