import type { MaxFlowSolver } from '../graphcut/maxflow';
import { BinaryStepBuilder, GraphVariant, applyCut } from './binaryStep';
import type { EnergyBreakdown, MrfEnergy } from '../data/energy';

/** Outcome of one α-expansion move. */
export interface MoveResult {
  /** Pixels whose label changed to α. */
  changed: number;
  /** Energy of the new labeling as the cut predicts it (flow + constant). */
  predictedEnergy: number;
  /** Milliseconds spent building the graph and in max-flow. */
  buildMs: number;
  flowMs: number;
  /** Counters of the max-flow backend for this cut. */
  stats: Record<string, number>;
  truncatedTerms: number;
}

/** What a solver running a cycle (runCycle) asks of the driver and tells it. */
export interface CycleHooks {
  /**
   * Whether the move of `alpha` is to be skipped. The answer counts once
   * every earlier move of the cycle has been reported through done(); the
   * solver may ask earlier, to look ahead, and then asks again.
   */
  skip(alpha: number): boolean;
  /** The move at `index` of the cycle: its result, or null when it was skipped. Called once per index, in order; `labels` then holds the labeling after it. */
  done(index: number, result: MoveResult | null): void;
}

/**
 * What a solver that ran a cycle (runCycle) may report of the labels the
 * cycle ended with, computed where it holds them, so that the driver need
 * not go over the labeling itself.
 */
export interface CycleEnd {
  /** Their energy, exactly as energyOf (or computeEnergy) gives it. */
  energy: EnergyBreakdown;
  /** Pixels of each label (one entry per label of the energy). */
  labelCounts: ArrayLike<number>;
}

/**
 * Solves single α-expansion moves. The default builds each move's graph on
 * the CPU and hands it to any MaxFlowSolver; a GPU backend may instead keep
 * the whole state on the device and implement this interface directly.
 */
export interface MoveSolver {
  readonly backend: string;
  readonly device: string;
  /** Replaces `labels` by the optimal expansion of `alpha` from them. */
  move(alpha: number, labels: Uint16Array): Promise<MoveResult>;
  /**
   * Optional: the moves of one cycle, `alphas` in order, each skipped or
   * made exactly as move() would make it, reporting each through
   * hooks.done. A solver offers it to overlap a move's device work with
   * the next one's (the default driver calls move() per label). Offered
   * only by solvers whose graphs are never truncated (truncatedTerms is
   * always 0), so the driver needs no per-move energy check;
   * predictedEnergy may be NaN. It may resolve to the energy and label
   * counts of the labels it leaves (CycleEnd).
   */
  runCycle?(alphas: readonly number[], labels: Uint16Array, hooks: CycleHooks): Promise<CycleEnd | void>;
  /**
   * Optional: the WTA initial labeling (costs/wta.ts's, label for label)
   * computed where the solver holds the costs, or undefined when the host's
   * WTA is the faster or the only exact one (the caller then runs it).
   */
  initialWta?(window: number): Promise<Uint16Array | undefined>;
  /** Optional: the energy of a labeling, for solvers that hold the energy where the host cannot evaluate it (no cost volume). */
  energyOf?(labels: Uint16Array): Promise<EnergyBreakdown>;
  dispose?(): void;
}

export class GraphMoveSolver implements MoveSolver {
  private readonly builder: BinaryStepBuilder;

  constructor(
    private readonly energy: MrfEnergy,
    private readonly solver: MaxFlowSolver,
    private readonly variant: GraphVariant,
  ) {
    this.builder = new BinaryStepBuilder(energy.width, energy.height);
  }

  get backend(): string { return this.solver.name; }
  get device(): string { return this.solver.device; }

  async move(alpha: number, labels: Uint16Array): Promise<MoveResult> {
    const t0 = performance.now();
    const step = this.builder.build(this.energy, labels, alpha, this.variant);
    const t1 = performance.now();
    const cut = await this.solver.solve(step.graph);
    const t2 = performance.now();
    const changed = applyCut(labels, cut.sinkSide, alpha, this.variant);
    return {
      changed,
      predictedEnergy: cut.flow + step.constant,
      buildMs: t1 - t0,
      flowMs: t2 - t1,
      stats: cut.stats,
      truncatedTerms: step.truncatedTerms,
    };
  }

  dispose(): void { this.solver.dispose?.(); }
}
