/**
 * The internal switches of the device path, in one object. Each turns a
 * technique on or off or sizes it, and changes the time a run takes, never
 * its labels or energies: benchmarks set them to compare a technique with
 * its absence, and tests to cover both sides. A user of match() never needs
 * them (its device settings are K, B and keepPlans); the schedule knobs of
 * the device moves are match()'s `gpu` argument (GpuMoveSettings in
 * expansion/gpuMoveSettings.ts). Set fields through withDeviceFlags, which restores them.
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
  /** Dawn's bounds checks on the WebGPU device (read once, when the process sets WebGPU up); undefined: as BOUNDS_CHECKS_VARIABLE says. */
  boundsChecks: boolean | undefined;
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
  boundsChecks: undefined,
};

/** The environment variable that keeps Dawn's bounds checks on (1) or leaves them off (0, the default) where deviceFlags.boundsChecks is unset. */
export const BOUNDS_CHECKS_VARIABLE = 'STEREOCUT_GPU_BOUNDS_CHECKS';

/** Whether Dawn's bounds checks stay on: deviceFlags.boundsChecks, else the variable; a value of it other than 0 or 1 is refused, naming it. */
export function boundsChecksOn(env: NodeJS.ProcessEnv = process.env): boolean {
  if (deviceFlags.boundsChecks !== undefined) return deviceFlags.boundsChecks;
  const value = env[BOUNDS_CHECKS_VARIABLE];
  if (value === undefined || value === '' || value === '0') return false;
  if (value === '1') return true;
  throw new Error(`${BOUNDS_CHECKS_VARIABLE}: expected 0 or 1, got '${value}'`);
}

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
