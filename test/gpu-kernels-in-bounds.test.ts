import { seededRandom } from '../data/random';
import { Input } from 'gpu.js';
import { buildStereoEnergy, toIntensity8, wtaInit } from '../costs';
import type { Raster } from '../data/raster';
import { generateSyntheticScene } from '../data/synthetic';
import { alphaExpansion } from '../expansion/alphaExpansion';
import type { GraphVariant } from '../expansion/binaryStep';
import { volumeOf, type DataTerm, type MrfEnergy, type SmoothnessKind } from '../data/energy';
import { GpuMoveSolver } from '../gpu/move/gpuMoveSolver';
import { censusHalves, censusPlanesOnBackend } from '../gpu/costs/censusKernel';
import { createPairKernel, pairArguments } from '../gpu/costs/pairKernel';
import { type GpuMoveOptions } from '../gpu/move/moveSettings';
import { FULL_TESTS, sample } from './support/testScope';
import { GraphMoveSolver } from '../expansion/moveSolver';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { createGpuContext, dawnFlags, type GpuContext } from '../gpu/runtime/context';
import { BOUNDS_CHECKS_VARIABLE, resolveDeviceFlags } from '../gpu/runtime/deviceFlags';
import { PushRelabelSolver, type PushRelabelOptions } from '../gpu/maxflow/pushRelabel';
import { randomGridGraph, RANDOM_GRAPH_KINDS } from './support/randomGraphs';
import { installReadChecks, type ReadChecks } from './support/checkedKernelReads';
import { randomEnergy, randomLabels } from './support/randomEnergy';
import { ABLATION_FAMILIES } from '../bench/kernels/ablationFamilies';

/** Where a test's device solver reads its costs: the energy's volume, or an images data term in its place. */
type Source = { kind: 'volume' } | Extract<DataTerm, { kind: 'images' }>;

// The WebGPU device runs without Dawn's bounds checks (dawnFlags): every
// kernel the solvers build must read only inside its arrays. Here they run
// on gpu.js's cpu backend with every read checked (checkedKernelReads.ts),
// over the kernel schemes, graph constructions and option values that pick
// other kernels or other index arithmetic, on sizes from 1×1 up.
jest.setTimeout(600_000);

let cpu: GpuContext;
let checks: ReadChecks;
const kernelSources = new Set<string>();

beforeAll(async () => {
  checks = installReadChecks();
  cpu = await createGpuContext('cpu');
  // Every kernel source built here, to show the checks saw the kernels.
  const create = cpu.gpu.createKernel.bind(cpu.gpu);
  cpu.gpu.createKernel = ((source: unknown, settings?: unknown) => {
    kernelSources.add(String(source));
    return create(source as never, settings as never);
  }) as typeof cpu.gpu.createKernel;
});
afterAll(() => {
  cpu.destroy();
  checks.restore();
});

test('Dawn runs without bounds checks unless the flag boundsChecks or STEREOCUT_GPU_BOUNDS_CHECKS=1 keeps them; other values are refused', () => {
  expect(BOUNDS_CHECKS_VARIABLE).toBe('STEREOCUT_GPU_BOUNDS_CHECKS');
  expect(dawnFlags(undefined, {})).toEqual(['enable-dawn-features=disable_robustness,disable_workgroup_init']);
  expect(dawnFlags(undefined, { STEREOCUT_GPU_BOUNDS_CHECKS: '0' })).toEqual(['enable-dawn-features=disable_robustness,disable_workgroup_init']);
  expect(dawnFlags(undefined, { STEREOCUT_GPU_BOUNDS_CHECKS: '1' })).toEqual([]);
  expect(() => dawnFlags(undefined, { STEREOCUT_GPU_BOUNDS_CHECKS: 'yes' })).toThrow(/STEREOCUT_GPU_BOUNDS_CHECKS: expected 0 or 1, got 'yes'/);
  // The flag boundsChecks of the context that sets WebGPU up, when given, decides instead of the variable.
  expect(dawnFlags(true, {})).toEqual([]);
  expect(dawnFlags(false, { STEREOCUT_GPU_BOUNDS_CHECKS: '1' })).toEqual(['enable-dawn-features=disable_robustness,disable_workgroup_init']);
  expect(() => resolveDeviceFlags({ boundsChecks: 'yes' as never })).toThrow(/boundsChecks: got 'yes' \(a string\), expected true, false or undefined/);
});

