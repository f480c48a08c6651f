/**
 * Kernel builds shared between the plans of a process, on WebGPU.
 *
 * Every plan (a gpu.js pipeline) runs on private clones of the solver's
 * kernels, and gpu.js 2.24.1 builds each clone from scratch: it translates
 * the kernel's JavaScript to WGSL (web-gpu/kernel.js, translateSource) and
 * compiles the WGSL into a new shader module (_buildAsync). The clones of
 * one kernel give the same WGSL in every plan, so a run rebuilt the same
 * 17–19 sources 51, 119 and 190 times on tsukuba, teddy and Adirondack
 * (gpuBench `host`, BENCHMARKS.md): 2–6 ms of translation and 1.2–2 ms of
 * shader module a build on the H200 machine's host.
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
 * (gpuWorkgroupSize.ts) applies as before.
 */

/** The gpu.js release whose kernel build this shares. */
export const BUILD_CACHE_GPU_JS_VERSION = '2.24.1';

/** Shader modules kept per device; beyond this the oldest is dropped (a run uses about 20). */
export const MAX_SHARED_MODULES = 512;
/** Translations kept; beyond this the oldest is dropped. */
export const MAX_SHARED_TRANSLATIONS = 512;

/** Switch and counters. `enabled` may change at any time (gpuBench compares both). */
export const kernelBuildCache = {
  enabled: true,
  installed: false,
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
 * The key of a kernel's translation, or null when it is not shared: a
 * source that is not a string, helper or native functions, sub-kernels,
 * plugins, or a constant that is not a number or boolean.
 */
export function translationKey(k: TranslatingKernel): string | null {
  if (typeof k.source !== 'string') return null;
  if (present(k.functions) || present(k.nativeFunctions) || present(k.injectedNative) || present(k.subKernels) || present(k.plugins)) return null;
  const constants = k.constants ?? {};
  for (const v of Object.values(constants)) if (typeof v !== 'number' && typeof v !== 'boolean') return null;
  return JSON.stringify([
    k.source,
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

/** Forgets every kept translation (tests, and gpuBench between its runs). */
export function clearKernelBuildCache(): void {
  translations.clear();
  generation++;
}

/** The translation of `kernel`, from the cache when an equal kernel was translated before. */
function translateShared(kernel: TranslatingKernel, translate: () => void): void {
  const key = kernelBuildCache.enabled ? translationKey(kernel) : null;
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
  remember(translations, key, { returnType: kernel.returnType, componentCount: kernel.componentCount, translatedBody: kernel.translatedBody, translatedFunctions: kernel.translatedFunctions }, MAX_SHARED_TRANSLATIONS);
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
      const shareable = kernelBuildCache.enabled && typeof descriptor?.code === 'string' && Object.keys(descriptor).length === 1;
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

/**
 * Shares translations and shader modules between gpu.js's WebGPU kernel
 * builds (idempotent). Returns false, changing nothing, when gpu.js is not
 * the version this was written for or its kernel class lacks a method this
 * wraps.
 */
export function installKernelBuildCache(): boolean {
  if (kernelBuildCache.installed) return true;
  let version: string;
  let proto: TranslatingKernel & { _buildAsync(): Promise<void> };
  let acquire: () => Promise<{ device: ModuleDevice }>;
  try {
    version = (require('gpu.js/package.json') as { version: string }).version;
    proto = (require('gpu.js/src/backend/web-gpu/kernel.js') as { WebGPUKernel: { prototype: typeof proto } }).WebGPUKernel.prototype;
    const { WebGPUContext } = require('gpu.js/src/backend/web-gpu/context.js') as { WebGPUContext: { acquire(): Promise<{ device: ModuleDevice }> } };
    acquire = () => WebGPUContext.acquire();
  } catch {
    return false;
  }
  if (version !== BUILD_CACHE_GPU_JS_VERSION || typeof proto.translateSource !== 'function' || typeof proto._buildAsync !== 'function') return false;
  const translate = proto.translateSource;
  proto.translateSource = function (this: TranslatingKernel) {
    translateShared(this, () => translate.call(this));
  };
  const buildAsync = proto._buildAsync;
  proto._buildAsync = async function (this: unknown) {
    // The build acquires the same shared context first thing; a failure there is left to it to report.
    const context = await acquire().catch(() => null);
    if (context) shareShaderModules(context.device);
    return buildAsync.call(this);
  };
  kernelBuildCache.installed = true;
  return true;
}
