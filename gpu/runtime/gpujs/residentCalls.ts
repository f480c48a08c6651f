/**
 * Pipeline calls whose inputs and outputs stay on the device (WebGPU).
 *
 * A fused gpu.js call uploads every argument from the host and reads every
 * result back, so the next call can start only once the host has the last
 * one's results: the device idles for the readback, the host's work on the
 * results and the next upload; calls submitted back to back keep the
 * device busy instead.
 *
 * Here a call's arguments may instead be copied on the device from buffers
 * that earlier calls left there (copyBufferToBuffer into the executor's
 * argument regions, ahead of the passes), its results may be copied to
 * buffers of the caller's instead of read back, and the results that are
 * read back go to a staging buffer of the call's own. So the caller can
 * submit a call that takes the previous one's outputs before those are
 * read: WebGPU runs the command buffers of a queue in submission order, and
 * orders queue writes between them the same way.
 *
 * Works on executors that one-pass calls drive (onePassCalls.ts): it
 * reads the same members of gpu.js's executor.
 */
import { encodePasses, liveExecutor, type FusedExecutor } from './onePassCalls';

/** A WebGPU buffer as this module uses it. */
export interface BufferLike { destroy(): void; mapAsync?(mode: number, offset?: number, size?: number): Promise<void>; getMappedRange?(offset?: number, size?: number): ArrayBuffer; unmap?(): void }
interface ResidentDevice {
  createBuffer(d: { size: number; usage: number }): BufferLike;
  queue: FusedExecutor['_device']['queue'];
  createCommandEncoder(): ReturnType<FusedExecutor['_device']['createCommandEncoder']>;
}

const MAP_READ = 0x1;
const COPY_SRC = 0x4;
const COPY_DST = 0x8;

/** One call: where each argument comes from and where each result goes. */
export interface ResidentCall {
  /** Arguments written from the host, by pipeline argument index. */
  hostArgs: ReadonlyArray<readonly [number, Float32Array]>;
  /** Arguments copied on the device from a buffer: as many bytes as the argument holds, from the byte offset given (a multiple of 4), else from its start. */
  deviceArgs: ReadonlyArray<readonly [number, BufferLike] | readonly [number, BufferLike, number]>;
  /** Results (by position in the plan's results) copied to a device buffer and not read back. */
  keep: ReadonlyArray<readonly [number, BufferLike]>;
  /** Results read back, in this order. */
  read: readonly number[];
}

/** The results a call read back, as views of its mapped staging buffer; release() unmaps it (views die) and frees it for another call. */
export interface ReadResults { views: Float32Array[]; release(): void }

/**
 * Device buffers and staging buffers of one user of resident calls (a
 * solver), on one device; destroy() frees them all.
 */
export class ResidentBuffers {
  /** Buffers free for reuse, by usage and size. */
  private readonly free = new Map<string, BufferLike[]>();
  private readonly all = new Set<BufferLike>();
  private destroyed = false;

  constructor(private readonly device: ResidentDevice) {}

  /** The device of a live executor, for a new ResidentBuffers. */
  static deviceOf(ex: FusedExecutor): ResidentDevice { return ex._device as unknown as ResidentDevice; }

  /** A buffer of `bytes` that calls can copy into and from; its contents are whatever it last held (zeros when new). */
  take(bytes: number): BufferLike { return this.reuse(COPY_SRC | COPY_DST, bytes); }

  /** Gives a buffer from take() back for reuse. Commands already submitted that use it still see what they would have: later writes are ordered after them. */
  give(buffer: BufferLike, bytes: number): void { this.release(COPY_SRC | COPY_DST, bytes, buffer); }

  /** A new buffer of zeros (WebGPU zero-initialises buffers). */
  zeros(bytes: number): BufferLike { return this.create(bytes, COPY_SRC | COPY_DST); }

