/**
 * The driver's side of MoveSolver.runCycle: a solver that runs each cycle
 * itself, asking ahead whether a later move is skipped (as the GPU
 * solver's resident moves do), must give the run that move() per label
 * gives: the same labels, cycle reports and progress, on random energies.
 */
import { seededRandom } from '../data/random';
import { alphaExpansion, type MoveProgress } from '../expansion/alphaExpansion';
import { GraphMoveSolver, type CycleEnd, type CycleHooks, type MoveSolver } from '../expansion/moveSolver';
import { computeEnergy, type EnergyBreakdown, type MrfEnergy } from '../data/energy';
import { labelOrderForCycle } from '../expansion/labelOrder';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { randomEnergy, randomLabels } from './support/randomEnergy';

/** Runs a cycle's moves one by one, but asks about the next move before the current one is reported, and checks the order of its own reports. */
class LookAheadSolver implements MoveSolver {
  private readonly inner: GraphMoveSolver;
  asksAhead = 0;
  constructor(energy: MrfEnergy) { this.inner = new GraphMoveSolver(energy, new BoykovKolmogorovSolver(), 'reversed'); }
  get backend(): string { return 'look-ahead'; }
  get device(): string { return 'cpu'; }
  move(alpha: number, labels: Uint16Array): ReturnType<MoveSolver['move']> { return this.inner.move(alpha, labels); }
  async runCycle(alphas: readonly number[], labels: Uint16Array, hooks: CycleHooks): Promise<CycleEnd | void> {
    let i = 0;
    while (i < alphas.length) {
      if (hooks.skip(alphas[i])) { hooks.done(i, null); i++; continue; }
      const r = await this.inner.move(alphas[i], labels);
      // A look-ahead question whose answer may change once this move is reported.
      for (let j = i + 1; j < alphas.length; j++) { this.asksAhead++; if (!hooks.skip(alphas[j])) break; }
      hooks.done(i, r);
      i++;
    }
  }
}

/**
 * A look-ahead solver that reports each cycle's end (the GPU solver's
 * resident moves compute it on the device): the energy of the labels it
 * leaves and their label counts, here from the labels themselves, or the
 * counts `countsOf` makes. energyOf counts the driver's own evaluations.
 */
class EndReportingSolver extends LookAheadSolver {
  energyOfCalls = 0;
  constructor(private readonly e: MrfEnergy, private readonly countsOf?: (labels: Uint16Array) => number[]) { super(e); }
  async energyOf(labels: Uint16Array): Promise<EnergyBreakdown> {
    this.energyOfCalls++;
    return computeEnergy(this.e, labels);
  }
  async runCycle(alphas: readonly number[], labels: Uint16Array, hooks: CycleHooks): Promise<CycleEnd> {
    await super.runCycle(alphas, labels, hooks);
    const counts = new Array<number>(this.e.labels).fill(0);
    for (const l of labels) counts[l]++;
    return { energy: computeEnergy(this.e, labels), labelCounts: this.countsOf ? this.countsOf(labels) : counts };
  }
}

/** A random energy of up to 13×10 pixels and 2–7 labels, linear or Potts, and a random labeling of it. */
function randomCase(rand: () => number): { e: MrfEnergy; init: Uint16Array } {
  const W = 4 + Math.floor(rand() * 10);
  const H = 3 + Math.floor(rand() * 8);
  const L = 2 + Math.floor(rand() * 6);
  const e = randomEnergy(rand, W, H, L, rand() < 0.5 ? 'linear' : 'potts');
  return { e, init: randomLabels(rand, W * H, L) };
}

describe('a cycle run by the solver (runCycle)', () => {
  test('a cycle end the solver reports stands for the driver\'s energy evaluation and label histogram, with the same run, on 40 random energies', async () => {
    const rand = seededRandom(23);
    for (let trial = 0; trial < 40; trial++) {
      const { e, init } = randomCase(rand);
      const reporting = new EndReportingSolver(e);
      const runs = [];
      for (const solver of [new GraphMoveSolver(e, new BoykovKolmogorovSolver(), 'reversed'), reporting]) {
        const progress: MoveProgress[] = [];
        const r = await alphaExpansion(e, init, solver, { cycles: 3, onMove: (m) => progress.push({ ...m, stats: undefined }) });
        runs.push({ labels: Array.from(r.labels), energy: r.finalEnergy, cycles: r.cycles.map((c) => [c.cuts, c.skipped, c.labelsChanged, c.pixelsChanged, c.energy]), progress });
      }
      expect(runs[1]).toEqual(runs[0]);
      // Only the initial labeling's energy is the driver's to ask for.
      expect(reporting.energyOfCalls).toBe(1);
    }
  });

  test('the next cycle visits the labels in the order of the counts the solver reported', async () => {
    const rand = seededRandom(5);
    const e = randomEnergy(rand, 9, 7, 6, 'linear');
    // Counts that rank the labels in reverse, whatever the labels are.
    const solver = new EndReportingSolver(e, () => [1, 2, 3, 4, 5, 6]);
    const order: number[][] = [[], [], []];
    await alphaExpansion(e, randomLabels(rand, 63, 6), solver, { cycles: 3, skipUnchanged: false, onMove: (m) => order[m.cycle - 1].push(m.alpha) });
    expect(order[1]).toEqual([5, 4, 3, 2, 1, 0]);
    expect(order[2]).toEqual([5, 4, 3, 2, 1, 0]);
    expect(labelOrderForCycle('frequent', [0, 0, 1], 2, 0, 1, [1, 7])).toEqual([1, 0]);
    expect(() => labelOrderForCycle('frequent', [0, 0, 1], 2, 0, 1, [1, 7, 0])).toThrow(/3 label counts for 2 labels/);
  });

  test('gives what move() per label gives on 60 random energies: labels, energies, cycle reports and progress', async () => {
    const rand = seededRandom(17);
    let skipped = 0;
    for (let trial = 0; trial < 60; trial++) {
      const { e, init } = randomCase(rand);
      const runs = [];
      const ahead = new LookAheadSolver(e);
      for (const solver of [new GraphMoveSolver(e, new BoykovKolmogorovSolver(), 'reversed'), ahead]) {
        const progress: MoveProgress[] = [];
        const r = await alphaExpansion(e, init, solver, { cycles: 4, onMove: (m) => progress.push({ ...m, stats: undefined }) });
        runs.push({ labels: Array.from(r.labels), energy: r.finalEnergy.total, cycles: r.cycles.map((c) => [c.cuts, c.skipped, c.labelsChanged, c.pixelsChanged, c.energy.total]), progress });
      }
      expect(runs[1]).toEqual(runs[0]);
      expect(ahead.asksAhead).toBeGreaterThan(0);
      skipped += runs[0].cycles.reduce((s, c) => s + c[1], 0);
    }
    // The skips the look-ahead asks about early are exercised.
    expect(skipped).toBeGreaterThan(100);
  });
});
