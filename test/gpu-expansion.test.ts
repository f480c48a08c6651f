import { seededRandom } from '../data/random';
import * as fs from 'fs';
import * as path from 'path';
import { Input, type KernelOutput } from 'gpu.js';
import { buildStereoEnergy, toIntensity8, wtaInit } from '../costs';
import { generateSyntheticScene } from '../data/synthetic';
import { alphaExpansion } from '../expansion/alphaExpansion';
import type { GraphVariant } from '../expansion/binaryStep';
import { volumeOf, type DataTerm, type MrfEnergy } from '../data/energy';
import { GpuMoveSolver } from '../gpu/move/gpuMoveSolver';
import { defaultBfsPasses, defaultInitialRounds, defaultPush, defaultReach } from '../gpu/move/moveSettings';
import { flowPlanesSource } from '../gpu/move/moveKernels';
import { reductionLevels } from '../gpu/move/reductionKernels';
import { GraphMoveSolver } from '../expansion/moveSolver';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { createGpuContext, type GpuContext } from '../gpu/runtime/context';
import { flattenState } from '../gpu/maxflow/pushRelabel';
import { PLANE, STATE_PLANES } from '../gpu/maxflow/pushRelabelLayout';
import type { Raster } from '../data/raster';
import { loadScene } from '../data/scene';
import { randomEnergy, randomLabels } from './support/randomEnergy';
import { FULL_TESTS, sample, scaled } from './support/testScope';
import { ABLATION_FAMILIES } from '../bench/kernels/ablationFamilies';

/** Where a test's device solver reads its costs: the energy's volume, or an images data term in its place. */
type Source = { kind: 'volume' } | Extract<DataTerm, { kind: 'images' }>;

// CI has no GPU: the device kernels run on gpu.js's cpu and webasm backends here, unchanged.
jest.setTimeout(300_000);

let cpu: GpuContext;
let wasm: GpuContext;
beforeAll(async () => { cpu = await createGpuContext('cpu'); wasm = await createGpuContext('webasm'); });
afterAll(() => { cpu.destroy(); wasm.destroy(); });

/**
 * The context of the tests whose time goes into running the kernels (many rounds on a few plan shapes): by default
 * the webasm backend, which runs the same kernels fused several times faster than cpu; cpu under
 * STEREOCUT_FULL_TESTS=1. The tests whose time goes into compiling many plan shapes (cpu compiles faster) and the
 * first synthetic test stay on cpu in both scopes, so that both backends run in each.
 */
const runner = (): GpuContext => (FULL_TESTS ? cpu : wasm);

function crop(r: Raster, x0: number, y0: number, w: number, h: number): Raster {
  const C = r.channels;
  const data = new (r.data.constructor as new (n: number) => typeof r.data)(w * h * C);
  for (let y = 0; y < h; y++) for (let x = 0; x < w * C; x++) data[y * w * C + x] = r.data[((y0 + y) * r.width + x0) * C + x];
  return { ...r, width: w, height: h, data };
}

