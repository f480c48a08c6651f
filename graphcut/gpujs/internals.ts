/**
 * The modules of gpu.js's source tree that the adaptations in this folder
 * read or replace members of. This is the only file of the project that
 * names a path inside gpu.js (`gpu.js/src/…`); every such path belongs to the
 * release in release.ts, and the adaptations check that release first.
 */
import { isWrappedGpuJsRelease } from './release';

const MODULES = {
  'web-gpu/kernel': 'gpu.js/src/backend/web-gpu/kernel.js',
  'web-gpu/pipeline-executor': 'gpu.js/src/backend/web-gpu/pipeline-executor.js',
  'web-gpu/context': 'gpu.js/src/backend/web-gpu/context.js',
  utils: 'gpu.js/src/utils.js',
  pipeline: 'gpu.js/src/pipeline.js',
  'cpu/function-node': 'gpu.js/src/backend/cpu/function-node.js',
} as const;

export type GpuJsModule = keyof typeof MODULES;

/**
 * One of gpu.js's internal modules, typed as the caller reads it (a
 * structural type of the members it uses; the caller checks them before
 * relying on them). Throws when the module cannot be loaded.
 */
export function gpuJsInternal<T>(module: GpuJsModule): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(MODULES[module]) as T;
}

/**
 * gpu.js's WebGPU kernel prototype, typed as the caller reads it, when the
 * installed release is the one the adaptations mirror and the prototype has
 * every member in `members` as a function; null otherwise (the adaptation
 * then changes nothing).
 */
export function wrappedKernelPrototype<T extends object>(members: readonly string[]): T | null {
  let proto: T;
  try {
    proto = gpuJsInternal<{ WebGPUKernel: { prototype: T } }>('web-gpu/kernel').WebGPUKernel.prototype;
  } catch {
    return null;
  }
  if (!isWrappedGpuJsRelease() || members.some((m) => typeof (proto as Record<string, unknown>)[m] !== 'function')) return null;
  return proto;
}
