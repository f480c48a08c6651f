/**
 * Where the host's time goes in gpu.js's WebGPU backend, for gpuBench's
 * `host` section. gpu.js reports none of it, so this wraps four of its
 * internal methods (gpu.js 2.24.1; a measurement tool, never used by the
 * solver): a kernel's device build (WGSL → shader module → compute
 * pipeline), a plan's compile by the fused executor, and the executor's
 * call, split at its submit: before it, the arguments' upload and the
 * recording of every pass; after it, the wait for the device and the
 * readback.
 *
 * Calls recorded ahead (the solver's recordAhead option) are counted apart:
 * their recording happens outside the calls, while the device runs another.
 *
 * Both ways of recording a call are timed: the solver's
 * (gpu/runtime/gpujs/onePassCalls.ts: every step a dispatch of one compute
 * pass) and gpu.js's own (a compute pass per step), which a run gets with
 * the device flag onePassCalls off (gpuBench passes it per run).
 */
import { createHash } from 'crypto';
import { kernelBuildCache } from '../gpu/runtime/gpujs/kernelBuildCache';
import { sharedLiterals } from '../gpu/runtime/gpujs/sharedLiterals';
import { installOnePassCalls, onePassCalls, type FusedExecutor } from '../gpu/runtime/gpujs/onePassCalls';
import { gpuJsInternal } from '../gpu/runtime/gpujs/internals';

export interface HostProfile {
  /** Kernel builds on the device, and how many distinct WGSL sources they compiled. */
  kernelBuilds: number;
  distinctSources: number;
  buildMs: number;
  shaderModuleMs: number;
  computePipelineMs: number;
  /** Fused-executor compiles (one per plan and argument signature), builds included. */
  planCompiles: number;
  compileMs: number;
  calls: number;
  passes: number;
  /** Until submit: argument upload, passes recorded, submit. */
  encodeMs: number;
  /** From submit until the results were shaped (device time, readback). */
  waitMs: number;
  argumentBytes: number;
  /** Calls recorded ahead (while the device ran another call), the time that took, and the calls that found theirs recorded. */
  recordedAhead: number;
  aheadMs: number;
  takenAhead: number;
  /** Kernel translations and shader modules taken from earlier builds (gpu/runtime/gpujs/kernelBuildCache.ts), and those made. */
  translationHits: number;
  translationMisses: number;
  moduleHits: number;
  moduleMisses: number;
  /** Pipelines created together before their plans compiled, and the time that took. */
  prewarmedPipelines: number;
  prewarmMs: number;
  /** Seats of shared literals that found their buffer made, and the buffers made, with their bytes (gpu/runtime/gpujs/sharedLiterals.ts). */
  literalHits: number;
  literalsMade: number;
  literalBytes: number;
}

type Method<T> = (this: T, ...a: never[]) => unknown;

function emptyProfile(): HostProfile {
  return { kernelBuilds: 0, distinctSources: 0, buildMs: 0, shaderModuleMs: 0, computePipelineMs: 0, planCompiles: 0, compileMs: 0, calls: 0, passes: 0, encodeMs: 0, waitMs: 0, argumentBytes: 0, recordedAhead: 0, aheadMs: 0, takenAhead: 0, translationHits: 0, translationMisses: 0, moduleHits: 0, moduleMisses: 0, prewarmedPipelines: 0, prewarmMs: 0, literalHits: 0, literalsMade: 0, literalBytes: 0 };
}

/** The profiler, installed once per process. */
export interface HostProfiler {
  /** The counts since the last reset. */
  take(): HostProfile;
}

let installed: HostProfiler | undefined;

export function installHostProfiler(): HostProfiler {
  if (installed) return installed;
  const { WebGPUKernel } = gpuJsInternal<{ WebGPUKernel: { prototype: Record<string, Method<{ compiledSource: string }>> } }>('web-gpu/kernel');
  const { WebGPUPipelineExecutor } = gpuJsInternal<{ WebGPUPipelineExecutor: { prototype: FusedExecutor & { _compile(args: unknown[]): Promise<void> } } }>('web-gpu/pipeline-executor');
  const { WebGPUContext } = gpuJsInternal<{ WebGPUContext: { acquire(): Promise<{ device: object }> } }>('web-gpu/context');
  let p = emptyProfile();
  let sources = new Set<string>();
  let deviceWrapped = false;
  const timed = (proto: Record<string, Method<unknown>>, name: string, add: (ms: number) => void): void => {
    const original = proto[name];
    proto[name] = function (this: unknown, ...a: never[]) {
      const t = performance.now();
      try {
        return original.apply(this, a);
      } finally {
        add(performance.now() - t);
      }
    };
  };

  const build = WebGPUKernel.prototype._buildAsync;
  WebGPUKernel.prototype._buildAsync = async function (this: { compiledSource: string }) {
    if (!deviceWrapped) {
      // The device's class, so that every kernel's calls are timed (one device per process).
      const proto = Object.getPrototypeOf((await WebGPUContext.acquire()).device) as Record<string, Method<unknown>>;
      timed(proto, 'createShaderModule', (ms) => { p.shaderModuleMs += ms; });
      timed(proto, 'createComputePipeline', (ms) => { p.computePipelineMs += ms; });
      deviceWrapped = true;
    }
    sources.add(createHash('sha1').update(this.compiledSource).digest('hex'));
    const t = performance.now();
    await build.call(this);
    p.buildMs += performance.now() - t;
    p.kernelBuilds++;
  };

  const compile = WebGPUPipelineExecutor.prototype._compile;
  WebGPUPipelineExecutor.prototype._compile = async function (this: FusedExecutor, args: unknown[]) {
    const t = performance.now();
    await compile.call(this, args);
    p.compileMs += performance.now() - t;
    p.planCompiles++;
  };

  // Wrapped around the solver's recording, so both ways of recording are timed.
  installOnePassCalls();
  const execute = WebGPUPipelineExecutor.prototype.execute;
  const profiler: HostProfiler = {
    take: () => {
      const c = kernelBuildCache;
      const out = { ...p, distinctSources: sources.size, recordedAhead: onePassCalls.recordedAhead, aheadMs: onePassCalls.aheadMs, takenAhead: onePassCalls.takenAhead, translationHits: c.translationHits, translationMisses: c.translationMisses, moduleHits: c.moduleHits, moduleMisses: c.moduleMisses, prewarmedPipelines: c.prewarmedPipelines, prewarmMs: c.prewarmMs, literalHits: sharedLiterals.hits, literalsMade: sharedLiterals.made, literalBytes: sharedLiterals.madeBytes };
      p = emptyProfile();
      sources = new Set();
      Object.assign(onePassCalls, { recordedAhead: 0, aheadMs: 0, takenAhead: 0 });
      Object.assign(kernelBuildCache, { translationHits: 0, translationMisses: 0, moduleHits: 0, moduleMisses: 0, prewarmedPipelines: 0, prewarmMs: 0 });
      Object.assign(sharedLiterals, { hits: 0, made: 0, madeBytes: 0 });
      return out;
    },
  };
  WebGPUPipelineExecutor.prototype.execute = function (this: FusedExecutor, args: unknown[]) {
    const t = performance.now();
    const pending = execute.call(this, args);
    const submitted = performance.now();
    p.calls++;
    p.passes += this._passes.length;
    p.encodeMs += submitted - t;
    for (const region of this._argRegions.values()) p.argumentBytes += 4 * region.flatLength;
    return pending.then((v) => {
      p.waitMs += performance.now() - submitted;
      return v;
    });
  };
  installed = profiler;
  return profiler;
}
