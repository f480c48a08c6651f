import { types } from 'util';
import type { Raster } from '../data/raster';

/**
 * Shared memory that a strip pool keeps for the pairs of a pyramid's finer
 * levels: the finest pair copied in once a match and every finer level
 * below it halved into it (coarseToFine.ts halfSize), so that the rows a
 * strip or a band of census codes reads are views of it on every thread
 * (levelStrips.ts cropRows) rather than copies made on the match's thread
 * and moved: a level's crops come to its pair again for each view, and at
 * camera sizes making them costs that thread more than the coarsest level's
 * own host work. Kept from one match to the next (a matcher's pairs share
 * one size), so a warm match copies into memory already mapped.
 *
 * Invariant: samples in shared memory are read by every thread and written
 * by none but the match that holds the stage, before its threads read them.
 * One match holds it at a time; another one meanwhile gets none (and crops
 * copies, as without a pool).
 */
export class PairStage {
  private arrays: Float32Array[] = [];
  private held = false;

  /** Shared arrays of `lengths` samples each (contents undefined), until release(); null while another match holds them. */
  hold(lengths: number[]): { arrays: Float32Array[]; release(): void } | null {
    if (this.held) return null;
    this.held = true;
    lengths.forEach((n, i) => {
      // Grown to the largest so far; a warm match of one size reuses them as they are.
      if ((this.arrays[i]?.length ?? -1) < n) this.arrays[i] = new Float32Array(new SharedArrayBuffer(4 * n));
    });
    return { arrays: lengths.map((n, i) => this.arrays[i].subarray(0, n)), release: () => { this.held = false; } };
  }

  /** Lets the arrays go (the pool is closing). */
  clear(): void {
    this.arrays = [];
  }
}

/** Whether a raster's samples are in shared memory (read-only to every thread: see PairStage). */
export function isShared(r: Raster): boolean {
  return types.isSharedArrayBuffer(r.data.buffer);
}

/** `r` with its samples copied into `into` (a PairStage array of its length). */
export function sharedCopy(r: Raster, into: Float32Array): Raster {
  if (into.length !== r.data.length) throw new Error(`pair stage: ${into.length} samples for a raster of ${r.data.length}`);
  into.set(r.data);
  return { ...r, data: into };
}
