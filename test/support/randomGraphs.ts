import type { Rng } from '../../data/random';
import { createGridGraph, MAX_CAPACITY, type GridGraph } from '../../graphcut/gridGraph';

/**
 * Seeded random grid graphs for the tests of every max-flow backend. The same
 * seed gives the same graph on every machine, so a failing case can be
 * reproduced from the seed alone.
 */

// Module-level copies: inside test sandboxes every global lookup in a hot loop is slow, a module constant is not.
const { abs, ceil, floor, max, min, round, sin, PI } = Math;

/** Uniform integer in lo..hi (both inclusive). */
export function randomInt(rng: Rng, lo: number, hi: number): number {
  return lo + floor(rng() * (hi - lo + 1));
}

/** The largest capacity the generators emit: residual sums then stay far inside int32. */
export const LARGE_CAPACITY = floor(MAX_CAPACITY / 4);

/**
 * Kinds of random graph:
 * - `uniform`: every capacity uniform in 0..100;
 * - `tiny`: capacities 0..3, so that many cuts tie (tests the canonical cut);
 * - `sparse`: about 70% of capacities zero, the rest 1..20;
 * - `large`: a mix of zeros, small values and values within 1000 of LARGE_CAPACITY;
 * - `zero`: every capacity zero;
 * - `terminals`: terminal capacities only, no grid edges;
 * - `disconnected`: `uniform`, with random rows and columns of grid edges zeroed
 *   so that the grid falls apart into separate regions;
 * - `expansion`: shaped like one α-expansion step (see expansionLikeGraph).
 */
export type RandomGraphKind =
  | 'uniform' | 'tiny' | 'sparse' | 'large' | 'zero' | 'terminals' | 'disconnected' | 'expansion';

export const RANDOM_GRAPH_KINDS: readonly RandomGraphKind[] = [
  'uniform', 'tiny', 'sparse', 'large', 'zero', 'terminals', 'disconnected', 'expansion',
];

type CapacityDraw = (rng: Rng) => number;

const draws: Record<Exclude<RandomGraphKind, 'expansion'>, CapacityDraw> = {
  uniform: (rng) => randomInt(rng, 0, 100),
  tiny: (rng) => randomInt(rng, 0, 3),
  sparse: (rng) => (rng() < 0.7 ? 0 : randomInt(rng, 1, 20)),
  large: (rng) => {
    const r = rng();
    if (r < 0.2) return 0;
    if (r < 0.4) return randomInt(rng, 1, 50);
    return LARGE_CAPACITY - randomInt(rng, 0, 1000);
  },
  zero: () => 0,
  terminals: (rng) => randomInt(rng, 0, 100),
  disconnected: (rng) => randomInt(rng, 0, 100),
};

/** Fills every capacity of `g` that stays inside the grid with `draw`. */
function fillGraph(g: GridGraph, rng: Rng, draw: CapacityDraw, gridEdges: boolean): void {
  const { width: W, height: H } = g;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      g.source[p] = draw(rng);
      g.sink[p] = draw(rng);
      if (!gridEdges) continue;
      if (x + 1 < W) {
        g.right[p] = draw(rng);
        g.rightRev[p] = draw(rng);
      }
      if (y + 1 < H) {
        g.down[p] = draw(rng);
        g.downRev[p] = draw(rng);
      }
    }
  }
}

/** Zeroes every grid edge that crosses a random set of horizontal and vertical lines. */
function cutIntoRegions(g: GridGraph, rng: Rng): void {
  const { width: W, height: H } = g;
  // A vertical line after column x removes right/rightRev of column x; a horizontal one after row y removes down/downRev of row y.
  for (let x = 0; x + 1 < W; x++) {
    if (rng() < 0.3) {
      for (let y = 0; y < H; y++) {
        g.right[y * W + x] = 0;
        g.rightRev[y * W + x] = 0;
      }
    }
  }
  for (let y = 0; y + 1 < H; y++) {
    if (rng() < 0.3) {
      for (let x = 0; x < W; x++) {
        g.down[y * W + x] = 0;
        g.downRev[y * W + x] = 0;
      }
    }
  }
}

export function randomGridGraph(rng: Rng, width: number, height: number, kind: RandomGraphKind): GridGraph {
  if (kind === 'expansion') return expansionLikeGraph(rng, width, height, { reversed: rng() < 0.5 });
  const draw = draws[kind];
  if (draw === undefined) throw new Error(`randomGraphs: unknown graph kind '${String(kind)}'`);
  const g = createGridGraph(width, height);
  fillGraph(g, rng, draw, kind !== 'terminals');
  if (kind === 'disconnected') cutIntoRegions(g, rng);
  return g;
}

