import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { checkBackend, fallbackFor, placeBackend, type BackendName, type BackendPlacement } from '../gpu/runtime/backends';
import type { DeviceFlags } from '../gpu/runtime/deviceFlags';
import { createGpuContext, type GpuPreference } from '../gpu/runtime/context';
import type { GridGraph } from '../graphcut/gridGraph';
import type { MaxFlowResult, MaxFlowSolver } from '../graphcut/maxflow';
import { GpuPrecisionError, PushRelabelSolver, type PushRelabelOptions } from '../gpu/maxflow/pushRelabel';

/**
 * One entry point for every max-flow backend of the registry
 * (gpu/runtime/backends.ts): BK (graphcut/), or push-relabel kernels
 * (gpu/maxflow/) where the backend places them; it sits above both, beside
 * the move-solver factory (backends.ts). A push-relabel
 * solver created through here falls back to BK, per graph, for graphs whose
 * values would not be exact in f32 (fallbackToBk, default true);
 * result.stats.bkFallback = 1 reports it. With fallbackToBk false the
 * GpuPrecisionError propagates.
 */

export interface SolverFactoryOptions extends PushRelabelOptions {
  /** Solve graphs beyond the f32-exact bound with BK instead of refusing them (default true). */
  fallbackToBk?: boolean;
  /** gpu.js backend for 'gpujs-cpu': 'webasm' (default) or 'cpu'. */
  cpuKernels?: Extract<GpuPreference, 'webasm' | 'cpu'>;
  /** The flags the solver's gpu.js context is made with (createGpuContext; gpu/runtime/deviceFlags.ts). */
  device?: Partial<DeviceFlags>;
}

/** A push-relabel solver that hands graphs it cannot solve exactly to BK, and says so in the stats. */
class PushRelabelWithFallback implements MaxFlowSolver {
  readonly name: string;
  readonly device: string;
  private readonly bk = new BoykovKolmogorovSolver();

  constructor(private readonly inner: PushRelabelSolver, private readonly backend: BackendName) {
    this.name = inner.name;
    this.device = inner.device;
  }

  async solve(graph: GridGraph): Promise<MaxFlowResult> {
    try {
      return await this.inner.solve(graph);
    } catch (e) {
      // The rule (gpu/runtime/backends.ts fallbackFor) gives one graph beyond f32 to BK on every backend.
      if (!(e instanceof GpuPrecisionError) || fallbackFor(this.backend, { kind: 'f32-graph' }).to !== 'bk-graph') throw e;
      const r = this.bk.solveSync(graph);
      return { ...r, stats: { ...r.stats, bkFallback: 1 } };
    }
  }

  dispose(): void {
    this.inner.dispose();
  }
}

export async function createMaxFlowSolver(backend: BackendName, options: SolverFactoryOptions = {}): Promise<MaxFlowSolver> {
  checkBackend(backend, 'max-flow backend');
  const { cpuKernels = 'webasm', ...rest } = options;
  if (cpuKernels !== 'webasm' && cpuKernels !== 'cpu') {
    throw new Error(`max-flow option cpuKernels: expected 'webasm' or 'cpu', got '${String(cpuKernels)}'`);
  }
  return maxFlowSolverAt(await placeBackend(backend, cpuKernels), backend, rest);
}

/** The max-flow solver of `backend` where it was placed (placeBackend): BK, or push-relabel kernels on the placement's gpu.js mode. */
export async function maxFlowSolverAt(place: BackendPlacement, backend: BackendName, options: Omit<SolverFactoryOptions, 'cpuKernels'> = {}): Promise<MaxFlowSolver> {
  if (place.runs === 'bk') return new BoykovKolmogorovSolver();
  const { fallbackToBk = true, device, ...prOptions } = options;
  const ctx = await createGpuContext(place.mode, device);
  const solver = new PushRelabelSolver(ctx, prOptions);
  return fallbackToBk ? new PushRelabelWithFallback(solver, backend) : solver;
}
