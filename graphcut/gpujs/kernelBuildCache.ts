/**
 * Kernel builds shared between the plans of a process, on WebGPU.
 *
 * Every plan (a gpu.js pipeline) runs on private clones of the solver's
 * kernels, and gpu.js 2.24.1 builds each clone from scratch: it translates
 * the kernel's JavaScript to WGSL (web-gpu/kernel.js, translateSource) and
 * compiles the WGSL into a new shader module (_buildAsync). The clones of
 * one kernel give the same WGSL in every plan, so a run rebuilt the same
 * 17–19 sources dozens to hundreds of times, each build milliseconds of
 * translation and shader module on the host.
 *
 * `installKernelBuildCache` keeps both:
 * - the translation, keyed by everything gpu.js's translation reads from the
 *   kernel (function-builder.js, fromKernel: the source, the arguments'
 *   names, types, sizes and bit ratios, the constants and their types, the
 *   output, precision and the other settings). Kernels with helper
 *   functions, native functions, sub-kernels or plugins are translated as
 *   before, as are kernels with array constants.
 * - the shader module of each WGSL source, per device. A WebGPU shader
 *   module is immutable, and one created from the same code is the same
 *   program with the same compilation messages, so gpu.js's check of those
 *   messages sees what it would have seen. The compute pipelines are left to
 *   Dawn, which already returns the pipeline it made for an identical
 *   descriptor.
 * The WGSL is still assembled per build (cheap), so the workgroup rewrite
 * (workgroupSize.ts) applies as before.
 *
 * Compute pipelines are the other cost of a build the first time a process
 * meets a source: gpu.js creates each one synchronously, one after the
 * other, while the driver compiles it. Dawn creates the pipelines asked for
 * through createComputePipelineAsync concurrently, and then hands a synchronous creation of the same descriptor the pipeline it
 * made. So before a plan compiles, `installKernelBuildCache` also works out
 * the programs the compile will build (the same steps and argument types
 * gpu.js's executor reads), assembles the WGSL of those whose kernel it has
 * not met with these argument types on throwaway clones (the translations
 * land in the cache above), and asks for the pipelines this device has not
 * been asked for ahead yet, together, with the descriptors gpu.js's build
 * uses. (A kernel whose settings change after it was met is built as
 * without the prewarm.) Created together, the pipelines of a size new to
 * the process take a fraction of the time of one-by-one creation (the
 * driver compiles them in parallel). A prewarm that fails in any way is dropped: the compile then
 * builds as it always did and reports any error itself.
 *
 * A plan's clones also allocated an output buffer each at the end of their
 * build, which the executor destroys right after (every step writes a
 * buffer of the plan): a device allocation per kernel and plan that nothing
 * used. A build made for a plan (the executor's _prepareKernel) now
 * allocates none; a clone that later runs on its own (gpu.js's fallback
 * executor) gets its buffer at its first run, as every run ensures one.
 */
import { deviceFlags } from '../deviceFlags';
import { Input } from './gpuJs';
import { isWrappedGpuJsRelease } from './release';
import { gpuJsInternal } from './internals';
import { adaptsFor } from './scope';
import { beginPipelineGroup, recordPipeline, recordTranslation, type PipelineSource } from './pipelineStore';

/** Shader modules kept per device; beyond this the oldest is dropped (a run uses about 20). */
export const MAX_SHARED_MODULES = 512;
/** Translations kept; beyond this the oldest is dropped. */
export const MAX_SHARED_TRANSLATIONS = 512;

/** Counters (the switches are deviceFlags.kernelBuildCache, parallelPipelines and keepPipelines, which may change at any time). */
export const kernelBuildCache = {
  installed: false,
  prewarmedPipelines: 0,
  prewarmMs: 0,
  /** Pipelines asked for at a program's start from the pipeline store (warmUpPipelineGroup), and builds that waited for one of them. */
  warmedUpPipelines: 0,
  buildsAwaitingWarmUp: 0,
  translationHits: 0,
  translationMisses: 0,
  moduleHits: 0,
  moduleMisses: 0,
};

