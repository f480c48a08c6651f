import { GridGraph, MAX_CAPACITY } from '../graphcut/gridGraph';
import { MrfEnergy, pairwise } from './energy';

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
    const kind = e.smoothness;
    const T = e.truncation;
    let constant = 0;
    let truncated = 0;
    let maxCap = 0;

    // Unary terms. In 'reversed', y = x; in 'classic', y = 1 − x.
    for (let p = 0; p < W * H; p++) {
      const keep = e.data[p * L + labels[p]];
      const take = e.data[p * L + alpha];
      if (reversed) { constant += keep; u[p] = take - keep; } else { constant += take; u[p] = keep - take; }
    }

    // Pairwise terms, one per grid edge, written into the edge arrays.
    const addPair = (p: number, q: number, w: number, fwd: Int32Array, rev: Int32Array): void => {
      // fwd[p] holds c(p→q), rev[p] holds c(q→p).
      if (w === 0) { fwd[p] = 0; rev[p] = 0; return; }
      const lp = labels[p];
      const lq = labels[q];
      // Energies in x (0 keep, 1 α).
      const e00 = w * pairwise(kind, T, lp, lq);
      const e01 = w * pairwise(kind, T, lp, alpha);
      const e10 = w * pairwise(kind, T, alpha, lq);
      // e11 = w·V(α, α) = 0.
      // Map to y: reversed y = x; classic y = 1 − x (A=E_y(0,0)=e11, B=E_y(0,1)=e10, C=E_y(1,0)=e01, D=E_y(1,1)=e00).
      let A: number, B: number, C: number, D: number;
      if (reversed) { A = e00; B = e01; C = e10; D = 0; } else { A = 0; B = e10; C = e01; D = e00; }
      let k = B + C - A - D;
      if (k < 0) {
        // Non-submodular (non-metric V): raise B until B + C = A + D, the usual
        // truncation; the driver rejects any move that raises the true energy.
        B -= k;
        k = 0;
        truncated++;
      }
      if (k > maxCap) maxCap = k;
      constant += A;
      u[p] += C - A;
      u[q] += D - C;
      // Edge p→q is cut when y_p = 0, y_q = 1: capacity k. No reverse capacity.
      fwd[p] = k;
      rev[p] = 0;
    };

    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const p = y * W + x;
        if (x + 1 < W) addPair(p, p + 1, e.wH[p], g.right, g.rightRev);
        else { g.right[p] = 0; g.rightRev[p] = 0; }
        if (y + 1 < H) addPair(p, p + W, e.wV[p], g.down, g.downRev);
        else { g.down[p] = 0; g.downRev[p] = 0; }
      }
    }

    // Terminal links: unary coefficient k on y_p = 1 is c(s→p) = k when k > 0,
    // otherwise c(p→t) = −k with the constant shifted by k.
    for (let p = 0; p < W * H; p++) {
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
