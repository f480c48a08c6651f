import { InputError } from '../data/errors';
import { isWebGpuAvailable, type GpuMode } from './gpuBackend';

/**
 * The backends, in one place: their names, where each runs, what 'auto'
 * falls back to, and how a run is verified. The CLI's choices, match(),
 * the move-solver factory (stereo/backends.ts) and the max-flow factory
 * (solverFactory.ts) all read this registry.
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

/** The reason 'auto' gives when it falls back to BK. */
export const NO_ADAPTER_FALLBACK = 'no WebGPU adapter answered (the webgpu package did not load or there is no GPU); using BK on the CPU';

/** `name` as a backend name; otherwise an InputError naming `option` and the choices. */
export function checkBackend(name: unknown, option = '--backend'): BackendName {
  if (!BACKENDS.includes(name as BackendName)) throw new InputError(`${option}: unknown value '${String(name)}' (expected ${BACKENDS.join(', ')})`);
  return name as BackendName;
}

/** Whether a backend may put its work on a WebGPU device (then the device's clock warm-up and device costs are worth considering). */
export function mayUseWebGpu(name: BackendName): boolean {
  return name === 'gpu' || name === 'auto';
}

/** Whether the backend's kernels run on WebGPU in this process ('gpu', or 'auto' with an adapter). */
export async function runsOnWebGpu(name: BackendName): Promise<boolean> {
  return name === 'gpu' || (name === 'auto' && (await isWebGpuAvailable()));
}

/**
 * Where a backend runs in this process. `cpuKernels` is the gpu.js mode of
 * 'gpujs-cpu' ('webasm', or 'cpu' for the plain JavaScript backend).
 */
export async function placeBackend(name: BackendName, cpuKernels: Extract<GpuMode, 'webasm' | 'cpu'> = 'webasm'): Promise<BackendPlacement> {
  checkBackend(name);
  if (name === 'bk') return { runs: 'bk' };
  if (name === 'gpujs-cpu') return { runs: 'kernels', mode: cpuKernels };
  if (name === 'auto' && !(await isWebGpuAvailable())) return { runs: 'bk', fallback: NO_ADAPTER_FALLBACK };
  return { runs: 'kernels', mode: 'webgpu' };
}
