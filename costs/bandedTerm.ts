import type { BandedTerm } from '../data/energy';
import type { DataCostMatcher } from './dataCost';

/**
 * Where a banded term's arrays come from: arrays of exactly `n` entries
 * (contents undefined), which the term then owns until the provider hands
 * them out again. A thread that builds one term after another keeps one
 * provider (expansion/bandedMoves.ts BandedMoveScratch), so that its
 * terms reuse the memory of the one before.
 */
export interface BandedArrays {
  offsets(n: number): Int32Array;
  costs(n: number): Int32Array;
  /** The term's copy of the bands' low ends. */
  lows(n: number): Uint16Array;
}

/** Fresh arrays for every term. */
const FRESH: BandedArrays = { offsets: (n) => new Int32Array(n), costs: (n) => new Int32Array(n), lows: (n) => new Uint16Array(n) };

/**
 * The banded data term of a pair, or of its rows from `firstRow` on as
 * many as the bands cover: pixel p's costs at labels lo[p] .. hi[p] only
 * (inclusive; both within the matcher's labels), each the value the
 * matcher's volume would hold. Work and memory grow with Σ (hi − lo + 1),
 * not with the pixels times the labels. Its offsets and costs come from
 * `arrays` (fresh ones by default).
 */
export function bandedTerm(matcher: DataCostMatcher, lo: Uint16Array, hi: Uint16Array, firstRow = 0, arrays: BandedArrays = FRESH): BandedTerm {
  const W = matcher.width;
  const n = lo.length;
  const rows = n / W;
  if (hi.length !== n || !Number.isInteger(rows) || firstRow < 0 || firstRow + rows > matcher.height) {
    throw new Error(`banded costs: bands of ${lo.length} and ${hi.length} pixels from row ${firstRow} for a ${W}×${matcher.height} pair`);
  }
  const offset = arrays.offsets(n + 1);
  offset[0] = 0;
  for (let p = 0; p < n; p++) {
    if (hi[p] < lo[p]) throw new Error(`banded costs: the band of pixel ${p} is empty (${lo[p]}..${hi[p]})`);
    offset[p + 1] = offset[p] + hi[p] - lo[p] + 1;
  }
  const costs = arrays.costs(offset[n]);
  for (let p = 0, y = firstRow, x = 0; p < n; p++) {
    matcher.pixelCosts(x, y, lo[p], offset[p + 1] - offset[p], costs, offset[p]);
    if (++x === W) { x = 0; y++; }
  }
  const low = arrays.lows(n);
  low.set(lo);
  return { kind: 'banded', lo: low, offset, costs };
}