describe('the checks themselves', () => {
  test('a read outside its array throws; one guarded by an if does not; one inside a conditional expression is refused', () => {
    const a = new Input(new Float32Array(12).fill(2) as unknown as number[], [4, 3]);
    const before = checks.reads;
    const guarded = cpu.gpu.createKernel(function (this: { thread: { x: number; y: number } }, A: number[][]) {
      let s = 0.0;
      if (this.thread.x > 0) { s = A[this.thread.y][this.thread.x - 1]; }
      return s;
    }, { output: [4, 3] });
    expect(Array.from((guarded(a) as Float32Array[])[0])).toEqual([0, 2, 2, 2]);
    expect(checks.reads - before).toBe(9);
    // At (0, 0) the flat index is −1: outside the buffer on the device.
    const unguarded = cpu.gpu.createKernel(function (this: { thread: { x: number; y: number } }, A: number[][]) {
      return A[this.thread.y][this.thread.x - 1];
    }, { output: [4, 3] });
    expect(() => unguarded(a)).toThrow(/kernel read outside its array: user_A\[/);
    // One row past the last: a kernel result's rows.
    const rows = cpu.gpu.createKernel(function (this: { thread: { x: number; y: number } }, A: number[][]) { return A[this.thread.y][this.thread.x]; }, { output: [4, 3] });
    const below = cpu.gpu.createKernel(function (this: { thread: { x: number; y: number } }, A: number[][]) { return A[this.thread.y + 1][this.thread.x]; }, { output: [4, 3] });
    expect(() => below(rows(a))).toThrow();
    const selected = cpu.gpu.createKernel(function (this: { thread: { x: number; y: number } }, A: number[][]) {
      return this.thread.x > 0 ? A[this.thread.y][this.thread.x - 1] : 0.0;
    }, { output: [4, 3] });
    expect(() => selected(a)).toThrow(/inside a conditional expression/);
  });
});

/** BK and the device solver from the same labeling, with every kernel read checked: same energies and labels (the benchmarks' lockstep push and level BFS among the families the options may name). */
async function expectChecked(energy: MrfEnergy, init: Uint16Array, variant: GraphVariant, source: Source, options: Partial<GpuMoveOptions>, label: string): Promise<void> {
  const ref = await alphaExpansion(energy, init, new GraphMoveSolver(energy, new BoykovKolmogorovSolver(), variant), { cycles: 2 });
  const gpuEnergy = source.kind === 'images' ? { ...energy, data: source } : energy;
  const solver = new GpuMoveSolver(cpu, gpuEnergy, { variant, keepPlans: false, families: ABLATION_FAMILIES, ...options });
  try {
    const res = await alphaExpansion(energy, init, solver, { cycles: 2 });
    expect(res.cycles.map((c) => c.energy.total)).toEqual(ref.cycles.map((c) => c.energy.total));
    const diff = res.labels.findIndex((v, p) => v !== ref.labels[p]);
    if (diff >= 0) throw new Error(`${label}: labels differ from BK's at pixel ${diff}`);
  } catch (e) {
    throw new Error(`${label}: ${(e as Error).message}`);
  } finally {
    solver.dispose();
  }
}

describe('move kernels: every read inside its array', () => {
  const schemes: Array<Partial<GpuMoveOptions>> = [
    {},
    { push: 'lockstep', bfs: 'level' },
    { push: 'sweep', bfs: 'level', reach: 3 },
    { push: 'split-sweep', bfs: 'scan', reach: 2 },
    { push: 'sweep', bfs: 'scan', reach: 5, tileSide: 3, gate: false },
    // Tiny rounds: moves continue from read-back flows, BFS shortfalls double the passes.
    { iterationsPerRound: 1, bfsPasses: 1, initialRounds: 1, fixedRounds: true, reach: 2, tileSide: 1 },
    { tileSide: 4 },
  ];
  // Every size with every scheme under STEREOCUT_FULL_TESTS=1. By default each scheme runs a 1×1 grid, the largest, and
  // one of the single row and the single column, in turn (the first scheme, the product's defaults, both): every border
  // case the kernels guard, each single line on several schemes.
  const allSizes: Array<[number, number]> = [[1, 1], [1, 7], [6, 1], [2, 3], [5, 4], [11, 6], [9, 13]];
  const sizesOf = (scheme: number): Array<[number, number]> => sample(allSizes, scheme === 0 ? [0, 1, 2, 6] : [0, 1 + (scheme % 2), 6]);
  // The device moves take metric terms only (truncated quadratic is not one).
  const kinds: SmoothnessKind[] = ['linear', 'potts'];

  test.each(schemes.map((s, i) => [JSON.stringify(s), s, i] as const))('random energies, both graphs, options %s', async (_name, scheme, i) => {
    const rand = seededRandom(17 + JSON.stringify(scheme).length);
    for (const [W, H] of sizesOf(i)) {
      const L = 2 + Math.floor(rand() * 5);
      const kind = kinds[Math.floor(rand() * kinds.length)];
      const energy = randomEnergy(rand, W, H, L, kind);
      const init = randomLabels(rand, W * H, L);
      for (const variant of ['reversed', 'classic'] as const) {
        await expectChecked(energy, init, variant, { kind: 'volume' }, scheme, `${W}×${H}×${L} ${kind} ${variant} ${JSON.stringify(scheme)}`);
      }
    }
    expect(checks.reads).toBeGreaterThan(0);
  });

  test('synthetic scene from its images (costs computed in the kernels), both graphs', async () => {
    const scene = generateSyntheticScene({ width: 23, height: 17, ndisp: 6, seed: 5 });
    const params = { ndisp: 6, kind: 'sad' as const, lambda: 20, smoothness: 'linear' as const, truncation: 2 };
    const energy = buildStereoEnergy(scene.left, scene.right, params);
    const init = wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, 3);
    const costs = energy.matcher.options;
    const images: Source = { kind: 'images', left: toIntensity8(scene.left), right: toIntensity8(scene.right), spec: { ...costs, channels: scene.left.channels } };
    for (const variant of ['reversed', 'classic'] as const) {
      await expectChecked(energy, init, variant, images, {}, `synthetic images ${variant}`);
      if (FULL_TESTS) await expectChecked(energy, init, variant, images, { push: 'split-sweep', reach: 4, tileSide: 3 }, `synthetic images ${variant} split-sweep`);
    }
  });
});

