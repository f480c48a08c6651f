/**
 * Programs (kernels and compiled plans) kept between solvers of the same
 * shape (gpu/move/keptPrograms.ts): a solver that takes one refills its
 * constant inputs with its own energy, and must give BK's results on it.
 * On gpu.js's cpu backend (CI has no GPU); the device buffers' refill is
 * tested on a stand-in device in gpu-shared-literals.test.ts, and the GPU
 * runs are in BENCHMARKS.md.
 */
import { seededRandom } from '../data/random';
import { buildStereoEnergy, toIntensity8, wtaInit } from '../costs';
import { generateSyntheticScene } from '../data/synthetic';
import { alphaExpansion } from '../expansion/alphaExpansion';
import { volumeOf, type DataTerm, type MrfEnergy } from '../data/energy';
import { ProgramStore } from '../gpu/move/keptPrograms';
import { programHostArrays, type DeviceProgram } from '../gpu/move/deviceProgram';

// The store the solvers of this file share (a Matcher holds one of its own).
const store = new ProgramStore();
import { GpuMoveSolver } from '../gpu/move/gpuMoveSolver';
import { type GpuMoveOptions } from '../gpu/move/moveSettings';
import { GraphMoveSolver } from '../expansion/moveSolver';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { createGpuContext, type GpuContext } from '../gpu/runtime/context';
import { randomEnergy, randomLabels } from './support/randomEnergy';

/** Where a test's device solver reads its costs: the energy's volume, or an images data term in its place. */
type Source = { kind: 'volume' } | Extract<DataTerm, { kind: 'images' }>;

jest.setTimeout(300_000);

let cpu: GpuContext;
beforeAll(async () => { cpu = await createGpuContext('cpu'); });
afterAll(() => { store.release(); cpu.destroy(); });
beforeEach(() => store.release());

const small: Partial<GpuMoveOptions> = { iterationsPerRound: 4, initialRounds: 2 };

/** Runs two cycles with a new device solver (disposed after) and checks its labels and energies against BK's; returns the solver. */
async function runAndCheck(ctx: GpuContext, energy: MrfEnergy, init: Uint16Array, label: string, options: Partial<GpuMoveOptions> = {}, source: Source = { kind: 'volume' }): Promise<GpuMoveSolver> {
  const ref = await alphaExpansion(energy, init, new GraphMoveSolver(energy, new BoykovKolmogorovSolver(), 'reversed'), { cycles: 2 });
  const gpuEnergy = source.kind === 'images' ? { ...energy, data: source } : energy;
  const solver = new GpuMoveSolver(ctx, gpuEnergy, { variant: 'reversed', ...small, ...options }, { programs: store });
  const res = await alphaExpansion(energy, init, solver, { cycles: 2 });
  solver.dispose();
  expect(res.cycles.map((c) => c.energy.total)).toEqual(ref.cycles.map((c) => c.energy.total));
  const diff = res.labels.findIndex((v, p) => v !== ref.labels[p]);
  if (diff >= 0) throw new Error(`${label}: labels differ from BK's at pixel ${diff}`);
  return solver;
}

