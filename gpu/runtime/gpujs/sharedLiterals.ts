/**
 * Constant arrays shared between the plans of a solver.
 *
 * A solver's plans (gpu.js pipelines) capture its constant inputs as
 * literals: the cost volume or the images, the smoothness weights, the
 * V table. gpu.js 2.24.1 handles a literal per plan, and more than once:
 * - the trace copies it at every kernel call that binds it (pipeline.js,
 *   bindValue → snapshotValue), so a plan held two copies of the weights
 *   and of the V table, and one of the volume (40 MB on teddy, 104 MB on
 *   Adirondack);
 * - the fused WebGPU executor then gives each copy a buffer of its own,
 *   filled through a mapping (web-gpu/pipeline-executor.js, _compile), and
 *   uploads it.
 * Those copies alone were a large share of the host's time in a run.
 *
 * A solver's literals change only between solvers (refillSharedLiteral), so:
 * - `bindSharedLiterals`, called inside a plan's function while gpu.js
 *   traces it, binds each of them as itself (no copy; one binding object
 *   for all its seats, so a plan has one buffer per literal);
 * - `installSharedLiterals` gives every WebGPU executor a literal table
 *   whose buffers of registered literals live outside the executor: the
 *   first plan on a device creates and fills one as gpu.js always did,
 *   later plans find it, and no executor destroys it. The solver frees
 *   them (`releaseSharedLiterals`) once its plans are gone.
 * A literal that is not registered is handled by gpu.js as before.
 *
 * The flag sharedLiterals is the context's: a solver whose context has it
 * off registers none of its literals (gpu/move/deviceProgram.ts), and
 * only executors of contexts with it on look literals up in the shared
 * buffers. A solver's literals are its own objects, so registration is
 * the whole of the switch for everything else here.
 */
import { isWrappedGpuJsRelease } from './release';
import { gpuJsInternal } from './internals';
import { flagsFor } from './scope';

/** Counters, of every context in the process. */
export const sharedLiterals = {
  installed: false,
  /** Seats of registered literals whose buffer a compile found made (by an earlier plan, or an earlier seat of its own), and the buffers made and filled for them, with their bytes. */
  hits: 0,
  made: 0,
  madeBytes: 0,
};

/** A literal's device buffer as gpu.js's executor keeps it. */
interface LiteralBuffer { buffer: { destroy(): void; size?: number }; dims: number[] }

/** Registered literals, with the buffer made for each on each device. */
const registered = new WeakMap<object, Map<unknown, LiteralBuffer>>();

/**
 * Registers `values` (gpu.js Inputs or arrays the caller never mutates
 * again) as literals shared by every plan that captures them.
 */
export function shareLiterals(values: readonly object[]): void {
  for (const v of values) if (!registered.has(v)) registered.set(v, new Map());
}

/** Whether `value` is registered (shareLiterals). */
export function isSharedLiteral(value: unknown): boolean {
  return typeof value === 'object' && value !== null && registered.has(value);
}

/** What bindSharedLiterals reads of gpu.js's trace (pipeline.js, PipelineTrace). */
interface TraceLike { handleMeta: WeakMap<object, unknown> }

/**
 * Inside a plan's function while gpu.js traces it: binds each registered
 * literal of `values` as itself. gpu.js's trace looks a value up among its
 * handles before it copies it, and a handle's binding is taken as it is;
 * the binding given here is the one gpu.js makes for a literal, minus the
 * copy. Outside a trace does nothing, and for a value not registered.
 */
export function bindSharedLiterals(values: readonly object[]): void {
  let trace: TraceLike | null;
  try {
    trace = gpuJsInternal<{ getActiveTrace(): TraceLike | null }>('pipeline').getActiveTrace();
  } catch {
    return;
  }
  if (!trace || !(trace.handleMeta instanceof WeakMap)) return;
  for (const v of values) if (isSharedLiteral(v) && !trace.handleMeta.has(v)) trace.handleMeta.set(v, { source: 'literal', value: v });
}

/** A device buffer (usage COPY_SRC) whose `bytes` from byte `offset` (default 0; a multiple of 4) are a literal's contents on that device. */
export interface DeviceLiteralSource { buffer: object; bytes: number; offset?: number }

/** Device sources of registered literals, by literal and device (fillSharedLiteralOnDevice). */
const deviceSources = new WeakMap<object, Map<unknown, DeviceLiteralSource>>();

interface CopyingDevice {
  createCommandEncoder(): { copyBufferToBuffer(s: unknown, so: number, d: unknown, dO: number, n: number): void; finish(): unknown };
  queue: { submit(b: unknown[]): void };
}

function copyOnDevice(device: unknown, source: DeviceLiteralSource, target: LiteralBuffer): void {
  const d = device as CopyingDevice;
  const encoder = d.createCommandEncoder();
  encoder.copyBufferToBuffer(source.buffer, source.offset ?? 0, target.buffer, 0, source.bytes);
  d.queue.submit([encoder.finish()]);
}

