import { optionError } from '../../data/errors';

/**
 * The internal switches of the device path. Each turns a technique on or
 * off or sizes it, and changes the time a run takes, never its labels or
 * energies: benchmarks set them to compare a technique with its absence,
 * and tests to cover both sides. A user of match() never needs them (its
 * device settings are K, B and keepPlans).
 *
 * They are an argument, never process-wide state: createGpuContext(mode,
 * flags) checks a partial set once (resolveDeviceFlags), keeps the whole,
 * frozen, on the context it makes (GpuContext.flags) and with its gpu.js
 * instance (gpujs/scope.ts), and everything on the device path reads them
 * from there; match() takes them as `gpu.device` (GpuMoveSettings,
 * gpu/move/moveSettings.ts). Two contexts with different flags in one
 * process never see each other's: what is shared between contexts (kept
 * programs, pipelines made ahead, shader modules) is shared only between
 * equal flags (deviceFlagsKey).
 */
export interface DeviceFlags {
  /** A pipeline call recorded as one compute pass (gpujs/onePassCalls.ts). */
  readonly onePassCalls: boolean;
  /** Calls that write their results into the caller's arrays and flat results (callInPlace; resident moves need it). */
  readonly inPlaceCalls: boolean;
  /** Kernel translations and shader modules shared by their text (gpujs/kernelBuildCache.ts). */
  readonly kernelBuildCache: boolean;
  /** A plan's pipelines created together before it compiles. */
  readonly parallelPipelines: boolean;
  /** The pipelines created ahead kept alive, for later solvers of the same size. */
  readonly keepPipelines: boolean;
  /** Constant inputs bound once per device (gpujs/sharedLiterals.ts). */
  readonly sharedLiterals: boolean;
  /** Disposed solvers keep their device program for the next solver of the same shape (gpu/move/keptPrograms.ts). */
  readonly keptPrograms: boolean;
  /** Workgroup shape of gpu.js's 2D and 3D WebGPU kernels (gpujs/workgroupSize.ts): two positive integers with a product of at most 256. */
  readonly workgroup: readonly [number, number];
  /** Spin dispatches queued to raise an idle GPU's clock, and how recent device work must be for the clock to count as raised (clockWarmup.ts). */
  readonly clockWarmupDispatches: number;
  readonly clockWarmupRecentMs: number;
  /**
   * Dawn's bounds checks on the WebGPU device; undefined: as
   * BOUNDS_CHECKS_VARIABLE says. Dawn's robustness is a property of the
   * Dawn instance, which gpu.js makes once per process: the first context
   * on WebGPU decides it, and a later one that asks for the other value is
   * refused (context.ts).
   */
  readonly boundsChecks: boolean | undefined;
}

/**
 * The default workgroup: 16×16, the fastest of the 256-thread shapes on
 * whole runs at the Middlebury sizes (bench/gpuBench.ts section `workgroups`
 * compares them).
 */
export const DEFAULT_WORKGROUP: readonly [number, number] = Object.freeze([16, 16] as const);

/** The flags of a context made without any: every technique on. Frozen: the module's only value, never changed. */
export const DEFAULT_DEVICE_FLAGS: DeviceFlags = Object.freeze({
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
});

/** Every key of DeviceFlags (the compiler checks the list against the type). */
export const DEVICE_FLAG_KEYS = Object.keys({
  onePassCalls: 1, inPlaceCalls: 1, kernelBuildCache: 1, parallelPipelines: 1, keepPipelines: 1, sharedLiterals: 1, keptPrograms: 1, workgroup: 1,
  clockWarmupDispatches: 1, clockWarmupRecentMs: 1, boundsChecks: 1,
} satisfies Record<keyof DeviceFlags, 1>) as ReadonlyArray<keyof DeviceFlags>;

/** What is wrong with a partial set of flags: the key, whether its type or value, and what it takes. */
export interface DeviceFlagProblem { key: string; kind: 'type' | 'range'; expected: string }

const WORKGROUP_EXPECTED = 'two positive integers with a product of at most 256, e.g. [16, 16]';

