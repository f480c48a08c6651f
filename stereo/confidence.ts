import { boxFilter, DataCostMatcher } from '../costs';
import type { Raster } from '../data/raster';
import { INVALID_DISPARITY } from './leftRightCheck';
import type { MatchResult } from './match';

/**
 * A confidence in 0..1 per pixel of a match, from three things the run
 * knows, multiplied:
 *
 *   c = L · M · E
 *
 * - L, left–right agreement: 1 where the two views' disparities agree
 *   (within 1), 1/4 where the check marked the pixel (its value was filled
 *   from its row), 1 everywhere without the check; 0 for a pixel left
 *   invalid.
 * - M, the data cost's margin: with C(l) the cost of label l summed over
 *   the WTA's window×window box, m = (min over |l − ℓ| ≥ 2 of C(l) − C(ℓ))
 *   / window² for the chosen label ℓ (the next best match outside ℓ's own
 *   minimum), and M = m / (m + τ/4) for m > 0, else 0: a pixel whose data
 *   prefer another disparity, or are as good at two, scores 0.
 * - E, the distance to a disparity edge: k, the city-block distance to the
 *   nearest pixel one of whose 4 neighbours differs from it by more than 1,
 *   and E = (k + 1) / (k + 3) (1/3 on an edge, 1 far from one); a map
 *   without an edge has E = 1.
 *
 * Bad matches gather where the views disagree, where the texture is weak
 * or repeats (a small or negative margin) and at depth edges (the
 * fattening of foreground objects): each factor ranks one of these.
 */

/** L of a pixel the left–right check marked. */
export const MARKED_AGREEMENT = 0.25;

export interface ConfidenceInputs {
  left: Raster;
  right: Raster;
  result: Pick<MatchResult, 'width' | 'height' | 'disparity' | 'minDisp' | 'ndisp' | 'params' | 'inconsistent'>;
}

/** The confidence map (W·H, row-major, 0..1). */
export function confidenceMap({ left, right, result: r }: ConfidenceInputs): Float32Array {
  const { width: W, height: H } = r;
  const n = W * H;
  const margin = costMargins(left, right, r);
  const edge = edgeDistances(r.disparity, W, H);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    if (r.disparity[i] === INVALID_DISPARITY) continue;
    const L = r.inconsistent?.[i] ? MARKED_AGREEMENT : 1;
    const k = edge[i];
    const E = k === Infinity ? 1 : (k + 1) / (k + 3);
    out[i] = L * margin[i] * E;
  }
  return out;
}

/** M per pixel (see the module comment). */
function costMargins(left: Raster, right: Raster, r: ConfidenceInputs['result']): Float32Array {
  const p = r.params;
  const matcher = new DataCostMatcher(left, right, { kind: p.cost, tau: p.tau, border: p.border, censusWindow: p.censusWindow, minDisp: r.minDisp, scale: 1 });
  const W = r.width;
  const H = r.height;
  const n = W * H;
  const label = new Int32Array(n);
  for (let i = 0; i < n; i++) label[i] = r.disparity[i] === INVALID_DISPARITY ? -10 : r.disparity[i] - r.minDisp;
  const chosen = new Float64Array(n);
  const other = new Float64Array(n).fill(Infinity);
  const slice = new Int32Array(n);
  const sums = new Float64Array(n);
  const tmp = new Float64Array(n);
  const col = new Float64Array(W);
  for (let l = 0; l < r.ndisp; l++) {
    matcher.slice(l, slice);
    boxFilter(slice, W, H, p.window, sums, tmp, col);
    for (let i = 0; i < n; i++) {
      const k = l - label[i];
      if (k === 0) chosen[i] = sums[i];
      else if ((k >= 2 || k <= -2) && sums[i] < other[i]) other[i] = sums[i];
    }
  }
  const area = p.window * p.window;
  const s = p.tau / 4;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    if (label[i] < 0) continue;
    // With fewer than three labels no label is 2 away: the margin is not known, and counts as large.
    const m = other[i] === Infinity ? Infinity : (other[i] - chosen[i]) / area;
    out[i] = m === Infinity ? 1 : m > 0 ? m / (m + s) : 0;
  }
  return out;
}

/**
 * City-block distance of each pixel to the nearest edge pixel (one with a
 * 4-neighbour more than 1 away in disparity; an invalid pixel is an edge),
 * by the two-pass chamfer transform; Infinity everywhere when there is none.
 */
export function edgeDistances(d: ArrayLike<number>, W: number, H: number): Float32Array {
  const n = W * H;
  const dist = new Float32Array(n).fill(Infinity);
  const differs = (a: number, b: number): boolean => a === INVALID_DISPARITY || b === INVALID_DISPARITY || Math.abs(a - b) > 1;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const v = d[i];
      if ((x > 0 && differs(v, d[i - 1])) || (x + 1 < W && differs(v, d[i + 1])) || (y > 0 && differs(v, d[i - W])) || (y + 1 < H && differs(v, d[i + W]))) dist[i] = 0;
    }
  }
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      if (x > 0 && dist[i - 1] + 1 < dist[i]) dist[i] = dist[i - 1] + 1;
      if (y > 0 && dist[i - W] + 1 < dist[i]) dist[i] = dist[i - W] + 1;
    }
  }
  for (let y = H - 1; y >= 0; y--) {
    for (let x = W - 1; x >= 0; x--) {
      const i = y * W + x;
      if (x + 1 < W && dist[i + 1] + 1 < dist[i]) dist[i] = dist[i + 1] + 1;
      if (y + 1 < H && dist[i + W] + 1 < dist[i]) dist[i] = dist[i + W] + 1;
    }
  }
  return dist;
}

/**
 * Bad-pixel rates (|d − gt| > threshold, an invalid pixel bad) among the
 * `fraction` most confident of the pixels `mask` selects that have ground
 * truth, and among the rest; ties in confidence are broken by pixel order.
 */
export function badByConfidence(
  confidence: Float32Array, disparity: ArrayLike<number>, groundTruth: Float32Array, threshold: number, mask?: Uint8Array, fraction = 0.5,
): { confident: number; rest: number; pixels: number } {
  const idx: number[] = [];
  for (let i = 0; i < groundTruth.length; i++) if (Number.isFinite(groundTruth[i]) && (!mask || mask[i])) idx.push(i);
  idx.sort((a, b) => confidence[b] - confidence[a] || a - b);
  const top = Math.round(idx.length * fraction);
  const isBad = (i: number): boolean => disparity[i] === INVALID_DISPARITY || !Number.isFinite(disparity[i]) || Math.abs(disparity[i] - groundTruth[i]) > threshold;
  let a = 0;
  let b = 0;
  for (let k = 0; k < idx.length; k++) if (isBad(idx[k])) (k < top ? a++ : b++);
  return { confident: top ? (100 * a) / top : 0, rest: idx.length - top ? (100 * b) / (idx.length - top) : 0, pixels: idx.length };
}