describe('WTA kernels: every read inside its array', () => {
  test('both data sources, windows wider than the image, chunks of one label to all of them, sizes 1×1 to 9×13', async () => {
    const rand = seededRandom(41);
    for (const [W, H] of [[1, 1], [1, 7], [6, 1], [5, 4], [9, 13]] as Array<[number, number]>) {
      const image = (): Raster => ({ width: W, height: H, channels: 3, maxval: 255, data: Float32Array.from({ length: W * H * 3 }, () => Math.floor(rand() * 256)) });
      const [left, right] = [image(), image()];
      const energy = buildStereoEnergy(left, right, { ndisp: 5, kind: 'sad+sgrad', lambda: 20, smoothness: 'linear', truncation: 2 });
      const costs = energy.matcher.options;
      const images: Source = { kind: 'images', left: toIntensity8(left), right: toIntensity8(right), spec: { ...costs, channels: 3 } };
      for (const window of [1, 3, 15]) {
        const expected = wtaInit(volumeOf(energy), W, H, 5, window);
        const perChunk = 1 + Math.floor(rand() * 5);
        for (const source of [{ kind: 'volume' } as Source, images]) {
          const solver = new GpuMoveSolver(cpu, source.kind === 'images' ? { ...energy, data: source } : energy, { variant: 'reversed', keepPlans: false });
          try {
            expect(await solver.deviceWta(window, perChunk * W * H)).toEqual(expected);
          } finally {
            solver.dispose();
          }
        }
      }
    }
  });
});

