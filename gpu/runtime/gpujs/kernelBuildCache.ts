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
 *
 * Each build and compile runs with the flags of its kernel's or executor's
 * gpu.js instance (scope.ts flagsFor): kernelBuildCache, parallelPipelines,
 * keepPipelines. What is shared between contexts (shader modules, the
 * pipelines made ahead) is shared only between equal flags.
 */
import { isWrappedGpuJsRelease } from './release';
import { gpuJsInternal } from './internals';
import { flagsFor } from './scope';
import { recordPipeline, type PipelineSource } from './pipelineStore';
import { claimShaderModule, kernelBuildCache, shareShaderModules, translateShared, type TranslatingKernel } from './sharedBuilds';
import { creationsInFlight, prewarmPipelines, usePipelineDevice, type CompilingExecutor, type PipelineDevice } from './pipelinePrewarm';
import { installWebAssemblyModules } from './webAssemblyModules';

export {
  claimShaderModule, clearKernelBuildCache, kernelBuildCache, MAX_SHARED_MODULES, MAX_SHARED_TRANSLATIONS, shareShaderModules, sharedShaderModule, translationKey, type ModuleDevice, type TranslatingKernel,
} from './sharedBuilds';
export { keptPipelines, kernelLayoutEntries, prewarmPipelines, warmUpPipelineGroup, type CompilingExecutor, type PipelineDevice } from './pipelinePrewarm';

/** What a kernel's build has set before it creates its pipeline (web-gpu/kernel.js, build): the WGSL and the layout's counts. */
interface BuildingKernel { compiledSource?: unknown; paramsLayout?: { arrayArgs?: unknown[]; bufferConstants?: unknown[] } | null }

/** The pipeline a kernel's build creates, or null when its build has not set the fields this reads. */
function builtSource(k: BuildingKernel): PipelineSource | null {
  const layout = k.paramsLayout;
  if (typeof k.compiledSource !== 'string' || !Array.isArray(layout?.arrayArgs) || !Array.isArray(layout?.bufferConstants)) return null;
  return { code: k.compiledSource, arrays: layout.arrayArgs.length, constants: layout.bufferConstants.length };
}

/** Kernels being built for a plan (CompilingExecutor._prepareKernel): their build allocates no output buffer. */
const buildingForPlan = new WeakSet<object>();

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
  if (!installWebAssemblyModules()) return false;
  const translate = proto.translateSource;
  proto.translateSource = function (this: TranslatingKernel) {
    const flags = flagsFor(this);
    if (!flags) return translate.call(this);
    translateShared(this, () => translate.call(this), flags);
  };
  const buildAsync = proto._buildAsync;
  proto._buildAsync = async function (this: BuildingKernel) {
    const flags = flagsFor(this);
    if (!flags) return buildAsync.call(this);
    // The build acquires the same shared context first thing; a failure there is left to it to report.
    const context = await acquire().catch(() => null);
    const built = builtSource(this);
    let release = (): void => undefined;
    if (context) {
      shareShaderModules(context.device);
      // gpu.js creates its pipeline synchronously: one a warm-up asked for is waited for, then handed over by Dawn.
      const wait = built ? creationsInFlight(context.device, [built], flags) : null;
      if (wait) {
        kernelBuildCache.buildsAwaitingWarmUp++;
        await wait;
      }
      // Claimed with nothing awaited before the build starts: the device learns this build's flags (sharedBuilds.ts claimShaderModule).
      if (typeof this.compiledSource === 'string') release = claimShaderModule(context.device, this.compiledSource, flags);
    }
    try {
      await buildAsync.call(this);
    } finally {
      release();
    }
    if (built && flags.kernelBuildCache) recordPipeline(built);
  };
  usePipelineDevice(acquire);
  const ensureOutputBuffer = proto._ensureOutputBuffer;
  proto._ensureOutputBuffer = function (this: object) {
    // Only a build's call can come while the kernel is in buildingForPlan: a plan's kernels never run on their own.
    if (buildingForPlan.has(this)) return;
    ensureOutputBuffer.call(this);
  };
  const prepareKernel = executorProto._prepareKernel;
  executorProto._prepareKernel = async function (this: CompilingExecutor, kernel: object, reps: unknown[]) {
    if (!flagsFor(this)) return prepareKernel.call(this, kernel, reps);
    buildingForPlan.add(kernel);
    try {
      await prepareKernel.call(this, kernel, reps);
    } finally {
      buildingForPlan.delete(kernel);
    }
  };
  const compile = executorProto._compile;
  executorProto._compile = async function (this: CompilingExecutor, args: unknown[]) {
    const flags = flagsFor(this);
    if (flags?.kernelBuildCache && flags.parallelPipelines) {
      try {
        const { device } = await acquire();
        shareShaderModules(device);
        if (typeof device.createComputePipelineAsync === 'function') await prewarmPipelines(this, args, device, flags);
      } catch {
        // Left to the compile, which builds as without the prewarm and reports its own errors.
      }
    }
    return compile.call(this, args);
  };
  kernelBuildCache.installed = true;
  return true;
}
