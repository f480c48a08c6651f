/**
 * gpu.js kernel sources for α-expansion moves that stay on the device: the
 * binary graph of a move built from the labels (Kolmogorov–Zabih, the same
 * y semantics as expansion/binaryStep.ts), its push-relabel state started from them,
 * the cut applied to the labels and the flows a call reads back. The
 * convergence test and its reductions are in reductionKernels.ts; the
 * energy, label counts and WTA in gpu/costs/readoutKernels.ts.
 *
 * Generated as strings for the same reason as gpu/maxflow/pushRelabelKernels.ts:
 * gpu.js parses the kernel text, which tsc or coverage would rewrite.
 *
 * Arguments shared by the kernels:
 *   LB [W, H]        current labels (f32, exact integers)
 *   AL [1]           the α of the plan's move (one move per plan; the
 *                    kernels read AL[j] with j = 0)
 *   DV / IM          the data term (gpu/costs/costKernels.ts)
 *   WT [W, H, 2]     smoothness weights: WT[0] = wH, WT[1] = wV
 *   VT [L, L]        V(a, b) = VT[a][b]
 * Every value is an integer below 2^24, so f32 arithmetic on them is exact
 * (the solver checks the bound before uploading).
 */

import { dataArg, dataCost, type DataSourceKind, type ImageCostSpec } from '../costs/costKernels';

const W = 'this.constants.W';
const H = 'this.constants.H';
const INF = 'this.constants.INF';

/**
 * Capacities of move j's graph, [W, H, 4] as push-relabel reads them:
 * C[0] = c(p → p+1), C[2] = c(p → p+W), and zero reverse capacities (the
 * construction puts B + C − A − D on the forward edge only). Both variants
 * give the same edge capacity e01 + e10 − e00, truncated at 0. The data
 * costs do not enter (they are terminal edges), so the kernel does not take
 * them: every argument of a plan's step is copied when the plan is traced and
 * uploaded when it is compiled, and the cost volume is the largest of them.
 */
export function capacitySource(): string {
  return `function (LB, AL, WT, VT, j) {
    const x = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    if (z === 1 || z === 3) { return 0.0; }
    const a = AL[j];
    const lp = LB[y][x];
    let w = 0.0;
    let lq = 0.0;
    if (z === 0) {
      if (x + 1 >= ${W}) { return 0.0; }
      w = WT[0][y][x];
      lq = LB[y][x + 1];
    } else {
      if (y + 1 >= ${H}) { return 0.0; }
      w = WT[1][y][x];
      lq = LB[y + 1][x];
    }
    if (w === 0.0) { return 0.0; }
    const k = w * VT[lp][a] + w * VT[a][lq] - w * VT[lp][lq];
    return Math.max(k, 0.0);
  }`;
}

/**
 * Initial push-relabel state of move j, [W, H, 4]: the unary coefficient u
 * of y_p (expansion/binaryStep.ts) is the net value v (excess max(u, 0), the source
 * edge saturated, or sink residual max(−u, 0)); heights start at 0 (the
 * global relabel that follows sets them).
 *
 * With `fromFlows` the kernel also takes the move's capacities C and edge
 * flows F [W, H, 2] (F[0] on p → p+1, F[1] on p → p+W), and starts from
 * them: the flows this α's previous move ended with (warm start), or those
 * this move had reached when its last call ended unconverged (resume).
 * Each flow is clamped to the new edge's capacities, and the pixel's net
 * inflow n = u + Σ in − Σ out
 * is the net value (excess max(n, 0) or sink residual max(−n, 0)). Where n < −c(p→t)
 * this adds the same δ to both terminal edges of p, which shifts every cut
 * by δ and so leaves the minimum cuts (and the canonical one) unchanged,
 * and Σ (c(p→t) − final sink residual) is still the max-flow value of the
 * move's own graph. All-zero F is the cold start. Dynamic graph cuts
 * (Kohli & Torr) reuse flows this way; in later cycles, where few labels
 * change, most of the old flow is still a maximum flow.
 */
