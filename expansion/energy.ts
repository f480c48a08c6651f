/**
 * A multi-label energy on a 4-connected grid, field for field the content of
 * an SMRF1 file (../shared/formats/smrf.md):
 *
 *   E(l) = Σ_p D_p(l_p) + Σ_{(p,q)} w_pq · V(l_p, l_q)
 *
 * All terms are non-negative integers, so energies are exact.
 */
export type SmoothnessKind = 'linear' | 'quadratic' | 'potts';

export interface MrfEnergy {
  width: number;
  height: number;
  labels: number;
  /** D: index (y·W + x)·L + l, label fastest. */
  data: Int32Array;
  smoothness: SmoothnessKind;
  /** Truncation T of V (ignored for Potts). */
  truncation: number;
  /** wH[y·W + x] couples (x,y)–(x+1,y); last column 0. */
  wH: Int32Array;
  /** wV[y·W + x] couples (x,y)–(x,y+1); last row 0. */
  wV: Int32Array;
}

/** V(a, b) of the energy's smoothness kind. */
export function pairwise(kind: SmoothnessKind, truncation: number, a: number, b: number): number {
  if (kind === 'potts') return a === b ? 0 : 1;
  const d = a > b ? a - b : b - a;
  if (kind === 'linear') return d < truncation ? d : truncation;
  const q = d * d;
  return q < truncation ? q : truncation;
}

export interface EnergyBreakdown {
  data: number;
  smoothness: number;
  total: number;
}

/**
 * Exact energy of a labeling. Terms are summed in double precision, which is
 * exact for integers below 2^53 (far beyond W·H·(L+2)·2^31).
 */
export function computeEnergy(e: MrfEnergy, labels: ArrayLike<number>): EnergyBreakdown {
  const { width: W, height: H, labels: L } = e;
  let data = 0;
  let smooth = 0;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      const lp = labels[p];
      data += e.data[p * L + lp];
      if (x + 1 < W) smooth += e.wH[p] * pairwise(e.smoothness, e.truncation, lp, labels[p + 1]);
      if (y + 1 < H) smooth += e.wV[p] * pairwise(e.smoothness, e.truncation, lp, labels[p + W]);
    }
  }
  return { data, smoothness: smooth, total: data + smooth };
}
