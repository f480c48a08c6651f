/**
 * gpu.js kernel sources for α-expansion moves that stay on the device: the
 * binary graph of a move built from the labels (Kolmogorov–Zabih, the same
 * y semantics as binaryStep.ts), the convergence test of push-relabel as a
 * device reduction, the cut applied to the labels, and the energy terms.
 *
 * Generated as strings for the same reason as graphcut/pushRelabelKernels.ts:
 * gpu.js parses the kernel text, which tsc or coverage would rewrite.
 *
 * Arguments shared by the kernels:
 *   LB [W, H]        current labels (f32, exact integers)
 *   AL [1]           the α of the plan's move (one move per plan; the
 *                    kernels read AL[j] with j = 0)
 *   DV / IM          the data term (gpuCostKernels.ts)
 *   WT [W, H, 2]     smoothness weights: WT[0] = wH, WT[1] = wV
 *   VT [L, L]        V(a, b) = VT[a][b]
 * Every value is an integer below 2^24, so f32 arithmetic on them is exact
 * (the solver checks the bound before uploading).
 */

import type { KernelGate } from '../graphcut/pushRelabelKernels';
import { dataArg, dataCost, type DataSourceKind, type ImageCostSpec } from './gpuCostKernels';

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
 * of y_p (binaryStep.ts) is the net value v (excess max(u, 0), the source
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

/** Side of the square blocks the reduction levels combine per thread (and the kernels' default tile of pixels). */
export const TILE = 8;

/**
 * The outputs of a per-pixel reduction over a W × H grid: side×side tiles
 * of pixels, then TILE×TILE blocks of the level before, until at most
 * last×last values are left (what a tally or the host reads; default
 * TILE×TILE).
 */
export function reductionLevels(W: number, H: number, side: number, last = TILE): number[][] {
  const levels: number[][] = [[Math.ceil(W / side), Math.ceil(H / side)]];
  while (levels[levels.length - 1][0] > last || levels[levels.length - 1][1] > last) {
    const [w, h] = levels[levels.length - 1];
    levels.push([Math.ceil(w / TILE), Math.ceil(h / TILE)]);
  }
  return levels;
}

/**
 * Convergence test per side×side tile (default 8×8), [ceil(W/side),
 * ceil(H/side)]: 1 when a pixel of
 * the tile holds excess at a finite height, plus 2 when a pixel's height is
 * not a fixed point of the BFS equations (the host test of
 * PushRelabelSolver as a gather). The two causes are kept apart because
 * they call for different remedies: more push-relabel rounds, or more BFS
 * passes (a global relabel restarts from scratch, so a BFS that needs more
 * than B passes never reaches its fixed point however many rounds follow).
 * Tiles, not rows: a row per thread leaves the GPU nearly idle and walks W
 * pixels in series (0.46 ms per test at 384×288 on the H200); small tiles,
 * for the same reason: a whole check took 93 µs there with 8×8 tiles and
 * 31 µs with 2×2 (the solver's tileSide).
 */
export function checkTilesSource(side = TILE): string {
  return `function (S, C) {
    let active = 0.0;
    let unfixed = 0.0;
    ${overTile(W, H, `
          const h = S[1][y][x];
          if (S[0][y][x] > 0.0 && h < ${INF}) { active = 1.0; }
          let want = 1.0;
          if (S[0][y][x] >= 0.0) {
            let m = ${INF} - 1.0;
            if (x + 1 < ${W}) {
              if (C[0][y][x] - S[2][y][x] > 0.0) { m = Math.min(m, S[1][y][x + 1]); }
            }
            if (y + 1 < ${H}) {
              if (C[2][y][x] - S[3][y][x] > 0.0) { m = Math.min(m, S[1][y + 1][x]); }
            }
            if (x > 0) {
              if (C[1][y][x - 1] + S[2][y][x - 1] > 0.0) { m = Math.min(m, S[1][y][x - 1]); }
            }
            if (y > 0) {
              if (C[3][y - 1][x] + S[3][y - 1][x] > 0.0) { m = Math.min(m, S[1][y - 1][x]); }
            }
            want = Math.min(${INF}, m + 1.0);
          }
          if (want !== h) { unfixed = 2.0; }`, side)}
    return active + unfixed;
  }`;
}

/** Pixels per side×side tile (default 8×8) whose label differs between two labelings, [ceil(W/side), ceil(H/side)]. */
export function changedTilesSource(side = TILE): string {
  return `function (A, B) {
    let c = 0.0;
    ${overTile(W, H, 'if (A[y][x] !== B[y][x]) { c = c + 1.0; }', side)}
    return c;
  }`;
}

/**
 * One level of a tile reduction: sums of 8×8 blocks of an [AW, AH] array,
 * [ceil(AW/8), ceil(AH/8)] (counts below 2^24: exact).
 */
export function sumTilesSource(): string {
  return `function (A) {
    let s = 0.0;
    ${overTile('this.constants.AW', 'this.constants.AH', 's = s + A[y][x];')}
    return s;
  }`;
}

/** Statements that OR the check code `v` (1: excess at a finite height, 2: BFS not at its fixed point) into the flags `active` and `unfixed` (0 or 1). */
function orCode(v: string): string {
  return `if (${v} >= 2.0) { unfixed = 1.0; }
          if (${v} === 1.0 || ${v} === 3.0) { active = 1.0; }`;
}

/**
 * One level of the check's reduction: the bitwise OR of the codes (0..3,
 * see checkTilesSource) of 8×8 blocks of an [AW, AH] array. An OR, not a
 * sum, so the two causes stay apart at every level.
 */
export function orTilesSource(): string {
  return `function (A) {
    let active = 0.0;
    let unfixed = 0.0;
    ${overTile('this.constants.AW', 'this.constants.AH', `
          const v = A[y][x];
          ${orCode('v')}`)}
    return active + 2.0 * unfixed;
  }`;
}

/** `body` for every (x, y) of the thread's side×side tile (default 8×8) that lies inside a width × height array. */
function overTile(width: string, height: string, body: string, side = TILE): string {
  return `for (let ty = 0; ty < ${side}; ty++) {
      for (let tx = 0; tx < ${side}; tx++) {
        const x = this.thread.x * ${side} + tx;
        const y = this.thread.y * ${side} + ty;
        if (x < ${width} && y < ${height}) {
          ${body}
        }
      }
    }`;
}

/**
 * Move bookkeeping, [4]: T[0] = moves before this one that failed to
 * converge (the gate: a move after a failure leaves the labels alone),
 * T[1] = convergence checks of this move that failed, T[2] = 0 once the
 * latest check of this move passed (1 before its first check and while
 * checks fail), T[3] = 1 when a round's check of this move in this
 * call found the BFS short of its fixed point (a short BFS in the middle of
 * a plan leaves far pixels unreached, so their excess cannot move however
 * many rounds follow, even when the plan's longer last BFS reaches them).
 * With `afterRounds` false (the check of a move's first global relabel,
 * before any round) a shortfall is not recorded: it only delays the first
 * pushes. RB is a check's tile codes OR-reduced to at most [FW, FH] = 8×8
 * (the block check's codes go to gpuMoveBlockKernels.ts's tally instead).
 */
export function tallySource(afterRounds = true): string {
  return `function (RB, T) {
    const i = this.thread.x;
    if (i === 0) { return T[0]; }
    let active = 0.0;
    let unfixed = 0.0;
    for (let r = 0; r < this.constants.FH; r++) {
      for (let c = 0; c < this.constants.FW; c++) {
        const v = RB[r][c];
        ${orCode('v')}
      }
    }
    const b = Math.max(active, unfixed);
    if (i === 1) { return T[1] + b; }
    if (i === 2) { return b; }
    return ${afterRounds ? 'Math.max(T[3], unfixed)' : 'T[3]'};
  }`;
}

/**
 * The tally a move's call starts from (a literal of the plans): no earlier
 * move failed, no check failed yet, not checked yet, no BFS shortfall.
 */
export const MOVE_START_TALLY: readonly number[] = [0, 0, 1, 0];

/**
 * The gate of a move's state passes and checks, on its tally (G = T): once
 * a check has passed, the state is a maximum preflow with exact heights and
 * nothing left to do, and a move after a failed one is discarded. Gated
 * passes keep a plan's rounds after convergence (a plan cannot stop early)
 * down to copies.
 */
export const MOVE_DONE_GATE: KernelGate = { skip: 'G[2] === 0.0 || G[0] > 0.0', wgsl: 'get_user_G(0, 0, 2) == 0.0 || get_user_G(0, 0, 0) > 0.0' };

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

/**
 * Energy terms per pixel, [W, H, 2]: z = 0 the data term D_p(l_p), z = 1
 * the smoothness terms of p's right and down edges.
 */
export function energyTermsSource(source: DataSourceKind, spec: ImageCostSpec | null): string {
  return `function (LB, ${dataArg(source)}, WT, VT) {
    const x = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    const lp = LB[y][x];
    if (z === 0) {
      ${dataCost(source, spec, 'dL', 'x', 'y', 'lp')}
      return dL;
    }
    let s = 0.0;
    if (x + 1 < ${W}) { s = s + WT[0][y][x] * VT[lp][LB[y][x + 1]]; }
    if (y + 1 < ${H}) { s = s + WT[1][y][x] * VT[lp][LB[y + 1][x]]; }
    return s;
  }`;
}

/**
 * Partial sums of the energy terms over runs of CH pixels of a row,
 * [ceil(W / CH), H, 2]; CH is chosen so that every partial sum stays below
 * 2^24 (exact), and the host adds them in double precision.
 */
export function energyChunksSource(): string {
  return `function (E) {
    const cx = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    let s = 0.0;
    for (let i = 0; i < this.constants.CH; i++) {
      const x = cx * this.constants.CH + i;
      if (x < ${W}) { s = s + E[z][y][x]; }
    }
    return s;
  }`;
}

/**
 * Pixels of each label per row, [L, H]: thread (l, y) counts row y's
 * pixels labelled l (at most W: exact in f32).
 */
export function labelRowCountsSource(): string {
  return `function (LB) {
    const l = this.thread.x;
    const y = this.thread.y;
    let n = 0.0;
    for (let x = 0; x < ${W}; x++) {
      if (LB[y][x] === l) { n = n + 1.0; }
    }
    return n;
  }`;
}

/** Pixels of each label, [L]: the row counts added up (at most W·H < 2^24: exact in f32). */
export function labelCountsSource(): string {
  return `function (RC) {
    const l = this.thread.x;
    let n = 0.0;
    for (let y = 0; y < ${H}; y++) { n = n + RC[y][l]; }
    return n;
  }`;
}

/** D_p(d) for every pixel of one disparity, [W, H] (tests compare it with DataCostMatcher.slice). */
export function dataSliceSource(source: DataSourceKind, spec: ImageCostSpec | null): string {
  return `function (${dataArg(source)}, d) {
    const x = this.thread.x;
    const y = this.thread.y;
    ${dataCost(source, spec, 'c', 'x', 'y', 'd')}
    return c;
  }`;
}

/*
 * The WTA initial labeling on the device (costs/wta.ts's, label for label):
 * each label's costs summed over a window × window box clipped at the
 * borders, the smallest sum winning with ties to the smaller label. The
 * labels are taken in chunks of NC (D0 .. D0 + NC − 1), so that the
 * [W, H, NC] intermediates stay small whatever L is; a chunk's costs, their
 * row sums, then the column sums compared against the running best. Every
 * sum is of at most window² costs below 2^24 / window², so f32 holds it
 * exactly (the solver checks that bound first).
 */

/** The data costs of labels D0 + z, [W, H, NC]; 0 for labels ≥ L (the last chunk's unused slots). */
export function wtaCostsSource(source: DataSourceKind, spec: ImageCostSpec | null): string {
  return `function (${dataArg(source)}, D0) {
    const x = this.thread.x;
    const y = this.thread.y;
    const d = D0 + this.thread.z;
    if (d >= this.constants.L) { return 0.0; }
    ${dataCost(source, spec, 'c', 'x', 'y', 'd')}
    return c;
  }`;
}

/** Each cost summed over the row segment x − R .. x + R clipped at the borders, [W, H, NC]. */
export function wtaRowSumsSource(): string {
  return `function (CS) {
    const x = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    let s = 0.0;
    for (let i = 0; i < this.constants.WIN; i++) {
      const xx = x - this.constants.R + i;
      if (xx >= 0 && xx < ${W}) { s = s + CS[z][y][xx]; }
    }
    return s;
  }`;
}

/**
 * The box sums of the chunk's labels (row sums summed over y − R .. y + R,
 * clipped at the borders of the pixel's band of BH rows: MrfEnergy.bandHeight)
 * compared with the best so far: [W, H, 2], the best sum (z = 0) and its
 * label (z = 1), or with `last` just the label, [W, H]. The first chunk
 * starts from nothing and takes no BL; a later one takes the last chunk's.
 * A label wins only with a strictly smaller sum, so ties keep the smaller
 * label, as costs/wta.ts's pass over increasing labels does.
 */
export function wtaPickSource(first: boolean, last: boolean): string {
  const start = first
    ? `let best = 0.0;
    let label = 0.0;
    let have = 0.0;`
    : `let best = BL[0][y][x];
    let label = BL[1][y][x];
    let have = 1.0;`;
  const result = last ? 'return label;' : `if (z === 0) { return best; }
    return label;`;
  return `function (RS, ${first ? '' : 'BL, '}D0) {
    const x = this.thread.x;
    const y = this.thread.y;
    ${last ? '' : 'const z = this.thread.z;'}
    const b0 = Math.floor(y / this.constants.BH) * this.constants.BH;
    ${start}
    for (let k = 0; k < this.constants.NC; k++) {
      const d = D0 + k;
      if (d < this.constants.L) {
        let s = 0.0;
        for (let i = 0; i < this.constants.WIN; i++) {
          const yy = y - this.constants.R + i;
          if (yy >= b0 && yy < b0 + this.constants.BH) { s = s + RS[k][yy][x]; }
        }
        if (have === 0.0) {
          best = s;
          label = d;
          have = 1.0;
        } else {
          if (s < best) {
            best = s;
            label = d;
          }
        }
      }
    }
    ${result}
  }`;
}