/** BK and the device solver from the same labeling: same labels after every cycle, same energies. */
async function expectSameAsBk(ctx: GpuContext, energy: MrfEnergy, init: Uint16Array, variant: GraphVariant, source: Source, label: string, options: Partial<ConstructorParameters<typeof GpuMoveSolver>[2]> = {}): Promise<GpuMoveSolver> {
  const ref = await alphaExpansion(energy, init, new GraphMoveSolver(energy, new BoykovKolmogorovSolver(), variant), { cycles: 2 });
  // The image source never needs the host volume: the device solver gets the energy without it.
  const gpuEnergy = source.kind === 'images' ? { ...energy, data: source } : energy;
  const gpu = new GpuMoveSolver(ctx, gpuEnergy, { variant, iterationsPerRound: 8, bfsPasses: 16, initialRounds: 2, ...options });
  const res = await alphaExpansion(energy, init, gpu, { cycles: 2 });
  expect(res.cycles.map((c) => c.energy.total)).toEqual(ref.cycles.map((c) => c.energy.total));
  const diff = res.labels.findIndex((v, p) => v !== ref.labels[p]);
  if (diff >= 0) throw new Error(`${label}: labels differ from BK's at pixel ${diff}`);
  expect(res.cycles.map((c) => c.pixelsChanged)).toEqual(ref.cycles.map((c) => c.pixelsChanged));
  expect(res.cuts).toBe(ref.cuts);
  // Every call's time is charged to a move, those that completed none (continued or redone) included.
  const flowMs = res.cycles.reduce((t, c) => t + c.flowMs, 0);
  const callMs = gpu.calls.reduce((t, c) => t + c.deviceMs, 0);
  expect(flowMs).toBeGreaterThanOrEqual(callMs - 1e-6);
  // Each call that compiled its plan is counted once, by the move it served.
  expect(res.cycles.reduce((n, c) => n + (c.stats.compiledCalls ?? 0), 0)).toBe(gpu.calls.filter((c) => c.compiled).length);
  return gpu;
}

/** The synthetic pair of the solver tests: 48×36 under STEREOCUT_FULL_TESTS=1, 32×24 by default (the device kernels run on gpu.js's CPU backend here, and every case below is about the moves' bookkeeping, not the size). */
const [SW, SH] = [scaled(48, 32), scaled(36, 24)];

