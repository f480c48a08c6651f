import { H, INF, W } from '../../gpu/maxflow/pushRelabelLayout';
import { stateKernel, type PushFamily } from '../../gpu/maxflow/pushRelabelKernels';

/**
 * The lockstep push-relabel kernel sources: one edge per pass (layout:
 * gpu/maxflow/pushRelabelLayout.ts). The push the ablation starts from (its
 * sweep technique replaces it with the product's sweeps), and the pushes
 * the block push runs in workgroup memory; no default of the product runs
 * this kernel, so it lives with the benchmarks and reaches a run only as
 * one of the families that run is given (ablationFamilies.ts).
 */

/**
 * Statements computing the push decisions of the pixel at (X, Y) into
 * `${v}r`, `${v}d`, `${v}l`, `${v}u` (to the right, down, left, up
 * neighbour), with `${v}e` its net value v. The pixel pushes only while it
 * has excess (v > 0: its sink residual is spent) and a finite height, to
 * each neighbour q with h(p) = h(q) + 1 in the fixed order right, down,
 * left, up, each push capped by the excess left and the edge's residual. Two
 * neighbours can never push to each other in one pass (h(p) = h(q)+1 and
 * h(q) = h(p)+1 exclude each other), so every decision stays valid when all
 * pixels apply theirs at once.
 */
function decisions(v: string, X: string, Y: string): string {
  return `
    let ${v}e = S[0][${Y}][${X}];
    let ${v}h = S[1][${Y}][${X}];
    let ${v}r = 0.0;
    let ${v}d = 0.0;
    let ${v}l = 0.0;
    let ${v}u = 0.0;
    if (${v}e > 0.0 && ${v}h < ${INF}) {
      let ${v}m = ${v}e;
      if (${X} + 1 < ${W}) {
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
 * Decisions of the pixel and its four neighbours, then the new net value
 * (what arrives at a pixel with sink residual goes to the sink). What
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
    let eNew = pe - pr - pd - pl - pu + fromL + fromR + fromU + fromD;`;
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
    let h0 = S[1][y][x];
    if (h0 >= ${INF}) {
      return h0;
    }
    ${excessAfterPush()}
    if (eNew <= 0.0) {
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

/** The lockstep push as a family: 'lockstep', one fused push-relabel pass per iteration. */
export const LOCKSTEP_PUSH: PushFamily = Object.freeze<PushFamily>({
  name: 'lockstep',
  passes: (gpu, settings, gate) => {
    const k = stateKernel(gpu, pushRelabelSource(), settings, gate);
    return [(S, C, G) => k(S, C, G)];
  },
});
