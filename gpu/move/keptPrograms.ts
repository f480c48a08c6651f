/**
 * Device programs kept between solvers of the same shape, in a store that
 * its owner holds (a Matcher, a SequenceMatcher, a command's loop over
 * scenes): solvers given the same store share programs; a solver given
 * none releases its program when it is disposed. Nothing is kept for the
 * process as a whole.
 *
 * A GPU solver's kernels and compiled plans depend on the energy's shape
 * and on the device options, never on the energy's values: those reach the
 * plans as constant inputs (gpu/runtime/gpujs/sharedLiterals.ts) whose contents can be
 * replaced. Compiling them is a large part of a short run (a third of
 * tsukuba's moves). So a disposed solver hands its program to its store,
 * and the next solver of the same shape (a pair matched again, a parameter
 * sweep, the frames of a sequence, teddy then cones) takes it instead of
 * compiling its own.
 *
 * A program is taken by one solver at a time: taking removes it, disposing
 * gives it back. A store keeps at most MAX_KEPT_PROGRAMS (one); the oldest
 * beyond it is released. `release` frees them all.
 *
 * The key holds the context's device flags (deviceProgram.ts
 * acquireProgram: deviceFlagsKey), so a program is only ever taken by a
 * solver whose context has the flags of the one that built it; a context
 * with keptPrograms off neither takes nor keeps one.
 */

import type { DeviceFlags } from '../runtime/deviceFlags';

/** Programs a store keeps at once: a program holds the device buffers of all its plans. */
const MAX_KEPT_PROGRAMS = 1;

interface Kept {
  program: unknown;
  release: () => void;
}

export class ProgramStore {
  /** Kept programs by shape key, oldest first. */
  private readonly kept = new Map<string, Kept>();

  /** The program kept under `key`, removed from the store (the caller owns it now), or undefined; none for a context whose `flags` have keptPrograms off. */
  take<T>(key: string, flags: DeviceFlags): T | undefined {
    if (!flags.keptPrograms) return undefined;
    const found = this.kept.get(key);
    if (!found) return undefined;
    this.kept.delete(key);
    return found.program as T;
  }

  /**
   * Keeps `program` under `key` for the next solver of that shape; `release`
   * frees it when it is dropped (beyond MAX_KEPT_PROGRAMS, replaced by a program of
   * the same key, or by release()). With keptPrograms off in
   * `flags` (the program's context's), releases it at once.
   */
  keep(key: string, program: unknown, release: () => void, flags: DeviceFlags): void {
    if (!flags.keptPrograms) {
      release();
      return;
    }
    const old = this.kept.get(key);
    if (old) {
      this.kept.delete(key);
      if (old.program !== program) old.release();
    }
    this.kept.set(key, { program, release });
    while (this.kept.size > MAX_KEPT_PROGRAMS) {
      const [oldest, entry] = this.kept.entries().next().value as [string, Kept];
      this.kept.delete(oldest);
      entry.release();
    }
  }

  /** Releases every kept program (their device buffers and plans). */
  release(): void {
    const all = [...this.kept.values()];
    this.kept.clear();
    for (const entry of all) entry.release();
  }

  /** Programs kept now. */
  get size(): number {
    return this.kept.size;
  }
}
