import { H, INF, W } from './pushRelabelLayout';

/*
 * Global relabel. The BFS passes change only the heights, so they work on a
 * distance array D [W, H] of their own, one thread per pixel, instead of the
 * [W, H, 4] state, whose three other planes every pass would copy (a copy
 * of the state costs about as much as a BFS scan: both are bound by memory
 * traffic). bfsStart or
 * bfsHeights begin D, the passes relax it, and withHeights writes it back.
 */

/** Start of a global relabel from scratch, [W, H]: distance 1 for pixels with residual to the sink (v < 0), "unreachable" (INF) elsewhere. */
export function bfsStartSource(): string {
  return `function (S) {
    const x = this.thread.x;
    const y = this.thread.y;
    if (S[0][y][x] < 0.0) {
      return 1.0;
    }
    return ${INF};
  }`;
}

/** The state's heights as a distance array, [W, H] (a BFS that continues from them). */
export function bfsHeightsSource(): string {
  return `function (S) {
    return S[1][this.thread.y][this.thread.x];
  }`;
}

/** The state with its heights replaced by the distances D, [W, H, 4]. */
export function withHeightsSource(): string {
  return `function (S, D) {
    const x = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    if (z === 1) {
      return D[y][x];
    }
    return S[z][y][x];
  }`;
}

/**
 * Start of a BFS pass over the distances (the scan here, and the level pass
 * the benchmarks' ablation starts from): a pixel with sink residual (v < 0)
 * is at distance 1, and m starts from the current upper bound D.
 */
export function bfsHead(): string {
  return `const x = this.thread.x;
    const y = this.thread.y;
    if (S[0][y][x] < 0.0) {
      return 1.0;
    }
    let m = D[y][x];`;
}

/**
 * One relaxation of the reverse BFS along straight residual runs, over the
 * distances D, [W, H]: h(p) ← min(h(p), h(q) + |p − q|) for every q reached from p over up to
 * REACH consecutive residual edges to the right, left, below or above. Every
 * candidate is the length of a real residual path plus an upper bound of q's
 * distance, so the values stay upper bounds of the residual distance and
 * only decrease; a fixed point is the exact distance (a pass of one BFS
 * level, the ablation's baseline, is the case REACH = 1). A walk stops once no farther pixel can improve h(p)
 * (heights are at least 1).
 */
export function bfsScanSource(): string {
  const R = 'this.constants.REACH';
  const walk = (i: string, cond: (k: string) => string, residual: (k: string) => string, next: string, hAt: (k: string) => string): string => `
    k = p0;
    d = 0.0;
    for (let ${i} = 0; ${i} < ${R}; ${i}++) {
      if (d + 2.0 >= m) { break; }
      if (!(${cond('k')})) { break; }
      if (${residual('k')} <= 0.0) { break; }
      k = k ${next} 1;
      d = d + 1.0;
      m = Math.min(m, ${hAt('k')} + d);
    }`;
  return `function (S, C, D) {
    ${bfsHead()}
    let k = 0;
    let d = 0.0;
    let p0 = x;
    ${walk('i0', (k) => `${k} + 1 < ${W}`, (k) => `(C[0][y][${k}] - S[2][y][${k}])`, '+', (k) => `D[y][${k}]`)}
    ${walk('i1', (k) => `${k} > 0`, (k) => `(C[1][y][${k} - 1] + S[2][y][${k} - 1])`, '-', (k) => `D[y][${k}]`)}
    p0 = y;
    ${walk('i2', (k) => `${k} + 1 < ${H}`, (k) => `(C[2][${k}][x] - S[3][${k}][x])`, '+', (k) => `D[${k}][x]`)}
    ${walk('i3', (k) => `${k} > 0`, (k) => `(C[3][${k} - 1][x] + S[3][${k} - 1][x])`, '-', (k) => `D[${k}][x]`)}
    return Math.min(m, ${INF});
  }`;
}
