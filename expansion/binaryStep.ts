import { GridGraph, MAX_CAPACITY } from '../graphcut/gridGraph';
import { pairwise, volumeOf, type MrfEnergy } from '../data/energy';

/**
 * One α-expansion move as a binary s-t graph, by Kolmogorov & Zabih's
 * construction on the 4-connected grid (no auxiliary nodes).
 *
 * Binary variable x_p: 0 keeps the current label, 1 takes α.
 *  - 'classic' (Kolmogorov's figure, as used by Boykov–Veksler–Zabih): the
 *    source stands for α, the sink for the current label, so a pixel on the
 *    sink side keeps its label.
 *  - 'reversed' (Choi & Park §3.2): terminals swapped: the source stands for
 *    the current label and the sink for α, so a pixel on the sink side takes α.
 *    Same minimum, faster push-relabel convergence once labels are good.
 *
 * Cut semantics: y_p = 1 when p is on the sink side. A cut pays c(s→p) for
 * every sink-side p, c(p→t) for every source-side p, and c(p→q) for every
 * edge from the source side to the sink side. For a pairwise term with
 * E(0,0)=A, E(0,1)=B, E(1,0)=C, E(1,1)=D in y:
 *   E = A + (C−A)·y_p + (D−C)·y_q + (B+C−A−D)·(1−y_p)·y_q,
 * so p gets a unary (C−A), q a unary (D−C) and the edge p→q capacity
 * B+C−A−D, which is ≥ 0 exactly when the term is submodular.
 */
export type GraphVariant = 'classic' | 'reversed';

export interface BinaryStepGraph {
  graph: GridGraph;
  /** Energy of the move = min-cut value + constant (exact integers). */
  constant: number;
  /** Pairwise terms that were not submodular and were truncated (only possible for non-metric V, e.g. truncated quadratic). */
  truncatedTerms: number;
  variant: GraphVariant;
}

/** Reusable arrays so repeated builds on one image allocate nothing. */
export class BinaryStepBuilder {
  private readonly unary: Float64Array; // coefficient of y_p (energy added when p is on the sink side)
  readonly graph: GridGraph;

  constructor(readonly width: number, readonly height: number) {
    const n = width * height;
    this.unary = new Float64Array(n);
    this.graph = {
      width, height,
      source: new Int32Array(n), sink: new Int32Array(n),
      right: new Int32Array(n), rightRev: new Int32Array(n),
      down: new Int32Array(n), downRev: new Int32Array(n),
    };
  }

  /**
   * Builds the graph of expanding `alpha` from `labels`. The returned graph
   * object is owned by the builder and overwritten by the next build.
   */
  build(e: MrfEnergy, labels: ArrayLike<number>, alpha: number, variant: GraphVariant): BinaryStepGraph {
    const { width: W, height: H, labels: L } = e;
    if (W !== this.width || H !== this.height) {
      throw new Error(`binary step: energy is ${W}×${H} but the builder was made for ${this.width}×${this.height}`);
    }
    const g = this.graph;
    const u = this.unary;
    const reversed = variant === 'reversed';
    const V = this.pairwiseTable(e);
    const D = volumeOf(e);
    const n = W * H;
    let constant = 0;
    let truncated = 0;
    let maxCap = 0;

    // Unary terms. In 'reversed', y = x; in 'classic', y = 1 − x.
    for (let p = 0; p < n; p++) {
      const keep = D[p * L + labels[p]];
      const take = D[p * L + alpha];
      if (reversed) { constant += keep; u[p] = take - keep; } else { constant += take; u[p] = keep - take; }
    }

    // Pairwise terms, one per grid edge. For an edge p→q with weight w, in x
    // (0 keep, 1 α): e00 = w·V(l_p,l_q), e01 = w·V(l_p,α), e10 = w·V(α,l_q),
    // e11 = 0. In y: reversed (y = x) A=e00, B=e01, C=e10, D=0; classic
    // (y = 1 − x) A=0, B=e10, C=e01, D=e00. The edge p→q gets B+C−A−D.
    const aRow = alpha * L;
    for (let dir = 0; dir < 2; dir++) {
      const weights = dir === 0 ? e.wH : e.wV;
      const fwd = dir === 0 ? g.right : g.down;
      const rev = dir === 0 ? g.rightRev : g.downRev;
      const step = dir === 0 ? 1 : W;
      rev.fill(0);
      for (let y = 0; y < H; y++) {
        const xEnd = dir === 0 ? W - 1 : W;
        const row = y * W;
        if (dir === 1 && y === H - 1) { fwd.fill(0, row, row + W); continue; }
        if (dir === 0) fwd[row + W - 1] = 0;
        for (let x = 0; x < xEnd; x++) {
          const p = row + x;
          const w = weights[p];
          if (w === 0) { fwd[p] = 0; continue; }
          const q = p + step;
          const lp = labels[p];
          const lq = labels[q];
          const e00 = w * V[lp * L + lq];
          const e01 = w * V[lp * L + alpha];
          const e10 = w * V[aRow + lq];
          let k: number;
          if (reversed) {
            // A = e00, B = e01, C = e10, D = 0
            k = e01 + e10 - e00;
            if (k < 0) { truncated++; k = 0; } // non-submodular: B raised to A + D − C (truncation)
            constant += e00;
            u[p] += e10 - e00;
            u[q] -= e10;
          } else {
            // A = 0, B = e10, C = e01, D = e00
            k = e10 + e01 - e00;
            if (k < 0) { truncated++; k = 0; }
            u[p] += e01;
            u[q] += e00 - e01;
          }
          if (k > maxCap) maxCap = k;
          fwd[p] = k;
        }
      }
    }

    // Terminal links: unary coefficient k on y_p = 1 is c(s→p) = k when k > 0,
    // otherwise c(p→t) = −k with the constant shifted by k.
    for (let p = 0; p < n; p++) {
      const k = u[p];
      if (k >= 0) { g.source[p] = k; g.sink[p] = 0; if (k > maxCap) maxCap = k; } else { g.source[p] = 0; g.sink[p] = -k; constant += k; if (-k > maxCap) maxCap = -k; }
    }
    // Checked after filling: an Int32Array store would wrap silently, but the
    // check reads the exact doubles, so a wrapped graph is never returned.
    if (maxCap > MAX_CAPACITY) {
      throw new Error(`binary step: a capacity of ${maxCap} exceeds ${MAX_CAPACITY}; lower the costs (τ, λ or the cost scale)`);
    }
    return { graph: g, constant, truncatedTerms: truncated, variant };
  }

  private table?: { energy: MrfEnergy; V: Float64Array };

  /** V(a, b) for all label pairs, computed once per energy. */
  private pairwiseTable(e: MrfEnergy): Float64Array {
    if (this.table?.energy === e) return this.table.V;
    const L = e.labels;
    const V = new Float64Array(L * L);
    for (let a = 0; a < L; a++) for (let b = 0; b < L; b++) V[a * L + b] = pairwise(e.smoothness, e.truncation, a, b);
    this.table = { energy: e, V };
    return V;
  }
}

/** Applies a cut: pixels whose side means "take α" get α. Returns the number of pixels that changed label. */
export function applyCut(labels: Uint16Array, sinkSide: Uint8Array, alpha: number, variant: GraphVariant): number {
  const takeSide = variant === 'reversed' ? 1 : 0;
  let changed = 0;
  for (let p = 0; p < labels.length; p++) {
    if (sinkSide[p] === takeSide && labels[p] !== alpha) { labels[p] = alpha; changed++; }
  }
  return changed;
}
