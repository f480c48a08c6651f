/**
 * The kernel build cache's pipelines made ahead (kernelBuildCache.ts gives
 * the whole): before a plan compiles, the programs it will build are
 * worked out on throwaway clones and their pipelines asked for together;
 * at a program's start, those an earlier process recorded for it. All of
 * it per device and per flags (deviceFlagsKey): contexts with different
 * flags never wait for, nor keep alive, each other's pipelines.
 */
import { deviceFlagsKey, type DeviceFlags } from '../deviceFlags';
import { Input } from './gpuJs';
import { gpuJsInternal } from './internals';
import { beginPipelineGroup, type PipelineSource } from './pipelineStore';
import {
  buildCacheGeneration, kernelBuildCache, MAX_SHARED_MODULES, remember, seedTranslations, sharedShaderModule, shareShaderModules, type ModuleDevice, type TranslatingKernel,
} from './sharedBuilds';

/** What a plan compile reads of gpu.js's fused executor and plan (pipeline-executor.js, _compile). */
interface PlanStep { kernel: number }
/** The members of a plan's kernel that programKey reads. */
interface ProgramKernel { strictIntegers?: boolean; source?: unknown; constants?: unknown; output?: unknown; precision?: unknown; loopMaxIterations?: unknown }
interface PlanKernelClone { kernel: ProgramKernel }
interface ThrowawayKernel extends TranslatingKernel {
  threadDim: number[];
  paramsLayout: { arrayArgs: unknown[]; bufferConstants: unknown[] };
  _device: unknown;
  setupConstants(): void;
  setupArguments(a: unknown[]): void;
  validateSettings(a: unknown[]): void;
  computeParamsLayout(): ThrowawayKernel['paramsLayout'];
  assembleWGSL(): string;
}
export interface CompilingExecutor {
  plan: { steps: PlanStep[]; kernels: Array<{ shortcut: object; clone: PlanKernelClone }> };
  pipeline: { _cloneKernel(c: PlanKernelClone): { kernel: ThrowawayKernel; destroy(): void } };
  _representativeArgs(step: PlanStep, args: unknown[]): unknown[];
  _compile(args: unknown[]): Promise<void>;
  _prepareKernel(kernel: object, reps: unknown[]): Promise<void>;
}

/** The members of a WebGPU device the prewarm uses. */
export interface PipelineDevice extends ModuleDevice {
  createBindGroupLayout(d: { entries: unknown[] }): unknown;
  createPipelineLayout(d: { bindGroupLayouts: unknown[] }): unknown;
  createComputePipelineAsync(d: { layout: unknown; compute: { module: unknown; entryPoint: string } }): Promise<unknown>;
}

const UNIFORM = { type: 'uniform' };
const READ_ONLY = { type: 'read-only-storage' };
const STORAGE = { type: 'storage' };
const COMPUTE = 4; // GPUShaderStage.COMPUTE

/** The bind group entries gpu.js's build gives a kernel (web-gpu/kernel.js, _buildAsync): params, array arguments, output, array constants. */
export function kernelLayoutEntries(arrays: number, constants: number): Array<{ binding: number; visibility: number; buffer: object }> {
  const types = [UNIFORM, ...Array.from({ length: arrays }, () => READ_ONLY), STORAGE, ...Array.from({ length: constants }, () => READ_ONLY)];
  return types.map((buffer, binding) => ({ binding, visibility: COMPUTE, buffer }));
}

// Per device and flags: the WGSL sources whose pipelines were asked for ahead, each
// with the pipeline made (null until made, or if refused), and the keys
// of the programs planned (programKey: so that a plan of kernels met
// before, by this solver or an earlier one, costs no throwaway clones). The pipelines
// are held on purpose: Dawn hands a synchronous creation the pipeline it
// made for an identical descriptor only while that pipeline is alive, and
// once a solver's plans were destroyed, the next solver of the same size
// (a scene run again in one process, as tuning does) created its 17
// pipelines one by one again. A generation older than the cache's (buildCacheGeneration)
// is emptied at its next use (clearKernelBuildCache).
const prewarmedOf = new WeakMap<object, Map<string, Prewarmed>>();
interface Prewarmed {
  generation: number;
  codes: Map<string, unknown>;
  planned: Map<string, true>;
  /** Creations asked for and not yet settled, by the same key as `codes`. */
  pending: Map<string, Promise<void>>;
}

/** The key of a pipeline among those made ahead: its bind group's counts and its WGSL. */
const pipelineKey = (p: PipelineSource): string => `${p.arrays}:${p.constants}:${p.code}`;

