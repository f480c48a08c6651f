import { computeEnergy, isMetricTable, pairwise, type BandedTerm, type EnergyBreakdown, type MrfEnergy } from '../data/energy';
import type { BandedArrays } from '../costs/bandedTerm';
import { SparseCut } from '../graphcut/sparseCut';
import { ScratchArrays } from '../data/scratchArrays';
import type { MoveResult, MoveSolver } from './moveSolver';

/**
 * What banded moves build each move in, kept between solvers that run one
 * after another (the strips a thread runs: stereo/stripWorker.ts keeps one
 * a thread): the cut's arrays, the per-pixel lists and the banded term's
 * offsets and costs (costs/bandedTerm.ts BandedArrays), grown to the
 * largest so far, so that a strip allocates none of them afresh and a
 * thread's memory stays at its largest strip's. A scratch serves one
 * solver at a time; a solver made with it is done with it (and with the
 * term whose arrays it gave) when the next one is made.
 */
export class BandedMoveScratch extends ScratchArrays implements BandedArrays {
  readonly cut = new SparseCut();
  /** The solver made with it last: the only one whose moves may use it. */
  owner?: object;
  /** Per node of the move being built: its pixel, its unary term (all 0 between moves), its side of the cut; grow() makes them long enough. */
  members = new Int32Array(0);
  unary = new Float64Array(0);
  sinkSide = new Uint8Array(0);

  /** A banded term's offsets: `n` entries (contents undefined). */
  offsets(n: number): Int32Array {
    return this.array('offsets', Int32Array, n);
  }

  /** A banded term's costs: `n` entries (contents undefined). */
  costs(n: number): Int32Array {
    return this.array('costs', Int32Array, n);
  }

  /** A banded term's copy of its bands' low ends: `n` entries (contents undefined). */
  lows(n: number): Uint16Array {
    return this.array('lows', Uint16Array, n);
  }

  /** An array of `n` entries for the pixel lists (contents undefined). */
  pixels(n: number): Int32Array {
    return this.array('pixels', Int32Array, n);
  }

  /** An array of `n` entries, every one −1. */
  nodes(n: number): Int32Array {
    return this.array('nodes', Int32Array, n).fill(-1);
  }

  /** The per-node arrays of a move of m nodes (unary all 0). */
  grow(m: number): void {
    if (this.members.length >= m) return;
    const size = Math.ceil(1.25 * m);
    this.members = new Int32Array(size);
    this.unary = new Float64Array(size);
    this.sinkSide = new Uint8Array(size);
  }
}

/**
 * α-expansion moves of an energy with a banded data term (data/energy.ts
 * BandedTerm), each solved exactly on the CPU. A pixel whose band does not
 * hold α cannot take it (its cost there is infinite), and a pixel already
 * at α has nothing to choose, so the move's graph holds only the other
 * pixels whose band holds α; every neighbour outside it keeps its label and
 * enters the graph as a unary term of the pixel beside it. The cut is
 * therefore the exact optimal expansion of α for the banded energy, as
 * the full graph with infinite costs outside the bands would give (the
 * same canonical cut: test/banded-moves.test.ts), at a cost that grows with
 * the pixels whose band holds α rather than with the grid.
 *
 * The graph is Kolmogorov & Zabih's construction with the terminals of
 * binaryStep.ts's 'reversed' variant: the sink side takes α.
 */
export class BandedMoveSolver implements MoveSolver {
  readonly backend = 'bk';
  readonly device = 'CPU (Boykov–Kolmogorov on the pixels whose band holds α)';
  private readonly band: BandedTerm;
  /** The pixels whose band holds label l: pixels[start[l] .. start[l+1] − 1], in raster order. */
  private readonly start: Int32Array;
  private readonly pixels: Int32Array;
  /** V(a, b) at table[a·L + b]. */
  private readonly table: Int32Array;
  /** The node of a pixel in the move being built, −1 outside it. */
  private readonly node: Int32Array;
  private readonly cut: SparseCut;
  /** The energy of the labels as energyOf last gave it, moved by each move's exact change since; NaN before. */
  private current = NaN;

  /** `scratch`: where moves are built (a fresh one by default; see BandedMoveScratch). */
  constructor(private readonly energy: MrfEnergy, private readonly scratch = new BandedMoveScratch()) {
    if (energy.data.kind !== 'banded') throw new Error(`banded moves: the energy's data term is a ${energy.data.kind}, not banded`);
    if (!isMetricTable(energy)) throw new Error(`banded moves: the ${energy.smoothness} smoothness term with truncation ${energy.truncation} is not a metric, so a move's graph would need truncation`);
    this.band = energy.data;
    const { width: W, height: H, labels: L } = energy;
    const n = W * H;
    const { lo, offset } = this.band;
    const start = new Int32Array(L + 1);
    for (let p = 0; p < n; p++) {
      const end = lo[p] + offset[p + 1] - offset[p];
      if (end > L) throw new Error(`banded moves: the band of pixel ${p} reaches label ${end - 1}, the energy has ${L} labels`);
      for (let l = lo[p]; l < end; l++) start[l + 1]++;
    }
    for (let l = 0; l < L; l++) start[l + 1] += start[l];
    const fill = start.slice(0, L);
    this.pixels = scratch.pixels(start[L]);
    for (let p = 0; p < n; p++) {
      const end = lo[p] + offset[p + 1] - offset[p];
      for (let l = lo[p]; l < end; l++) this.pixels[fill[l]++] = p;
    }
    this.start = start;
    this.table = new Int32Array(L * L);
    for (let a = 0; a < L; a++) for (let b = 0; b < L; b++) this.table[a * L + b] = pairwise(energy.smoothness, energy.truncation, a, b);
    this.node = scratch.nodes(n);
    this.cut = scratch.cut;
    scratch.owner = this;
  }

