import { bkSearch, FREE, NONE, SINK_TREE, SOURCE_TREE, TERMINAL, type BkArrays, type BkSearchStats } from './bkSearch';
import { MAX_CAPACITY } from './gridGraph';

/**
 * A max-flow graph of m nodes with four neighbour slots each (right, left,
 * down, up: the opposite of d is d ^ 1), solved by the Boykov–Kolmogorov
 * search (bkSearch.ts). α-expansion moves restricted to the pixels that may
 * change (expansion/bandedMoves.ts) are such graphs: their nodes are those
 * pixels numbered in raster order, so the arrays a move reads are as small
 * as the move and are read in order, whatever the size of the image.
 *
 * The arrays are kept between graphs and grow to the largest one. An empty
 * slot points at the sentinel node m, which has no capacity in or out and
 * so never joins a tree.
 */
export class SparseCut {
  private a: BkArrays = emptyArrays(1);
  private nodes = 0;
  /** Σ of the sink capacities given (the flow is this minus what is left of them). */
  private sinkTotal = 0;
  /** OR of every capacity given: bits 30 and 31 clear exactly when all lie in 0..MAX_CAPACITY. */
  private bits = 0;

  /** Starts a graph of `m` nodes with no edge and no terminal capacity. */
  begin(m: number): void {
    if (!Number.isInteger(m) || m < 0) throw new Error(`sparse cut: node count must be an integer ≥ 0 (got ${m})`);
    if (this.a.tr.length < m + 1) this.a = emptyArrays(Math.max(m + 1, Math.ceil(1.25 * this.a.tr.length)));
    const { nbr, rc, tr } = this.a;
    nbr.fill(m, 0, 4 * (m + 1));
    rc.fill(0, 0, 4 * (m + 1));
    tr.fill(0, 0, m + 1);
    this.nodes = m;
    this.sinkTotal = 0;
    this.bits = 0;
  }

  /** Joins i and j through i's slot d (j's slot d ^ 1) with capacities c(i → j) and c(j → i). */
  link(i: number, d: number, j: number, cij: number, cji: number): void {
    const { nbr, rc } = this.a;
    nbr[4 * i + d] = j;
    nbr[4 * j + (d ^ 1)] = i;
    rc[4 * i + d] = cij;
    rc[4 * j + (d ^ 1)] = cji;
    this.bits |= cij | cji;
  }

  /** Gives node i capacity c(s → i) = `fromSource` or c(i → t) = `toSink` (the other 0; both ≥ 0). */
  terminal(i: number, fromSource: number, toSink: number): void {
    this.bits |= fromSource | toSink;
    const t = fromSource - toSink;
    this.a.tr[i] = t;
    if (t < 0) this.sinkTotal -= t;
  }

  /**
   * The maximum flow and its canonical minimum cut: sinkSide[i] = 1
   * exactly for the nodes that reach the sink in the residual graph.
   */
  solve(sinkSide: Uint8Array): { flow: number; stats: BkSearchStats } {
    const m = this.nodes;
    if (sinkSide.length < m) throw new Error(`sparse cut: sinkSide has ${sinkSide.length} entries, the graph ${m} nodes`);
    if ((this.bits & 0xc0000000) !== 0) throw new Error(`sparse cut: a capacity is negative or above ${MAX_CAPACITY}`);
    const a = this.a;
    const { nbr, rc, tr, tree, parent, dist, ts, queued, active } = a;
    // Paths source → i → j → sink of one edge carry flow before the search: most of a move's flow goes this way, and
    // pushing it here costs no tree (every flow the search then finds is on top of it; the cut is the same).
    for (let i = 0; i < m; i++) {
      let t = tr[i];
      if (t <= 0) continue;
      for (let d = 0; d < 4 && t > 0; d++) {
        const e = 4 * i + d;
        const c = rc[e];
        if (c <= 0) continue;
        const j = nbr[e];
        const tj = tr[j];
        if (tj >= 0) continue;
        let f = t < c ? t : c;
        if (-tj < f) f = -tj;
        rc[e] = c - f;
        rc[4 * j + (d ^ 1)] += f;
        t -= f;
        tr[j] = tj + f;
      }
      tr[i] = t;
    }
    let qLen = 0;
    tree[m] = FREE;
    parent[m] = NONE;
    queued[m] = 0;
    for (let i = 0; i < m; i++) {
      const t = tr[i];
      if (t !== 0) {
        tree[i] = t > 0 ? SOURCE_TREE : SINK_TREE;
        parent[i] = TERMINAL;
        dist[i] = 1;
        ts[i] = 0;
        queued[i] = 1;
        active[qLen++] = i;
      } else {
        tree[i] = FREE;
        parent[i] = NONE;
        queued[i] = 0;
      }
    }
    const stats = bkSearch(a, qLen, Math.max(m, 1));
    let left = 0;
    for (let i = 0; i < m; i++) {
      sinkSide[i] = tree[i] === SINK_TREE ? 1 : 0;
      if (tr[i] < 0) left -= tr[i];
    }
    return { flow: this.sinkTotal - left, stats };
  }
}

function emptyArrays(n: number): BkArrays {
  return {
    nbr: new Int32Array(4 * n), rc: new Int32Array(4 * n), tr: new Int32Array(n),
    tree: new Uint8Array(n), parent: new Uint8Array(n), dist: new Int32Array(n), ts: new Int32Array(n),
    queued: new Uint8Array(n), active: new Int32Array(n), orphans: new Int32Array(n),
  };
}
