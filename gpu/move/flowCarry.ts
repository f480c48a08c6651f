import { flowShiftMoves, type DeviceFlows, type FlowMove, type HostFlows } from './flowStores';

/**
 * Flows carried from one device move solver to the next of the same shape:
 * dynamic cuts across the frames of a sequence (Kohli & Torr). A disposed
 * GpuMoveSolver given a carry leaves its per-label flows here (on the host,
 * and on the device when its cycles ran resident) instead of freeing them,
 * and the next solver given the same carry starts each α's first move from
 * the flows α's last move of the previous frame ended with. Any flows are a
 * valid preflow of a move's graph once clamped to its capacities
 * (initStateSource), so this changes where push-relabel starts, never the
 * cut: a frame's labels are those of a cold start from the same labels.
 *
 * One argument, no process state: whoever holds the carry (the sequence
 * driver, stereo/sequence.ts) decides what it lives for, and drop() frees
 * the device buffers when it is done or when a frame starts afresh.
 */
export class FlowCarry {
  private shape?: string;
  private host?: HostFlows;
  private device?: DeviceFlows;
  /** The shift the next taker applies (shift()), as moves of one move's flows. */
  private moves?: FlowMove[];

  /** A solver disposed with these flows, of grid and settings `shape` (gpuFlowShape); what was held before is freed. */
  keep(shape: string, host: HostFlows | undefined, device: DeviceFlows | undefined): void {
    if (device !== this.device) this.device?.destroy();
    this.shape = shape;
    this.host = host;
    this.device = device;
    this.moves = undefined;
  }

  /**
   * The frame starts from the previous labels shifted by (dx, dy) pixels
   * (warmStart.ts): the flows go with them, in every view of a W × H grid
   * of `views` views (the mirrored one by −dx), when a solver takes them.
   */
  shift(W: number, H: number, views: number, dx: number, dy: number): void {
    this.moves = dx === 0 && dy === 0 ? undefined : flowShiftMoves(W, H, views, dx, dy);
  }

  /** The host flows, when they are of `shape` (taken: the carry no longer holds them). */
  takeHost(shape: string): HostFlows | undefined {
    if (shape !== this.shape) return undefined;
    const h = this.host;
    this.host = undefined;
    if (h && this.moves) h.shift(this.moves);
    return h;
  }

  /** The device flows, when they are of `shape` (taken: the taker frees them). */
  takeDevice(shape: string): DeviceFlows | undefined {
    if (shape !== this.shape) return undefined;
    const d = this.device;
    this.device = undefined;
    if (d && this.moves) d.shift(this.moves);
    return d;
  }

  /** Forgets the flows and frees their device buffers (a frame that starts afresh, the end of a sequence). */
  drop(): void {
    this.device?.destroy();
    this.device = undefined;
    this.host = undefined;
    this.shape = undefined;
    this.moves = undefined;
  }
}

/** The key under which a solver's flows fit another's: the grid, the labels, and the store's layout. */
export function gpuFlowShape(W: number, H: number, L: number, o: { warmStart: boolean; flowsInOut: boolean; resume: boolean }): string {
  return `${W}x${H}x${L} warm ${o.warmStart} io ${o.flowsInOut} resume ${o.resume}`;
}
