/**
 * A run ends after a cycle that changes no pixel, whatever the cycle count
 * asked for: every move of such a cycle started from the labeling it left,
 * so a later cycle would change nothing either. Checked on random energies
 * (every order, skipping on and off) against runs given more cycles, and
 * through match() with a cycle count no run could reach.
 */
import { seededRandom } from '../data/random';
import { alphaExpansion, type ExpansionOptions } from '../expansion/alphaExpansion';
import { GraphMoveSolver } from '../expansion/moveSolver';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { generateSyntheticScene, match } from '../stereo';
import { randomEnergy, randomLabels } from './support/randomEnergy';

/** Turns a run that would not end into a failure (the moves never yield to jest's timers). */
const bounded = (report: { cycle: number }): void => {
  if (report.cycle > 200) throw new Error('the run went on past 200 cycles');
};

const run = (e: ReturnType<typeof randomEnergy>, init: Uint16Array, options: ExpansionOptions) =>
  alphaExpansion(e, init, new GraphMoveSolver(e, new BoykovKolmogorovSolver(), 'reversed'), options);

test('cycles: 1e9 on random energies ends at the first cycle that changes nothing, with the labels of longer runs', async () => {
  const rand = seededRandom(4040);
  const orders = ['frequent', 'sequential', 'random'] as const;
  for (let t = 0; t < 40; t++) {
    const W = 3 + Math.floor(rand() * 9);
    const H = 3 + Math.floor(rand() * 7);
    const L = 2 + Math.floor(rand() * 6);
    const e = randomEnergy(rand, W, H, L, t % 3 === 0 ? 'potts' : 'linear');
    const init = randomLabels(rand, W * H, L);
    const options: ExpansionOptions = { order: orders[t % 3], seed: t, skipUnchanged: t % 2 === 0 };
    const r = await run(e, init, { ...options, cycles: 1e9, onCycle: bounded });
    const counts = r.cycles.map((c) => c.pixelsChanged);
    // Every cycle but the last changed something; the last changed nothing.
    expect(counts[counts.length - 1]).toBe(0);
    expect(counts.slice(0, -1).every((c) => c > 0)).toBe(true);
    // Asking for more cycles than ran gives the same run; 'converge' ends no later.
    const longer = await run(e, init, { ...options, cycles: r.cycles.length + 3 });
    expect(longer.cycles.length).toBe(r.cycles.length);
    expect(Array.from(longer.labels)).toEqual(Array.from(r.labels));
    expect(longer.finalEnergy).toEqual(r.finalEnergy);
    const converged = await run(e, init, { ...options, cycles: 'converge' });
    expect(converged.cycles.length).toBeLessThanOrEqual(r.cycles.length);
    expect(converged.finalEnergy.total).toBe(r.finalEnergy.total);
  }
});

test('match() with cycles: 1e9 returns (the run ends when a cycle changes nothing)', async () => {
  const scene = generateSyntheticScene({ width: 48, height: 32, ndisp: 6, seed: 3 });
  const r = await match(scene.left, scene.right, { ndisp: 6, backend: 'bk', cycles: 1e9, onCycle: bounded });
  expect(r.cycles.length).toBeLessThan(20);
  expect(r.cycles[r.cycles.length - 1].pixelsChanged).toBe(0);
}, 30000);
