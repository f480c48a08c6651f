import { types } from 'util';
import type { Raster } from './raster';

/** The typed arrays a stage holds. */
export type StagedArray = Uint8Array | Uint16Array | Int32Array | Float32Array;

/** A typed array's class, as `new` and `BYTES_PER_ELEMENT` need it. */
export interface StagedKind<T extends StagedArray> {
  readonly BYTES_PER_ELEMENT: number;
  new (buffer: SharedArrayBuffer): T;
}

/**
 * Shared memory that a thread pool keeps for work it sends to its threads:
 * the sender copies its inputs in once and sends views of them, instead of
 * slices made and moved anew for every task (a pyramid's finer level pairs
 * and their census codes, a median's map, marks and image). Each slot is grown to the largest
 * array asked of it so far and kept, so work of one size (a matcher's
 * pairs, a sequence's frames) copies into memory already mapped, and leaves
 * no garbage behind: a shared buffer a thread has seen is freed only once
 * every thread that saw it has collected its garbage, which a thread that
 * allocates little does seldom.
 *
 * Invariant: the stage's samples are written only by its holder, before
 * the threads it sends views to read them, and read-only to those threads.
 * One holder at a time; another meanwhile gets none (and sends copies).
 */
export class SharedStage {
  private slots: StagedArray[] = [];
  private held = false;

  /** The stage until release(), or null while another holder has it. */
  hold(): HeldStage | null {
    if (this.held) return null;
    this.held = true;
    return new HeldStage(this.slots, () => { this.held = false; });
  }

  /** Lets the arrays go (the pool is closing). */
  clear(): void {
    this.slots = [];
  }
}

/** A held SharedStage: its slots as arrays of the kinds and lengths asked. */
export class HeldStage {
  constructor(private readonly slots: StagedArray[], readonly release: () => void) {}

  /** Slot `slot` as `length` elements of `kind`, its contents whatever the last holder left. */
  array<T extends StagedArray>(slot: number, kind: StagedKind<T>, length: number): T {
    const kept = this.slots[slot];
    const fits = kept !== undefined && kept.constructor === kind && kept.length >= length;
    const a = (fits ? kept : new kind(new SharedArrayBuffer(kind.BYTES_PER_ELEMENT * length))) as T;
    this.slots[slot] = a;
    return a.subarray(0, length) as T;
  }

  /** `from` copied into slot `slot`. */
  copy<T extends StagedArray>(slot: number, from: T): T {
    const into = this.array(slot, from.constructor as StagedKind<T>, from.length);
    into.set(from);
    return into;
  }

  /** `r` in shared memory: itself when its samples are there already (a pair read for matching: data/raster.ts sharedSamples), else with them copied into slot `slot`. */
  raster(slot: number, r: Raster): Raster {
    return isShared(r) ? r : { ...r, data: this.copy(slot, r.data) };
  }
}

/** Whether a raster's samples are in shared memory (a SharedStage's: read-only to every thread). */
export function isShared(r: Raster): boolean {
  return isSharedArray(r.data);
}

/** Whether a typed array is a view of shared memory (a SharedStage's). */
export function isSharedArray(a: StagedArray): boolean {
  return types.isSharedArrayBuffer(a.buffer);
}
