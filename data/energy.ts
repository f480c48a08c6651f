/**
 * A multi-label energy on a 4-connected grid, field for field the content of
 * an SMRF1 file (docs/smrf.md) when its data term is a volume:
 *
 *   E(l) = Σ_p D_p(l_p) + Σ_{(p,q)} w_pq · V(l_p, l_q)
 *
 * All terms are non-negative integers, so energies are exact. Every layer
 * (costs, graph cuts, expansion, stereo) reads energies through this one type.
 */
import type { CostImage } from './costImage';
import type { Raster } from './raster';

export type { CostImage };

/**
 * The 8-bit pair an energy was built from, as a device can read it to make
 * the energy's grey images (census costs) and smoothness weights itself: the
 * host then makes `wH`, `wV` and the census images only if something reads
 * them. Every sample of both rasters is an integer in 0..255 (maxval 255),
 * so the device's f32 arithmetic gives the host's values exactly.
 */
export interface PairSource {
  left: Raster;
  right: Raster;
  /** Per band of the energy, top to bottom: the pair, or the pair mirrored and swapped (mirror(right), mirror(left): the left–right check's right view). */
  views: ReadonlyArray<'pair' | 'mirrored'>;
  /** An edge's weight is `cued` when every channel of its two pixels differs by less than `limit`, else `plain` (costs/smoothness.ts). */
  plain: number;
  cued: number;
  limit: number;
}

export type SmoothnessKind = 'linear' | 'quadratic' | 'potts';

/**
 * How a data cost is computed from two images: the cost options (kind, τ,
 * scale, border, channels…) as one value. costs/ defines the kinds and the
 * host computation; the device cost kernels interpret the same value. This
 * layer only carries it, so a new cost kind changes no type here.
 */
export interface CostSpec {
  readonly kind: string;
  readonly channels: number;
  /** The integer factor every cost carries. */
  readonly scale: number;
  /** The largest cost any pixel gets (after truncation and scaling). */
  readonly maxCost: number;
}

/**
 * Where D_p(l) comes from: a W·H·L volume held on the host (index (y·W + x)·L + l,
 * label fastest), or the two images and the cost spec, from which a solver
 * computes each cost when it needs it (for pairs whose volume would not fit).
 */
export type DataTerm =
  | { kind: 'volume'; costs: Int32Array }
  | { kind: 'images'; left: CostImage; right: CostImage; spec: CostSpec }
  | BandedTerm;

/**
 * Costs of a band of labels per pixel: pixel p may take only the labels
 * lo[p] .. lo[p] + offset[p+1] − offset[p] − 1, whose costs are
 * costs[offset[p]] onwards; every other label is forbidden (D_p = +∞). The
 * energy of a finer pyramid level, whose labels are confined near the
 * coarser level's solution (stereo/coarseToFine.ts): memory and work grow
 * with the pixels times the band, not times the labels. `offset` has W·H + 1
 * entries and every band holds at least one label.
 */
export interface BandedTerm {
  kind: 'banded';
  lo: Uint16Array;
  offset: Int32Array;
  costs: Int32Array;
}

/** D_p(l) of a banded term, or −1 when l lies outside p's band. */
export function bandedCost(t: BandedTerm, p: number, l: number): number {
  const k = l - t.lo[p];
  const o = t.offset[p];
  return k >= 0 && k < t.offset[p + 1] - o ? t.costs[o + k] : -1;
}

export interface MrfEnergy {
  width: number;
  height: number;
  labels: number;
  data: DataTerm;
  smoothness: SmoothnessKind;
  /** Truncation T of V (ignored for Potts). */
  truncation: number;
  /** wH[y·W + x] couples (x,y)–(x+1,y); last column 0. */
  wH: Int32Array;
  /** wV[y·W + x] couples (x,y)–(x,y+1); last row 0. */
  wV: Int32Array;
  /**
   * Rows in independent bands of this many rows (a divisor of `height`):
   * two views of one pair stacked, matched as one energy. No edge crosses a
   * band's border (wV is 0 on each band's last row), and whatever reads a
   * window of rows around a pixel (census codes, the WTA's box sums,
   * vertical gradients) reads inside the pixel's band, as if each band were
   * an image of its own. Undefined: one band, the whole grid.
   */
  bandHeight?: number;
  /** The pair the energy was built from, when a device may make its weights and census images itself (PairSource). */
  pairSource?: PairSource;
}