describe('GpuMoveSolver against the BK path', () => {
  const scene = generateSyntheticScene({ width: SW, height: SH, ndisp: 8, seed: 3 });
  // λ on the census scale (costs/costOptions.ts smoothnessUnit): 9 weighs about what 20 grey levels did, so every label's move changes pixels.
  const params = { ndisp: 8, kind: 'sad' as const, lambda: 9, smoothness: 'linear' as const, truncation: 2 };

  test.each(['reversed', 'classic'] as const)(`synthetic ${SW}×${SH}, 8 labels, %s graph: volume and image sources`, async (variant) => {
    const energy = buildStereoEnergy(scene.left, scene.right, params);
    const init = wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, 5);
    const g = await expectSameAsBk(cpu, energy, init, variant, { kind: 'volume' }, `synthetic ${variant} volume`);
    expect(g.counters.moves).toBe(16);
    const costs = energy.matcher.options;
    const images: Source = { kind: 'images', left: toIntensity8(scene.left), right: toIntensity8(scene.right), spec: { ...costs, channels: scene.left.channels } };
    await expectSameAsBk(cpu, energy, init, variant, images, `synthetic ${variant} images`);
  });

  test('bad device options are refused with the option named', () => {
    const energy = buildStereoEnergy(scene.left, scene.right, params);
    const make = (o: object): GpuMoveSolver => new GpuMoveSolver(cpu, energy, { variant: 'reversed', ...o });
    expect(() => make({ push: 'wave' })).toThrow(/option push/);
    expect(() => make({ bfs: 'dfs' })).toThrow(/option bfs/);
    expect(() => make({ reach: 0 })).toThrow(/option reach/);
    expect(() => make({ reach: 10_000 })).toThrow(/option reach/);
    expect(() => make({ iterationsPerRound: 2.5 })).toThrow(/option iterationsPerRound/);
    expect(() => make({ resume: 'yes' })).toThrow(/option resume/);
    expect(() => make({ maxCachedPlans: 0 })).toThrow(/option maxCachedPlans/);
    expect(() => make({ gate: 1 })).toThrow(/option gate/);
    expect(() => make({ planCompileRounds: -1 })).toThrow(/option planCompileRounds/);
    expect(() => make({ recordAhead: 'no' })).toThrow(/option recordAhead/);
    expect(() => make({ finalBfsFactor: 0 })).toThrow(/option finalBfsFactor/);
    expect(() => make({ finalBfsFactor: 1.5 })).toThrow(/option finalBfsFactor/);
    expect(() => make({ planCompileRounds: Infinity })).toThrow(/option planCompileRounds/);
    expect(() => make({ planCompileRoundsPerRound: -0.5 })).toThrow(/option planCompileRoundsPerRound/);
    expect(() => make({ planCompileRoundsPerRound: Number.NaN })).toThrow(/option planCompileRoundsPerRound/);
    expect(() => make({ warmStart: 'yes' })).toThrow(/option warmStart/);
    expect(() => make({ tileSide: 0 })).toThrow(/option tileSide/);
    expect(() => make({ tileSide: 2.5 })).toThrow(/option tileSide/);
    expect(() => make({ borrowFlows: 1 })).toThrow(/option borrowFlows/);
    expect(() => make({ resident: 'on' })).toThrow(/option resident/);
    expect(() => make({ lookAhead: -1 })).toThrow(/option lookAhead/);
    expect(() => make({ lookAhead: 1.5 })).toThrow(/option lookAhead/);
    expect(() => make({ lookAhead: 17 })).toThrow(/option lookAhead/);
    expect(() => make({ initialBfsPasses: 0 })).toThrow(/option initialBfsPasses/);
    expect(() => make({ initialBfsPasses: 2.5 })).toThrow(/option initialBfsPasses/);
    // Resident moves are WebGPU's: on gpu.js's CPU backend a cycle runs move by move.
    expect(make({}).residentApplies()).toBe(false);
    // By default warm starts are on (the store is tiny here).
    expect(make({}).warmStart).toBe(true);
  });

  // By default one scheme per push kind (graphcut-pushrelabel.test.ts runs every scheme on random grids); all under STEREOCUT_FULL_TESTS=1.
  test.each(sample([
    { push: 'lockstep', bfs: 'level' }, { push: 'lockstep', bfs: 'scan', reach: 4 }, { push: 'sweep', bfs: 'level', reach: 3 }, { push: 'sweep', bfs: 'scan', reach: 5 }, { push: 'split-sweep', bfs: 'scan', reach: 3 },
  ] as const, [0, 3, 4]))(`synthetic ${SW}×${SH}, every kernel scheme: %j`, async (scheme) => {
    const energy = buildStereoEnergy(scene.left, scene.right, params);
    const init = wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, 5);
    // The lockstep push and level BFS are the benchmarks' families, given to the solver as its families.
    await expectSameAsBk(runner(), energy, init, 'reversed', { kind: 'volume' }, `synthetic ${JSON.stringify(scheme)}`, { ...scheme, families: ABLATION_FAMILIES });
  });
  test('moves that do not converge in one call: continued from the read-back flows (resume), or redone; BFS shortfalls double the passes', async () => {
    // Nearly every move takes several calls here, each on gpu.js's CPU backend: a 24×16 pair by default, the pair above under STEREOCUT_FULL_TESTS=1.
    const small = FULL_TESTS ? scene : generateSyntheticScene({ width: 24, height: 16, ndisp: 8, seed: 3 });
    const energy = buildStereoEnergy(small.left, small.right, params);
    const init = wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, 5);
    const rounds: Record<string, number> = {};
    for (const resume of [true, false]) {
      // One round of one iteration and one BFS pass per call: nearly every move needs several calls, and the BFS falls short.
      const g = await expectSameAsBk(cpu, energy, init, 'reversed', { kind: 'volume' }, `synthetic resume ${resume}`, {
        iterationsPerRound: 1, bfsPasses: 1, initialRounds: 1, fixedRounds: true, reach: 2, resume, maxCachedPlans: 3,
      });
      expect(g.counters.bfsShortfalls).toBeGreaterThan(0);
      if (resume) {
        expect(g.counters.resumedCalls).toBeGreaterThan(0);
        expect(g.counters.redoneMoves).toBe(0);
      } else {
        expect(g.counters.resumedCalls).toBe(0);
        expect(g.counters.redoneMoves).toBeGreaterThan(0);
      }
      expect(g.counters.pipelineCalls).toBe(g.counters.moves + g.counters.resumedCalls + g.counters.redoneMoves);
      // One record per call, the resumed ones marked; the host's share of a call (up to its submit) lies within the call.
      expect(g.calls).toHaveLength(g.counters.pipelineCalls);
      expect(g.calls.filter((c) => c.resumed)).toHaveLength(g.counters.resumedCalls);
      for (const c of g.calls) {
        expect(c.submitMs).toBeGreaterThanOrEqual(0);
        expect(c.submitMs).toBeLessThanOrEqual(c.deviceMs);
      }
      // Plan shapes change with the rounds and BFS passes; the cache keeps at most maxCachedPlans of them and recompiles dropped ones.
      expect(g.counters.plans).toBeGreaterThan(3);
      expect(g.cachedPlans).toBe(3);
      rounds[String(resume)] = g.counters.rounds;
    }
    // A continued call keeps the flow pushed so far: the moves run fewer rounds in all than when redone from zero flow.
    expect(rounds.true).toBeLessThan(rounds.false);
  });

  test('counting plan compiles in the rounds choice (flat, or by the plan\'s rounds) compiles fewer plan shapes and changes no result', async () => {
    const energy = buildStereoEnergy(scene.left, scene.right, params);
    const init = wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, 5);
    // Small rounds and BFS passes make the moves' needs vary, so the adaptive choice moves between shapes.
    const options = { iterationsPerRound: 2, bfsPasses: 4, initialRounds: 1, reach: 2 } as const;
    const free = await expectSameAsBk(runner(), energy, init, 'reversed', { kind: 'volume' }, 'compiles ignored', { ...options, planCompileRounds: 0, planCompileRoundsPerRound: 0 });
    const counted = await expectSameAsBk(runner(), energy, init, 'reversed', { kind: 'volume' }, 'compiles counted', { ...options, planCompileRounds: 1000 });
    // Priced by the plan's rounds alone: long plans cost more to compile, so the choice compiles fewer shapes than when compiles are free.
    const perRound = await expectSameAsBk(runner(), energy, init, 'reversed', { kind: 'volume' }, 'compiles priced per round', { ...options, planCompileRounds: 0, planCompileRoundsPerRound: 200 });
    expect(free.counters.plans).toBeGreaterThan(2);
    expect(counted.counters.plans).toBeLessThan(free.counters.plans);
    expect(perRound.counters.plans).toBeLessThan(free.counters.plans);
    // The next call's plan is guessed after every call that did not compile, among compiled plans only (a guess never compiles), and the guesses
    // are recorded ahead only on WebGPU.
    for (const g of [free, counted]) {
      const c = g.counters;
      expect(c.guessedCalls).toBeGreaterThan(0);
      expect(c.guessedCalls).toBeLessThanOrEqual(g.calls.filter((call) => !call.compiled).length);
      expect(c.guessHits).toBeGreaterThan(0);
      expect(c.guessHits).toBeLessThanOrEqual(c.guessedCalls);
      expect(c.recordedAhead).toBe(0);
    }
  });

  test('the last round\'s BFS length changes no result: finalBfsFactor 1, 2 and 5 give BK\'s labels', async () => {
    const energy = buildStereoEnergy(scene.left, scene.right, params);
    const init = wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, 5);
    // Few BFS passes, so that a short last BFS falls short and the move needs another call.
    const options = { iterationsPerRound: 2, bfsPasses: 3, initialRounds: 1, reach: 2 } as const;
    const passes: number[] = [];
    for (const finalBfsFactor of [1, 2, 5]) {
      const g = await expectSameAsBk(runner(), energy, init, 'reversed', { kind: 'volume' }, `finalBfsFactor ${finalBfsFactor}`, { ...options, finalBfsFactor });
      passes.push(g.counters.bfsPasses / g.counters.pipelineCalls);
    }
    // BFS passes per call grow with the factor.
    expect(passes[0]).toBeLessThan(passes[2]);
  });

  test('the first global relabel\'s length changes no result: initialBfsPasses 1 and 2 give BK\'s labels, and the passes counted are the plans\' own', async () => {
    const energy = buildStereoEnergy(scene.left, scene.right, params);
    const init = wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, 5);
    const options = { iterationsPerRound: 2, bfsPasses: 4, initialRounds: 1, reach: 2 } as const;
    for (const initialBfsPasses of [1, 2, Number.POSITIVE_INFINITY]) {
      const g = await expectSameAsBk(runner(), energy, init, 'reversed', { kind: 'volume' }, `initialBfsPasses ${initialBfsPasses}`, { ...options, initialBfsPasses });
      // Every call: its first relabel (at most B), B after each round but the last, finalBfsFactor·B after the last.
      const expected = g.calls.reduce((s, c) => s + Math.min(c.bfs, initialBfsPasses) + (c.rounds - 1 + 2) * c.bfs, 0);
      expect(g.counters.bfsPasses).toBe(expected);
    }
  });

  test('the reductions\' tile side changes no result and no call: sides 1, 3 and 8 give BK\'s labels and the default\'s calls', async () => {
    const energy = buildStereoEnergy(scene.left, scene.right, params);
    const init = wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, 5);
    const options = { iterationsPerRound: 2, bfsPasses: 3, initialRounds: 1, reach: 2 } as const;
    const calls: unknown[] = [];
    // By default the default side against 3 (neither a divisor of the grid nor the default); 1 and 8 under STEREOCUT_FULL_TESTS=1.
    for (const tileSide of [undefined, ...sample([1, 3, 8], [1])]) {
      const g = await expectSameAsBk(runner(), energy, init, 'reversed', { kind: 'volume' }, `tileSide ${String(tileSide)}`, tileSide === undefined ? options : { ...options, tileSide });
      calls.push(g.calls.map((c) => [c.rounds, c.bfs, c.resumed, c.failedChecks, c.converged]));
    }
    for (const c of calls.slice(1)) expect(c).toEqual(calls[0]);
  });

  test('first-cycle moves borrow the last converged move\'s flows (borrowFlows): BK\'s labels with it on and off, and it needs warm starts', async () => {
    const energy = buildStereoEnergy(scene.left, scene.right, params);
    const init = wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, 5);
    const options = { iterationsPerRound: 4, initialRounds: 2 } as const;
    const on = await expectSameAsBk(runner(), energy, init, 'reversed', { kind: 'volume' }, 'borrowFlows on', options);
    // Every move of the first cycle but the first has no flows of its own α and borrows; later cycles start from their own.
    expect(on.counters.borrowedMoves).toBe(energy.labels - 1);
    expect(on.counters.warmMoves).toBe(on.counters.moves - energy.labels);
    for (const off of [{ borrowFlows: false }, { warmStart: false }]) {
      const g = await expectSameAsBk(runner(), energy, init, 'reversed', { kind: 'volume' }, `borrowFlows with ${JSON.stringify(off)}`, { ...options, ...off });
      expect(g.counters.borrowedMoves).toBe(0);
    }
  });

  test('the gate changes no result: gated and ungated plans that overshoot give BK\'s labels and the same counters', async () => {
    const energy = buildStereoEnergy(scene.left, scene.right, params);
    const init = wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, 5);
    // 12 fixed rounds per call: most moves converge after a few, and the gated plans copy the state for the rest.
    const options = { initialRounds: 12, fixedRounds: true } as const;
    const gated = await expectSameAsBk(runner(), energy, init, 'reversed', { kind: 'volume' }, 'gated', { ...options, gate: true });
    const ungated = await expectSameAsBk(runner(), energy, init, 'reversed', { kind: 'volume' }, 'ungated', { ...options, gate: false });
    expect(gated.counters.moves).toBe(16);
    const { deviceMs: _a, hostMs: _b, ...g } = gated.counters;
    const { deviceMs: _c, hostMs: _d, ...u } = ungated.counters;
    expect(g).toEqual(u);
  });
});

