/**
 * gpu.js kernel sources for lockstep push-relabel on a 4-connected grid.
 *
 * The sources are generated as strings, not written as TypeScript functions,
 * because gpu.js parses a kernel's JavaScript text: compiling through tsc or
 * instrumenting for coverage would change that text under it.
 *
 * Layout (every kernel reads and writes the same [W, H, 5] state S):
 *   S[0] excess e(p)        S[1] height h(p)
 *   S[2] fR(p): signed flow on p → p+1     S[3] fD(p): signed flow on p → p+W
 *   S[4] rt(p): residual capacity p → sink
 * and reads the constant capacities C [W, H, 4]:
 *   C[0] c(p → p+1)  C[1] c(p+1 → p)  C[2] c(p → p+W)  C[3] c(p+W → p)
 * Residuals: p → right = C0 − fR, p → left = C1(p−1) + fR(p−1),
 *            p → down = C2 − fD, p → up = C3(p−W) + fD(p−W).
 *
 * gpu.js threads write only their own output element and have no barriers or
 * atomics, so every step is a gather: a thread recomputes the push decisions
 * of the pixels around it (they depend only on the previous state) instead of
 * receiving them. thread.z selects which of the five fields the thread writes.
 */

export const STATE_PLANES = 5;
export const CAPACITY_PLANES = 4;
export const PLANE = { excess: 0, height: 1, flowRight: 2, flowDown: 3, sinkResidual: 4 } as const;

const W = 'this.constants.W';
const H = 'this.constants.H';
const INF = 'this.constants.INF';

/**
 * Statements computing the push decisions of the pixel at (X, Y) into
 * `${v}s` (to the sink), `${v}r`, `${v}d`, `${v}l`, `${v}u` (to the right, down,
 * left, up neighbour). The pixel pushes only while it has excess and a finite
 * height: first to the sink, then to each neighbour q with h(p) = h(q) + 1 in
 * the fixed order right, down, left, up, each push capped by the excess left
 * and the edge's residual. Two neighbours can never push to each other in one
 * pass (h(p) = h(q)+1 and h(q) = h(p)+1 exclude each other), so every decision
 * stays valid when all pixels apply theirs at once.
 */
function decisions(v: string, X: string, Y: string): string {
  return `
    let ${v}e = S[0][${Y}][${X}];
    let ${v}h = S[1][${Y}][${X}];
    let ${v}s = 0.0;
    let ${v}r = 0.0;
    let ${v}d = 0.0;
    let ${v}l = 0.0;
    let ${v}u = 0.0;
    if (${v}e > 0.0 && ${v}h < ${INF}) {
      ${v}s = Math.min(${v}e, S[4][${Y}][${X}]);
      let ${v}m = ${v}e - ${v}s;
      if (${v}m > 0.0 && ${X} + 1 < ${W}) {
        if (S[1][${Y}][${X} + 1] + 1.0 === ${v}h) {
          ${v}r = Math.min(${v}m, C[0][${Y}][${X}] - S[2][${Y}][${X}]);
          ${v}m = ${v}m - ${v}r;
        }
      }
      if (${v}m > 0.0 && ${Y} + 1 < ${H}) {
        if (S[1][${Y} + 1][${X}] + 1.0 === ${v}h) {
          ${v}d = Math.min(${v}m, C[2][${Y}][${X}] - S[3][${Y}][${X}]);
          ${v}m = ${v}m - ${v}d;
        }
      }
      if (${v}m > 0.0 && ${X} > 0) {
        if (S[1][${Y}][${X} - 1] + 1.0 === ${v}h) {
          ${v}l = Math.min(${v}m, C[1][${Y}][${X} - 1] + S[2][${Y}][${X} - 1]);
          ${v}m = ${v}m - ${v}l;
        }
      }
      if (${v}m > 0.0 && ${Y} > 0) {
        if (S[1][${Y} - 1][${X}] + 1.0 === ${v}h) {
          ${v}u = Math.min(${v}m, C[3][${Y} - 1][${X}] + S[3][${Y} - 1][${X}]);
        }
      }
    }`;
}

/**
 * Decisions of the pixel and its four neighbours, then the new excess. What
 * each neighbour pushes into p lands in fromL/fromR/fromU/fromD (zero where
 * the neighbour is off the grid).
 */
function excessAfterPush(): string {
  return `
    ${decisions('p', 'x', 'y')}
    let fromL = 0.0;
    let fromR = 0.0;
    let fromU = 0.0;
    let fromD = 0.0;
    if (x > 0) {
      ${decisions('a', 'x - 1', 'y')}
      fromL = ar;
    }
    if (x + 1 < ${W}) {
      ${decisions('b', 'x + 1', 'y')}
      fromR = bl;
    }
    if (y > 0) {
      ${decisions('c', 'x', 'y - 1')}
      fromU = cd;
    }
    if (y + 1 < ${H}) {
      ${decisions('g', 'x', 'y + 1')}
      fromD = gu;
    }
    let eNew = pe - ps - pr - pd - pl - pu + fromL + fromR + fromU + fromD;`;
}

