/**
 * One compute pass per pipeline call on WebGPU.
 *
 * gpu.js's fused executor (gpu.js 2.24.1, web-gpu/pipeline-executor.js)
 * records every step of a call as a compute pass of its own: begin, set
 * pipeline, set bind group, dispatch, end. A move's call has hundreds of
 * steps, and the host's recording of a pass per step is a large part of the
 * device's own time per step. WebGPU orders the dispatches of one compute
 * pass and makes each one's writes visible to the next, so the same steps
 * can be recorded as dispatches of a single pass, with the pipeline and
 * bind group set only when they change: less host work per step, the same
 * results.
 *
 * gpu.js has no hook for this, so `installOnePassCalls` replaces the
 * executor's `execute` with the same call recorded in one pass. It does so
 * only for the gpu.js version it was written against and only when the
 * executor has the members it reads; otherwise gpu.js is left as it is.
 * The replacement is the function `callInOnePass` below, which follows
 * gpu.js's own `execute` step for step except for the recording.
 *
 * A call's recorded passes depend on its executor alone: the arguments and
 * per-call scalars reach the device through queue writes, which WebGPU
 * orders before any later submit. So the passes of an executor's next call
 * can be recorded ahead (`recordAhead`), while the device is still running
 * the current call, instead of between the two calls, when the device
 * idles. The solver records ahead the call it expects next; a call that
 * finds its passes recorded submits them as they are.
 *
 * Each call reads the flags of the gpu.js instance its executor or
 * pipeline belongs to (scope.ts flagsFor): onePassCalls and inPlaceCalls.
 */
import { isWrappedGpuJsRelease } from './release';
import { Input } from './gpuJs';
import { gpuJsInternal } from './internals';
import { flagsFor } from './scope';

/** One recorded step of a fused plan, as gpu.js's executor keeps it. */
export interface FusedPass { pipeline: unknown; bindGroup: unknown; groups: number[] }
export interface FusedParams { perCall: boolean; perCallScalars: Array<{ index: number }>; seedOffset: number | null; u32: Uint32Array; i32: Int32Array; f32: Float32Array; mirror: ArrayBuffer; paramsBuffer: unknown }
export interface FusedArgument { flatLength: number; scratch: Float32Array; buffer: unknown }
export interface FusedRead { kind: string; buffer: unknown; offset: number; byteLength: number }
export interface ComputePassLike { setPipeline(p: unknown): void; setBindGroup(i: number, g: unknown): void; dispatchWorkgroups(x: number, y: number, z: number): void; end(): void }
export interface DeviceLike {
  queue: { writeBuffer(b: unknown, o: number, d: ArrayBufferView | ArrayBuffer): void; submit(c: unknown[]): void };
  createCommandEncoder(): { beginComputePass(): ComputePassLike; copyBufferToBuffer(a: unknown, ao: number, b: unknown, bo: number, n: number): void; finish(): unknown };
}
export interface StagingLike { mapAsync(mode: number): Promise<void>; getMappedRange(): ArrayBuffer; unmap(): void }
/** The members of gpu.js's WebGPUPipelineExecutor that a call reads. */
export interface FusedExecutor {
  destroyed: boolean;
  /** The gpu.js pipeline the executor runs, and the plan's result layout. */
  pipeline?: object;
  plan?: { results: { kind: string } };
  context: { isLost?: boolean } | null;
  _passes: FusedPass[];
  _argRegions: Map<number, FusedArgument>;
  _paramsRecords: FusedParams[];
  _resultReads: FusedRead[];
  _staging: StagingLike | null;
  _device: DeviceLike;
  _checkArguments(args: unknown[]): void;
  _writeScalar(u32: Uint32Array, i32: Int32Array, f32: Float32Array, slot: unknown, value: unknown): void;
  _shapeResults(args: unknown[], mapped: ArrayBuffer | null): unknown;
  execute(args: unknown[]): Promise<unknown>;
}

const MAP_MODE_READ = 1;
const MEMBERS = ['_checkArguments', '_writeScalar', '_shapeResults', 'execute'] as const;

/** Every step of a fused plan as a dispatch of one compute pass of `encoder`, the pipeline and bind group set only when they change. */
export function encodePasses(encoder: ReturnType<DeviceLike['createCommandEncoder']>, ex: FusedExecutor): void {
  const pass = encoder.beginComputePass();
  let pipeline: unknown = null;
  let bindGroup: unknown = null;
  for (const step of ex._passes) {
    if (step.pipeline !== pipeline) {
      pipeline = step.pipeline;
      pass.setPipeline(pipeline);
    }
    if (step.bindGroup !== bindGroup) {
      bindGroup = step.bindGroup;
      pass.setBindGroup(0, bindGroup);
    }
    pass.dispatchWorkgroups(step.groups[0], step.groups[1], step.groups[2]);
  }
  pass.end();
}