export function initStateSource(source: DataSourceKind, spec: ImageCostSpec | null, reversed: boolean, fromFlows = false): string {
  // reversed (y = x): u_p = D(α) − D(l_p) + Σ_first (e10 − e00) − Σ_second e10
  // classic (y = 1 − x): u_p = D(l_p) − D(α) + Σ_first e01 + Σ_second (e00 − e01)
  const first = reversed ? '(w * VT[a][lq] - w * VT[lp][lq])' : '(w * VT[lp][a])';
  const second = reversed ? '(0.0 - w * VT[a][lp])' : '(w * VT[lo][lp] - w * VT[lo][a])';
  // A stored flow clamped to the new capacities of its edge (forward plane c, backward plane c + 1).
  const clamp = (f: number, c: number, Y: string, X: string): string => `Math.min(Math.max(F[${f}][${Y}][${X}], 0.0 - C[${c + 1}][${Y}][${X}]), C[${c}][${Y}][${X}])`;
  const flows = fromFlows
    ? `let fr = 0.0;
    let fd = 0.0;
    let fl = 0.0;
    let fu = 0.0;
    if (x + 1 < ${W}) { fr = ${clamp(0, 0, 'y', 'x')}; }
    if (y + 1 < ${H}) { fd = ${clamp(1, 2, 'y', 'x')}; }
    if (z === 2) { return fr; }
    if (z === 3) { return fd; }
    if (x > 0) { fl = ${clamp(0, 0, 'y', 'x - 1')}; }
    if (y > 0) { fu = ${clamp(1, 2, 'y - 1', 'x')}; }`
    : 'if (z === 2 || z === 3) { return 0.0; }';
  return `function (LB, AL, ${dataArg(source)}, WT, VT, j${fromFlows ? ', C, F' : ''}) {
    const x = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    if (z === 1) { return 0.0; }
    ${flows}
    const a = AL[j];
    const lp = LB[y][x];
    ${dataCost(source, spec, 'dA', 'x', 'y', 'a')}
    ${dataCost(source, spec, 'dL', 'x', 'y', 'lp')}
    let u = ${reversed ? 'dA - dL' : 'dL - dA'};
    let w = 0.0;
    let lq = 0.0;
    let lo = 0.0;
    if (x + 1 < ${W}) {
      w = WT[0][y][x];
      lq = LB[y][x + 1];
      u = u + ${first};
    }
    if (y + 1 < ${H}) {
      w = WT[1][y][x];
      lq = LB[y + 1][x];
      u = u + ${first};
    }
    if (x > 0) {
      w = WT[0][y][x - 1];
      lo = LB[y][x - 1];
      u = u + ${second};
    }
    if (y > 0) {
      w = WT[1][y - 1][x];
      lo = LB[y - 1][x];
      u = u + ${second};
    }
    ${fromFlows ? 'u = u + fl + fu - fr - fd;' : ''}
    return u;
  }`;
}

/**
 * The cut applied to the labels, [W, H]: a pixel on the α side (sink side
 * in 'reversed', source side in 'classic'; sink side = finite height) takes
 * α, unless this move or an earlier one of the plan did not converge.
 */
export function applyCutSource(reversed: boolean): string {
  return `function (LB, S, AL, T, j) {
    const x = this.thread.x;
    const y = this.thread.y;
    const lp = LB[y][x];
    if (T[0] + T[2] > 0.0) { return lp; }
    if (S[1][y][x] ${reversed ? '<' : '>='} ${INF}) { return AL[j]; }
    return lp;
  }`;
}

/**
 * The state's two flow planes, [W, H, 2] (right, down): all a single-move
 * call reads back of its state. They restart the move when it has not
 * converged (resume) and its α's next move (warmStart), through the init
 * from flows; heights, excesses and sink residuals follow from them.
 */
export function flowPlanesSource(): string {
  return `function (S) {
    const x = this.thread.x;
    const y = this.thread.y;
    if (this.thread.z === 0) { return S[2][y][x]; }
    return S[3][y][x];
  }`;
}