/** The fields of a gpu.js kernel that its translation reads, and what it sets. */
export interface TranslatingKernel {
  source: unknown;
  argumentNames: string[] | null;
  argumentTypes: string[] | null;
  argumentSizes: unknown;
  argumentBitRatios: unknown;
  kernelArguments: Array<{ type: string }> | null;
  kernelConstants: Array<{ name: string; type: string }> | null;
  constants: Record<string, unknown> | null;
  constantTypes: unknown;
  constantBitRatios: unknown;
  output: number[] | null;
  debug: unknown;
  loopMaxIterations: unknown;
  precision: unknown;
  optimizeFloatMemory: unknown;
  strictIntegers: unknown;
  fixIntegerDivisionAccuracy: unknown;
  leadingReturnStatement: unknown;
  followingReturnStatement: unknown;
  dynamicArguments: unknown;
  dynamicOutput: unknown;
  graphical: unknown;
  functions: unknown;
  nativeFunctions: unknown;
  injectedNative: unknown;
  subKernels: unknown;
  plugins: unknown;
  returnType: string | null;
  componentCount: number;
  translatedBody: string;
  translatedFunctions: string;
  translateSource(): void;
}

interface Translation { returnType: string | null; componentCount: number; translatedBody: string; translatedFunctions: string }

const present = (v: unknown): boolean => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0);

/**
 * What a translation reads of a kernel's native functions (gpu.js keeps
 * each as added: its name, WGSL source, argument names and types, return
 * type): null for none, undefined when one is not of that form.
 */
function nativeFunctionsKey(natives: unknown): unknown[] | null | undefined {
  if (!present(natives)) return null;
  if (!Array.isArray(natives)) return undefined;
  const key: unknown[] = [];
  for (const f of natives as Array<Record<string, unknown>>) {
    if (typeof f?.name !== 'string' || typeof f.source !== 'string') return undefined;
    key.push([f.name, f.source, f.argumentNames ?? null, f.argumentTypes ?? null, f.returnType ?? null]);
  }
  return key;
}

/**
 * The key of a kernel's translation, or null when it is not shared: a
 * source that is not a string, helper functions, native functions not of
 * the form gpu.js adds them in, sub-kernels, plugins, or a constant that
 * is not a number or boolean. Native functions (the workgroup kernels'
 * WGSL routines) are part of the key, source and all.
 */
export function translationKey(k: TranslatingKernel): string | null {
  if (typeof k.source !== 'string') return null;
  if (present(k.functions) || present(k.injectedNative) || present(k.subKernels) || present(k.plugins)) return null;
  const natives = nativeFunctionsKey(k.nativeFunctions);
  if (natives === undefined) return null;
  const constants = k.constants ?? {};
  for (const v of Object.values(constants)) if (typeof v !== 'number' && typeof v !== 'boolean') return null;
  return JSON.stringify([
    k.source,
    natives,
    k.argumentNames,
    k.argumentTypes,
    k.kernelArguments?.map((a) => a.type) ?? null,
    k.argumentSizes,
    k.argumentBitRatios,
    constants,
    k.kernelConstants?.map((c) => [c.name, c.type]) ?? null,
    k.constantTypes,
    k.constantBitRatios,
    k.output,
    k.debug,
    k.loopMaxIterations,
    k.precision,
    k.optimizeFloatMemory,
    k.strictIntegers,
    k.fixIntegerDivisionAccuracy,
    k.leadingReturnStatement,
    k.followingReturnStatement,
    k.dynamicArguments,
    k.dynamicOutput,
    k.graphical,
    k.returnType,
  ]);
}

/** A bounded map: set() drops the oldest entry past `max`. */
function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
}

const translations = new Map<string, Translation>();

/** Forgets every kept translation, shader module and prewarmed pipeline (tests, and gpuBench between its runs). */
export function clearKernelBuildCache(): void {
  translations.clear();
  generation++;
}

/** The translation of `kernel`, from the cache when an equal kernel was translated before. */
function translateShared(kernel: TranslatingKernel, translate: () => void): void {
  const key = deviceFlags.kernelBuildCache ? translationKey(kernel) : null;
  if (key === null) {
    translate();
    return;
  }
  const kept = translations.get(key);
  if (kept) {
    kernelBuildCache.translationHits++;
    Object.assign(kernel, kept);
    return;
  }
  translate();
  kernelBuildCache.translationMisses++;
  const made: Translation = { returnType: kernel.returnType, componentCount: kernel.componentCount, translatedBody: kernel.translatedBody, translatedFunctions: kernel.translatedFunctions };
  remember(translations, key, made, MAX_SHARED_TRANSLATIONS);
  recordTranslation({ key, ...made });
}

