/**
 * The search of the Boykov–Kolmogorov max-flow algorithm (IEEE TPAMI 2004)
 * on a graph whose nodes have four neighbour slots, on typed arrays only:
 * growth of the two search trees, augmentation along the path found,
 * adoption of the orphans. bkCore.ts loads whole grid graphs into it;
 * sparseCut.ts the pixels of a move that may change, numbered 0..m−1 in
 * raster order so that a small move's arrays are small and read in order.
 *
 * Per node i: the neighbour in direction d (right, left, down, up; the
 * opposite is d ^ 1) is nbr[4i + d]; rc[4i + d] is the residual capacity
 * towards it; tr[i] the signed terminal residual (> 0 from the source,
 * < 0 to the sink). A slot without a neighbour points at a node with no
 * residual capacity in or out (a pad row of the grid, a sentinel), which
 * never joins a tree.
 *
 * parent[i] is the slot of i's parent (0..3), TERMINAL for a tree root,
 * ORPHAN while the node waits for adoption, NONE for a free node.
 */

// Declared, then exported in a list: compiled to CommonJS, an exported const is read as exports.NAME, a property load
// that the optimised search would deoptimise on whenever it first reaches a branch that reads one; a local binding is a constant.
const TERMINAL = 4;
const ORPHAN = 5;
const NONE = 6;

const FREE = 0;
const SOURCE_TREE = 1;
const SINK_TREE = 2;
export { TERMINAL, ORPHAN, NONE, FREE, SOURCE_TREE, SINK_TREE };

const INFINITE_DIST = 0x7fffffff;

/** The arrays of one search; `active` and `orphans` are rings of `capacity` slots (every node that can join a tree fits once). */
export interface BkArrays {
  /** nbr[4i + d]: the neighbour of node i in direction d, whose direction d ^ 1 leads back to i. */
  nbr: Int32Array;
  rc: Int32Array;
  tr: Int32Array;
  tree: Uint8Array;
  parent: Uint8Array;
  dist: Int32Array;
  ts: Int32Array;
  queued: Uint8Array;
  active: Int32Array;
  orphans: Int32Array;
}

/** Counters of one search. */
export interface BkSearchStats {
  augmentations: number;
  /** Orphans processed (each either adopted by a new parent or freed). */
  orphans: number;
  /** Orphans that found a new parent in their own tree. */
  adopted: number;
  /** Nodes taken from the active queue and grown from. */
  growths: number;
}

/**
 * Runs the search to the maximum flow. On entry every node with a non-zero
 * terminal residual is a tree root (tree, parent TERMINAL, dist 1, ts 0,
 * queued) and the first `qLen` slots of `active` hold them; every other
 * node is FREE with parent NONE and not queued. On return no augmenting
 * path is left, no node is queued, and the sink tree holds exactly the
 * nodes that reach the sink in the residual graph.
 */
export function bkSearch(a: BkArrays, qLen: number, capacity: number): BkSearchStats {
  const { nbr, rc, tr, tree, parent, dist, ts, queued, active, orphans } = a;
  let qHead = 0;
  let qTail = qLen === capacity ? 0 : qLen;
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
        const j = nbr[4 * i + d];
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
        const j = nbr[4 * i + d];
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
      const u = nbr[4 * v + pd];
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
      v = nbr[4 * v + pd];
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
      const u = nbr[4 * v + pd];
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
      const u = nbr[4 * v + pd];
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
        const j = nbr[4 * o + d];
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
          k = nbr[4 * k + pk];
        }
        if (steps === INFINITE_DIST) continue;
        if (steps < bestDist) {
          bestDist = steps;
          bestDir = d;
        }
        // Record the confirmed distances along the walked path, so later walks stop there.
        for (k = j; ts[k] !== time; k = nbr[4 * k + parent[k]]) {
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
        const j = nbr[4 * o + d];
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

  return { augmentations, orphans: orphanCount, adopted, growths };
}
