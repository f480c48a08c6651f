import { BkWorkspace } from './bkCore';
import { bkSearch, FREE, NONE, SINK_TREE, SOURCE_TREE, TERMINAL, type BkSearchStats } from './bkSearch';
import { MAX_CAPACITY } from './gridGraph';

/**
 * Max-flow graphs on a subset of a W×H grid's pixels (4-connected, only
 * between pixels of the subset), solved by the Boykov–Kolmogorov search
 * on a workspace of the whole grid (bkSearch.ts). Pixels outside the subset
 * hold no capacity, so the search never reaches them: a graph costs its
 * own pixels, not the grid's. α-expansion moves restricted to the pixels
 * that may change (expansion/bandedMoves.ts) are such graphs.
 *
 * Invariant between graphs: every pixel's capacities are zero, every node
 * FREE and unqueued (solve() restores what the subset touched).
 */
export class SubsetCut {
  readonly width: number;
  readonly height: number;
  private readonly ws: BkWorkspace;
  /** Σ of the sink capacities given (the flow is this minus what is left of them). */
  private sinkTotal = 0;
  /** OR of every capacity given: bits 30 and 31 clear exactly when all lie in 0..MAX_CAPACITY. */
  private bits = 0;

  constructor(width: number, height: number) {
    this.ws = new BkWorkspace(width, height);
    this.width = width;
    this.height = height;
    this.ws.parent.fill(NONE);
  }

  /** The edge of pixel p and its right (`down` false) or lower neighbour, with capacities c(p → q) and c(q → p). Both must be in the subset. */
  link(p: number, down: boolean, cpq: number, cqp: number): void {
    const W = this.width;
    const i = p + W;
    const j = down ? i + W : i + 1;
    const d = down ? 2 : 0;
    this.ws.rc[4 * i + d] = cpq;
    this.ws.rc[4 * j + (d ^ 1)] = cqp;
    this.bits |= cpq | cqp;
  }

  /** Gives pixel p capacity c(s → p) = `fromSource` or c(p → t) = `toSink` (the other 0; both ≥ 0). */
  terminal(p: number, fromSource: number, toSink: number): void {
    this.bits |= fromSource | toSink;
    const t = fromSource - toSink;
    this.ws.tr[p + this.width] = t;
    if (t < 0) this.sinkTotal -= t;
  }

  /**
   * The maximum flow of the graph on the pixels members[0 .. m − 1] and its
   * canonical minimum cut: sinkSide[k] = 1 exactly when members[k] reaches
   * the sink in the residual graph. Then clears the graph.
   */
  solve(members: Int32Array, m: number, sinkSide: Uint8Array): { flow: number; stats: BkSearchStats } {
    const W = this.width;
    const { tr, tree, parent, dist, ts, queued, active } = this.ws;
    if ((this.bits & 0xc0000000) !== 0) {
      this.clear(members, m);
      throw new Error(`subset cut: a capacity is negative or above ${MAX_CAPACITY}`);
    }
    let qLen = 0;
    for (let k = 0; k < m; k++) {
      const i = members[k] + W;
      const t = tr[i];
      if (t === 0) continue;
      tree[i] = t > 0 ? SOURCE_TREE : SINK_TREE;
      parent[i] = TERMINAL;
      dist[i] = 1;
      ts[i] = 0;
      queued[i] = 1;
      active[qLen++] = i;
    }
    const stats = bkSearch(this.ws, W, qLen, this.width * this.height);
    let left = 0;
    for (let k = 0; k < m; k++) {
      const i = members[k] + W;
      sinkSide[k] = tree[i] === SINK_TREE ? 1 : 0;
      if (tr[i] < 0) left -= tr[i];
    }
    const flow = this.sinkTotal - left;
    this.clear(members, m);
    return { flow, stats };
  }

  private clear(members: Int32Array, m: number): void {
    const W = this.width;
    const { rc, tr, tree, parent } = this.ws;
    for (let k = 0; k < m; k++) {
      const i = members[k] + W;
      rc[4 * i] = 0; rc[4 * i + 1] = 0; rc[4 * i + 2] = 0; rc[4 * i + 3] = 0;
      tr[i] = 0;
      tree[i] = FREE;
      parent[i] = NONE;
    }
    this.sinkTotal = 0;
    this.bits = 0;
  }
}