/**
 * Every step of a fused plan as a dispatch of one compute pass, then the
 * results copied to the staging buffer: the commands of one call, finished.
 */
function recordCall(ex: FusedExecutor): unknown {
  const encoder = ex._device.createCommandEncoder();
  encodePasses(encoder, ex);
  const staging = ex._staging;
  for (const read of ex._resultReads) {
    if (read.kind === 'step') encoder.copyBufferToBuffer(read.buffer, 0, staging, read.offset, read.byteLength);
  }
  return encoder.finish();
}

/** Commands recorded ahead, at most one call's per executor; a call takes them (a command buffer is submitted once). */
const recordedAhead = new WeakMap<FusedExecutor, unknown>();

/**
 * A fused call with every step recorded as a dispatch of one compute pass:
 * arguments checked and written, per-call scalars written, passes recorded
 * (or taken as recorded ahead), results copied to the staging buffer, one
 * submit, one readback.
 */
export function callInOnePass(ex: FusedExecutor, args: unknown[], flattenTo: (a: unknown, t: Float32Array) => void): Promise<unknown> {
  if (ex.destroyed) throw new Error('pipeline fused executor has been destroyed');
  // A rejection, not a throw: gpu.js then drops the executor and the next call rebuilds on a fresh device.
  if (ex.context?.isLost) return Promise.reject(new Error('WebGPU device was lost; the pipeline will rebuild on a fresh device on its next call'));
  ex._checkArguments(args);
  const device = ex._device;
  for (const [index, region] of ex._argRegions) {
    const value = args[index];
    const data = value instanceof Input ? value.value : value;
    if (data instanceof Float32Array && data.length === region.flatLength) {
      // Already what gpu.js would flatten into its scratch; writeBuffer copies it at the call.
      device.queue.writeBuffer(region.buffer, 0, data);
    } else {
      flattenTo(data, region.scratch);
      device.queue.writeBuffer(region.buffer, 0, region.scratch);
    }
  }
  for (const record of ex._paramsRecords) {
    if (!record.perCall) continue;
    for (const slot of record.perCallScalars) ex._writeScalar(record.u32, record.i32, record.f32, slot, args[slot.index]);
    if (record.seedOffset !== null) record.u32[record.seedOffset / 4] = (Math.random() * 0x100000000) >>> 0;
    device.queue.writeBuffer(record.paramsBuffer, 0, record.mirror);
  }
  let commands = recordedAhead.get(ex);
  if (commands === undefined) {
    commands = recordCall(ex);
  } else {
    recordedAhead.delete(ex);
    onePassCalls.takenAhead++;
  }
  device.queue.submit([commands]);
  const staging = ex._staging;
  if (!staging) return Promise.resolve(ex._shapeResults(args, null));
  return staging.mapAsync(MAP_MODE_READ).then(() => {
    const mapped = staging.getMappedRange();
    const values = (flagsFor(ex)?.inPlaceCalls === true && ex.pipeline !== undefined && flatPipelines.has(ex.pipeline) ? flatResults(ex, mapped) : null) ?? ex._shapeResults(args, mapped);
    staging.unmap();
    return values;
  });
}

/** Pipelines whose calls return flat results (returnFlatResults). */
const flatPipelines = new WeakSet<object>();

/**
 * Makes the one-pass calls of `pipe` (a gpu.js pipeline from createPipeline)
 * return each result as one flat Float32Array in the layout of an Input of
 * its shape, instead of gpu.js's nested rows of views: the caller then
 * copies planes with a typed-array set instead of a loop over rows. Applies
 * to plans whose results are an array of step outputs; other calls return
 * what gpu.js returns.
 */
export function returnFlatResults(pipe: unknown): void {
  const pipeline = (pipe as { pipeline?: unknown } | null)?.pipeline;
  if (typeof pipeline === 'object' && pipeline !== null) flatPipelines.add(pipeline);
}

/** Each result read of the call copied out of the mapped staging range as it lies, or null when one is not a step output. */
function flatResults(ex: FusedExecutor, mapped: ArrayBuffer): Float32Array[] | null {
  if (ex.plan?.results.kind !== 'array' || ex._resultReads.some((read) => read.kind !== 'step')) return null;
  return ex._resultReads.map((read) => new Float32Array(mapped.slice(read.offset, read.offset + read.byteLength)));
}

/** What a direct call reads of a gpu.js pipeline (pipeline.js). */
interface PipelineLike {
  _executor?: unknown;
  _inFlight: number;
  _tail: Promise<unknown>;
  destroyed: boolean;
  _dropExecutor(): void;
}

