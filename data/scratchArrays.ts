/** A typed array's class, as `new` needs it. */
export interface ArrayKind<T extends ArrayLike<number>> {
  new (length: number): T;
}

/**
 * Typed arrays that one thread builds one piece of work after another in
 * (a strip thread's strips: stereo/stripWorker.ts), kept by slot and grown
 * to the largest length asked of each (and a quarter more), so that the
 * work allocates nothing once the thread has seen its largest piece. A
 * thread that allocates little collects its garbage seldom (V8 frees an
 * array's memory only at a collection), so what a piece of work dropped
 * would otherwise stay in the thread's memory for several matches.
 *
 * Invariant: an array handed out is valid until its slot is asked for
 * again; one user at a time.
 */
export class ScratchArrays {
  private readonly slots = new Map<string, ArrayLike<number>>();

  /** Slot `slot` as `length` entries of `kind` (contents undefined): a view of the slot's array. */
  array<T extends Int32Array | Uint16Array | Uint8Array | Float64Array>(slot: string, kind: ArrayKind<T>, length: number): T {
    let a = this.slots.get(slot) as T | undefined;
    if (a === undefined || a.constructor !== kind || a.length < length) {
      a = new kind(Math.ceil(1.25 * length));
      this.slots.set(slot, a);
    }
    return a.subarray(0, length) as T;
  }
}
