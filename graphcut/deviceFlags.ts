/**
 * The internal switches of the device path, in one object. Each turns a
 * technique on or off or sizes it, and changes the time a run takes, never
 * its labels or energies: benchmarks set them to compare a technique with
 * its absence, and tests to cover both sides. A user of match() never needs
 * them (its device settings are K, B and keepPlans); the schedule knobs of
 * the device moves are GpuMoveOptions (expansion/gpuMoveSettings.ts,
 * gpuMoveFlags). Set fields through withDeviceFlags, which restores them.
 */
export interface DeviceFlags {
  /** A pipeline call recorded as one compute pass (gpujs/onePassCalls.ts). */
  onePassCalls: boolean;
  /** Calls that write their results into the caller's arrays and flat results (callInPlace; resident moves need it). */
  inPlaceCalls: boolean;
  /** Kernel translations and shader modules shared by their text (gpujs/kernelBuildCache.ts). */
  kernelBuildCache: boolean;
  /** A plan's pipelines created together before it compiles. */
  parallelPipelines: boolean;
  /** The pipelines created ahead kept alive, for later solvers of the same size. */
  keepPipelines: boolean;
  /** Constant inputs bound once per device (gpujs/sharedLiterals.ts). */
  sharedLiterals: boolean;
  /** Disposed solvers keep their device program for the next solver of the same shape (expansion/gpuKeptPrograms.ts). */
  keptPrograms: boolean;
  /** Workgroup shape of gpu.js's 2D and 3D WebGPU kernels (gpujs/workgroupSize.ts; set it through setKernelWorkgroup, which checks it). */
  workgroup: readonly [number, number];
  /** Spin dispatches queued to raise an idle GPU's clock, and how recent device work must be for the clock to count as raised (gpuClockWarmup.ts). */
  clockWarmupDispatches: number;
  clockWarmupRecentMs: number;
}

/**
 * The default workgroup: 16×16, the fastest of the 256-thread shapes on
 * whole runs at the Middlebury sizes (bench/gpuBench.ts section `workgroups`
 * compares them).
 */
export const DEFAULT_WORKGROUP: readonly [number, number] = [16, 16];

export const deviceFlags: DeviceFlags = {
  onePassCalls: true,
  inPlaceCalls: true,
  kernelBuildCache: true,
  parallelPipelines: true,
  keepPipelines: true,
  sharedLiterals: true,
  keptPrograms: true,
  workgroup: DEFAULT_WORKGROUP,
  clockWarmupDispatches: 500,
  clockWarmupRecentMs: 1000,
};

/** Runs `fn` with `flags` set in deviceFlags, restoring the earlier values after it. */
export async function withDeviceFlags<T>(flags: Partial<DeviceFlags>, fn: () => Promise<T> | T): Promise<T> {
  const saved = { ...deviceFlags };
  Object.assign(deviceFlags, flags);
  try {
    return await fn();
  } finally {
    Object.assign(deviceFlags, saved);
  }
}
