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
  'web-assembly/kernel': 'gpu.js/src/backend/web-assembly/kernel.js',
  utils: 'gpu.js/src/utils.js',
  pipeline: 'gpu.js/src/pipeline.js',
  'cpu/function-node': 'gpu.js/src/backend/cpu/function-node.js',
} as const;

export type GpuJsModule = keyof typeof MODULES;

/**
 * gpu.js's WebGL family: the modules its entry (index.js, gpu.js) requires
 * and nothing else of the release does, each with the export names the
 * entry reads from it.
 */
const WEBGL_MODULES: Record<string, readonly string[]> = {
  'gpu.js/src/backend/gl/kernel.js': ['GLKernel'],
  'gpu.js/src/backend/web-gl/kernel.js': ['WebGLKernel'],
  'gpu.js/src/backend/web-gl/function-node.js': ['WebGLFunctionNode'],
  'gpu.js/src/backend/web-gl/kernel-value-maps.js': ['kernelValueMaps'],
  'gpu.js/src/backend/web-gl2/kernel.js': ['WebGL2Kernel'],
  'gpu.js/src/backend/web-gl2/function-node.js': ['WebGL2FunctionNode'],
  'gpu.js/src/backend/web-gl2/kernel-value-maps.js': ['kernelValueMaps'],
  'gpu.js/src/backend/headless-gl/kernel.js': ['HeadlessGLKernel'],
};

/** A WebGL backend that is never available: what gpu.js asks of a backend before it would use one. */
class UnavailableBackend {
  static get isSupported(): boolean {
    return false;
  }
  static isContextMatch(): boolean {
    return false;
  }
}

/**
 * Enters stand-ins for gpu.js's WebGL modules in Node's module cache, so
 * that gpu.js, required after this, does not load them (nor anything only
 * they load). Only for the release the adaptations mirror, and only where
 * gpu.js has not been loaded yet; returns whether the stand-ins are in.
 * Each stand-in's classes say they are unsupported, which is what the real
 * ones say in Node: WebGL needs a browser, and headless-gl (the `gl`
 * package) is not installed. The modes this project asks for (webgpu,
 * webasm, cpu) never consult them.
 */
export function leaveOutWebGlBackends(): boolean {
  if (!isWrappedGpuJsRelease() || require.cache[require.resolve('gpu.js')]) return false;
  const ModuleClass = require('module') as { new (id: string): NodeModule };
  const entries: Array<[string, NodeModule]> = [];
  for (const [request, names] of Object.entries(WEBGL_MODULES)) {
    let file: string;
    try {
      file = require.resolve(request);
    } catch {
      return false;
    }
    if (require.cache[file]) return false;
    const m = new ModuleClass(file);
    m.filename = file;
    m.loaded = true;
    m.exports = Object.fromEntries(names.map((n) => [n, n === 'kernelValueMaps' ? {} : class extends UnavailableBackend {}]));
    entries.push([file, m]);
  }
  for (const [file, m] of entries) require.cache[file] = m;
  return true;
}

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
