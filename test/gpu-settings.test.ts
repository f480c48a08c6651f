import { generateSyntheticScene } from '../data/synthetic';
import { match, type MatchResult } from '../stereo/match';

/**
 * The device moves' schedule knobs are an argument of the run (match()'s
 * `gpu`), not process-wide state: runs that overlap in one process with
 * different knobs each run as they would alone. On gpu.js's CPU backend,
 * the same device moves as WebGPU.
 */
describe('device settings per run', () => {
  const s = generateSyntheticScene({ width: 32, height: 24, ndisp: 6, seed: 3 });
  const options = { ndisp: 6, backend: 'gpujs-cpu' as const, cycles: 2, lrCheck: false };
  const borrowed = (r: MatchResult): number => r.cycles.reduce((n, c) => n + (c.stats.borrowedMoves ?? 0), 0);
  const rounds = (r: MatchResult): number => r.cycles.reduce((n, c) => n + (c.stats.rounds ?? 0), 0);

  test('two overlapping runs with different knobs each give what they give alone: the same labels, energies and counters', async () => {
    const off = { ...options, gpu: { borrowFlows: false, initialRounds: 1 } };
    const aloneOff = await match(s.left, s.right, off);
    const aloneOn = await match(s.left, s.right, options);
    const [a, b] = await Promise.all([match(s.left, s.right, off), match(s.left, s.right, options)]);
    expect(borrowed(aloneOff)).toBe(0);
    expect(borrowed(aloneOn)).toBeGreaterThan(0);
    for (const [together, alone] of [[a, aloneOff], [b, aloneOn]] as const) {
      expect(borrowed(together)).toBe(borrowed(alone));
      expect(rounds(together)).toBe(rounds(alone));
      expect(together.finalEnergy).toEqual(alone.finalEnergy);
      expect(Buffer.from(together.disparity.buffer).equals(Buffer.from(alone.disparity.buffer))).toBe(true);
    }
    // The knobs change the time a run takes, never its labels.
    expect(Buffer.from(aloneOff.disparity.buffer).equals(Buffer.from(aloneOn.disparity.buffer))).toBe(true);
  }, 120000);

  test('a key that is no setting is refused, naming it', async () => {
    await expect(match(s.left, s.right, { ...options, gpu: { borowFlows: false } as never })).rejects.toThrow(/gpu.*'borowFlows' is none of them/);
    await expect(match(s.left, s.right, { ...options, gpu: { borrowFlows: 1 } as never })).rejects.toThrow(/borrowFlows/);
  });
});