/** The member of a WebGPU device this shares. */
export interface ModuleDevice { createShaderModule(descriptor: { code: string }): unknown }

// Per device (a lost device's modules go with it); a generation older than
// `generation` is emptied at its next use, which is how clearKernelBuildCache reaches them.
const modulesOf = new WeakMap<object, { generation: number; modules: Map<string, unknown> }>();
let generation = 0;

/**
 * Makes `device` return the shader module it made before for the same WGSL
 * code (idempotent; a device whose object takes no new property is left as
 * it is). Descriptors with anything besides `code` are passed through.
 */
export function shareShaderModules(device: ModuleDevice): void {
  if (modulesOf.has(device) || !Object.isExtensible(device)) return;
  const kept = { generation, modules: new Map<string, unknown>() };
  modulesOf.set(device, kept);
  Object.defineProperty(device, 'createShaderModule', {
    configurable: true,
    writable: true,
    value(this: ModuleDevice, descriptor: { code: string }): unknown {
      // Looked up at each call, so that wrappers of the device class (gpuBench's profiler) see the misses.
      const create = (Object.getPrototypeOf(device) as ModuleDevice).createShaderModule;
      const shareable = deviceFlags.kernelBuildCache && typeof descriptor?.code === 'string' && Object.keys(descriptor).length === 1;
      if (!shareable) return create.call(device, descriptor);
      if (kept.generation !== generation) {
        kept.modules.clear();
        kept.generation = generation;
      }
      const module = kept.modules.get(descriptor.code);
      if (module !== undefined) {
        kernelBuildCache.moduleHits++;
        return module;
      }
      const made = create.call(device, descriptor);
      kernelBuildCache.moduleMisses++;
      remember(kept.modules, descriptor.code, made, MAX_SHARED_MODULES);
      return made;
    },
  });
}

/** What a kernel's build has set before it creates its pipeline (web-gpu/kernel.js, build): the WGSL and the layout's counts. */
interface BuildingKernel { compiledSource?: unknown; paramsLayout?: { arrayArgs?: unknown[]; bufferConstants?: unknown[] } | null }

/** The pipeline a kernel's build creates, or null when its build has not set the fields this reads. */
function builtSource(k: BuildingKernel): PipelineSource | null {
  const layout = k.paramsLayout;
  if (typeof k.compiledSource !== 'string' || !Array.isArray(layout?.arrayArgs) || !Array.isArray(layout?.bufferConstants)) return null;
  return { code: k.compiledSource, arrays: layout.arrayArgs.length, constants: layout.bufferConstants.length };
}

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

/** Kernels being built for a plan (CompilingExecutor._prepareKernel): their build allocates no output buffer. */
const buildingForPlan = new WeakSet<object>();
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

// Per device: the WGSL sources whose pipelines were asked for ahead, each
// with the pipeline made (null until made, or if refused), and the keys
// of the programs planned (programKey: so that a plan of kernels met
// before, by this solver or an earlier one, costs no throwaway clones). The pipelines
// are held on purpose: Dawn hands a synchronous creation the pipeline it
// made for an identical descriptor only while that pipeline is alive, and
// once a solver's plans were destroyed, the next solver of the same size
// (a scene run again in one process, as tuning does) created its 17
// pipelines one by one again. A generation older than `generation`
// is emptied at its next use (clearKernelBuildCache).
const prewarmedOf = new WeakMap<object, Prewarmed>();
interface Prewarmed {
  generation: number;
  codes: Map<string, unknown>;
  planned: Map<string, true>;
  /** Creations asked for and not yet settled, by the same key as `codes`. */
  pending: Map<string, Promise<void>>;
}

/** The key of a pipeline among those made ahead: its bind group's counts and its WGSL. */
const pipelineKey = (p: PipelineSource): string => `${p.arrays}:${p.constants}:${p.code}`;