describe('GpuMoveSolver warm starts (each move from the flows its α\'s previous move ended with)', () => {
  test('random energies, both graphs, --verify on every cut: flows, cuts, labels and energies equal BK\'s', async () => {
    // Random labelings change many labels per cycle, so stored flows often exceed the new capacities (clamped) and pixels start in deficit (both terminal edges raised).
    const rand = seededRandom(20261121);
    let warm = 0;
    for (let trial = 0; trial < 10; trial++) {
      const W = 5 + Math.floor(rand() * 12);
      const H = 4 + Math.floor(rand() * 10);
      const L = 3 + Math.floor(rand() * 4);
      const energy = randomEnergy(rand, W, H, L, trial % 2 ? 'potts' : 'linear');
      const init = randomLabels(rand, W * H, L);
      const variant: GraphVariant = trial % 3 === 2 ? 'classic' : 'reversed';
      const ref = await alphaExpansion(energy, init, new GraphMoveSolver(energy, new BoykovKolmogorovSolver(), variant), { cycles: 3 });
      const g = new GpuMoveSolver(cpu, energy, { variant, verify: true, iterationsPerRound: 2, bfsPasses: 4, initialRounds: 1, reach: 2 });
      const res = await alphaExpansion(energy, init, g, { cycles: 3 });
      const where = `trial ${trial} (${W}×${H}, ${L} labels, ${energy.smoothness}, ${variant})`;
      expect([where, res.cycles.map((c) => c.energy.total)]).toEqual([where, ref.cycles.map((c) => c.energy.total)]);
      expect([where, Array.from(res.labels)]).toEqual([where, Array.from(ref.labels)]);
      expect(g.warmStart).toBe(true);
      warm += g.counters.warmMoves;
      expect(g.calls.filter((c) => c.warm && !c.resumed).length).toBeGreaterThanOrEqual(g.counters.warmMoves);
    }
    expect(warm).toBeGreaterThan(20);
  });

  test('the flows a call reads back are the state\'s two flow planes', () => {
    const rand = seededRandom(7);
    for (const [W, H] of [[1, 1], [5, 3], [17, 9]]) {
      const state = Float32Array.from({ length: STATE_PLANES * W * H }, () => Math.round(rand() * 2000 - 1000));
      const kernel = cpu.gpu.createKernel(flowPlanesSource(), { output: [W, H, 2] });
      const flows = flattenState(kernel(new Input(state as unknown as number[], [W, H, STATE_PLANES])) as KernelOutput, W, H, new Float32Array(2 * W * H), 0, 2);
      expect(Array.from(flows)).toEqual(Array.from(state.subarray(PLANE.flowRight * W * H, (PLANE.flowDown + 1) * W * H)));
      kernel.destroy();
    }
  });

  test('one move per call with neither resume nor warm starts: plans take and return no flows; --verify still checks every cut', async () => {
    const rand = seededRandom(99);
    let redone = 0;
    for (let trial = 0; trial < 3; trial++) {
      const energy = randomEnergy(rand, 9 + trial, 7, 4, trial % 2 ? 'potts' : 'linear');
      const init = randomLabels(rand, energy.width * energy.height, 4);
      const ref = await alphaExpansion(energy, init, new GraphMoveSolver(energy, new BoykovKolmogorovSolver(), 'reversed'), { cycles: 2 });
      const g = new GpuMoveSolver(cpu, energy, { variant: 'reversed', verify: true, resume: false, warmStart: false, iterationsPerRound: 1, bfsPasses: 2, initialRounds: 1, reach: 2 });
      const res = await alphaExpansion(energy, init, g, { cycles: 2 });
      expect(res.cycles.map((c) => c.energy.total)).toEqual(ref.cycles.map((c) => c.energy.total));
      expect(Array.from(res.labels)).toEqual(Array.from(ref.labels));
      expect(g.counters.warmMoves + g.counters.resumedCalls).toBe(0);
      redone += g.counters.redoneMoves;
      expect(res.cuts).toBeGreaterThan(0);
      expect(res.cycles.reduce((t, c) => t + (c.stats.verifiedCuts ?? 0), 0)).toBe(res.cuts);
    }
    // One iteration and two BFS passes per call: some moves need another call, which starts them again from zero flow.
    expect(redone).toBeGreaterThan(0);
  });

  test('cold, warm and continued moves share one plan per rounds and BFS passes, under --verify', async () => {
    const scene = generateSyntheticScene({ width: 40, height: 30, ndisp: 8, seed: 5 });
    const energy = buildStereoEnergy(scene.left, scene.right, { ndisp: 8, kind: 'sad', lambda: 20, smoothness: 'linear', truncation: 2 });
    const init = wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, 5);
    // One iteration per round: most moves need more than a call gives them, so many calls continue a move from its read-back flows.
    const g = await expectSameAsBk(runner(), energy, init, 'reversed', { kind: 'volume' }, 'shared plans', {
      iterationsPerRound: 1, bfsPasses: 8, initialRounds: 1, reach: 2, verify: true, maxCachedPlans: 64,
    });
    const kinds = (c: { resumed: boolean; warm: boolean }): string => (c.resumed ? 'continued' : c.warm ? 'warm' : 'cold');
    const shapes = new Map<string, Set<string>>();
    for (const c of g.calls) {
      const key = `${c.rounds}:${c.bfs}`;
      shapes.set(key, (shapes.get(key) ?? new Set()).add(kinds(c)));
    }
    expect(new Set(g.calls.map(kinds))).toEqual(new Set(['cold', 'warm', 'continued']));
    // Nothing dropped from the cache: one compile per shape, by the shape's first call, and some shape served moves of different starts.
    expect(g.counters.plans).toBe(shapes.size);
    expect(g.calls.filter((c) => c.compiled).length).toBe(shapes.size);
    expect(Math.max(...[...shapes.values()].map((k) => k.size))).toBeGreaterThan(1);
  });

  test(`synthetic ${SW}×${SH} (volume and images): same results as cold starts, and the later cycles' moves need fewer rounds`, async () => {
    const scene = generateSyntheticScene({ width: SW, height: SH, ndisp: 8, seed: 3 });
    const energy = buildStereoEnergy(scene.left, scene.right, { ndisp: 8, kind: 'sad', lambda: 20, smoothness: 'linear', truncation: 2 });
    const init = wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, 5);
    const options = { iterationsPerRound: 2, bfsPasses: 8, initialRounds: 1, reach: 4 } as const;
    const cold = await expectSameAsBk(runner(), energy, init, 'reversed', { kind: 'volume' }, 'cold', { ...options, warmStart: false });
    const warm = await expectSameAsBk(runner(), energy, init, 'reversed', { kind: 'volume' }, 'warm', { ...options, warmStart: true });
    expect(cold.counters.warmMoves).toBe(0);
    expect(warm.counters.warmMoves).toBeGreaterThan(0);
    // Rounds of the second cycle's moves (the first cycle starts cold in both runs).
    const laterRounds = (g: GpuMoveSolver): number => g.counters.rounds - g.calls.slice(0, 8).reduce((t, c) => t + c.rounds + 1, 0);
    expect(laterRounds(warm)).toBeLessThan(laterRounds(cold));
    const costs = energy.matcher.options;
    const images: Source = { kind: 'images', left: toIntensity8(scene.left), right: toIntensity8(scene.right), spec: { ...costs, channels: scene.left.channels } };
    const fromImages = await expectSameAsBk(runner(), energy, init, 'classic', images, 'warm images', { ...options, warmStart: true });
    expect(fromImages.counters.warmMoves).toBeGreaterThan(0);
  });
});