/**
 * Replaces the contents of a registered literal on `device` with those of
 * a buffer already on that device (a kernel's output: the census codes the
 * device computed, gpu/costs/censusKernel.ts), without a round trip
 * through the host: copied now into the literal's buffer there. When none
 * is made yet, a gpu.js Input's is made here, unmapped (WebGPU fills it
 * with zeros), so that no compile maps a buffer and copies the host's
 * values into it only to have them replaced; any other value's is made by
 * the compile that first binds it, which copies the source in then. The
 * host copy of the literal is left as it is, so the caller must make sure
 * nothing builds the literal from it: the adaptation installed
 * (sharedLiteralsInstalled) and the literal refillable
 * (canRefillSharedLiterals). Queue order puts the copy after the submits
 * that wrote `source` and before any later call; the source must stay
 * alive until the literal is released or refilled.
 */
export function fillSharedLiteralOnDevice(value: object, device: unknown, source: DeviceLiteralSource): void {
  if (!sharedLiterals.installed || !canRefillSharedLiterals([value])) throw new Error('shared literal fill on the device: the literal is not shared, or a buffer of it does not take writes');
  let sources = deviceSources.get(value);
  if (!sources) deviceSources.set(value, (sources = new Map()));
  sources.set(device, source);
  const made = registered.get(value)!.get(device) ?? makeUnmapped(value, device);
  if (made) copyOnDevice(device, source, made);
}

/**
 * A registered Input's buffer on `device`, made as gpu.js's compile makes
 * a literal's (its size and dims: web-gpu/pipeline-executor.js, _compile)
 * but unmapped and writable, and registered: the compiles bind it as
 * theirs. Undefined for a value that is not an Input, or a device that
 * makes no buffers.
 */
function makeUnmapped(value: object, device: unknown): LiteralBuffer | undefined {
  const size = (value as { size?: unknown }).size;
  const create = (device as { createBuffer?: (d: { size: number; usage: number }) => LiteralBuffer['buffer'] }).createBuffer;
  if (!Array.isArray(size) || typeof create !== 'function') return undefined;
  const dims = size.slice() as number[];
  while (dims.length < 3) dims.push(1);
  const buffer = create.call(device, { size: Math.max(4 * dims[0] * dims[1] * dims[2], 4), usage: STORAGE | COPY_DST });
  const literal: LiteralBuffer = { buffer, dims };
  registered.get(value)!.set(device, literal);
  writableBuffers.add(buffer);
  sharedLiterals.made++;
  sharedLiterals.madeBytes += buffer.size ?? 0;
  return literal;
}

/** Whether a literal's contents can come from a device buffer (fillSharedLiteralOnDevice). */
export function canFillSharedLiteralOnDevice(value: object): boolean {
  return sharedLiterals.installed && canRefillSharedLiterals([value]);
}

/**
 * Replaces the contents of a registered literal (a gpu.js Input over a
 * Float32Array) with `data`, of the same length, and writes them to every
 * device buffer made for it. WebGPU orders a queue write before any later
 * submit, so every call made after this reads the new values; no call that
 * reads the literal may be in flight. Plans kept between solvers
 * (gpu/move/keptPrograms.ts) take a new energy this way.
 */
export function refillSharedLiteral(value: { value: unknown }, data: ArrayLike<number>): void {
  const target = value.value;
  if (!(target instanceof Float32Array) || target.length !== data.length) {
    throw new Error(`shared literal refill: expected ${target instanceof Float32Array ? target.length : 'a Float32Array of'} values, got ${data.length}`);
  }
  if (!canRefillSharedLiterals([value])) throw new Error('shared literal refill: a device buffer of this literal does not take writes');
  target.set(data);
  // The host's values now hold on every device.
  deviceSources.delete(value);
  const buffers = registered.get(value);
  if (!buffers) return;
  for (const [device, literal] of buffers) {
    (device as { queue: { writeBuffer(b: unknown, o: number, d: ArrayBufferView): void } }).queue.writeBuffer(literal.buffer, 0, target);
  }
}

/**
 * Whether every value is registered and every device buffer made for it
 * takes queue writes (refillSharedLiteral): false when one is not
 * registered (its context's sharing is off) or a buffer was made without
 * COPY_DST.
 */
export function canRefillSharedLiterals(values: readonly object[]): boolean {
  for (const v of values) {
    const buffers = registered.get(v);
    if (!buffers) return false;
    for (const literal of buffers.values()) if (!writableBuffers.has(literal.buffer)) return false;
  }
  return true;
}

/**
 * Destroys the device buffers of `values` and forgets them. Call once no
 * plan that captured them can run again (after their pipelines' destroy).
 */
