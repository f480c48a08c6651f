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
 * `onePass` records a call's passes as dispatches of a single compute pass
 * (WebGPU orders the dispatches of a pass and makes each one's writes
 * visible to the next), skipping repeated pipeline and bind-group sets.
 * gpu.js opens a compute pass per step; this measures what that costs.
 */
import { createHash } from 'crypto';

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
}

interface Pass { pipeline: unknown; bindGroup: unknown; groups: number[] }
interface ParamsRecord { perCall: boolean; perCallScalars: Array<{ index: number }>; seedOffset: number | null; u32: Uint32Array; i32: Int32Array; f32: Float32Array; mirror: ArrayBuffer; paramsBuffer: unknown }
interface Region { flatLength: number; scratch: Float32Array; buffer: unknown }
interface ResultRead { kind: string; buffer: unknown; offset: number; byteLength: number }
interface ComputePass { setPipeline(p: unknown): void; setBindGroup(i: number, g: unknown): void; dispatchWorkgroups(x: number, y: number, z: number): void; end(): void }
interface Device {
  queue: { writeBuffer(b: unknown, o: number, d: ArrayBufferView | ArrayBuffer): void; submit(c: unknown[]): void };
  createCommandEncoder(): { beginComputePass(): ComputePass; copyBufferToBuffer(a: unknown, ao: number, b: unknown, bo: number, n: number): void; finish(): unknown };
}
interface Executor {
  _passes: Pass[];
  _argRegions: Map<number, Region>;
  _paramsRecords: ParamsRecord[];
  _resultReads: ResultRead[];
  _staging: { mapAsync(mode: number): Promise<void>; getMappedRange(): ArrayBuffer; unmap(): void } | null;
  _device: Device;
  _checkArguments(args: unknown[]): void;
  _writeScalar(u32: Uint32Array, i32: Int32Array, f32: Float32Array, slot: unknown, value: unknown): void;
  _shapeResults(args: unknown[], mapped: ArrayBuffer | null): unknown;
  execute(args: unknown[]): Promise<unknown>;
  _compile(args: unknown[]): Promise<void>;
}
type Method<T> = (this: T, ...a: never[]) => unknown;

const MAP_MODE_READ = 1;

function emptyProfile(): HostProfile {
  return { kernelBuilds: 0, distinctSources: 0, buildMs: 0, shaderModuleMs: 0, computePipelineMs: 0, planCompiles: 0, compileMs: 0, calls: 0, passes: 0, encodeMs: 0, waitMs: 0, argumentBytes: 0 };
}

/** The profiler, installed once per process; `onePass` may change between runs. */
export interface HostProfiler {
  onePass: boolean;
  /** The counts since the last reset. */
  take(): HostProfile;
}

let installed: HostProfiler | undefined;

export function installHostProfiler(): HostProfiler {
  if (installed) return installed;
  const { WebGPUKernel } = require('gpu.js/src/backend/web-gpu/kernel.js') as { WebGPUKernel: { prototype: Record<string, Method<{ compiledSource: string }>> } };
  const { WebGPUPipelineExecutor } = require('gpu.js/src/backend/web-gpu/pipeline-executor.js') as { WebGPUPipelineExecutor: { prototype: Executor } };
  const { WebGPUContext } = require('gpu.js/src/backend/web-gpu/context.js') as { WebGPUContext: { acquire(): Promise<{ device: object }> } };
  const { utils } = require('gpu.js/src/utils.js') as { utils: { flattenTo(a: unknown, t: Float32Array): void } };
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
  WebGPUPipelineExecutor.prototype._compile = async function (this: Executor, args: unknown[]) {
    const t = performance.now();
    await compile.call(this, args);
    p.compileMs += performance.now() - t;
    p.planCompiles++;
  };

  const execute = WebGPUPipelineExecutor.prototype.execute;
  const profiler: HostProfiler = {
    onePass: false,
    take: () => {
      const out = { ...p, distinctSources: sources.size };
      p = emptyProfile();
      sources = new Set();
      return out;
    },
  };
  WebGPUPipelineExecutor.prototype.execute = function (this: Executor, args: unknown[]) {
    const t = performance.now();
    const pending = profiler.onePass ? executeInOnePass(this, args, utils.flattenTo) : execute.call(this, args);
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

/** gpu.js's fused call (pipeline-executor.js `execute`) with every pass recorded into one compute pass. */
function executeInOnePass(ex: Executor, args: unknown[], flattenTo: (a: unknown, t: Float32Array) => void): Promise<unknown> {
  ex._checkArguments(args);
  const device = ex._device;
  for (const [index, region] of ex._argRegions) {
    const value = args[index] as { value?: unknown };
    flattenTo(value.value ?? value, region.scratch);
    device.queue.writeBuffer(region.buffer, 0, region.scratch);
  }
  for (const record of ex._paramsRecords) {
    if (!record.perCall) continue;
    for (const slot of record.perCallScalars) ex._writeScalar(record.u32, record.i32, record.f32, slot, args[slot.index]);
    if (record.seedOffset !== null) record.u32[record.seedOffset / 4] = (Math.random() * 0x100000000) >>> 0;
    device.queue.writeBuffer(record.paramsBuffer, 0, record.mirror);
  }
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  let pipeline: unknown = null;
  let bindGroup: unknown = null;
  for (const step of ex._passes) {
    if (step.pipeline !== pipeline) pass.setPipeline((pipeline = step.pipeline));
    if (step.bindGroup !== bindGroup) pass.setBindGroup(0, (bindGroup = step.bindGroup));
    pass.dispatchWorkgroups(step.groups[0], step.groups[1], step.groups[2]);
  }
  pass.end();
  for (const read of ex._resultReads) {
    if (read.kind === 'step') encoder.copyBufferToBuffer(read.buffer, 0, ex._staging, read.offset, read.byteLength);
  }
  device.queue.submit([encoder.finish()]);
  const staging = ex._staging;
  if (!staging) return Promise.resolve(ex._shapeResults(args, null));
  return staging.mapAsync(MAP_MODE_READ).then(() => {
    const values = ex._shapeResults(args, staging.getMappedRange());
    staging.unmap();
    return values;
  });
}
