import { validateGridGraph, type GridGraph } from './gridGraph';
import { bkSearch, FREE, NONE, SINK_TREE, SOURCE_TREE, TERMINAL, type BkArrays, type BkSearchStats } from './bkSearch';

/**
 * The Boykov–Kolmogorov max-flow algorithm (IEEE TPAMI 2004) specialised for
 * 4-connected grid graphs, on typed arrays only.
 *
 * Layout. The grid is padded with one empty row above and one below, so node
 * i = p + W for pixel p and every neighbour index i ± 1, i ± W stays inside
 * the arrays. Pad nodes have no residual capacity in or out, so they never
 * join a tree. A pixel in the last column sees the first pixel of the next
 * row as its "right" neighbour, but both residuals between them are zero
 * (validateGridGraph guarantees no edges leave the grid), so no flow or tree
 * edge ever crosses the wrap.
 *
 * Per node: four neighbour residuals rc[4i + d] (d = RIGHT, LEFT, DOWN, UP;
 * the opposite direction is d ^ 1) and one signed terminal residual tr[i]:
 * tr > 0 is residual capacity from the source, tr < 0 is residual capacity to
 * the sink. Pushing min(c_s, c_t) through every pixel first leaves at most
 * one of the two non-zero, which is what makes one signed value enough.
 *
 * The search itself is bkSearch.ts's.
 */

const RIGHT = 0;
const LEFT = 1;
const DOWN = 2;
const UP = 3;

/** Bits 30 and 31 of a capacity: set exactly when it is negative or above MAX_CAPACITY = 2^30 − 1. */
const OUT_OF_RANGE = 0xc0000000 | 0;

/** Counters of one run. */
export interface BkRunStats extends BkSearchStats {
  flow: number;
}

/**
 * Every array one solve needs, allocated once per grid size so that
 * α-expansion can run hundreds of solves on the same size with no
 * allocation.
 */
export class BkWorkspace implements BkArrays {
  readonly width: number;

  readonly height: number;
  /** rc[4i + d]: residual capacity from node i to its neighbour in direction d. */
  readonly rc: Int32Array;
  /** Signed terminal residual: > 0 from the source, < 0 to the sink. */
  readonly tr: Int32Array;
  readonly tree: Uint8Array;
  readonly parent: Uint8Array;
  /** Distance to the terminal, valid when ts[i] is recent (the 2004 paper's adoption heuristic). */
  readonly dist: Int32Array;
  readonly ts: Int32Array;
  /** 1 while the node sits in the active queue (or is the node being grown from). */
  readonly queued: Uint8Array;
  /** Ring buffer of active nodes; each node is in it at most once, so n slots suffice. */
  readonly active: Int32Array;
  /** Double-ended ring buffer of orphans; each node is an orphan at most once at a time. */
  readonly orphans: Int32Array;

  constructor(width: number, height: number) {
    if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0) {
      throw new Error(`bk: workspace size must be positive integers (got ${width}×${height})`);
    }
    this.width = width;
    this.height = height;
    const n = width * height;
    const padded = n + 2 * width;
    this.rc = new Int32Array(4 * padded);
    this.tr = new Int32Array(padded);
    this.tree = new Uint8Array(padded);
    this.parent = new Uint8Array(padded);
    this.dist = new Int32Array(padded);
    this.ts = new Int32Array(padded);
    this.queued = new Uint8Array(padded);
    this.active = new Int32Array(n);
    this.orphans = new Int32Array(n);
  }

  fits(g: GridGraph): boolean {
    return g.width === this.width && g.height === this.height;
  }
}

/**
 * Solves the max-flow of `g` in `ws` (which must have g's size) and writes the
 * canonical cut to `sinkSide`: 1 exactly for the sink-tree nodes at
 * termination, which are the pixels that reach the sink in the residual graph.
 * Does not modify g. Validates g while loading it (one pass instead of two):
 * anything validateGridGraph would reject is rejected with its message.
 */
export function runBoykovKolmogorov(g: GridGraph, ws: BkWorkspace, sinkSide: Uint8Array): BkRunStats {
  const W = ws.width;
  const H = ws.height;
  const n = W * H;
  const end = n + W; // node indices of pixels are W..end-1
  const { rc, tr, tree, parent, dist, ts, queued, active } = ws;
  const capacity = n; // ring-buffer size of both queues
  const { source, sink, right, rightRev, down, downRev } = g;
  if (g.width !== W || g.height !== H) {
    throw new Error(`bk: a ${g.width}×${g.height} graph does not fit a ${W}×${H} workspace`);
  }
  if (sinkSide.length !== n || source.length !== n || sink.length !== n || right.length !== n
    || rightRev.length !== n || down.length !== n || downRev.length !== n) {
    validateGridGraph(g);
    throw new Error(`bk: sinkSide has ${sinkSide.length} entries, expected ${n} (${W}×${H})`);
  }

  // ---- Load residuals (pads stay zero) and push min(c_s, c_t) through each pixel.
  rc.fill(0, 0, 4 * W);
  rc.fill(0, 4 * end);
  tree.fill(FREE);
  parent.fill(NONE);
  queued.fill(0);
  let qLen = 0;
  // OR of every capacity: bits 30 and 31 are clear exactly when all lie in 0..MAX_CAPACITY = 2^30 − 1.
  let bits = 0;
  for (let y = 0, p = 0; y < H; y++) {
    for (let x = 0; x < W; x++, p++) {
      const i = p + W;
      const b = 4 * i;
      const cs = source[p];
      const ct = sink[p];
      bits |= cs | ct | right[p] | rightRev[p] | down[p] | downRev[p];
      rc[b + RIGHT] = right[p];
      rc[b + LEFT] = x > 0 ? rightRev[p - 1] : 0;
      rc[b + DOWN] = down[p];
      rc[b + UP] = y > 0 ? downRev[p - W] : 0;
      const t = cs - ct;
      tr[i] = t;
      if (t !== 0) {
        tree[i] = t > 0 ? SOURCE_TREE : SINK_TREE;
        parent[i] = TERMINAL;
        dist[i] = 1;
        ts[i] = 0;
        queued[i] = 1;
        active[qLen++] = i;
      }
    }
  }
  // Edges leaving the grid would be wrapped onto the next row or a pad by this layout.
  let edgesOut = 0;
  for (let p = W - 1; p < n; p += W) edgesOut |= right[p] | rightRev[p];
  for (let p = n - W; p < n; p++) edgesOut |= down[p] | downRev[p];
  if ((bits & OUT_OF_RANGE) !== 0 || edgesOut !== 0) {
    validateGridGraph(g); // throws the precise message
    throw new Error('bk: invalid grid graph');
  }
  const stats = bkSearch(ws, W, qLen, capacity);

  // ---- Canonical cut and exact flow value: Σ_p (c_t(p) − residual to the sink).
  let flow = 0;
  for (let p = 0; p < n; p++) {
    const i = p + W;
    sinkSide[p] = tree[i] === SINK_TREE ? 1 : 0;
    const t = tr[i];
    flow += sink[p] - (t < 0 ? -t : 0);
  }
  return { flow, ...stats };
}
