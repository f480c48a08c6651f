import { BoykovKolmogorovSolver } from './bk';
import { createGpuContext, isWebGpuAvailable, type GpuPreference } from './gpuBackend';
import type { GridGraph } from './gridGraph';
import type { MaxFlowResult, MaxFlowSolver } from './maxflow';
import { GpuPrecisionError, PushRelabelSolver, type PushRelabelOptions } from './pushRelabel';

/**
 * One entry point for every max-flow backend:
 * - 'bk': Boykov–Kolmogorov on the CPU;
 * - 'gpu': push-relabel kernels on WebGPU (throws when no adapter answers);
 * - 'gpujs-cpu': the same kernels on gpu.js's webasm backend (cpu where
 *   WebAssembly is missing) — what CI runs, and slow;
 * - 'auto': push-relabel on WebGPU when an adapter answers, else BK.
 * A push-relabel solver created through here falls back to BK, per graph,
 * for graphs whose values would not be exact in f32 (fallbackToBk, default
 * true); result.stats.bkFallback = 1 reports it. With fallbackToBk false the
 * GpuPrecisionError propagates.
 */
export type SolverBackend = 'auto' | 'gpu' | 'gpujs-cpu' | 'bk';
export const SOLVER_BACKENDS: readonly SolverBackend[] = ['auto', 'gpu', 'gpujs-cpu', 'bk'];

export interface SolverFactoryOptions extends PushRelabelOptions {
  /** Solve graphs beyond the f32-exact bound with BK instead of refusing them (default true). */
  fallbackToBk?: boolean;
  /** gpu.js backend for 'gpujs-cpu': 'webasm' (default) or 'cpu'. */
  cpuKernels?: Extract<GpuPreference, 'webasm' | 'cpu'>;
}

/** A push-relabel solver that hands graphs it cannot solve exactly to BK, and says so in the stats. */
class PushRelabelWithFallback implements MaxFlowSolver {
  readonly name: string;
  readonly device: string;
  private readonly bk = new BoykovKolmogorovSolver();

  constructor(private readonly inner: PushRelabelSolver) {
    this.name = inner.name;
    this.device = inner.device;
  }

  async solve(graph: GridGraph): Promise<MaxFlowResult> {
    try {
      return await this.inner.solve(graph);
    } catch (e) {
      if (!(e instanceof GpuPrecisionError)) throw e;
      const r = this.bk.solveSync(graph);
      return { ...r, stats: { ...r.stats, bkFallback: 1 } };
    }
  }

  dispose(): void {
    this.inner.dispose();
  }
}

export async function createMaxFlowSolver(backend: SolverBackend, options: SolverFactoryOptions = {}): Promise<MaxFlowSolver> {
  if (!SOLVER_BACKENDS.includes(backend)) {
    throw new Error(`max-flow backend: unknown value '${String(backend)}' (expected ${SOLVER_BACKENDS.join(', ')})`);
  }
  const { fallbackToBk = true, cpuKernels = 'webasm', ...prOptions } = options;
  if (cpuKernels !== 'webasm' && cpuKernels !== 'cpu') {
    throw new Error(`max-flow option cpuKernels: expected 'webasm' or 'cpu', got '${String(cpuKernels)}'`);
  }
  if (backend === 'bk') return new BoykovKolmogorovSolver();
  if (backend === 'auto' && !(await isWebGpuAvailable())) return new BoykovKolmogorovSolver();
  const ctx = await createGpuContext(backend === 'gpujs-cpu' ? cpuKernels : 'webgpu');
  const solver = new PushRelabelSolver(ctx, prOptions);
  return fallbackToBk ? new PushRelabelWithFallback(solver) : solver;
}