/** This device's pipelines made ahead for contexts of `flags`, emptied when the cache was cleared since. */
function prewarmedFor(device: object, flags: DeviceFlags): Prewarmed {
  let ofFlags = prewarmedOf.get(device);
  if (!ofFlags) prewarmedOf.set(device, (ofFlags = new Map()));
  const key = deviceFlagsKey(flags);
  let prewarmed = ofFlags.get(key);
  const generation = buildCacheGeneration();
  if (!prewarmed || prewarmed.generation !== generation) ofFlags.set(key, (prewarmed = { generation, codes: new Map(), planned: new Map(), pending: new Map() }));
  return prewarmed;
}

/**
 * Asks `device` for the pipelines of `sources` it was not asked for ahead
 * yet for contexts of `flags`, all at once (Dawn creates them
 * concurrently); resolves when they are made or refused. A refusal is left
 * to the build that needs the pipeline to report.
 */
export function createAhead(device: PipelineDevice, sources: readonly PipelineSource[], flags: DeviceFlags): Promise<void> {
  const prewarmed = prewarmedFor(device, flags);
  const { codes, pending } = prewarmed;
  return Promise.all(sources.filter((p) => !codes.has(pipelineKey(p))).map((p) => {
    const k = pipelineKey(p);
    remember(codes, k, null, MAX_SHARED_MODULES);
    const layout = device.createPipelineLayout({ bindGroupLayouts: [device.createBindGroupLayout({ entries: kernelLayoutEntries(p.arrays, p.constants) })] });
    const made = device.createComputePipelineAsync({ layout, compute: { module: sharedShaderModule(device, p.code, flags), entryPoint: 'main' } }).then(
      (pipeline) => { if (codes.has(k) && flags.keepPipelines) codes.set(k, pipeline); },
      () => undefined,
    ).finally(() => pending.delete(k));
    pending.set(k, made);
    return made;
  })).then(() => undefined);
}

/** Settles when the creations of `sources` asked for ahead on `device` for contexts of `flags` and still running have settled (at once for none). */
export function creationsInFlight(device: object, sources: readonly PipelineSource[], flags: DeviceFlags): Promise<unknown> | null {
  const pending = prewarmedOf.get(device)?.get(deviceFlagsKey(flags))?.pending;
  if (!pending || pending.size === 0) return null;
  const waits = sources.map((p) => pending.get(pipelineKey(p))).filter((w): w is Promise<void> => w !== undefined);
  return waits.length > 0 ? Promise.all(waits) : null;
}

/**
 * A program of `key` starts on the process's WebGPU device, in a context of
 * `flags` (with the cache and parallel pipelines on): the pipelines
 * an earlier process recorded for it (pipelineStore.ts) are asked for at
 * once, its translations join the shared ones, and the pipelines and
 * translations made from now on are recorded under `key`.
 * Returns at once; the creations run on while the solver builds (a build
 * that needs one of them waits for it rather than compiling it again).
 */
export function warmUpPipelineGroup(key: string, flags: DeviceFlags): void {
  if (!kernelBuildCache.installed || !flags.kernelBuildCache || !flags.parallelPipelines) return;
  const { sources, translations: stored } = beginPipelineGroup(key);
  seedTranslations(stored);
  if (sources.length === 0 || !acquireDevice) return;
  void acquireDevice().then((context) => {
    const { device } = context;
    if (typeof device.createComputePipelineAsync !== 'function') return;
    shareShaderModules(device);
    const before = prewarmedFor(device, flags).codes.size;
    const made = createAhead(device, sources, flags);
    kernelBuildCache.warmedUpPipelines += prewarmedFor(device, flags).codes.size - before;
    return made;
  }).catch(() => undefined);
}

/** gpu.js's shared WebGPU context (set when the cache is installed). */
let acquireDevice: (() => Promise<{ device: PipelineDevice }>) | null = null;

/** Sets the device the warm-ups use: gpu.js's shared WebGPU context (installKernelBuildCache). */
export function usePipelineDevice(acquire: () => Promise<{ device: PipelineDevice }>): void {
  acquireDevice = acquire;
}

/**
 * What decides a planned program's WGSL besides gpu.js's fixed settings:
 * the kernel's source, constants, output and precision settings, and its
 * arguments' types and sizes. Keyed this way rather than by kernel object,
 * a new solver of the same size and options (a scene run again in one
 * process, as tuning scripts do) plans none of its programs again (each
 * solver's first plan would make 17–19 throwaway clones). A key that wrongly matched
 * would only leave a pipeline to be created when the compile needs it.
 */
