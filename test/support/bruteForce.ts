import type { GridGraph } from '../../graphcut/gridGraph';

// Module-level copy: inside test sandboxes every global lookup in a hot loop is slow, a module constant is not.
const clz32 = Math.clz32;

/** Above this many pixels the 2^n enumeration is too slow to be a test oracle. */
export const BRUTE_FORCE_MAX_PIXELS = 20;

export interface BruteForceCut {
  /** Capacity of a minimum cut (= the maximum flow value). */
  minCut: number;
  /**
   * The intersection of the sink sides of all minimum cuts: the smallest
   * minimum-cut sink side, which is the canonical cut of maxflow.ts.
   */
  minimalSinkSide: Uint8Array;
  /** The union of the sink sides of all minimum cuts (the largest one). */
  maximalSinkSide: Uint8Array;
  /** How many of the 2^n labelings reach the minimum. */
  minimumCount: number;
}

/**
 * Exhaustive minimum cut over all 2^n assignments of pixels to sides, for
 * tiny graphs only. The assignments are visited in Gray-code order, so each
 * step flips one pixel and updates the cut capacity from that pixel's
 * terminal and grid edges alone (O(1) per assignment instead of O(n)).
 * Capacities are integers and every partial sum stays below 2^53, so the
 * running value is exact and ties compare exactly.
 */
export function bruteForceMinCut(g: GridGraph): BruteForceCut {
  const { width: W, height: H } = g;
  const n = W * H;
  if (n > BRUTE_FORCE_MAX_PIXELS) {
    throw new Error(`bruteForce: ${W}×${H} has ${n} pixels, more than the ${BRUTE_FORCE_MAX_PIXELS} it can enumerate`);
  }
  // Neighbour lists with the capacity of each edge in both directions, built once.
  const nbr: number[][] = [];
  const capOut: number[][] = []; // c(p → q)
  const capIn: number[][] = []; // c(q → p)
  for (let p = 0; p < n; p++) {
    nbr.push([]);
    capOut.push([]);
    capIn.push([]);
  }
  const link = (p: number, q: number, pq: number, qp: number): void => {
    nbr[p].push(q); capOut[p].push(pq); capIn[p].push(qp);
    nbr[q].push(p); capOut[q].push(qp); capIn[q].push(pq);
  };
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      if (x + 1 < W) link(p, p + 1, g.right[p], g.rightRev[p]);
      if (y + 1 < H) link(p, p + W, g.down[p], g.downRev[p]);
    }
  }

  // Start with every pixel on the source side: the cut is Σ c(p → t).
  const side = new Uint8Array(n);
  let cut = 0;
  for (let p = 0; p < n; p++) cut += g.sink[p];
  let best = cut;
  let count = 1;
  // Bit masks of the intersection and union of the minimum sink sides so far.
  let inter = 0;
  let union = 0;
  let mask = 0;
  const total = 2 ** n;
  for (let k = 1; k < total; k++) {
    // Gray code step k flips the bit at the position of the lowest set bit of k.
    const p = 31 - clz32(k & -k);
    const toSink = side[p] === 0;
    // Moving p to the sink side: its source edge becomes cut and its sink edge uncut; for each neighbour q,
    // edge p→q stops being cut if q is on the sink side, and edge q→p becomes cut if q is on the source side.
    let delta = g.source[p] - g.sink[p];
    const ns = nbr[p];
    for (let i = 0; i < ns.length; i++) {
      if (side[ns[i]]) delta -= capOut[p][i];
      else delta += capIn[p][i];
    }
    if (toSink) {
      cut += delta;
      side[p] = 1;
      mask |= 1 << p;
    } else {
      cut -= delta;
      side[p] = 0;
      mask &= ~(1 << p);
    }
    if (cut < best) {
      best = cut;
      count = 1;
      inter = mask;
      union = mask;
    } else if (cut === best) {
      count++;
      inter &= mask;
      union |= mask;
    }
  }
  const minimalSinkSide = new Uint8Array(n);
  const maximalSinkSide = new Uint8Array(n);
  for (let p = 0; p < n; p++) {
    minimalSinkSide[p] = (inter >>> p) & 1;
    maximalSinkSide[p] = (union >>> p) & 1;
  }
  return { minCut: best, minimalSinkSide, maximalSinkSide, minimumCount: count };
}