describe('GpuMoveSolver on grids wider than one reduction level', () => {
  test('a 530×16 synthetic pair: the convergence test and the changed count sum over three tile levels; B and the first plan\'s rounds follow the longer side, the reach the pixel count', async () => {
    // 530×16 pixels → 265×8 tiles of 2×2 → 34×1 → 5×1: the reduction chain has two levels beyond the tiles.
    expect(reductionLevels(530, 16, 2)).toEqual([[265, 8], [34, 1], [5, 1]]);
    expect(reductionLevels(64, 64, 8)).toEqual([[8, 8]]);
    const wide = generateSyntheticScene({ width: 530, height: 16, ndisp: 6, seed: 11 });
    const p = { ndisp: 6, kind: 'sad' as const, lambda: 20, smoothness: 'linear' as const, truncation: 2 };
    const energy = buildStereoEnergy(wide.left, wide.right, p);
    const init = wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, 5);
    expect(defaultReach(718, 496)).toBe(8);
    expect(defaultReach(1024, 1024)).toBe(8);
    expect(defaultReach(1025, 1024)).toBe(32);
    expect(defaultBfsPasses(530, 16)).toBe(32);
    expect(defaultBfsPasses(512, 512)).toBe(16);
    expect(defaultInitialRounds(530, 16)).toBe(12);
    expect(defaultInitialRounds(512, 512)).toBe(8);
    expect(defaultPush(1500, 1000)).toBe('split-sweep');
    expect(defaultPush(718, 496)).toBe('sweep');
    const g = await expectSameAsBk(wasm, energy, init, 'reversed', { kind: 'volume' }, 'wide synthetic', { iterationsPerRound: 4, bfsPasses: 4 });
    expect(g.counters.moves).toBe(g.counters.pipelineCalls - g.counters.redoneMoves - g.counters.resumedCalls);
    // With the defaults, the first call gets the first rounds of a grid this wide.
    const defaults = new GpuMoveSolver(wasm, energy, { variant: 'reversed' });
    await defaults.move(0, init.slice());
    expect(defaults.calls[0].rounds).toBe(12);
    defaults.dispose();
  });
});

