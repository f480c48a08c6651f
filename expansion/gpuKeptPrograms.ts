/**
 * Device programs kept between solvers of the same shape in one process.
 *
 * A GPU solver's kernels and compiled plans depend on the energy's shape
 * and on the device options, never on the energy's values: those reach the
 * plans as constant inputs (graphcut/gpujs/sharedLiterals.ts) whose contents can be
 * replaced. Compiling them is a large part of a short run (a third of
 * tsukuba's moves). So a disposed solver hands its program here, and the
 * next solver of the same shape (a scene run again, a parameter sweep, the
 * frames of a sequence, teddy then cones) takes it instead of compiling
 * its own.
 *
 * A program is taken by one solver at a time: taking removes it, disposing
 * gives it back. At most MAX_KEPT_PROGRAMS (one) are kept; the oldest
 * beyond it is released. `releaseKeptPrograms` frees them all.
 *
 * The key holds the context's device flags (gpuDeviceProgram.ts
 * acquireProgram: deviceFlagsKey), so a program is only ever taken by a
 * solver whose context has the flags of the one that built it; a context
 * with keptPrograms off neither takes nor keeps one.
 */

import type { DeviceFlags } from '../graphcut/deviceFlags';

/** Programs kept at once: a program holds the device buffers of all its plans. */
const MAX_KEPT_PROGRAMS = 1;

interface Kept {
  program: unknown;
  release: () => void;
}

/** Kept programs by shape key, oldest first. */
const kept = new Map<string, Kept>();

/** The program kept under `key`, removed from the cache (the caller owns it now), or undefined; none for a context whose `flags` have keptPrograms off. */
export function takeKeptProgram<T>(key: string, flags: DeviceFlags): T | undefined {
  if (!flags.keptPrograms) return undefined;
  const found = kept.get(key);
  if (!found) return undefined;
  kept.delete(key);
  return found.program as T;
}

/**
 * Keeps `program` under `key` for the next solver of that shape; `release`
 * frees it when it is dropped (beyond MAX_KEPT_PROGRAMS, replaced by a program of
 * the same key, or by releaseKeptPrograms). With keptPrograms off in
 * `flags` (the program's context's), releases it at once.
 */
export function keepProgram(key: string, program: unknown, release: () => void, flags: DeviceFlags): void {
  if (!flags.keptPrograms) {
    release();
    return;
  }
  const old = kept.get(key);
  if (old) {
    kept.delete(key);
    if (old.program !== program) old.release();
  }
  kept.set(key, { program, release });
  while (kept.size > MAX_KEPT_PROGRAMS) {
    const [oldest, entry] = kept.entries().next().value as [string, Kept];
    kept.delete(oldest);
    entry.release();
  }
}

/** Releases every kept program (their device buffers and plans). */
export function releaseKeptPrograms(): void {
  const all = [...kept.values()];
  kept.clear();
  for (const entry of all) entry.release();
}

/** Programs kept now (for tests and reports). */
export function keptProgramCount(): number {
  return kept.size;
}