describe('census codes kernel: every read inside its array', () => {
  test('windows wider and taller than the image, sizes 1×1 to 9×13 (replicated borders read clamped coordinates only)', () => {
    const rand = seededRandom(25);
    for (const window of [{ width: 3, height: 3 }, { width: 9, height: 7 }, { width: 11, height: 11 }, { width: 1, height: 5 }]) {
      for (const [W, H] of [[1, 1], [2, 1], [1, 3], [9, 13], [5, 4]]) {
        const grey = (): { width: number; height: number; channels: number; data: Int32Array } =>
          ({ width: W, height: H, channels: 1, data: Int32Array.from({ length: W * H }, () => Math.floor(rand() * 256)) });
        expect(censusPlanesOnBackend(cpu.gpu, grey(), grey(), window).length).toBe(6 * W * H * censusHalves(window));
      }
    }
  });
});

describe('pair kernel: every read inside its array', () => {
  test('sizes 1×1 to 9×13, grey and colour, one view and the check’s two (mirrored columns, each band’s last row)', () => {
    const rand = seededRandom(26);
    for (const [W, H] of [[1, 1], [2, 1], [1, 3], [9, 13], [5, 4]]) {
      for (const channels of [1, 3]) {
        const raster = (): Raster => ({ width: W, height: H, channels, data: Float32Array.from({ length: W * H * channels }, () => Math.floor(rand() * 256)), maxval: 255 });
        for (const views of [['pair'], ['pair', 'mirrored']] as const) {
          const pair = { left: raster(), right: raster(), views, plain: 4, cued: 12, limit: 20 };
          const k = createPairKernel(cpu.gpu, W, H * views.length, pair, false);
          try {
            const out = k(...pairArguments(pair)) as unknown as ArrayLike<unknown>;
            expect(out.length).toBe(4);
          } finally {
            k.destroy();
          }
        }
      }
    }
  });
});

describe('max-flow kernels: every read inside its array', () => {
  const schemes: Array<Partial<PushRelabelOptions>> = [
    {},
    { push: 'lockstep', bfs: 'level' },
    { push: 'sweep', bfs: 'scan', reach: 3 },
    { push: 'split-sweep', bfs: 'scan', reach: 2 },
  ];
  test.each(schemes.map((s) => [JSON.stringify(s), s] as const))('random grids of every kind, options %s', async (_name, scheme) => {
    const solver = new PushRelabelSolver(cpu, { iterationsPerRelabel: 4, bfsPassesPerCall: 4, bfsContinuePasses: 8, families: ABLATION_FAMILIES, ...scheme });
    const bk = new BoykovKolmogorovSolver();
    for (const [W, H] of [[1, 1], [1, 5], [5, 1], [3, 4], [8, 6]] as Array<[number, number]>) {
      for (const kind of RANDOM_GRAPH_KINDS.filter((k) => k !== 'large')) {
        const g = randomGridGraph(seededRandom(W * 97 + H * 13 + kind.length), W, H, kind);
        const r = await solver.solve(g);
        expect(r.flow).toBe(bk.solveSync(g).flow);
      }
    }
  });
});

test('the checks saw the kernels', () => {
  // The device solvers' kernel sources built above (the move solver's graph, push, BFS, check, tally and apply kernels; the max-flow solver's).
  expect(kernelSources.size).toBeGreaterThan(20);
  expect(checks.sites).toBeGreaterThan(100);
});