export interface ExpansionLikeOptions {
  /** Number of disparity labels (default 16). */
  labels?: number;
  /** Smoothness weight λ (default 20); some edges get 3λ, like a static intensity cue. */
  lambda?: number;
  /** Truncation of the linear smoothness term (default 2 labels). */
  truncation?: number;
  /** Data-cost slope per label of disparity error (default 10). */
  dataSlope?: number;
  /** Data-cost truncation (default 60). */
  dataTruncation?: number;
  /** Use the reversed construction: x_p = 1 keeps the current label instead of taking α. */
  reversed?: boolean;
  /** The expansion label; random when absent. */
  alpha?: number;
}

/**
 * A graph shaped like one binary step of α-expansion on a stereo energy with
 * truncated-linear smoothness: a smooth "true" disparity field, data costs
 * that grow with the distance to it (plus noise), a current labeling that is
 * piecewise constant with speckle noise (like a winner-take-all start), and
 * Kolmogorov's construction of the binary energy (terminal capacities net
 * out, one directed grid edge per neighbouring pair carrying B + C − A − D).
 */
export function expansionLikeGraph(rng: Rng, width: number, height: number, options: ExpansionLikeOptions = {}): GridGraph {
  const L = options.labels ?? 16;
  const lambda = options.lambda ?? 20;
  const K = options.truncation ?? 2;
  const slope = options.dataSlope ?? 10;
  const dataTrunc = options.dataTruncation ?? 60;
  const reversed = options.reversed ?? false;
  const alpha = options.alpha ?? randomInt(rng, 0, L - 1);
  const W = width;
  const H = height;
  const g = createGridGraph(W, H);
  const n = W * H;

  // Smooth true disparity: a sum of a few random low-frequency waves, scaled to 0..L-1.
  const waves = Array.from({ length: 3 }, () => ({
    fx: (rng() * 2 * PI * 2) / max(W, 1),
    fy: (rng() * 2 * PI * 2) / max(H, 1),
    phase: rng() * 2 * PI,
  }));
  const truth = new Float64Array(n);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      let s = 0;
      for (const w of waves) s += sin(w.fx * x + w.fy * y + w.phase);
      truth[y * W + x] = ((s / 3 + 1) / 2) * (L - 1);
    }
  }
  // Current labeling: the truth rounded in 8×8 blocks, shifted by a random offset per block, plus 10% speckle.
  const labels = new Int32Array(n);
  const blocksX = ceil(W / 8);
  const blockShift = Int32Array.from({ length: blocksX * ceil(H / 8) }, () => randomInt(rng, -1, 1));
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      const b = blockShift[(y >> 3) * blocksX + (x >> 3)];
      const l = rng() < 0.1 ? randomInt(rng, 0, L - 1) : round(truth[(y & ~7) * W + (x & ~7)]) + b;
      labels[p] = min(L - 1, max(0, l));
    }
  }
  const data = (p: number, l: number): number =>
    min(dataTrunc, round(slope * abs(l - truth[p])) + randomInt(rng, 0, 5));
  const V = (a: number, b: number): number => min(abs(a - b), K);

  // Unary coefficient of x_p (x_p = 1 takes α in the normal construction).
  const unary = new Float64Array(n);
  for (let p = 0; p < n; p++) {
    const keep = data(p, labels[p]);
    const take = data(p, alpha);
    unary[p] += reversed ? keep - take : take - keep;
  }
  // A pairwise term E(x_p, x_q) with E00 = A, E01 = B, E10 = C, E11 = D, split into unary parts and one
  // directed edge of capacity B + C − A − D ≥ 0 (submodular because truncated linear is a metric). The normal
  // construction writes it as A + (C−A)x_p + (D−C)x_q + (B+C−A−D)(1−x_p)x_q (edge p→q); the reversed one as
  // A + (D−B)x_p + (B−A)x_q + (B+C−A−D)x_p(1−x_q) (edge q→p), so both edge directions get exercised.
  const pair = (p: number, q: number, w: number, forward: Int32Array, backward: Int32Array): void => {
    const lp = labels[p];
    const lq = labels[q];
    // Energies indexed by (x_p, x_q) with x = 1 meaning "takes α".
    let e00 = w * V(lp, lq);
    let e01 = w * V(lp, alpha);
    let e10 = w * V(alpha, lq);
    let e11 = 0;
    if (reversed) {
      // x = 1 now means "keeps its label": negate both variables.
      [e00, e11] = [e11, e00];
      [e01, e10] = [e10, e01];
      unary[p] += e11 - e01;
      unary[q] += e01 - e00;
      backward[p] = e01 + e10 - e00 - e11;
    } else {
      unary[p] += e10 - e00;
      unary[q] += e11 - e10;
      forward[p] = e01 + e10 - e00 - e11;
    }
  };
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      if (x + 1 < W) pair(p, p + 1, rng() < 0.3 ? 3 * lambda : lambda, g.right, g.rightRev);
      if (y + 1 < H) pair(p, p + W, rng() < 0.3 ? 3 * lambda : lambda, g.down, g.downRev);
    }
  }
  for (let p = 0; p < n; p++) {
    const u = unary[p];
    if (u > 0) g.source[p] = u;
    else g.sink[p] = -u;
  }
  return g;
}
