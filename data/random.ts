/** Uniform random number in [0, 1). */
export type Rng = () => number;

/**
 * The project's one seeded generator (mulberry32): small, fast, and the same
 * sequence on every machine, so a shuffle, a synthetic scene or a failing
 * test case is reproduced from its seed alone.
 */
export function seededRandom(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
