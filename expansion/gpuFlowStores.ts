import type { KernelOutput } from 'gpu.js';
import type { FusedExecutor } from '../graphcut/gpujs/onePassCalls';
import { ResidentBuffers, type BufferLike } from '../graphcut/gpujs/residentCalls';
import { flattenState } from '../graphcut/pushRelabel';

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
  /** The flows the move in progress had reached (resume; empty otherwise). */
  readonly carried: Float32Array;
  /** All-zero flows (empty when the plans take no flows). */
  readonly zeros: Float32Array;

  constructor(private readonly W: number, private readonly H: number, labels: number, o: { warmStart: boolean; flowsInOut: boolean; resume: boolean }) {
    const n = W * H;
    this.store = new Array<Float32Array | undefined>(o.warmStart ? labels : 0);
    this.carried = new Float32Array(o.flowsInOut && o.resume ? 2 * n : 0);
    this.zeros = new Float32Array(o.flowsInOut ? 2 * n : 0);
  }

  /** α's last converged flows, if kept. */
  of(alpha: number): Float32Array | undefined {
    return this.store[alpha];
  }

  /** The last converged move's flows, if kept. */
  get last(): Float32Array | undefined {
    return this.lastConverged;
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

  /** Frees every buffer (the solver is disposed). */
  destroy(): void {
    this.buffers?.destroy();
    this.buffers = undefined;
  }
}