  /** Pixels whose band holds label l (the most a move of l can change). */
  bandPixels(l: number): number {
    return this.start[l + 1] - this.start[l];
  }

  async energyOf(labels: Uint16Array): Promise<EnergyBreakdown> {
    const e = computeEnergy(this.energy, labels);
    this.current = e.total;
    return e;
  }

  async move(alpha: number, labels: Uint16Array): Promise<MoveResult> {
    const t0 = performance.now();
    const { width: W, height: H, labels: L, wH, wV } = this.energy;
    const { lo, offset, costs } = this.band;
    const { node, table: V, pixels } = this;
    // The move's nodes: the pixels whose band holds α and whose label is not α.
    const from = this.start[alpha];
    const to = this.start[alpha + 1];
    if (this.scratch.owner !== this) throw new Error('banded moves: this solver\'s scratch was given to a later solver, whose moves would overwrite this one\'s');
    this.scratch.grow(to - from);
    const { members, unary, sinkSide } = this.scratch;
    const cut = this.cut;
    let m = 0;
    for (let k = from; k < to; k++) {
      const p = pixels[k];
      if (labels[p] !== alpha) { node[p] = m; members[m++] = p; }
    }
    cut.begin(m);
    // E(y) of the pixels in the move and every term touching them = e0 + Σ unary·y + Σ edge·(1 − y_p)·y_q (y = 1 takes α).
    const aRow = alpha * L;
    for (let i = 0; i < m; i++) {
      const p = members[i];
      const lp = labels[p];
      const o = offset[p] - lo[p];
      let u = costs[o + alpha] - costs[o + lp];
      const x = p % W;
      const y = (p - x) / W;
      const pRow = lp * L;
      // Right and down: an edge to a node in the move (counted here, once), else a fixed neighbour's unary.
      if (x + 1 < W && wH[p] !== 0) u += this.pair(i, p + 1, 0, wH[p], pRow, alpha, aRow, labels);
      if (y + 1 < H && wV[p] !== 0) u += this.pair(i, p + W, 2, wV[p], pRow, alpha, aRow, labels);
      // Left and up: a node in the move was linked from its own side; a fixed one adds its unary.
      if (x > 0 && wH[p - 1] !== 0 && node[p - 1] < 0) { const lq = labels[p - 1]; u += wH[p - 1] * (V[aRow + lq] - V[pRow + lq]); }
      if (y > 0 && wV[p - W] !== 0 && node[p - W] < 0) { const lq = labels[p - W]; u += wV[p - W] * (V[aRow + lq] - V[pRow + lq]); }
      unary[i] += u;
    }
    let negative = 0;
    for (let i = 0; i < m; i++) {
      const u = unary[i];
      unary[i] = 0;
      if (u > 0) cut.terminal(i, u, 0);
      else if (u < 0) { cut.terminal(i, 0, -u); negative += u; }
    }
    const t1 = performance.now();
    const { flow, stats } = cut.solve(sinkSide);
    let changed = 0;
    for (let i = 0; i < m; i++) {
      const p = members[i];
      node[p] = -1;
      if (sinkSide[i] === 1) { labels[p] = alpha; changed++; }
    }
    const t2 = performance.now();
    const delta = negative + flow;
    this.current += delta;
    return { changed, predictedEnergy: this.current, buildMs: t1 - t0, flowMs: t2 - t1, stats: { ...stats, nodes: m }, truncatedTerms: 0 };
  }

  /**
   * The term of p (node i) and its right or lower neighbour q (slot d) with
   * weight w: an edge when q is in the move too (q's share goes to its
   * unary), else p's unary from q's fixed label; returns p's unary part.
   */
  private pair(i: number, q: number, d: number, w: number, pRow: number, alpha: number, aRow: number, labels: Uint16Array): number {
    const V = this.table;
    const lq = labels[q];
    const j = this.node[q];
    const a = w * V[pRow + lq]; // both keep
    const c = w * V[aRow + lq]; // p takes α, q keeps
    if (j < 0) return c - a;
    const b = w * V[pRow + alpha]; // p keeps, q takes α
    // E = a + (c − a)·y_p − c·y_q + (b + c − a)·(1 − y_p)·y_q; b + c − a ≥ 0 for a metric V.
    this.scratch.unary[j] -= c;
    this.cut.link(i, d, j, b + c - a, 0);
    return c - a;
  }
}
