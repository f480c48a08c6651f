/**
 * How much of the heavy property runs a test run does. By default (`npm
 * test`) each heavy test checks a smaller sample chosen to keep every kind of
 * case it covers (every graph kind, both constructions, each kernel family),
 * so that the suite stays a few minutes on two cores. STEREOCUT_FULL_TESTS=1
 * (set by .ci/run) runs them all: every kernel scheme, every size, the whole
 * real scenes.
 */
export const FULL_TESTS = process.env.STEREOCUT_FULL_TESTS === '1';

/** `full` cases under STEREOCUT_FULL_TESTS=1, else `quick`. */
export const scaled = (full: number, quick: number): number => (FULL_TESTS ? full : quick);

/** The whole list under STEREOCUT_FULL_TESTS=1, else the entries at `keep` (indices). */
export function sample<T>(all: readonly T[], keep: number[]): T[] {
  return FULL_TESTS ? [...all] : keep.map((i) => all[i]);
}

/** A test that runs only under STEREOCUT_FULL_TESTS=1 (reported as skipped otherwise, with the reason in its name). */
export const fullTest = (name: string, fn: () => Promise<void>, timeout?: number): void =>
  (FULL_TESTS ? test : test.skip)(`${name}${FULL_TESTS ? '' : ' [STEREOCUT_FULL_TESTS=1 only]'}`, fn, timeout);
