import type { KernelOutput } from 'gpu.js';
import type { FusedExecutor } from '../runtime/gpujs/onePassCalls';
import { ResidentBuffers, type BufferLike } from '../runtime/gpujs/residentCalls';
import { flattenState } from '../maxflow/pushRelabel';

/**
 * Where the device moves keep edge flows between calls. A move's flows are
 * [W, H, 2] floats (8·W·H bytes): any flows give a valid preflow of a move's
 * graph once clamped (initStateSource), so which flows a move starts from
 * changes where push-relabel starts, never the cut it ends with.
 */

/**
 * The flows on the host (the host-driven move loop): each α's last
 * converged flows (warmStart), the last converged move's (borrowFlows),
 * the flows a move that did not converge had reached (resume), and zeros
 * (a cold start).
 */
export class HostFlows {
  private readonly store: Array<Float32Array | undefined>;
  private lastConverged?: Float32Array;
  private carriedFlows?: Float32Array;

  /** `zeros`: all-zero flows of the grid (empty when the plans take no flows), which this store only reads (the program's: deviceProgram.ts programHostArrays). */
  constructor(private readonly W: number, private readonly H: number, labels: number, o: { warmStart: boolean }, readonly zeros: Float32Array) {
    this.store = new Array<Float32Array | undefined>(o.warmStart ? labels : 0);
  }

  /** The flows the move in progress had reached (resume), made at the first move that did not converge. */
  get carried(): Float32Array {
    return (this.carriedFlows ??= new Float32Array(2 * this.W * this.H));
  }

  /** α's last converged flows, if kept. */
  of(alpha: number): Float32Array | undefined {
    return this.store[alpha];
  }

  /** The last converged move's flows, if kept. */
  get last(): Float32Array | undefined {
    return this.lastConverged;
  }

  /** Every kept α's flows moved as `moves` says (flowShiftMoves), in place. */
  shift(moves: readonly FlowMove[]): void {
    for (const f of new Set(this.store)) {
      if (!f) continue;
      for (const m of moves) f.copyWithin(m.to, m.from, m.from + m.length);
    }
  }

  /** α's move converged with `flows` (as read back): they start α's next move, and borrowing moves. */
  keep(alpha: number, flows: KernelOutput): void {
    const store = this.store[alpha] ?? new Float32Array(2 * this.W * this.H);
    this.store[alpha] = flattenState(flows, this.W, this.H, store, 0, 2);
    this.lastConverged = this.store[alpha];
  }

  /** The move in progress reached `flows` (as read back) without converging: its next call continues from them. */
  carry(flows: KernelOutput): void {
    flattenState(flows, this.W, this.H, this.carried, 0, 2);
  }
}

/**
 * The flows on the device (resident moves): each α's last converged flows,
 * the last converged move's, and zeros, in buffers of one ResidentBuffers
 * made on the device of the first executor that needs them.
 */
export class DeviceFlows {
  private buffers?: ResidentBuffers;
  private readonly perAlpha: Array<BufferLike | undefined> = [];
  private lastConverged?: BufferLike;
  private zeroFlows?: BufferLike;

  /** `bytes`: one move's flows. */
  constructor(readonly bytes: number) {}

  /** The buffers, made on `ex`'s device the first time. */
  open(ex: FusedExecutor): ResidentBuffers {
    if (!this.buffers) {
      this.buffers = new ResidentBuffers(ResidentBuffers.deviceOf(ex));
      this.zeroFlows = this.buffers.zeros(this.bytes);
    }
    return this.buffers;
  }

  /** The buffers (after open), which the resident calls' other device buffers (their labels) come from too. */
  get residency(): ResidentBuffers {
    return this.buffers!;
  }

  /** α's last converged flows, if any. */
  of(alpha: number): BufferLike | undefined {
    return this.perAlpha[alpha];
  }

  /** The last converged move's flows, if any. */
  get last(): BufferLike | undefined {
    return this.lastConverged;
  }

  /** Zero flows (after open). */
  get zeros(): BufferLike {
    return this.zeroFlows!;
  }

  /** A buffer for a call's final flows. */
  take(): BufferLike {
    return this.buffers!.take(this.bytes);
  }

  /** A buffer from take() that no call will read again is free (commands already submitted still see what it held). */
  give(buffer: BufferLike): void {
    this.buffers!.give(buffer, this.bytes);
  }

  /** α's move converged, leaving its flows in `flows`: they start α's next move, and borrowing moves; those they replace are free. */
  keep(alpha: number, flows: BufferLike): void {
    const old = this.perAlpha[alpha];
    this.perAlpha[alpha] = flows;
    this.lastConverged = flows;
    if (old) this.give(old);
  }

  /** Every kept α's flows moved as `moves` says (flowShiftMoves): each into a new buffer, the old given back. */
  shift(moves: readonly FlowMove[]): void {
    if (!this.buffers) return;
    const moved = new Map<BufferLike, BufferLike>();
    const copies: Array<readonly [BufferLike, BufferLike, number, number, number]> = [];
    for (const from of this.perAlpha) {
      if (!from || moved.has(from)) continue;
      const to = this.take();
      moved.set(from, to);
      // The flows where they were first, so the rows and columns that nothing moves into keep theirs (any flows are a valid start).
      copies.push([from, to, 0, 0, this.bytes]);
      for (const m of moves) copies.push([from, to, 4 * m.from, 4 * m.to, 4 * m.length]);
    }
    this.buffers.copy(copies);
    this.perAlpha.forEach((b, alpha) => { if (b) this.perAlpha[alpha] = moved.get(b); });
    if (this.lastConverged) this.lastConverged = moved.get(this.lastConverged);
    for (const old of moved.keys()) this.give(old);
  }

  /** Frees every buffer (the solver is disposed). */
  destroy(): void {
    this.buffers?.destroy();
    this.buffers = undefined;
  }
}

/** One contiguous move of flow values: `length` values from index `from` to index `to` (of one move's flows). */
export interface FlowMove { from: number; to: number; length: number }

/**
 * The moves that shift a move's flows ([2, views·H, W]: the right-edge
 * plane, then the down-edge plane; the views stacked by rows) by (dx, dy)
 * pixels in every view, a mirrored view (the second) by −dx, as
 * warmStart.ts's shiftedLabels shifts labels: the flow of the edge at p
 * goes to the edge at p + (dx, dy). Within a view's plane a shift is one
 * contiguous move by dy·W + dx values; the values that cross a row's end
 * land on the next row's first edges, which is harmless (any flows are a
 * valid start once clamped to the graph's capacities) and touches only the
 * |dx| edges at each row's ends.
 */
export function flowShiftMoves(W: number, H: number, views: number, dx: number, dy: number): FlowMove[] {
  const moves: FlowMove[] = [];
  const n = W * H;
  for (let plane = 0; plane < 2; plane++) {
    for (let v = 0; v < views; v++) {
      const base = plane * views * n + v * n;
      const s = dy * W + (v === 1 ? -dx : dx);
      if (Math.abs(s) >= n) continue;
      moves.push(s >= 0 ? { from: base, to: base + s, length: n - s } : { from: base - s, to: base, length: n + s });
    }
  }
  return moves;
}