/** What is wrong with `shape` as a workgroup, or undefined when it is one. */
function workgroupProblem(shape: unknown): DeviceFlagProblem | undefined {
  if (!Array.isArray(shape) || shape.length !== 2 || !shape.every((v) => typeof v === 'number')) return { key: 'workgroup', kind: 'type', expected: WORKGROUP_EXPECTED };
  const ok = shape.every((v) => Number.isInteger(v) && v >= 1) && shape[0] * shape[1] <= 256;
  return ok ? undefined : { key: 'workgroup', kind: 'range', expected: WORKGROUP_EXPECTED };
}

/**
 * The first problem of `partial` as flags, or undefined when every key is
 * a flag and every value one it takes (undefined: the default). An unknown
 * key is named with the flags there are.
 */
export function deviceFlagsProblem(partial: unknown): DeviceFlagProblem | undefined {
  if (partial === undefined) return undefined;
  if (!partial || typeof partial !== 'object' || Array.isArray(partial)) return { key: 'device flags', kind: 'type', expected: `an object of flags (${DEVICE_FLAG_KEYS.join(', ')})` };
  for (const [key, v] of Object.entries(partial)) {
    if (!(DEVICE_FLAG_KEYS as readonly string[]).includes(key)) return { key, kind: 'type', expected: `a device flag; '${key}' is none of them (${DEVICE_FLAG_KEYS.join(', ')})` };
    if (v === undefined) continue;
    const k = key as keyof DeviceFlags;
    if (k === 'workgroup') {
      const problem = workgroupProblem(v);
      if (problem) return problem;
    } else if (k === 'clockWarmupDispatches' || k === 'clockWarmupRecentMs') {
      if (typeof v !== 'number') return { key, kind: 'type', expected: 'an integer ≥ 0' };
      if (!(Number.isInteger(v) && v >= 0)) return { key, kind: 'range', expected: 'an integer ≥ 0' };
    } else if (typeof v !== 'boolean') {
      return { key, kind: 'type', expected: k === 'boundsChecks' ? 'true, false or undefined (then STEREOCUT_GPU_BOUNDS_CHECKS decides)' : 'true or false' };
    }
  }
  return undefined;
}

/**
 * The whole flags of `partial`: checked (a problem throws a TypeError or
 * RangeError naming the flag, data/errors.ts optionError), then the
 * defaults overridden by the keys given; frozen. A context's own flags
 * (whole) go through unchanged.
 */
export function resolveDeviceFlags(partial?: Partial<DeviceFlags>, where = 'device flags'): DeviceFlags {
  if (partial === undefined || partial === DEFAULT_DEVICE_FLAGS) return DEFAULT_DEVICE_FLAGS;
  const problem = deviceFlagsProblem(partial);
  if (problem) throw optionError(problem.kind, where, problem.key, problem.key in (partial as object) ? (partial as Record<string, unknown>)[problem.key] : partial, problem.expected);
  const given = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined)) as Partial<DeviceFlags>;
  const workgroup = given.workgroup ? Object.freeze([given.workgroup[0], given.workgroup[1]] as const) : DEFAULT_WORKGROUP;
  return Object.freeze({ ...DEFAULT_DEVICE_FLAGS, ...given, workgroup });
}

/**
 * A key equal for equal flags and different for different ones: what is
 * shared between contexts (kept programs, pipelines made ahead, shader
 * modules) is shared under it, so that contexts with different flags never
 * see each other's.
 */
export function deviceFlagsKey(flags: DeviceFlags): string {
  return JSON.stringify(DEVICE_FLAG_KEYS.map((k) => flags[k] ?? null));
}

/** The environment variable that keeps Dawn's bounds checks on (1) or leaves them off (0, the default) where the flag boundsChecks is unset. */
export const BOUNDS_CHECKS_VARIABLE = 'STEREOCUT_GPU_BOUNDS_CHECKS';

/** Whether Dawn's bounds checks stay on: `boundsChecks` when given, else the variable; a value of it other than 0 or 1 is refused, naming it. */
export function boundsChecksOn(boundsChecks: boolean | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if (boundsChecks !== undefined) return boundsChecks;
  const value = env[BOUNDS_CHECKS_VARIABLE];
  if (value === undefined || value === '' || value === '0') return false;
  if (value === '1') return true;
  throw new Error(`${BOUNDS_CHECKS_VARIABLE}: expected 0 or 1, got '${value}'`);
}