  /** A new buffer holding `values` (written by the queue, so ordered before any later submit). */
  holding(values: Float32Array): BufferLike {
    const b = this.create(values.byteLength, COPY_SRC | COPY_DST);
    this.device.queue.writeBuffer(b, 0, values);
    return b;
  }

  private create(bytes: number, usage: number): BufferLike {
    if (this.destroyed) throw new Error('resident buffers have been destroyed');
    const b = this.device.createBuffer({ size: Math.max(4, bytes), usage });
    this.all.add(b);
    return b;
  }

  /**
   * Submits one call of `ex` as `call` says: host arguments written, device
   * arguments copied, the plan's passes as dispatches of one compute pass,
   * kept results copied to their buffers, read results copied to a staging
   * buffer of the call's own. Resolves once the device has run it, with
   * the read results.
   */
  submit(ex: FusedExecutor, call: ResidentCall): Promise<ReadResults> {
    if (this.destroyed) throw new Error('resident buffers have been destroyed');
    if (ex.destroyed || ex.context?.isLost) throw new Error('resident call: the executor is destroyed or its device lost');
    const device = ex._device;
    for (const [index, data] of call.hostArgs) {
      const region = this.region(ex, index);
      if (data.length !== region.flatLength) throw new Error(`resident call: argument ${index} has ${data.length} values, the plan ${region.flatLength}`);
      device.queue.writeBuffer(region.buffer, 0, data);
    }
    const encoder = device.createCommandEncoder();
    for (const [index, from, offset] of call.deviceArgs) {
      const region = this.region(ex, index);
      encoder.copyBufferToBuffer(from, offset ?? 0, region.buffer, 0, 4 * region.flatLength);
    }
    encodePasses(encoder, ex);
    for (const [r, to] of call.keep) {
      const read = stepResult(ex, r);
      encoder.copyBufferToBuffer(read.buffer, 0, to, 0, read.byteLength);
    }
    // The read results packed at 16-byte offsets (copy offsets must be multiples of 4, map offsets of 8).
    const reads = call.read.map((r) => stepResult(ex, r));
    const offsets: number[] = [];
    let bytes = 0;
    for (const read of reads) {
      offsets.push(bytes);
      bytes += Math.ceil(read.byteLength / 16) * 16;
    }
    const staging = bytes > 0 ? this.reuse(MAP_READ | COPY_DST, bytes) : null;
    reads.forEach((read, i) => encoder.copyBufferToBuffer(read.buffer, 0, staging, offsets[i], read.byteLength));
    device.queue.submit([encoder.finish()]);
    if (!staging) return Promise.resolve({ views: [], release: () => undefined });
    return staging.mapAsync!(MAP_READ, 0, bytes).then(() => {
      const mapped = staging.getMappedRange!(0, bytes);
      const views = reads.map((read, i) => new Float32Array(mapped, offsets[i], read.byteLength / 4));
      let released = false;
      return {
        views,
        release: () => {
          if (released) return;
          released = true;
          staging.unmap!();
          this.release(MAP_READ | COPY_DST, bytes, staging);
        },
      };
    });
  }

  /**
   * Copies on the device, in one submission (ordered after the commands
   * submitted before it and before those after): each [from, to, fromByte,
   * toByte, bytes], in the order given, so a later copy overwrites an
   * earlier one where they meet. A copy's two buffers differ.
   */
  copy(copies: ReadonlyArray<readonly [BufferLike, BufferLike, number, number, number]>): void {
    if (this.destroyed) throw new Error('resident buffers have been destroyed');
    const encoder = this.device.createCommandEncoder();
    for (const [from, to, fromByte, toByte, bytes] of copies) if (bytes > 0) encoder.copyBufferToBuffer(from, fromByte, to, toByte, bytes);
    this.device.queue.submit([encoder.finish()]);
  }

