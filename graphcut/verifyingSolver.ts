import { VerificationError } from '../data/errors';
import { BoykovKolmogorovSolver } from './bk';
import type { GridGraph } from './gridGraph';
import type { MaxFlowResult, MaxFlowSolver } from './maxflow';

/**
 * --verify: solves every graph with the wrapped backend and again with the
 * CPU Boykov–Kolmogorov solver, and throws on the first difference in flow
 * value or in the (canonical) cut. Counts the verified cuts in the stats.
 */
export class VerifyingSolver implements MaxFlowSolver {
  readonly name: string;
  readonly device: string;
  private readonly reference = new BoykovKolmogorovSolver();
  private cuts = 0;

  constructor(private readonly inner: MaxFlowSolver) {
    this.name = `${inner.name}+verify`;
    this.device = inner.device;
  }

  async solve(graph: GridGraph): Promise<MaxFlowResult> {
    const r = await this.inner.solve(graph);
    const ref = this.reference.solveSync(graph);
    this.cuts++;
    if (r.flow !== ref.flow) {
      throw new VerificationError(`verify: cut ${this.cuts} (${graph.width}×${graph.height}): ${this.inner.name} found max-flow ${r.flow}, the CPU solver ${ref.flow}`);
    }
    let differing = 0;
    for (let p = 0; p < ref.sinkSide.length; p++) if (r.sinkSide[p] !== ref.sinkSide[p]) differing++;
    if (differing > 0) {
      throw new VerificationError(`verify: cut ${this.cuts}: ${this.inner.name} and the CPU solver agree on the flow ${r.flow} but ${differing} pixels are on different sides of the canonical cut`);
    }
    return { ...r, stats: { ...r.stats, verifiedCuts: 1 } };
  }

  dispose(): void {
    this.inner.dispose?.();
  }
}