/**
 * Calls `pipe` (a gpu.js pipeline from createPipeline) with `args`. gpu.js's
 * own call copies every argument first (a snapshot, since its execution
 * waits for the calls queued before it), a large share of the host's time
 * and of its garbage collection in a run. A
 * one-pass call writes its arguments to the device before it returns, so
 * when the pipeline has a live compiled WebGPU executor and no call in
 * flight, this calls the executor directly, keeping gpu.js's contract:
 * later calls queue behind this one, and a rejection drops the executor so
 * that the next call rebuilds it. Anything else, including arguments that
 * no longer fit the compiled plan, goes through gpu.js's call.
 */
export function callInPlace(pipe: (...a: unknown[]) => Promise<unknown>, args: unknown[]): Promise<unknown> {
  const pipeline = (pipe as unknown as { pipeline?: PipelineLike }).pipeline;
  const ex = liveExecutor(pipe);
  if (!ex || !pipeline || flagsFor(pipeline)?.inPlaceCalls !== true || pipeline.destroyed || pipeline._inFlight !== 0) return pipe(...args);
  let pending: Promise<unknown>;
  try {
    pending = ex.execute(args);
  } catch (e) {
    // gpu.js's call handles what its executor refuses (a recompile for drifted arguments, or the generic executor).
    if ((e as { isFusionFallback?: boolean } | null)?.isFusionFallback) return pipe(...args);
    throw e;
  }
  pipeline._inFlight++;
  const done = pending.then(undefined, (error: unknown) => {
    pipeline._dropExecutor();
    throw error;
  });
  const settle = (): void => { pipeline._inFlight--; };
  done.then(settle, settle);
  pipeline._tail = done.then(() => undefined, () => undefined);
  return done;
}

/**
 * Whether the one-pass recording is installed (it applies while
 * the flag onePassCalls of the executor's instance is on), with counts of the calls recorded ahead
 * and of those a call took, and the time spent recording ahead (for
 * gpuBench's host profile).
 */
export const onePassCalls = { installed: false, recordedAhead: 0, takenAhead: 0, aheadMs: 0 };

/** gpu.js's WebGPU executor class, once installed: recordAhead and callInPlace take its instances only. */
let executorProto: FusedExecutor | undefined;

/**
 * The compiled WebGPU executor of `pipe` (a gpu.js pipeline) when one-pass
 * calls are installed and on and it is live (not destroyed, its device not
 * lost, its passes built); else null.
 */
export function liveExecutor(pipe: unknown): FusedExecutor | null {
  if (!executorProto) return null;
  const ex = (pipe as { pipeline?: { _executor?: unknown } } | null)?.pipeline?._executor;
  if (typeof ex !== 'object' || ex === null || !executorProto.isPrototypeOf(ex) || flagsFor(ex)?.onePassCalls !== true) return null;
  const fused = ex as FusedExecutor;
  return fused.destroyed || fused.context?.isLost || !fused._passes ? null : fused;
}

/**
 * Records the passes of `pipe`'s next call now (a gpu.js pipeline from
 * createPipeline), so that the call only writes its arguments and submits.
 * Does nothing, returning false, unless one-pass calls are installed and on
 * and the pipeline runs on a live compiled WebGPU executor with nothing
 * recorded ahead yet. Meant for while the device runs another call: the
 * host idles then.
 */
export function recordAhead(pipe: unknown): boolean {
  const fused = liveExecutor(pipe);
  if (!fused || recordedAhead.has(fused)) return false;
  const t = performance.now();
  recordedAhead.set(fused, recordCall(fused));
  onePassCalls.aheadMs += performance.now() - t;
  onePassCalls.recordedAhead++;
  return true;
}

/**
 * Makes gpu.js's WebGPU executor record each call in one compute pass
 * (idempotent). Returns false, changing nothing, when gpu.js is not the
 * version this was written for or its executor lacks a member it reads.
 */
export function installOnePassCalls(): boolean {
  if (onePassCalls.installed) return true;
  let proto: FusedExecutor;
  let flattenTo: (a: unknown, t: Float32Array) => void;
  try {
    proto = gpuJsInternal<{ WebGPUPipelineExecutor: { prototype: FusedExecutor } }>('web-gpu/pipeline-executor').WebGPUPipelineExecutor.prototype;
    flattenTo = gpuJsInternal<{ utils: { flattenTo(a: unknown, t: Float32Array): void } }>('utils').utils.flattenTo;
  } catch {
    return false;
  }
  if (!isWrappedGpuJsRelease() || MEMBERS.some((m) => typeof proto[m] !== 'function')) return false;
  const execute = proto.execute;
  executorProto = proto;
  proto.execute = function (this: FusedExecutor, args: unknown[]) {
    return flagsFor(this)?.onePassCalls === true ? callInOnePass(this, args, flattenTo) : execute.call(this, args);
  };
  onePassCalls.installed = true;
  return true;
}