  /**
   * The first `bytes` of `buffer` (one from take()), read back once the
   * commands submitted before have run, as f32 values set into `into`
   * (a typed array of bytes / 4 entries, converting as its set() does):
   * copied straight from the mapped range, with no array of their own.
   */
  read(buffer: BufferLike, bytes: number, into: { length: number; set(values: ArrayLike<number>): void }): Promise<void> {
    if (this.destroyed) throw new Error('resident buffers have been destroyed');
    if (into.length !== bytes / 4) throw new Error(`resident buffers: reading ${bytes} bytes into ${into.length} values`);
    const staging = this.reuse(MAP_READ | COPY_DST, bytes);
    const encoder = this.device.createCommandEncoder();
    encoder.copyBufferToBuffer(buffer, 0, staging, 0, bytes);
    this.device.queue.submit([encoder.finish()]);
    return staging.mapAsync!(MAP_READ, 0, bytes).then(() => {
      into.set(new Float32Array(staging.getMappedRange!(0, bytes)));
      staging.unmap!();
      this.release(MAP_READ | COPY_DST, bytes, staging);
    });
  }

  /** Frees every buffer made here (calls still in flight complete first: WebGPU defers a destroy until then). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const b of this.all) b.destroy();
    this.all.clear();
    this.free.clear();
  }

  /** A free buffer of this usage and size, or a new one. */
  private reuse(usage: number, bytes: number): BufferLike {
    return this.free.get(`${usage}:${bytes}`)?.pop() ?? this.create(bytes, usage);
  }

  private release(usage: number, bytes: number, b: BufferLike): void {
    if (this.destroyed) return;
    const key = `${usage}:${bytes}`;
    let pool = this.free.get(key);
    if (!pool) this.free.set(key, (pool = []));
    pool.push(b);
  }

  private region(ex: FusedExecutor, index: number): { flatLength: number; buffer: unknown } {
    const region = ex._argRegions.get(index);
    if (!region) throw new Error(`resident call: the plan has no array argument ${index}`);
    return region;
  }
}

/** The buffer that holds result `r` of `ex`'s last call until its next one: an argument of a call submitted before then can be copied from it. */
export function resultBuffer(ex: FusedExecutor, r: number): BufferLike {
  return stepResult(ex, r).buffer as BufferLike;
}

/** Result `r` of `ex`'s plan, which must be a step's output (a buffer of the executor's). */
function stepResult(ex: FusedExecutor, r: number): { buffer: unknown; byteLength: number } {
  const read = ex._resultReads[r];
  if (!read || read.kind !== 'step') throw new Error(`resident call: result ${r} of the plan is not a step output`);
  return read;
}

/** What a compile reads of a gpu.js pipeline (pipeline.js). */
interface CompilablePipeline { plan?: unknown; _executor?: unknown; destroyed: boolean; _inFlight: number; _buildPlan(): unknown; _prepareExecutor(args: unknown[]): Promise<void> | void }

/**
 * The live one-pass executor of `pipe` (a gpu.js pipeline from
 * createPipeline), compiled for `args` (shaped as its calls will be) when
 * it has none yet, without running a call; null when there is none to be
 * had (not WebGPU, one-pass calls off, or gpu.js fell back).
 */
export async function compiledExecutor(pipe: unknown, args: unknown[]): Promise<FusedExecutor | null> {
  const live = liveExecutor(pipe);
  if (live) return live;
  const pipeline = (pipe as { pipeline?: CompilablePipeline } | null)?.pipeline;
  if (!pipeline || pipeline.destroyed || pipeline._inFlight !== 0 || pipeline._executor === false) return null;
  if (typeof pipeline._buildPlan !== 'function' || typeof pipeline._prepareExecutor !== 'function') return null;
  if (!pipeline.plan) {
    pipeline.plan = pipeline._buildPlan();
    pipeline._executor = undefined;
  }
  if (pipeline._executor === undefined) await pipeline._prepareExecutor(args);
  return liveExecutor(pipe);
}
