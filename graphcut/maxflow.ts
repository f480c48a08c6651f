import type { GridGraph } from './gridGraph';

/**
 * What every max-flow backend returns.
 *
 * The cut is canonical so that backends agree pixel for pixel, not only in
 * flow value: sinkSide[p] = 1 exactly when p can still reach the sink in the
 * residual graph of the maximum flow. That set is the same for every maximum
 * flow (it is the smallest sink side among all minimum cuts), so Boykov–
 * Kolmogorov (sink tree) and push-relabel (reverse BFS from the sink after the
 * preflow phase) produce identical labelings, and α-expansion runs identically
 * on every backend.
 */
export interface MaxFlowResult {
  /** The maximum flow value = capacity of the returned cut. */
  flow: number;
  /** 1 = sink side, 0 = source side (canonical, see above). */
  sinkSide: Uint8Array;
  /** Backend-specific counters (augmentations, push-relabel iterations, global relabels…). */
  stats: Record<string, number>;
}

/** A max-flow backend. Async so that GPU backends can await device work. */
export interface MaxFlowSolver {
  /** Short name used in reports, e.g. "bk", "pushrelabel-webgpu". */
  readonly name: string;
  /** Human-readable description of the device that runs the solver. */
  readonly device: string;
  /** Solves one graph. Must not modify the graph's capacity arrays. */
  solve(graph: GridGraph): Promise<MaxFlowResult>;
  /** Releases device resources, if any. */
  dispose?(): void;
}
