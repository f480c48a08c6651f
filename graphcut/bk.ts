import type { GridGraph } from './gridGraph';
import type { MaxFlowResult, MaxFlowSolver } from './maxflow';
import { runBoykovKolmogorov } from './bkCore';
import { BkWorkspace } from './bkWorkspace';

/**
 * The CPU backend: Boykov–Kolmogorov max-flow on grid graphs (see bkCore.ts).
 * It keeps one workspace and reuses it while the grid size stays the same,
 * so the repeated solves of α-expansion allocate only their result (and not
 * even that when a sinkSide buffer is passed to solveSync).
 */
export class BoykovKolmogorovSolver implements MaxFlowSolver {
  readonly name = 'bk';
  readonly device = 'CPU (Boykov–Kolmogorov)';
  private workspace: BkWorkspace | null = null;

  async solve(graph: GridGraph): Promise<MaxFlowResult> {
    return this.solveSync(graph);
  }

  /**
   * Solves synchronously. `sinkSideOut`, when given, receives the cut (it
   * must have width × height entries) and is returned as result.sinkSide.
   * stats: augmentations (augmenting paths), orphans (processed), adopted
   * (orphans that found a new parent), growths (active nodes expanded),
   * workspaceAllocated (1 when this solve had to allocate the workspace),
   * timeMs (wall time of the solve, validation included).
   * The graph is validated while it is loaded (validateGridGraph's rules and messages).
   */
  solveSync(graph: GridGraph, sinkSideOut?: Uint8Array): MaxFlowResult {
    const start = performance.now();
    const n = graph.width * graph.height;
    if (sinkSideOut !== undefined && sinkSideOut.length !== n) {
      throw new Error(`bk: sinkSideOut has ${sinkSideOut.length} entries, expected ${n} (${graph.width}×${graph.height})`);
    }
    let allocated = 0;
    if (this.workspace === null || !this.workspace.fits(graph)) {
      this.workspace = new BkWorkspace(graph.width, graph.height);
      allocated = 1;
    }
    const sinkSide = sinkSideOut ?? new Uint8Array(n);
    const run = runBoykovKolmogorov(graph, this.workspace, sinkSide);
    return {
      flow: run.flow,
      sinkSide,
      stats: {
        augmentations: run.augmentations,
        orphans: run.orphans,
        adopted: run.adopted,
        growths: run.growths,
        workspaceAllocated: allocated,
        timeMs: performance.now() - start,
      },
    };
  }

  /** Drops the workspace (its memory is reclaimed by the garbage collector). */
  dispose(): void {
    this.workspace = null;
  }
}
