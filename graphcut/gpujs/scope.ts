/**
 * Which gpu.js instances the adaptations apply to. gpu.js offers no hook
 * per instance, so the adaptations replace methods of its WebGPU classes'
 * prototypes (shared by every instance in the process); each replaced
 * method first asks whether the kernel or executor it runs for belongs to
 * an instance made by createGpuContext (graphcut/gpuBackend.ts), and runs
 * gpu.js's own method for any other instance. Objects that belong to no
 * instance (a test's recording executor built on the prototype) take the
 * adapted path.
 *
 * Not scoped, because gpu.js shares them between all its instances: the
 * one WebGPU device of the process (WebGPUContext), whose shader-module
 * creation the kernel build cache shares by WGSL text once it is installed
 * (sharedBuilds.ts, shareShaderModules), and whose buffers shared
 * literals bind (sharedLiterals.ts, for executors of adapted instances only).
 */
const adapted = new WeakSet<object>();

/** Marks a gpu.js instance as one the adaptations apply to. */
export function adaptInstance(gpu: object): void {
  adapted.add(gpu);
}

/** Whether an adapted method runs its adaptation for `owner` (a gpu.js kernel or executor, whose `gpu` is its instance). */
export function adaptsFor(owner: unknown): boolean {
  const gpu = (owner as { gpu?: unknown } | null)?.gpu;
  return gpu === undefined || gpu === null || (typeof gpu === 'object' && adapted.has(gpu));
}