const dataRoot = process.env.STEREO_DATA ?? path.join(__dirname, '..', '..', 'shared', 'data', 'middlebury');
const tsukubaDir = path.join(dataRoot, 'tsukuba');
const haveTsukuba = fs.existsSync(tsukubaDir);
if (!haveTsukuba) process.stderr.write(`gpu-expansion: tsukuba crop test skipped, no scene at ${tsukubaDir}\n`);

(haveTsukuba ? describe : describe.skip)('GpuMoveSolver on a tsukuba crop', () => {
  // Both constructions run on synthetic pairs above; on the crop by default the paper's (reversed), both under STEREOCUT_FULL_TESTS=1.
  test.each(sample(['reversed', 'classic'] as const, [0]))('64×48 region, 16 labels, %s graph: same labels and energies as BK', async (variant) => {
    const scene = await loadScene(tsukubaDir);
    const left = crop(scene.left, 200, 150, 64, 48);
    const right = crop(scene.right, 200, 150, 64, 48);
    const energy = buildStereoEnergy(left, right, { ndisp: 16, kind: 'sad', lambda: 20, smoothness: 'linear', truncation: 2 });
    const init = wtaInit(volumeOf(energy), 64, 48, 16, 9);
    // The webasm backend (fused, SIMD) runs the same kernels several times faster than cpu at this size.
    await expectSameAsBk(wasm, energy, init, variant, { kind: 'volume' }, `tsukuba crop ${variant}`);
  });
});
