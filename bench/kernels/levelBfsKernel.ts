import { bfsHead } from '../../gpu/maxflow/bfsKernels';
import { H, INF, W } from '../../gpu/maxflow/pushRelabelLayout';
import { gatherBfs, type BfsFamily } from '../../gpu/maxflow/pushRelabelKernels';

/*
 * The level BFS: one BFS level per pass, the global relabel the ablation
 * starts from (its scan technique replaces it with the product's scan
 * passes, which relax whole straight runs at once). No default of the
 * product uses it, so it lives with the benchmarks and reaches a run only
 * as one of the families that run is given (ablationFamilies.ts).
 */

/**
 * One level of the reverse BFS from the sink, as a gather over the
 * distances D, [W, H]:
 * h(p) ← min(h(p), 1 + min h(q) over residual edges p → q), clamped to INF.
 * Starting from bfsStart, the values only decrease and stay upper bounds of
 * the residual distance to the sink; at a fixed point they equal it.
 */
export function bfsLevelSource(): string {
  return `function (S, C, D) {
    ${bfsHead()}
    if (x + 1 < ${W}) {
      if (C[0][y][x] - S[2][y][x] > 0.0) { m = Math.min(m, D[y][x + 1] + 1.0); }
    }
    if (y + 1 < ${H}) {
      if (C[2][y][x] - S[3][y][x] > 0.0) { m = Math.min(m, D[y + 1][x] + 1.0); }
    }
    if (x > 0) {
      if (C[1][y][x - 1] + S[2][y][x - 1] > 0.0) { m = Math.min(m, D[y][x - 1] + 1.0); }
    }
    if (y > 0) {
      if (C[3][y - 1][x] + S[3][y - 1][x] > 0.0) { m = Math.min(m, D[y - 1][x] + 1.0); }
    }
    return Math.min(m, ${INF});
  }`;
}

/** The level BFS as a family: 'level'. */
export const LEVEL_BFS: BfsFamily = gatherBfs('level', bfsLevelSource);