export function releaseSharedLiterals(values: readonly object[]): void {
  for (const v of values) {
    const buffers = registered.get(v);
    if (!buffers) continue;
    for (const b of buffers.values()) b.buffer.destroy();
    registered.delete(v);
    deviceSources.delete(v);
  }
}

/**
 * An executor's literal table: registered literals resolve to the buffer
 * made for them on the executor's device, wherever it was made; the rest
 * stay the executor's own (and are destroyed with it, as gpu.js does).
 */
class LiteralTable extends Map<object, LiteralBuffer> {
  constructor(private readonly owner: { _device: unknown }) {
    super();
  }

  get(value: object): LiteralBuffer | undefined {
    const own = super.get(value);
    if (own || !isSharedLiteral(value)) return own;
    const found = registered.get(value)!.get(this.owner._device);
    if (found) sharedLiterals.hits++;
    // Not made yet on this device: the compile creates it next, and it must take queue writes (refillSharedLiteral).
    else writableLiteralBuffers(this.owner._device);
    return found;
  }

  set(value: object, literal: LiteralBuffer): this {
    if (!isSharedLiteral(value) || !this.owner._device) return super.set(value, literal);
    registered.get(value)!.set(this.owner._device, literal);
    if (writableDevices.has(this.owner._device as object)) writableBuffers.add(literal.buffer);
    // Made from the host's values; a device source, if any, replaces them before the plan's first submit.
    const source = deviceSources.get(value)?.get(this.owner._device);
    if (source) {
      if (!writableBuffers.has(literal.buffer)) throw new Error('shared literal fill on the device: the literal\'s buffer was made without COPY_DST');
      copyOnDevice(this.owner._device, source, literal);
    }
    sharedLiterals.made++;
    sharedLiterals.madeBytes += literal.buffer.size ?? 0;
    return this;
  }
}

const STORAGE = 0x80; // GPUBufferUsage.STORAGE
const COPY_DST = 0x08; // GPUBufferUsage.COPY_DST
const writableDevices = new WeakSet<object>();
/** Literal buffers made with COPY_DST (on a device writableLiteralBuffers patched). */
const writableBuffers = new WeakSet<object>();

/**
 * Makes `device` create the buffers gpu.js fills once for a literal
 * (usage STORAGE alone, mapped at creation: web-gpu/pipeline-executor.js,
 * _compile) with COPY_DST as well, so that refillSharedLiteral can write
 * them; no other buffer is touched (idempotent; a device whose object
 * takes no new property is left as it is, and canRefillSharedLiterals
 * then says its literals cannot be refilled).
 */
function writableLiteralBuffers(device: unknown): void {
  if (typeof device !== 'object' || device === null || writableDevices.has(device) || !Object.isExtensible(device)) return;
  writableDevices.add(device);
  Object.defineProperty(device, 'createBuffer', {
    configurable: true,
    writable: true,
    value(this: object, descriptor: { usage: number; mappedAtCreation?: boolean }): unknown {
      const create = (Object.getPrototypeOf(device) as { createBuffer(d: unknown): unknown }).createBuffer;
      const literal = descriptor?.mappedAtCreation === true && descriptor.usage === STORAGE;
      return create.call(device, literal ? { ...descriptor, usage: STORAGE | COPY_DST } : descriptor);
    },
  });
}

/** The members of gpu.js's WebGPU executor this reads. */
interface ExecutorLike { _device: unknown; _literalBuffers: Map<object, LiteralBuffer>; _compile(args: unknown[]): Promise<void> }

/**
 * Makes gpu.js's WebGPU executors look registered literals up in the
 * shared buffers (idempotent). Returns false, changing nothing, when gpu.js
 * is not the version this was written for or lacks what this relies on.
 */
export function installSharedLiterals(): boolean {
  if (sharedLiterals.installed) return true;
  let proto: ExecutorLike;
  let getActiveTrace: unknown;
  try {
    proto = gpuJsInternal<{ WebGPUPipelineExecutor: { prototype: ExecutorLike } }>('web-gpu/pipeline-executor').WebGPUPipelineExecutor.prototype;
    getActiveTrace = gpuJsInternal<{ getActiveTrace?: unknown }>('pipeline').getActiveTrace;
  } catch {
    return false;
  }
  if (!isWrappedGpuJsRelease() || typeof proto._compile !== 'function' || typeof getActiveTrace !== 'function') return false;
  const compile = proto._compile;
  proto._compile = function (this: ExecutorLike, args: unknown[]) {
    // The table is read and filled only while the executor compiles, and iterated (own buffers only) when it is destroyed.
    if (flagsFor(this)?.sharedLiterals === true && !(this._literalBuffers instanceof LiteralTable) && this._literalBuffers.size === 0) this._literalBuffers = new LiteralTable(this);
    return compile.call(this, args);
  };
  sharedLiterals.installed = true;
  return true;
}
