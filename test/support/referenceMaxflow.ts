import type { GridGraph } from '../../graphcut/gridGraph';

/**
 * A deliberately plain max-flow (Dinic's algorithm) on a generic adjacency
 * list, used by the tests as an oracle independent of the grid layout and of
 * every optimised backend. Speed is secondary to being obviously correct.
 *
 * Edges are stored in pairs: edge e and its reverse e ^ 1, so pushing f along
 * e is `cap[e] -= f; cap[e ^ 1] += f`. Capacities are doubles; with integer
 * inputs whose total stays below 2^53 every value is exact.
 */
export class ReferenceFlowNetwork {
  readonly nodeCount: number;
  private readonly head: number[] = []; // head[e] = node the edge e points to
  private readonly cap: number[] = []; // residual capacity of edge e
  private readonly adj: number[][]; // adj[u] = edges leaving u

  constructor(nodeCount: number) {
    if (!Number.isInteger(nodeCount) || nodeCount < 2) {
      throw new Error(`referenceMaxflow: a network needs at least 2 nodes (got ${nodeCount})`);
    }
    this.nodeCount = nodeCount;
    this.adj = Array.from({ length: nodeCount }, () => []);
  }

  /** Adds a directed edge u → v of capacity c (and its zero-capacity reverse). */
  addEdge(u: number, v: number, c: number): void {
    if (!(c >= 0)) throw new Error(`referenceMaxflow: edge ${u}→${v} has negative capacity ${c}`);
    if (c === 0) return;
    this.adj[u].push(this.head.length);
    this.head.push(v);
    this.cap.push(c);
    this.adj[v].push(this.head.length);
    this.head.push(u);
    this.cap.push(0);
  }

  /** Runs Dinic from s to t and returns the flow value; afterwards the residual graph is available. */
  maxFlow(s: number, t: number): number {
    const n = this.nodeCount;
    const { head, cap, adj } = this;
    const level = new Int32Array(n);
    const next = new Int32Array(n); // current-arc pointer into adj[u]
    const queue = new Int32Array(n);
    let flow = 0;
    for (;;) {
      // Breadth-first levels from s over edges with residual capacity.
      level.fill(-1);
      level[s] = 0;
      let qh = 0;
      let qt = 0;
      queue[qt++] = s;
      while (qh < qt) {
        const u = queue[qh++];
        for (const e of adj[u]) {
          if (cap[e] > 0 && level[head[e]] < 0) {
            level[head[e]] = level[u] + 1;
            queue[qt++] = head[e];
          }
        }
      }
      if (level[t] < 0) return flow;
      next.fill(0);
      // Blocking flow: depth-first along level-increasing edges, one path at a time, with an explicit stack.
      const path: number[] = [];
      let u = s;
      for (;;) {
        if (u === t) {
          let f = cap[path[0]];
          for (const e of path) if (cap[e] < f) f = cap[e];
          for (const e of path) {
            cap[e] -= f;
            cap[e ^ 1] += f;
          }
          flow += f;
          path.length = 0;
          u = s;
          continue;
        }
        let advanced = false;
        while (next[u] < adj[u].length) {
          const e = adj[u][next[u]];
          if (cap[e] > 0 && level[head[e]] === level[u] + 1) {
            path.push(e);
            u = head[e];
            advanced = true;
            break;
          }
          next[u]++;
        }
        if (advanced) continue;
        if (u === s) break;
        // Dead end: u can no longer reach t in this phase; retreat and skip the edge that led here.
        level[u] = -1;
        const e = path.pop() as number;
        u = head[e ^ 1];
        next[u]++;
      }
    }
  }

  /** Nodes that can reach t through edges with positive residual capacity (t included). */
  nodesReaching(t: number): Uint8Array {
    const { head, cap, adj } = this;
    const mark = new Uint8Array(this.nodeCount);
    const stack = [t];
    mark[t] = 1;
    while (stack.length > 0) {
      const v = stack.pop() as number;
      // Edge e ^ 1 leaves v for u = head[e]; its partner e = u → v is what u would use to move towards v.
      for (const back of adj[v]) {
        const e = back ^ 1;
        const u = head[back];
        if (cap[e] > 0 && !mark[u]) {
          mark[u] = 1;
          stack.push(u);
        }
      }
    }
    return mark;
  }
}

export interface ReferenceCut {
  flow: number;
  /** 1 for pixels that reach the sink in the residual graph of the maximum flow. */
  sinkSide: Uint8Array;
}

/** Max flow of a grid graph through the generic network: pixels 0..n−1, source n, sink n+1. */
export function referenceMaxFlow(g: GridGraph): ReferenceCut {
  const { width: W, height: H } = g;
  const n = W * H;
  const s = n;
  const t = n + 1;
  const net = new ReferenceFlowNetwork(n + 2);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      net.addEdge(s, p, g.source[p]);
      net.addEdge(p, t, g.sink[p]);
      if (x + 1 < W) {
        net.addEdge(p, p + 1, g.right[p]);
        net.addEdge(p + 1, p, g.rightRev[p]);
      }
      if (y + 1 < H) {
        net.addEdge(p, p + W, g.down[p]);
        net.addEdge(p + W, p, g.downRev[p]);
      }
    }
  }
  const flow = net.maxFlow(s, t);
  const reach = net.nodesReaching(t);
  return { flow, sinkSide: reach.slice(0, n) };
}