/** This device's pipelines made ahead, emptied when the cache was cleared since. */
function prewarmedFor(device: object): Prewarmed {
  let prewarmed = prewarmedOf.get(device);
  if (!prewarmed || prewarmed.generation !== generation) prewarmedOf.set(device, (prewarmed = { generation, codes: new Map(), planned: new Map(), pending: new Map() }));
  return prewarmed;
}

/**
 * Asks `device` for the pipelines of `sources` it was not asked for ahead
 * yet, all at once (Dawn creates them concurrently); resolves when they are
 * made or refused. A refusal is left to the build that needs the pipeline
 * to report.
 */
function createAhead(device: PipelineDevice, sources: readonly PipelineSource[]): Promise<void> {
  const prewarmed = prewarmedFor(device);
  const { codes, pending } = prewarmed;
  return Promise.all(sources.filter((p) => !codes.has(pipelineKey(p))).map((p) => {
    const k = pipelineKey(p);
    remember(codes, k, null, MAX_SHARED_MODULES);
    const layout = device.createPipelineLayout({ bindGroupLayouts: [device.createBindGroupLayout({ entries: kernelLayoutEntries(p.arrays, p.constants) })] });
    const made = device.createComputePipelineAsync({ layout, compute: { module: device.createShaderModule({ code: p.code }), entryPoint: 'main' } }).then(
      (pipeline) => { if (codes.has(k) && deviceFlags.keepPipelines) codes.set(k, pipeline); },
      () => undefined,
    ).finally(() => pending.delete(k));
    pending.set(k, made);
    return made;
  })).then(() => undefined);
}

/** Settles when the creations of `sources` asked for ahead on `device` and still running have settled (at once for none). */
function creationsInFlight(device: object, sources: readonly PipelineSource[]): Promise<unknown> | null {
  const pending = prewarmedOf.get(device)?.pending;
  if (!pending || pending.size === 0) return null;
  const waits = sources.map((p) => pending.get(pipelineKey(p))).filter((w): w is Promise<void> => w !== undefined);
  return waits.length > 0 ? Promise.all(waits) : null;
}

/**
 * A program of `key` starts on the process's WebGPU device: the pipelines
 * an earlier process recorded for it (pipelineStore.ts) are asked for at
 * once, its translations join the shared ones, and the pipelines and
 * translations made from now on are recorded under `key`.
 * Returns at once; the creations run on while the solver builds (a build
 * that needs one of them waits for it rather than compiling it again).
 */
export function warmUpPipelineGroup(key: string): void {
  if (!kernelBuildCache.installed || !deviceFlags.kernelBuildCache || !deviceFlags.parallelPipelines) return;
  const { sources, translations: stored } = beginPipelineGroup(key);
  // A translation is a function of its key (the kernel's source and every setting gpu.js's translation reads).
  for (const { key: k, ...t } of stored) if (!translations.has(k)) remember(translations, k, t, MAX_SHARED_TRANSLATIONS);
  if (sources.length === 0 || !acquireDevice) return;
  void acquireDevice().then((context) => {
    const { device } = context;
    if (typeof device.createComputePipelineAsync !== 'function') return;
    shareShaderModules(device);
    const before = prewarmedFor(device).codes.size;
    const made = createAhead(device, sources);
    kernelBuildCache.warmedUpPipelines += prewarmedFor(device).codes.size - before;
    return made;
  }).catch(() => undefined);
}

/** gpu.js's shared WebGPU context (set when the cache is installed). */
let acquireDevice: (() => Promise<{ device: PipelineDevice }>) | null = null;

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

/** The pipelines made ahead on `device` and kept alive (the shared cache's view, for tests and measurements). */
export function keptPipelines(device: object): unknown[] {
  const prewarmed = prewarmedOf.get(device);
  return prewarmed && prewarmed.generation === generation ? [...prewarmed.codes.values()].filter((p) => p !== null) : [];
}

/**
 * Creates, together, the pipelines of the programs the executor's compile
 * will build (for `args`, its first call's) that were not asked for ahead
 * on this device before; resolves when all are made or refused.
 */