function programKey(kernel: ProgramKernel, types: string, reps: readonly unknown[]): string | null {
  // A plan has hundreds of steps per kernel: the kernel's part of the key (its source runs to kilobytes) is worked out once per kernel object, as a small id.
  let id = kernelIdOf.get(kernel);
  if (id === undefined) {
    if (typeof kernel.source !== 'string') {
      id = null;
    } else {
      const described = JSON.stringify([kernel.source, kernel.constants ?? null, kernel.output ?? null, kernel.precision ?? null, kernel.loopMaxIterations ?? null]);
      id = kernelIds.get(described) ?? kernelIds.size;
      if (!kernelIds.has(described)) kernelIds.set(described, id);
    }
    kernelIdOf.set(kernel, id);
  }
  if (id === null) return null;
  const sizeOf = (v: unknown): unknown => (v instanceof Input ? v.size : Array.isArray(v) || ArrayBuffer.isView(v) ? (v as ArrayLike<unknown>).length : (v as { output?: unknown } | null)?.output ?? null);
  return `${id}|${types}|${JSON.stringify(reps.map(sizeOf))}`;
}

/** Ids of the kernel descriptions programKey met (a process meets a few dozen), and each kernel object's id (null: not keyed). */
const kernelIds = new Map<string, number>();
const kernelIdOf = new WeakMap<object, number | null>();

/**
 * The WGSL and layout of every program the executor's compile will build
 * (one per kernel and argument-type signature, as gpu.js keys them) that
 * was not planned on this device before, assembled on throwaway clones of
 * the plan's kernels.
 */
function plannedPrograms(executor: CompilingExecutor, args: unknown[], device: unknown, planned: Map<string, true>): Array<{ code: string; arrays: number; constants: number }> {
  const typeOf = gpuJsInternal<{ utils: { getVariableType(v: unknown, strict?: boolean): string } }>('utils').utils.getVariableType;
  const programs: Array<{ code: string; arrays: number; constants: number }> = [];
  const { steps, kernels } = executor.plan;
  for (const step of steps) {
    const reps = executor._representativeArgs(step, args);
    const entry = kernels[step.kernel];
    const types = reps.map((v) => typeOf(v, entry.clone.kernel.strictIntegers)).join(',');
    const key = programKey(entry.clone.kernel, types, reps);
    if (key !== null) {
      if (planned.has(key)) continue;
      remember(planned, key, true, MAX_SHARED_MODULES);
    }
    const clone = executor.pipeline._cloneKernel(entry.clone);
    try {
      const k = clone.kernel;
      k.setupConstants();
      k.setupArguments(reps);
      k.validateSettings(reps);
      k.threadDim = [...(k.output ?? []), 1, 1, 1].slice(0, 3);
      k.translateSource();
      k.paramsLayout = k.computeParamsLayout();
      k._device = device;
      programs.push({ code: k.assembleWGSL(), arrays: k.paramsLayout.arrayArgs.length, constants: k.paramsLayout.bufferConstants.length });
    } finally {
      clone.destroy();
    }
  }
  return programs;
}

/** The pipelines made ahead on `device` for contexts of `flags` and kept alive (the shared cache's view, for tests and measurements). */
export function keptPipelines(device: object, flags: DeviceFlags): unknown[] {
  const prewarmed = prewarmedOf.get(device)?.get(deviceFlagsKey(flags));
  return prewarmed && prewarmed.generation === buildCacheGeneration() ? [...prewarmed.codes.values()].filter((p) => p !== null) : [];
}

/**
 * Creates, together, the pipelines of the programs the executor's compile
 * will build (for `args`, its first call's) that were not asked for ahead
 * on this device for contexts of `flags` (the executor's) before; resolves
 * when all are made or refused.
 */
export async function prewarmPipelines(executor: CompilingExecutor, args: unknown[], device: PipelineDevice, flags: DeviceFlags): Promise<void> {
  const prewarmed = prewarmedFor(device, flags);
  const t = performance.now();
  const programs = plannedPrograms(executor, args, device, prewarmed.planned);
  const fresh = programs.filter((p) => !prewarmed.codes.has(pipelineKey(p)));
  // Those asked for ahead by a warm-up and still being made are waited for, not created again by the compile.
  await Promise.all([createAhead(device, fresh, flags), creationsInFlight(device, programs, flags)]);
  kernelBuildCache.prewarmedPipelines += fresh.length;
  kernelBuildCache.prewarmMs += performance.now() - t;
}
