import { DEFAULT_DEVICE_FLAGS, type DeviceFlags } from '../deviceFlags';

/**
 * Which gpu.js instances the adaptations apply to, and with which flags.
 * gpu.js offers no hook per instance, so the adaptations replace methods of
 * its WebGPU classes' prototypes (shared by every instance in the process);
 * each replaced method first looks up the kernel or executor it runs for
 * (flagsFor): an instance made by createGpuContext (gpu/runtime/context.ts)
 * gives the flags that context was made with, and the method runs its
 * adaptation as they say; any other instance gives none, and gpu.js's own
 * method runs. Objects that belong to no instance (a test's recording
 * executor built on the prototype) take the adapted path with the default
 * flags.
 *
 * Not scoped, because gpu.js shares them between all its instances: the
 * one WebGPU device of the process (WebGPUContext), whose shader-module
 * creation the kernel build cache shares by WGSL text once it is installed
 * (sharedBuilds.ts, shareShaderModules: per flags, each build's taken from
 * its kernel), and whose buffers shared literals bind (sharedLiterals.ts,
 * for executors of adapted instances only).
 */
const adapted = new WeakMap<object, DeviceFlags>();

/** Marks a gpu.js instance as one the adaptations apply to, with `flags` (whole and frozen: resolveDeviceFlags). */
export function adaptInstance(gpu: object, flags: DeviceFlags = DEFAULT_DEVICE_FLAGS): void {
  adapted.set(gpu, flags);
}

/**
 * The flags an adapted method runs with for `owner` (a gpu.js kernel,
 * pipeline or executor, whose `gpu` is its instance): its instance's, the
 * defaults for an owner of no instance, undefined for an instance that is
 * not adapted (gpu.js's own method runs then).
 */
export function flagsFor(owner: unknown): DeviceFlags | undefined {
  const gpu = (owner as { gpu?: unknown } | null)?.gpu;
  if (gpu === undefined || gpu === null) return DEFAULT_DEVICE_FLAGS;
  return typeof gpu === 'object' ? adapted.get(gpu) : undefined;
}

/** Whether an adapted method runs its adaptation for `owner` (flagsFor gives flags). */
export function adaptsFor(owner: unknown): boolean {
  return flagsFor(owner) !== undefined;
}