export async function prewarmPipelines(executor: CompilingExecutor, args: unknown[], device: PipelineDevice): Promise<void> {
  const prewarmed = prewarmedFor(device);
  const t = performance.now();
  const programs = plannedPrograms(executor, args, device, prewarmed.planned);
  const fresh = programs.filter((p) => !prewarmed.codes.has(pipelineKey(p)));
  // Those asked for ahead by a warm-up and still being made are waited for, not created again by the compile.
  await Promise.all([createAhead(device, fresh), creationsInFlight(device, programs)]);
  kernelBuildCache.prewarmedPipelines += fresh.length;
  kernelBuildCache.prewarmMs += performance.now() - t;
}

/**
 * Shares translations and shader modules between gpu.js's WebGPU kernel
 * builds (idempotent). Returns false, changing nothing, when gpu.js is not
 * the version this was written for or its kernel class lacks a method this
 * wraps.
 */
export function installKernelBuildCache(): boolean {
  if (kernelBuildCache.installed) return true;
  let proto: TranslatingKernel & { _buildAsync(): Promise<void>; _ensureOutputBuffer(): void };
  let acquire: () => Promise<{ device: PipelineDevice }>;
  let executorProto: CompilingExecutor;
  try {
    proto = gpuJsInternal<{ WebGPUKernel: { prototype: typeof proto } }>('web-gpu/kernel').WebGPUKernel.prototype;
    executorProto = gpuJsInternal<{ WebGPUPipelineExecutor: { prototype: CompilingExecutor } }>('web-gpu/pipeline-executor').WebGPUPipelineExecutor.prototype;
    const { WebGPUContext } = gpuJsInternal<{ WebGPUContext: { acquire(): Promise<{ device: PipelineDevice }> } }>('web-gpu/context');
    acquire = () => WebGPUContext.acquire();
  } catch {
    return false;
  }
  const wraps = [proto.translateSource, proto._buildAsync, proto._ensureOutputBuffer, executorProto._compile, executorProto._representativeArgs, executorProto._prepareKernel];
  if (!isWrappedGpuJsRelease() || wraps.some((f) => typeof f !== 'function')) return false;
  const translate = proto.translateSource;
  proto.translateSource = function (this: TranslatingKernel) {
    if (!adaptsFor(this)) return translate.call(this);
    translateShared(this, () => translate.call(this));
  };
  const buildAsync = proto._buildAsync;
  proto._buildAsync = async function (this: BuildingKernel) {
    if (!adaptsFor(this)) return buildAsync.call(this);
    // The build acquires the same shared context first thing; a failure there is left to it to report.
    const context = await acquire().catch(() => null);
    const built = builtSource(this);
    if (context) {
      shareShaderModules(context.device);
      // gpu.js creates its pipeline synchronously: one a warm-up asked for is waited for, then handed over by Dawn.
      const wait = built ? creationsInFlight(context.device, [built]) : null;
      if (wait) {
        kernelBuildCache.buildsAwaitingWarmUp++;
        await wait;
      }
    }
    await buildAsync.call(this);
    if (built && deviceFlags.kernelBuildCache) recordPipeline(built);
  };
  acquireDevice = acquire;
  const ensureOutputBuffer = proto._ensureOutputBuffer;
  proto._ensureOutputBuffer = function (this: object) {
    // Only a build's call can come while the kernel is in buildingForPlan: a plan's kernels never run on their own.
    if (buildingForPlan.has(this)) return;
    ensureOutputBuffer.call(this);
  };
  const prepareKernel = executorProto._prepareKernel;
  executorProto._prepareKernel = async function (this: CompilingExecutor, kernel: object, reps: unknown[]) {
    if (!adaptsFor(this)) return prepareKernel.call(this, kernel, reps);
    buildingForPlan.add(kernel);
    try {
      await prepareKernel.call(this, kernel, reps);
    } finally {
      buildingForPlan.delete(kernel);
    }
  };
  const compile = executorProto._compile;
  executorProto._compile = async function (this: CompilingExecutor, args: unknown[]) {
    if (deviceFlags.kernelBuildCache && deviceFlags.parallelPipelines && adaptsFor(this)) {
      try {
        const { device } = await acquire();
        shareShaderModules(device);
        if (typeof device.createComputePipelineAsync === 'function') await prewarmPipelines(this, args, device);
      } catch {
        // Left to the compile, which builds as without the prewarm and reports its own errors.
      }
    }
    return compile.call(this, args);
  };
  kernelBuildCache.installed = true;
  return true;
}
