/**
 * gpu.js kernel sources of the per-tile gathers a move's call reduces on
 * the device: the convergence test of push-relabel and the changed pixels,
 * the reduction levels that follow them, and the move's tally with the gate
 * on it. Generated as strings, as moveKernels.ts is (its comment gives
 * the arguments).
 */

import type { KernelGate } from '../maxflow/pushRelabelKernels';

const W = 'this.constants.W';
const H = 'this.constants.H';
const INF = 'this.constants.INF';

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
 * (the block check's codes go to moveBlockKernels.ts's tally instead).
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
