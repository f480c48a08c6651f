import { validateGridGraph, type GridGraph } from './gridGraph';
import type { BkRunStats, BkWorkspace } from './bkWorkspace';

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
 * parent[i] is the direction from i to its parent (0..3), TERMINAL for a tree
 * root, ORPHAN while the node waits for adoption, NONE for a free node.
 */

// bkSearch.ts's values, as local bindings: compiled to CommonJS, an imported const is a property read, which an optimised loop deoptimises on the first time a branch reaches it.
const RIGHT = 0;
const LEFT = 1;
const DOWN = 2;
const UP = 3;
const TERMINAL = 4;
const ORPHAN = 5;
const NONE = 6;

const FREE = 0;
const SOURCE_TREE = 1;
const SINK_TREE = 2;

const INFINITE_DIST = 0x7fffffff;

/** Bits 30 and 31 of a capacity: set exactly when it is negative or above MAX_CAPACITY = 2^30 − 1. */
const OUT_OF_RANGE = 0xc0000000 | 0;

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
  const { rc, tr, tree, parent, dist, ts, queued, active, orphans } = ws;
  const capacity = n; // ring-buffer size of both queues
  // Neighbour offsets by direction; d ^ 1 is the opposite direction.
  const off = [1, -1, W, -W];
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
  let qHead = 0;
  let qTail = 0;
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
        active[qTail++] = i;
        qLen++;
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
  if (qTail === capacity) qTail = 0;

  let oHead = 0;
  let oTail = 0;
  let oLen = 0;
  let time = 0;
  let current = -1;
  let augmentations = 0;
  let orphanCount = 0;
  let adopted = 0;
  let growths = 0;

  for (;;) {
    // ---- Pick the node to grow from: the one that found the last path, if it is still in a tree, else the queue.
    let i = -1;
    if (current >= 0) {
      queued[current] = 0;
      if (tree[current] !== FREE) i = current;
      current = -1;
    }
    while (i < 0 && qLen > 0) {
      const v = active[qHead];
      if (++qHead === capacity) qHead = 0;
      qLen--;
      queued[v] = 0;
      if (tree[v] !== FREE) i = v;
    }
    if (i < 0) break;
    growths++;

    // ---- Growth: claim free neighbours; stop at the first edge into the other tree.
    let bridgeS = -1; // source-tree end of the bridge
    let bridgeT = -1; // sink-tree end
    let bridgeDir = 0; // direction from bridgeS to bridgeT
    const ti = ts[i];
    const di = dist[i];
    if (tree[i] === SOURCE_TREE) {
      for (let d = 0; d < 4; d++) {
        if (rc[4 * i + d] <= 0) continue;
        const j = i + off[d];
        const tj = tree[j];
        if (tj === FREE) {
          tree[j] = SOURCE_TREE;
          parent[j] = d ^ 1;
          ts[j] = ti;
          dist[j] = di + 1;
          if (queued[j] === 0) {
            queued[j] = 1;
            active[qTail] = j;
            if (++qTail === capacity) qTail = 0;
            qLen++;
          }
        } else if (tj === SINK_TREE) {
          bridgeS = i;
          bridgeT = j;
          bridgeDir = d;
          break;
        } else if (ts[j] <= ti && dist[j] > di) {
          // Heuristic of the 2004 paper: re-hang j under i when that makes its path to the source shorter.
          parent[j] = d ^ 1;
          ts[j] = ti;
          dist[j] = di + 1;
        }
      }
    } else {
      for (let d = 0; d < 4; d++) {
        const j = i + off[d];
        if (rc[4 * j + (d ^ 1)] <= 0) continue;
        const tj = tree[j];
        if (tj === FREE) {
          tree[j] = SINK_TREE;
          parent[j] = d ^ 1;
          ts[j] = ti;
          dist[j] = di + 1;
          if (queued[j] === 0) {
            queued[j] = 1;
            active[qTail] = j;
            if (++qTail === capacity) qTail = 0;
            qLen++;
          }
        } else if (tj === SOURCE_TREE) {
          bridgeS = j;
          bridgeT = i;
          bridgeDir = d ^ 1;
          break;
        } else if (ts[j] <= ti && dist[j] > di) {
          parent[j] = d ^ 1;
          ts[j] = ti;
          dist[j] = di + 1;
        }
      }
    }
    time++;
    if (bridgeS < 0) continue; // i is now passive

    // i may have more edges into the other tree: grow from it again next, before the queue.
    queued[i] = 1;
    current = i;

    // ---- Augment along source → ... → bridgeS → bridgeT → ... → sink by the bottleneck.
    augmentations++;
    let delta = rc[4 * bridgeS + bridgeDir];
    for (let v = bridgeS; ; ) {
      const pd = parent[v];
      if (pd === TERMINAL) {
        if (tr[v] < delta) delta = tr[v];
        break;
      }
      const u = v + off[pd];
      const c = rc[4 * u + (pd ^ 1)];
      if (c < delta) delta = c;
      v = u;
    }
    for (let v = bridgeT; ; ) {
      const pd = parent[v];
      if (pd === TERMINAL) {
        if (-tr[v] < delta) delta = -tr[v];
        break;
      }
      const c = rc[4 * v + pd];
      if (c < delta) delta = c;
      v += off[pd];
    }
    rc[4 * bridgeS + bridgeDir] -= delta;
    rc[4 * bridgeT + (bridgeDir ^ 1)] += delta;
    // Saturated tree edges make orphans, queued at the front (they are processed before older ones).
    for (let v = bridgeS; ; ) {
      const pd = parent[v];
      if (pd === TERMINAL) {
        tr[v] -= delta;
        if (tr[v] === 0) {
          parent[v] = ORPHAN;
          if (--oHead < 0) oHead = capacity - 1;
          orphans[oHead] = v;
          oLen++;
        }
        break;
      }
      const u = v + off[pd];
      const e = 4 * u + (pd ^ 1);
      rc[e] -= delta;
      rc[4 * v + pd] += delta;
      if (rc[e] === 0) {
        parent[v] = ORPHAN;
        if (--oHead < 0) oHead = capacity - 1;
        orphans[oHead] = v;
        oLen++;
      }
      v = u;
    }
    for (let v = bridgeT; ; ) {
      const pd = parent[v];
      if (pd === TERMINAL) {
        tr[v] += delta;
        if (tr[v] === 0) {
          parent[v] = ORPHAN;
          if (--oHead < 0) oHead = capacity - 1;
          orphans[oHead] = v;
          oLen++;
        }
        break;
      }
      const u = v + off[pd];
      const e = 4 * v + pd;
      rc[e] -= delta;
      rc[4 * u + (pd ^ 1)] += delta;
      if (rc[e] === 0) {
        parent[v] = ORPHAN;
        if (--oHead < 0) oHead = capacity - 1;
        orphans[oHead] = v;
        oLen++;
      }
      v = u;
    }

    // ---- Adoption: find each orphan a new parent in its own tree whose root is still a terminal, or free it.
    while (oLen > 0) {
      const o = orphans[oHead];
      if (++oHead === capacity) oHead = 0;
      oLen--;
      orphanCount++;
      const isSource = tree[o] === SOURCE_TREE;
      const own = isSource ? SOURCE_TREE : SINK_TREE;
      let bestDir = -1;
      let bestDist = INFINITE_DIST;
      for (let d = 0; d < 4; d++) {
        const j = o + off[d];
        if (tree[j] !== own) continue;
        // The tree edge would be j → o in the source tree, o → j in the sink tree.
        if ((isSource ? rc[4 * j + (d ^ 1)] : rc[4 * o + d]) <= 0) continue;
        // Walk from j towards its root; stop early at a node whose distance was confirmed in this round.
        let k = j;
        let steps = 0;
        for (;;) {
          if (ts[k] === time) {
            steps += dist[k];
            break;
          }
          const pk = parent[k];
          steps++;
          if (pk === TERMINAL) {
            ts[k] = time;
            dist[k] = 1;
            break;
          }
          if (pk === ORPHAN) {
            steps = INFINITE_DIST;
            break;
          }
          k += off[pk];
        }
        if (steps === INFINITE_DIST) continue;
        if (steps < bestDist) {
          bestDist = steps;
          bestDir = d;
        }
        // Record the confirmed distances along the walked path, so later walks stop there.
        for (k = j; ts[k] !== time; k += off[parent[k]]) {
          ts[k] = time;
          dist[k] = steps--;
        }
      }
      if (bestDir >= 0) {
        parent[o] = bestDir;
        ts[o] = time;
        dist[o] = bestDist + 1;
        adopted++;
        continue;
      }
      // No parent: o becomes free. Neighbours that could take it back become active; its children become orphans.
      tree[o] = FREE;
      parent[o] = NONE;
      for (let d = 0; d < 4; d++) {
        const j = o + off[d];
        if (tree[j] !== own) continue;
        if ((isSource ? rc[4 * j + (d ^ 1)] : rc[4 * o + d]) > 0 && queued[j] === 0) {
          queued[j] = 1;
          active[qTail] = j;
          if (++qTail === capacity) qTail = 0;
          qLen++;
        }
        if (parent[j] === (d ^ 1)) {
          parent[j] = ORPHAN;
          orphans[oTail] = j;
          if (++oTail === capacity) oTail = 0;
          oLen++;
        }
      }
    }
    // The deque's tail moves only by rear pushes; re-align it with the head when it empties.
    oTail = oHead;
  }

  // ---- Canonical cut and exact flow value: Σ_p (c_t(p) − residual to the sink).
  let flow = 0;
  for (let p = 0; p < n; p++) {
    const i = p + W;
    sinkSide[p] = tree[i] === SINK_TREE ? 1 : 0;
    const t = tr[i];
    flow += sink[p] - (t < 0 ? -t : 0);
  }
  return { flow, augmentations, orphans: orphanCount, adopted, growths };
}