/** The energy's rows per band (bandHeight, or the whole height); throws when it does not divide the height into whole bands. */
export function bandHeightOf(e: Pick<MrfEnergy, 'height' | 'bandHeight'>): number {
  const b = e.bandHeight ?? e.height;
  if (!Number.isInteger(b) || b < 1 || e.height % b !== 0) throw new Error(`energy: bands of ${String(b)} rows do not divide its ${e.height} rows`);
  return b;
}

/** A volume data term. */
export const volumeTerm = (costs: Int32Array): DataTerm => ({ kind: 'volume', costs });

/** True when the energy carries no cost volume (its costs are computed from the images per label when needed). */
export const costsOnDemand = (e: MrfEnergy): boolean => e.data.kind === 'images';

/** The energy's cost volume; throws when its costs are computed from the images (no volume on the host). */
export function volumeOf(e: MrfEnergy): Int32Array {
  if (e.data.kind !== 'volume') {
    throw new Error(`the ${e.width}×${e.height}×${e.labels} energy has no cost volume on the host (its costs are computed from the images)`);
  }
  return e.data.costs;
}

/** V(a, b) of the energy's smoothness kind. */
export function pairwise(kind: SmoothnessKind, truncation: number, a: number, b: number): number {
  if (kind === 'potts') return a === b ? 0 : 1;
  const d = a > b ? a - b : b - a;
  if (kind === 'linear') return d < truncation ? d : truncation;
  const q = d * d;
  return q < truncation ? q : truncation;
}

/**
 * Whether V is a metric on labels 0..labels−1 (V(a,c) ≤ V(a,b) + V(b,c)):
 * then every expansion move's pairwise terms are submodular and no graph
 * needs truncation. Linear and Potts always are; for a truncated quadratic
 * this walks all label triples.
 */
export function isMetricSmoothness(kind: SmoothnessKind, truncation: number, labels: number): boolean {
  if (kind === 'potts' || kind === 'linear') return true;
  for (let a = 0; a < labels; a++) for (let b = 0; b < labels; b++) for (let c = 0; c < labels; c++) {
    if (pairwise(kind, truncation, a, c) > pairwise(kind, truncation, a, b) + pairwise(kind, truncation, b, c)) return false;
  }
  return true;
}

/** isMetricSmoothness of an energy's smoothness term. */
export function isMetricTable(e: MrfEnergy): boolean {
  return isMetricSmoothness(e.smoothness, e.truncation, e.labels);
}

export interface EnergyBreakdown {
  data: number;
  smoothness: number;
  total: number;
}

/** The energy of two labelings of terms that share nothing (strips' own rows, the views of a pair): term by term, the sum. */
export function sumEnergy(a: EnergyBreakdown, b: EnergyBreakdown): EnergyBreakdown {
  return { data: a.data + b.data, smoothness: a.smoothness + b.smoothness, total: a.total + b.total };
}

/**
 * Exact energy of a labeling (needs the costs on the host: a volume or a
 * banded term; see volumeOf). Terms are summed in double precision, which
 * is exact for integers below 2^53 (far beyond W·H·(L+2)·2^31). A label
 * outside its pixel's band (infinite energy) is an error.
 */
export function computeEnergy(e: MrfEnergy, labels: ArrayLike<number>): EnergyBreakdown {
  const { width: W, height: H, labels: L } = e;
  const banded = e.data.kind === 'banded' ? e.data : undefined;
  const D = banded ? undefined : volumeOf(e);
  let data = 0;
  let smooth = 0;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      const lp = labels[p];
      if (banded) {
        const c = bandedCost(banded, p, lp);
        if (c < 0) throw new Error(`energy: label ${lp} at pixel (${x}, ${y}) lies outside its band ${banded.lo[p]}..${banded.lo[p] + banded.offset[p + 1] - banded.offset[p] - 1}`);
        data += c;
      } else {
        data += D![p * L + lp];
      }
      if (x + 1 < W) smooth += e.wH[p] * pairwise(e.smoothness, e.truncation, lp, labels[p + 1]);
      if (y + 1 < H) smooth += e.wV[p] * pairwise(e.smoothness, e.truncation, lp, labels[p + W]);
    }
  }
  return { data, smoothness: smooth, total: data + smooth };
}
