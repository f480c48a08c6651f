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
 * A CPU profile of two teddy runs and one of tsukuba on the H200 machine
 * put 0.37 s of the host's time in those copies alone, for 17 plans.
 *
 * The solver's literals never change after it is built, so:
 * - `bindSharedLiterals`, called inside a plan's function while gpu.js
 *   traces it, binds each of them as itself (no copy; one binding object
 *   for all its seats, so a plan has one buffer per literal);
 * - `installSharedLiterals` gives every WebGPU executor a literal table
 *   whose buffers of registered literals live outside the executor: the
 *   first plan on a device creates and fills one as gpu.js always did,
 *   later plans find it, and no executor destroys it. The solver frees
 *   them (`releaseSharedLiterals`) once its plans are gone.
 * A literal that is not registered is handled by gpu.js as before.
 */
import { isWrappedGpuJsRelease } from './gpuJsRelease';

/** Switch and counters (gpuBench compares sharing on and off). */
export const sharedLiterals = {
  enabled: true,
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

/** Whether `value` is registered (shareLiterals) and sharing is on. */
export function isSharedLiteral(value: unknown): boolean {
  return sharedLiterals.enabled && typeof value === 'object' && value !== null && registered.has(value);
}

/** What bindSharedLiterals reads of gpu.js's trace (pipeline.js, PipelineTrace). */
interface TraceLike { handleMeta: WeakMap<object, unknown> }

/**
 * Inside a plan's function while gpu.js traces it: binds each registered
 * literal of `values` as itself. gpu.js's trace looks a value up among its
 * handles before it copies it, and a handle's binding is taken as it is;
 * the binding given here is the one gpu.js makes for a literal, minus the
 * copy. Outside a trace, or with sharing off, does nothing.
 */
export function bindSharedLiterals(values: readonly object[]): void {
  if (!sharedLiterals.enabled) return;
  let trace: TraceLike | null;
  try {
    trace = (require('gpu.js/src/pipeline.js') as { getActiveTrace(): TraceLike | null }).getActiveTrace();
  } catch {
    return;
  }
  if (!trace || !(trace.handleMeta instanceof WeakMap)) return;
  for (const v of values) if (isSharedLiteral(v) && !trace.handleMeta.has(v)) trace.handleMeta.set(v, { source: 'literal', value: v });
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
    return found;
  }

  set(value: object, literal: LiteralBuffer): this {
    if (!isSharedLiteral(value) || !this.owner._device) return super.set(value, literal);
    registered.get(value)!.set(this.owner._device, literal);
    sharedLiterals.made++;
    sharedLiterals.madeBytes += literal.buffer.size ?? 0;
    return this;
  }
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
    proto = (require('gpu.js/src/backend/web-gpu/pipeline-executor.js') as { WebGPUPipelineExecutor: { prototype: ExecutorLike } }).WebGPUPipelineExecutor.prototype;
    getActiveTrace = (require('gpu.js/src/pipeline.js') as { getActiveTrace?: unknown }).getActiveTrace;
  } catch {
    return false;
  }
  if (!isWrappedGpuJsRelease() || typeof proto._compile !== 'function' || typeof getActiveTrace !== 'function') return false;
  const compile = proto._compile;
  proto._compile = function (this: ExecutorLike, args: unknown[]) {
    // The table is read and filled only while the executor compiles, and iterated (own buffers only) when it is destroyed.
    if (!(this._literalBuffers instanceof LiteralTable) && this._literalBuffers.size === 0) this._literalBuffers = new LiteralTable(this);
    return compile.call(this, args);
  };
  sharedLiterals.installed = true;
  return true;
}
