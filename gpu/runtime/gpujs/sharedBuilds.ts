/**
 * The kernel build cache's shared builds (kernelBuildCache.ts gives the
 * whole): translations keyed by everything gpu.js's translation reads, and
 * a device's shader modules by their WGSL; the cache's counters, and
 * clearing it.
 */
import { DEFAULT_DEVICE_FLAGS, deviceFlagsKey, type DeviceFlags } from '../deviceFlags';
import { recordTranslation } from './pipelineStore';

/** Shader modules kept per device; beyond this the oldest is dropped (a run uses about 20). */
export const MAX_SHARED_MODULES = 512;
/** Translations kept; beyond this the oldest is dropped. */
export const MAX_SHARED_TRANSLATIONS = 512;

/** Counters, of every context in the process (the switches are the flags kernelBuildCache, parallelPipelines and keepPipelines of each kernel's context). */
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
  /** WebAssembly modules handed over from an equal assembly (webAssemblyModules.ts), and those assembled. */
  assemblyHits: 0,
  assemblyMisses: 0,
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

export interface Translation { returnType: string | null; componentCount: number; translatedBody: string; translatedFunctions: string }

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
export function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
}

const translations = new Map<string, Translation>();

/** Seeds the shared translations with stored ones (pipelineStore.ts) that are not kept yet. */
export function seedTranslations(stored: ReadonlyArray<{ key: string } & Translation>): void {
  // A translation is a function of its key (the kernel's source and every setting gpu.js's translation reads).
  for (const { key: k, ...t } of stored) if (!translations.has(k)) remember(translations, k, t, MAX_SHARED_TRANSLATIONS);
}

/** Forgets every kept translation, shader module and prewarmed pipeline (tests, and gpuBench between its runs). */
export function clearKernelBuildCache(): void {
  translations.clear();
  generation++;
}

/** The cache's generation: kept modules and pipelines of an older one were cleared (clearKernelBuildCache) and are emptied at their next use. */
export function buildCacheGeneration(): number {
  return generation;
}

/** The translation of `kernel`, from the cache when an equal kernel was translated before and `flags` (its context's) keep the cache on. */
export function translateShared(kernel: TranslatingKernel, translate: () => void, flags: DeviceFlags): void {
  // A translation is a function of its key, so kernels of any flags with the cache on share them.
  const key = flags.kernelBuildCache ? translationKey(kernel) : null;
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

/**
 * A device's shared shader modules, per flags (deviceFlagsKey: contexts
 * with different flags share none), by WGSL code; and the builds in flight
 * that will ask it for a module, by code, in the order they started
 * (claimShaderModule). A lost device's modules go with it; a generation
 * older than `generation` is emptied at its next use, which is how
 * clearKernelBuildCache reaches them.
 */
interface DeviceModules { generation: number; byFlags: Map<string, Map<string, unknown>>; claims: Map<string, Array<{ flags: DeviceFlags }>>; patched: boolean }
const modulesOf = new WeakMap<object, DeviceModules>();
let generation = 0;

function modulesFor(device: object): DeviceModules {
  let kept = modulesOf.get(device);
  if (!kept) modulesOf.set(device, (kept = { generation, byFlags: new Map(), claims: new Map(), patched: false }));
  if (kept.generation !== generation) {
    kept.byFlags.clear();
    kept.generation = generation;
  }
  return kept;
}

/**
 * The shader module of `code` on `device` for a build of `flags`: the one
 * made before for the same code and equal flags, else a new one (made by
 * the device class, so that wrappers of it see the modules made); with the
 * cache off in `flags`, always a new one.
 */
export function sharedShaderModule(device: ModuleDevice, code: string, flags: DeviceFlags): unknown {
  const kept = modulesFor(device);
  // Looked up at each call, so that wrappers of the device class (gpuBench's profiler) see the misses.
  const create = kept.patched ? (Object.getPrototypeOf(device) as ModuleDevice).createShaderModule : device.createShaderModule;
  if (!flags.kernelBuildCache) return create.call(device, { code });
  const flagsKey = deviceFlagsKey(flags);
  let modules = kept.byFlags.get(flagsKey);
  if (!modules) kept.byFlags.set(flagsKey, (modules = new Map()));
  const module = modules.get(code);
  if (module !== undefined) {
    kernelBuildCache.moduleHits++;
    return module;
  }
  const made = create.call(device, { code });
  kernelBuildCache.moduleMisses++;
  remember(modules, code, made, MAX_SHARED_MODULES);
  return made;
}

/**
 * Tells `device` that a build of `flags` is about to ask it for the module
 * of `code` (gpu.js's build calls createShaderModule({ code }) and gives no
 * other sign of whose build it is). gpu.js's build asks once, right after
 * it awaits the process's context, which the caller has already awaited:
 * so builds of one code reach the device in the order they claimed, and
 * each call takes the oldest claim of its code. Returns the release, called
 * once the build settles: it drops the claim if the build never asked (it
 * failed first). A call with no claim (a build of gpu.js outside the
 * adapted instances, the clock warm-up's shader) takes the default flags.
 */
export function claimShaderModule(device: object, code: string, flags: DeviceFlags): () => void {
  const { claims } = modulesFor(device);
  const claim = { flags };
  const queue = claims.get(code);
  if (queue) queue.push(claim);
  else claims.set(code, [claim]);
  return () => {
    const q = claims.get(code);
    const i = q ? q.indexOf(claim) : -1;
    if (i < 0) return;
    q!.splice(i, 1);
    if (q!.length === 0) claims.delete(code);
  };
}

/**
 * Makes `device` return the shader module it made before for the same WGSL
 * code and the flags of the build that asks (claimShaderModule;
 * idempotent; a device whose object takes no new property is left as it
 * is). Descriptors with anything besides `code` are passed through.
 */
export function shareShaderModules(device: ModuleDevice): void {
  if (modulesOf.get(device)?.patched || !Object.isExtensible(device)) return;
  modulesFor(device).patched = true;
  Object.defineProperty(device, 'createShaderModule', {
    configurable: true,
    writable: true,
    value(this: ModuleDevice, descriptor: { code: string }): unknown {
      const shareable = typeof descriptor?.code === 'string' && Object.keys(descriptor).length === 1;
      if (!shareable) return (Object.getPrototypeOf(device) as ModuleDevice).createShaderModule.call(device, descriptor);
      const { claims } = modulesFor(device);
      const queue = claims.get(descriptor.code);
      const claim = queue?.shift();
      if (queue?.length === 0) claims.delete(descriptor.code);
      return sharedShaderModule(device, descriptor.code, claim?.flags ?? DEFAULT_DEVICE_FLAGS);
    },
  });
}