/**
 * One push-relabel iteration: a push pass followed by a relabel pass, fused
 * into one kernel. This is exact, not an approximation of the two passes: the
 * relabel of p needs p's excess and edge residuals after the push (computable
 * from the decisions of p and its neighbours) and its neighbours' heights,
 * which a push pass never changes. Relabelling all pixels at once from the
 * old heights keeps the labeling valid because heights only grow.
 */
export function pushRelabelSource(): string {
  return `function (S, C) {
    const x = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    if (z === 0) {
      ${excessAfterPush()}
      return eNew;
    }
    if (z === 2) {
      ${decisions('p', 'x', 'y')}
      let back = 0.0;
      if (x + 1 < ${W}) {
        ${decisions('b', 'x + 1', 'y')}
        back = bl;
      }
      return S[2][y][x] + pr - back;
    }
    if (z === 3) {
      ${decisions('p', 'x', 'y')}
      let back = 0.0;
      if (y + 1 < ${H}) {
        ${decisions('g', 'x', 'y + 1')}
        back = gu;
      }
      return S[3][y][x] + pd - back;
    }
    if (z === 4) {
      ${decisions('p', 'x', 'y')}
      return S[4][y][x] - ps;
    }
    let h0 = S[1][y][x];
    if (h0 >= ${INF}) {
      return h0;
    }
    ${excessAfterPush()}
    if (eNew <= 0.0 || S[4][y][x] - ps > 0.0) {
      return h0;
    }
    let best = ${INF};
    let admissible = 0.0;
    if (x + 1 < ${W}) {
      if (C[0][y][x] - (S[2][y][x] + pr - fromR) > 0.0) {
        let hq = S[1][y][x + 1];
        if (hq + 1.0 === h0) { admissible = 1.0; }
        best = Math.min(best, hq + 1.0);
      }
    }
    if (y + 1 < ${H}) {
      if (C[2][y][x] - (S[3][y][x] + pd - fromD) > 0.0) {
        let hq = S[1][y + 1][x];
        if (hq + 1.0 === h0) { admissible = 1.0; }
        best = Math.min(best, hq + 1.0);
      }
    }
    if (x > 0) {
      if (C[1][y][x - 1] + (S[2][y][x - 1] + fromL - pl) > 0.0) {
        let hq = S[1][y][x - 1];
        if (hq + 1.0 === h0) { admissible = 1.0; }
        best = Math.min(best, hq + 1.0);
      }
    }
    if (y > 0) {
      if (C[3][y - 1][x] + (S[3][y - 1][x] + fromU - pu) > 0.0) {
        let hq = S[1][y - 1][x];
        if (hq + 1.0 === h0) { admissible = 1.0; }
        best = Math.min(best, hq + 1.0);
      }
    }
    if (admissible > 0.0) {
      return h0;
    }
    return Math.min(best, ${INF});
  }`;
}

/** Start of a global relabel: distance 1 for pixels with residual to the sink, "unreachable" (INF) elsewhere. */
export function bfsInitSource(): string {
  return `function (S, C) {
    const x = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    if (z !== 1) {
      return S[z][y][x];
    }
    if (S[4][y][x] > 0.0) {
      return 1.0;
    }
    return ${INF};
  }`;
}

/**
 * One level of the reverse BFS from the sink, as a gather:
 * h(p) ← min(h(p), 1 + min h(q) over residual edges p → q), clamped to INF.
 * Starting from bfsInit, the values only decrease and stay upper bounds of
 * the residual distance to the sink; at a fixed point they equal it.
 */
export function bfsPassSource(): string {
  return `function (S, C) {
    const x = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    if (z !== 1) {
      return S[z][y][x];
    }
    if (S[4][y][x] > 0.0) {
      return 1.0;
    }
    let m = S[1][y][x];
    if (x + 1 < ${W}) {
      if (C[0][y][x] - S[2][y][x] > 0.0) { m = Math.min(m, S[1][y][x + 1] + 1.0); }
    }
    if (y + 1 < ${H}) {
      if (C[2][y][x] - S[3][y][x] > 0.0) { m = Math.min(m, S[1][y + 1][x] + 1.0); }
    }
    if (x > 0) {
      if (C[1][y][x - 1] + S[2][y][x - 1] > 0.0) { m = Math.min(m, S[1][y][x - 1] + 1.0); }
    }
    if (y > 0) {
      if (C[3][y - 1][x] + S[3][y - 1][x] > 0.0) { m = Math.min(m, S[1][y - 1][x] + 1.0); }
    }
    return Math.min(m, ${INF});
  }`;
}
