/**
 * WebAssembly modules shared between the plans of a process, on gpu.js's
 * webasm backend (where the device moves run when there is no GPU).
 *
 * Every plan compiles its own modules (web-assembly/pipeline-executor.js
 * _compile calls each step kernel's _assembleModule), and the move driver
 * makes a plan per call shape and round count, on fresh clones of the same
 * kernels. So a run assembled the same few modules (the same kernel over the
 * same memory layout) over and over; assembling, the emission of every
 * function's bytecode, was most of a plan's compile.
 *
 * A module's bytes are a function of the kernel's translation and of what
 * the assembly is given. The translation is a function of its key
 * (sharedBuilds.ts translationKey: the source and every setting gpu.js's
 * translation reads, the output among them); the assembly reads the
 * translation, the output, the plan's memory layout (every argument's and
 * constant's offset and size, the output's offset, the memory's extent), the
 * cell count and whether the memory is shared. So the assembled module is
 * kept under all of them, and an equal assembly is handed the kept one: its
 * bytes are only ever read (each caller compiles its own WebAssembly.Module
 * from them). A kernel translationKey does not cover (helper functions,
 * sub-kernels, plugins, constants other than numbers and booleans) is
 * assembled as always, as is every kernel of a context whose flags turn
 * kernelBuildCache off.
 */
import { isWrappedGpuJsRelease } from './release';
import { gpuJsInternal } from './internals';
import { flagsFor } from './scope';
import { buildCacheGeneration, kernelBuildCache, remember, translationKey, type TranslatingKernel } from './sharedBuilds';

/** What gpu.js's assembly returns: the module's bytes and its memory's page limits. */
interface AssembledModule {
  bytes: Uint8Array;
  initial: number;
  maximum: number;
}

type Assemble = (this: TranslatingKernel, layout: unknown, cells: number, shared: boolean) => AssembledModule;

/** Modules kept at most: a run of the defaults assembles a few dozen distinct ones, each a few kilobytes. */
export const MAX_ASSEMBLED_MODULES = 512;

const assembled = new Map<string, AssembledModule>();
let assembledGeneration = -1;

/** Replaces the webasm kernels' assembly with the shared one; false when gpu.js lacks the member. */
export function installWebAssemblyModules(): boolean {
  let proto: { _assembleModule: Assemble };
  try {
    proto = gpuJsInternal<{ WebAssemblyKernel: { prototype: typeof proto } }>('web-assembly/kernel').WebAssemblyKernel.prototype;
  } catch {
    return false;
  }
  if (!isWrappedGpuJsRelease() || typeof proto._assembleModule !== 'function') return false;
  const assemble = proto._assembleModule;
  proto._assembleModule = function (this: TranslatingKernel, layout: unknown, cells: number, shared: boolean): AssembledModule {
    const translation = flagsFor(this)?.kernelBuildCache ? translationKey(this) : null;
    if (translation === null) return assemble.call(this, layout, cells, shared);
    // clearKernelBuildCache empties this cache too.
    if (assembledGeneration !== buildCacheGeneration()) {
      assembled.clear();
      assembledGeneration = buildCacheGeneration();
    }
    const key = JSON.stringify([translation, layout, cells, shared]);
    const kept = assembled.get(key);
    if (kept) {
      kernelBuildCache.assemblyHits++;
      return kept;
    }
    kernelBuildCache.assemblyMisses++;
    const made = assemble.call(this, layout, cells, shared);
    remember(assembled, key, made, MAX_ASSEMBLED_MODULES);
    return made;
  };
  return true;
}
