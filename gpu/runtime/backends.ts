import { InputError } from '../../data/errors';
import { isWebGpuAvailable, type GpuMode } from './context';

/**
 * The backends, in one place: their names, where each runs, what 'auto'
 * falls back to, and how a run is verified. The CLI's choices, match(),
 * the move-solver factory (stereo/backends.ts) and the max-flow factory
 * (stereo/maxFlowFactory.ts) all read this registry.
 *
 *  - 'auto'       the device kernels on WebGPU when an adapter answers, else
 *                 BK on the CPU (the run says why it fell back);
 *  - 'gpu'        the device kernels on WebGPU; fails when no adapter answers;
 *  - 'gpujs-cpu'  the same kernels on gpu.js's WebAssembly backend (its plain
 *                 JavaScript backend where WebAssembly is missing): what CI
 *                 runs, and slow;
 *  - 'bk'         Boykov–Kolmogorov on the CPU.
 * --verify re-solves every cut with BK on the CPU and fails on the first
 * difference in flow or canonical cut (VerificationError), on every backend.
 */
export type BackendName = 'auto' | 'gpu' | 'gpujs-cpu' | 'bk';
export const BACKENDS: readonly BackendName[] = ['auto', 'gpu', 'gpujs-cpu', 'bk'];

/** Where a backend runs in this process: the push-relabel kernels on a gpu.js mode, or BK (with why 'auto' fell back to it). */
export type BackendPlacement = { runs: 'kernels'; mode: GpuMode } | { runs: 'bk'; fallback?: string };

/** `name` as a backend name; otherwise an InputError naming `option` and the choices. */
export function checkBackend(name: unknown, option = '--backend'): BackendName {
  if (!BACKENDS.includes(name as BackendName)) throw new InputError(`${option}: unknown value '${String(name)}' (expected ${BACKENDS.join(', ')})`);
  return name as BackendName;
}

/** Whether a backend may put its work on a WebGPU device (then the device's clock warm-up and device costs are worth considering). */
export function mayUseWebGpu(name: BackendName): boolean {
  return name === 'gpu' || name === 'auto';
}

/** Whether a placed backend's kernels run on WebGPU ('gpu', or 'auto' with an adapter). */
export function placedOnWebGpu(place: BackendPlacement): boolean {
  return place.runs === 'kernels' && place.mode === 'webgpu';
}

/**
 * Where a backend runs in this process. `cpuKernels` is the gpu.js mode of
 * 'gpujs-cpu' ('webasm', or 'cpu' for the plain JavaScript backend).
 */
export async function placeBackend(name: BackendName, cpuKernels: Extract<GpuMode, 'webasm' | 'cpu'> = 'webasm'): Promise<BackendPlacement> {
  checkBackend(name);
  if (name === 'bk') return { runs: 'bk' };
  if (name === 'gpujs-cpu') return { runs: 'kernels', mode: cpuKernels };
  if (name === 'auto' && !(await isWebGpuAvailable())) return { runs: 'bk', fallback: fallbackFor('auto', { kind: 'no-adapter' }).reason };
  return { runs: 'kernels', mode: 'webgpu' };
}

/**
 * When a run leaves the push-relabel kernels for Boykov–Kolmogorov, in one
 * place. Every site that meets one of these causes asks fallbackFor() what
 * to do and reports the reason it gives:
 *
 *  - no WebGPU adapter answered (placeBackend, below);
 *  - the energy's V is not a metric, so a move's graph may need truncation,
 *    which only the host's graph builder does (stereo/backends.ts);
 *  - the energy's or a graph's values are beyond what f32 holds exactly
 *    (GpuPrecisionError: stereo/backends.ts for the energy, the max-flow
 *    solver for one graph, stereo/maxFlowFactory.ts);
 *  - the device failed during a run (a lost device, a driver error:
 *    stereo/backends.ts FallbackMoveSolver).
 *
 * The rule: 'auto' promised a result wherever one can be had, so it goes to
 * BK, whole (or, after a device failure, from the labels the last completed
 * move left); a backend named by the user keeps its kernels where they can
 * still run (graphs built on the host, each solved by push-relabel, one
 * beyond f32 by BK and counted in its stats), and otherwise fails, since
 * the user asked for that device. A --verify difference or bad input is
 * never a cause: those are errors on every backend.
 */
export type FallbackCause =
  | { kind: 'no-adapter' }
  | { kind: 'not-metric'; smoothness: string }
  | { kind: 'f32-energy'; message: string }
  | { kind: 'f32-graph' }
  | { kind: 'device-failed'; during: string; message: string };

/**
 * What the run does: 'bk' (the whole run, or the rest of it, on BK), 'graphs'
 * (move graphs built on the host, each solved by push-relabel), 'bk-graph'
 * (this one graph by BK) or 'fail' (the cause is the run's error).
 */
export interface FallbackDecision {
  to: 'bk' | 'graphs' | 'bk-graph' | 'fail';
  /** What the run reports (MatchResult.fallbacks, the CLI's notes). */
  reason: string;
}

export function fallbackFor(backend: BackendName, cause: FallbackCause): FallbackDecision {
  const auto = backend === 'auto';
  switch (cause.kind) {
    case 'no-adapter':
      return auto
        ? { to: 'bk', reason: 'no WebGPU adapter answered (the webgpu package did not load or there is no GPU); using BK on the CPU' }
        : { to: 'fail', reason: 'gpu backend: WebGPU requested but unavailable (the webgpu package did not load or no adapter answered)' };
    case 'not-metric':
      return auto
        ? { to: 'bk', reason: `the ${cause.smoothness} smoothness term is not a metric; using BK` }
        : { to: 'graphs', reason: `the ${cause.smoothness} smoothness term is not a metric: move graphs built on the CPU, each solved by push-relabel` };
    case 'f32-energy':
      return auto
        ? { to: 'bk', reason: `${cause.message}; using BK` }
        : { to: 'graphs', reason: `${cause.message}: move graphs built on the CPU, each solved by push-relabel (BK where one is beyond f32)` };
    case 'f32-graph':
      return { to: 'bk-graph', reason: 'a graph beyond the f32-exact bound solved by BK (stats.bkFallback)' };
    case 'device-failed':
      return auto
        ? { to: 'bk', reason: `the GPU failed ${cause.during} (${cause.message}); continuing on BK` }
        : { to: 'fail', reason: `the GPU failed ${cause.during} (${cause.message})` };
  }
}