describe('programs kept between solvers of the same shape', () => {
  test('random energies of one shape in a row: each solver after the first takes the last one\'s plans and still gives BK\'s labels', async () => {
    const rng = seededRandom(77);
    for (let shape = 0; shape < 3; shape++) {
      const W = 5 + Math.floor(rng() * 9);
      const H = 4 + Math.floor(rng() * 7);
      const L = 3 + Math.floor(rng() * 3);
      for (let t = 0; t < 4; t++) {
        const energy = randomEnergy(rng, W, H, L, t % 2 === 0 ? 'linear' : 'potts');
        const solver = await runAndCheck(cpu, energy, randomLabels(rng, W * H, L), `${W}×${H}×${L} energy ${t}`);
        // The first of a shape compiles its own (the last shape's program is another key); every later one takes the one before.
        expect(solver.tookKeptPlans).toBe(t > 0);
        expect(store.size).toBe(1);
      }
    }
  });

  test('the image source: a second pair of the same size takes the first\'s plans, WTA and energy pipelines, with its own images', async () => {
    const params = { ndisp: 6, kind: 'sad' as const, lambda: 20, smoothness: 'linear' as const, truncation: 2 };
    for (const seed of [3, 8, 11]) {
      const scene = generateSyntheticScene({ width: 24, height: 18, ndisp: 6, seed });
      const energy = buildStereoEnergy(scene.left, scene.right, params);
      const costs = energy.matcher.options;
      const images: Source = { kind: 'images', left: toIntensity8(scene.left), right: toIntensity8(scene.right), spec: { ...costs, channels: scene.left.channels } };
      // The device WTA of each pair, from the pipelines the first pair compiled (a stale image literal would give the last pair's labels).
      const wtaSolver = new GpuMoveSolver(cpu, { ...energy, data: images }, { variant: 'reversed', ...small }, { programs: store });
      for (const window of [5, 3, 5]) {
        expect(Array.from((await wtaSolver.deviceWta(window, 3 * 24 * 18))!)).toEqual(Array.from(wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, window)));
      }
      // Windows 5 and 3 on the first pair; none after (the energy pipeline is made by the run below, once).
      expect(wtaSolver.counters.auxPipelines).toBe(seed === 3 ? 2 : 0);
      wtaSolver.dispose();
      // runAndCheck compares the device's energies (the energy pipeline) with BK's.
      const solver = await runAndCheck(cpu, energy, wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, 5), `synthetic seed ${seed}`, {}, images);
      expect(solver.tookKeptPlans).toBe(seed !== 3);
      expect(solver.counters.auxPipelines).toBe(seed === 3 ? 1 : 0);
    }
  });

  test('a program\'s host arrays (labels as f32, zero flows) are made once for its grid and handed to each solver that takes it', () => {
    const program = {} as DeviceProgram;
    const first = programHostArrays(program, 12, true);
    expect([first.labelsF.length, first.zeroFlows.length]).toEqual([12, 24]);
    expect(programHostArrays(program, 12, true)).toBe(first);
    // Another grid, or plans without flows, get arrays of their own size.
    expect(programHostArrays(program, 20, true).labelsF.length).toBe(20);
    expect(programHostArrays(program, 20, false).zeroFlows.length).toBe(0);
  });

  test('a solver disposed twice keeps its program once, and the next solver runs it', async () => {
    const rng = seededRandom(9);
    const e1 = randomEnergy(rng, 7, 5, 3, 'linear');
    const e2 = randomEnergy(rng, 7, 5, 3, 'potts');
    const first = new GpuMoveSolver(cpu, e1, { variant: 'reversed', ...small }, { programs: store });
    await alphaExpansion(e1, randomLabels(rng, 35, 3), first, { cycles: 1 });
    first.dispose();
    first.dispose();
    expect(store.size).toBe(1);
    expect((await runAndCheck(cpu, e2, randomLabels(rng, 35, 3), 'after a double dispose')).tookKeptPlans).toBe(true);
  });

  test('nothing is taken across shapes, options, backends, a destroyed context, on the webasm backend, or with keeping off; at most one program is kept', async () => {
    const rng = seededRandom(5);
    const e1 = randomEnergy(rng, 8, 6, 4, 'linear');
    const e2 = randomEnergy(rng, 8, 6, 4, 'linear');
    const other = randomEnergy(rng, 9, 6, 4, 'linear');
    const init = (e: MrfEnergy): Uint16Array => randomLabels(rng, e.width * e.height, e.labels);
    await runAndCheck(cpu, e1, init(e1), 'first');
    // Another size, another K: programs of their own.
    expect((await runAndCheck(cpu, other, init(other), 'other size')).tookKeptPlans).toBe(false);
    expect((await runAndCheck(cpu, e2, init(e2), 'after the other size')).tookKeptPlans).toBe(false);
    expect((await runAndCheck(cpu, e1, init(e1), 'another K', { iterationsPerRound: 6 })).tookKeptPlans).toBe(false);
    expect(store.size).toBe(1);
    expect((await runAndCheck(cpu, e2, init(e2), 'same K again', { iterationsPerRound: 6 })).tookKeptPlans).toBe(true);
    // gpu.js's webasm backend copies the constant inputs into its memory when a plan compiles: it neither takes nor keeps (a plan it kept would
    // run on the last energy's values; tune's device trials, one after another, found that), and a run of another λ after it still gives BK's labels.
    const wasm = await createGpuContext('webasm');
    try {
      if (wasm.mode === 'webasm') {
        store.release();
        for (const [t, e] of [e1, e2, e1].entries()) {
          const g = await runAndCheck(wasm, e, init(e), `webasm run ${t}`, { iterationsPerRound: 6 });
          expect(g.tookKeptPlans).toBe(false);
          expect(store.size).toBe(0);
        }
      } else {
        // No WebAssembly here: gpu.js runs the cpu backend, which keeps as the cpu context does.
        expect((await runAndCheck(wasm, e1, init(e1), 'webasm as cpu', { iterationsPerRound: 6 })).tookKeptPlans).toBe(true);
      }
    } finally {
      store.release();
      wasm.destroy();
    }
    // Keeping off for a solver: it neither takes nor keeps.
    await runAndCheck(cpu, e1, init(e1), 'kept');
    expect((await runAndCheck(cpu, e2, init(e2), 'keepPlans false', { keepPlans: false })).tookKeptPlans).toBe(false);
    expect(store.size).toBe(1);
    // Keeping off for a context (its flag keptPrograms): its solvers neither take the program kept nor keep theirs.
    const noKeeping = await createGpuContext('cpu', { keptPrograms: false });
    try {
      expect((await runAndCheck(noKeeping, e2, init(e2), 'keeping off')).tookKeptPlans).toBe(false);
      expect(store.size).toBe(1);
      expect((await runAndCheck(noKeeping, e2, init(e2), 'keeping off again')).tookKeptPlans).toBe(false);
    } finally {
      noKeeping.destroy();
    }
    // Contexts of other flags never take each other's programs; one of equal flags does.
    const other1 = await createGpuContext('cpu', { kernelBuildCache: false });
    const other2 = await createGpuContext('cpu', { kernelBuildCache: false });
    try {
      expect((await runAndCheck(other1, e2, init(e2), 'other flags')).tookKeptPlans).toBe(false);
      expect((await runAndCheck(other2, e1, init(e1), 'equal flags')).tookKeptPlans).toBe(true);
      expect((await runAndCheck(cpu, e2, init(e2), 'the default flags again')).tookKeptPlans).toBe(false);
    } finally {
      other1.destroy();
      other2.destroy();
    }
    // A program whose context was destroyed is dropped, not taken.
    store.release();
    const doomed = await createGpuContext('cpu');
    await runAndCheck(doomed, e1, init(e1), 'doomed context');
    expect(store.size).toBe(1);
    doomed.destroy();
    expect((await runAndCheck(cpu, e2, init(e2), 'after the destroyed context')).tookKeptPlans).toBe(false);
  });
});
