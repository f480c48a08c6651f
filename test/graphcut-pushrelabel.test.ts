import { seededRandom } from '../data/random';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { createGpuContext, type GpuContext } from '../gpu/runtime/context';
import { cloneGridGraph, createGridGraph, cutCapacity, MAX_GPU_EXACT_CAPACITY, type GridGraph } from '../graphcut/gridGraph';
import { Input, type IGPUKernelSettings } from 'gpu.js';
import { f32ExactnessViolation, GpuPrecisionError, initialKernelState, PushRelabelSolver, pushRelabelKernelSettings, resolvePushRelabelOptions, type PushRelabelOptions } from '../gpu/maxflow/pushRelabel';
import { globalRelabelPasses, iterationPasses } from '../gpu/maxflow/pushRelabelKernels';
import { SCAN_BFS, SPLIT_SWEEP_PUSH, SWEEP_PUSH } from '../gpu/maxflow/kernelFamilies';
import { ABLATION_FAMILIES } from '../bench/kernels/ablationFamilies';
import { LOCKSTEP_PUSH } from '../bench/kernels/lockstepKernels';
import { LEVEL_BFS } from '../bench/kernels/levelBfsKernel';
import { STATE_PLANES } from '../gpu/maxflow/pushRelabelLayout';
import { expansionLikeGraph, randomGridGraph, RANDOM_GRAPH_KINDS, type RandomGraphKind } from './support/randomGraphs';
import { createMaxFlowSolver } from '../stereo/maxFlowFactory';
import { scaled } from './support/testScope';

// The kernels run on gpu.js's cpu and webasm backends here (CI has no GPU); on a GPU they run unchanged on WebGPU.
jest.setTimeout(120_000);

const bk = new BoykovKolmogorovSolver();
let cpu: GpuContext;
let wasm: GpuContext;

beforeAll(async () => {
  cpu = await createGpuContext('cpu');
  wasm = await createGpuContext('webasm');
});

afterAll(() => {
  cpu.destroy();
  wasm.destroy();
});

async function expectSameAsBk(solver: PushRelabelSolver, g: GridGraph, label: string): Promise<void> {
  const ref = bk.solveSync(g);
  const r = await solver.solve(g);
  if (r.flow !== ref.flow) throw new Error(`${label}: flow ${r.flow}, BK ${ref.flow}`);
  expect(cutCapacity(g, r.sinkSide)).toBe(r.flow);
  const diff = r.sinkSide.findIndex((v, p) => v !== ref.sinkSide[p]);
  if (diff >= 0) throw new Error(`${label}: sinkSide differs from BK's canonical cut at pixel ${diff}`);
}

const exactKinds = RANDOM_GRAPH_KINDS.filter((k) => k !== 'large');

describe('PushRelabelSolver against Boykov–Kolmogorov', () => {
  test('random small grids of every kind: same flow and same canonical cut', async () => {
    const solver = new PushRelabelSolver(cpu, { iterationsPerRelabel: 8, bfsPassesPerCall: 8, bfsContinuePasses: 16 });
    const sizes: Array<[number, number]> = [[1, 1], [1, 6], [6, 1], [2, 2], [3, 5], [7, 4], [9, 9], [12, 7]];
    let cases = 0;
    // Three seeds under STEREOCUT_FULL_TESTS=1, two by default.
    const seeds = scaled(3, 2);
    for (let seed = 0; seed < seeds; seed++) {
      for (const [W, H] of sizes) {
        for (const kind of exactKinds) {
          const g = randomGridGraph(seededRandom(seed * 1009 + W * 31 + H), W, H, kind);
          await expectSameAsBk(solver, g, `${W}×${H} ${kind} seed ${seed}`);
          cases++;
        }
      }
    }
    expect(cases).toBe(seeds * sizes.length * exactKinds.length);
  });

  // The large grids: 64×64 under STEREOCUT_FULL_TESTS=1, 48×48 by default (each kind still runs).
  const big = scaled(64, 48);
  test(`medium and ${big}×${big} grids, including expansion-shaped and disconnected ones`, async () => {
    const solver = new PushRelabelSolver(cpu);
    const cases: Array<[number, number, RandomGraphKind]> = [
      [32, 32, 'uniform'], [big, big, 'expansion'], [big, big, 'disconnected'], [big, big, 'tiny'],
      [big, big, 'sparse'], [big, big, 'terminals'], [40, 17, 'expansion'], [17, 40, 'zero'],
    ];
    for (const [W, H, kind] of cases) {
      await expectSameAsBk(solver, randomGridGraph(seededRandom(W * H), W, H, kind), `${W}×${H} ${kind}`);
    }
  });

  test('the webasm backend runs the same kernels fused and agrees', async () => {
    const solver = new PushRelabelSolver(wasm, { iterationsPerRelabel: 16 });
    for (const kind of ['uniform', 'expansion', 'tiny'] as const) {
      await expectSameAsBk(solver, randomGridGraph(seededRandom(77), 24, 20, kind), `webasm 24×20 ${kind}`);
    }
    expect(solver.executorKinds().some((k) => k.startsWith('fused'))).toBe(true);
  });

  test('every schedule gives the same exact answer (K, per-pass global relabel, one BFS level per call)', async () => {
    const schedules: PushRelabelOptions[] = [
      { iterationsPerRelabel: 1 },
      { iterationsPerRelabel: 3, bfsPassesPerCall: 1, bfsContinuePasses: 1 },
      { iterationsPerRelabel: 64 },
      { iterationsPerRelabel: 4, globalRelabel: 'perPass' },
    ];
    const graphs = [
      expansionLikeGraph(seededRandom(3), 20, 14, { reversed: false }),
      expansionLikeGraph(seededRandom(4), 14, 20, { reversed: true }),
      randomGridGraph(seededRandom(5), 16, 16, 'disconnected'),
    ];
    for (const options of schedules) {
      const solver = new PushRelabelSolver(cpu, options);
      for (let i = 0; i < graphs.length; i++) await expectSameAsBk(solver, graphs[i], `graph ${i} ${JSON.stringify(options)}`);
    }
  });

  // The lockstep push and level BFS are the benchmarks' families (bench/kernels/), given to the solver as its families.
  test('every kernel scheme (sweep, split sweep or lockstep push, scan or level BFS) and reach gives the exact answer on hundreds of random grids', async () => {
    // Reaches below the grid size put segment borders inside the runs: flow must wait at them and still arrive.
    const schemes: PushRelabelOptions[] = [
      { push: 'sweep', bfs: 'scan', reach: 1 }, { push: 'sweep', bfs: 'scan', reach: 2 }, { push: 'sweep', bfs: 'scan', reach: 5 },
      { push: 'sweep', bfs: 'level', reach: 3 }, { push: 'lockstep', bfs: 'scan', reach: 4 }, { push: 'lockstep', bfs: 'level' },
      { push: 'split-sweep', bfs: 'scan', reach: 2 }, { push: 'split-sweep', bfs: 'level', reach: 5 },
    ];
    const rng = seededRandom(4242);
    let cases = 0;
    // Per scheme: small grids (every corner case of segments and borders), then a few up to 40×40.
    const small = scaled(100, 12);
    const perScheme = small + scaled(10, 2);
    for (const scheme of schemes) {
      const solver = new PushRelabelSolver(cpu, { ...scheme, families: ABLATION_FAMILIES, iterationsPerRelabel: 1 + Math.floor(rng() * 6), bfsPassesPerCall: 2, bfsContinuePasses: 4 });
      for (let i = 0; i < perScheme; i++) {
        const W = 1 + Math.floor(rng() * (i < small ? 14 : 40));
        const H = 1 + Math.floor(rng() * (i < small ? 14 : 40));
        const kind = exactKinds[Math.floor(rng() * exactKinds.length)];
        const g = kind === 'expansion' && rng() < 0.5 ? expansionLikeGraph(rng, W, H, { reversed: rng() < 0.5 }) : randomGridGraph(rng, W, H, kind);
        await expectSameAsBk(solver, g, `${W}×${H} ${kind} #${i} ${JSON.stringify(scheme)}`);
        cases++;
      }
    }
    expect(cases).toBe(schemes.length * perScheme);
  });

  test('the split sweep (gather + apply) leaves exactly the state of the single-kernel sweep after every iteration, on random grids', async () => {
    const rng = seededRandom(777);
    for (let i = 0; i < scaled(40, 16); i++) {
      const W = 1 + Math.floor(rng() * 30);
      const H = 1 + Math.floor(rng() * 30);
      const reach = 1 + Math.floor(rng() * 6);
      const g = rng() < 0.5 ? expansionLikeGraph(rng, W, H, { reversed: rng() < 0.5 }) : randomGridGraph(rng, W, H, exactKinds[Math.floor(rng() * exactKinds.length)]);
      const { caps, state } = initialKernelState(g);
      const settings = (planes: number): IGPUKernelSettings => pushRelabelKernelSettings(W, H, reach, planes);
      const relabel = globalRelabelPasses(cpu.gpu, SCAN_BFS, settings);
      const run = async (push: 'sweep' | 'split-sweep'): Promise<number[]> => {
        const steps = iterationPasses(cpu.gpu, push === 'sweep' ? SWEEP_PUSH : SPLIT_SWEEP_PUSH, settings);
        const pipe = cpu.gpu.createPipeline(function (S: unknown, C: unknown) {
          let s: unknown = relabel(S, C, 8, true);
          const out: unknown[] = [];
          for (let it = 0; it < 4; it++) {
            for (const step of steps) s = step(s, C);
            out.push(s);
          }
          return out;
        });
        const out = (await pipe(new Input(state as unknown as number[], [W, H, STATE_PLANES]), new Input(caps as unknown as number[], [W, H, 4]))) as unknown as number[][][][];
        void pipe.destroy();
        return out.flatMap((o) => o.flatMap((plane) => plane.flatMap((row) => Array.from(row))));
      };
      expect(await run('split-sweep')).toEqual(await run('sweep'));
    }
  });

  test('gated passes: with the gate open they leave the ungated passes\' state, with it shut their input, on random grids of every scheme', async () => {
    const rng = seededRandom(4242);
    const gate = { skip: 'G[2] === 0.0', wgsl: 'get_user_G(0, 0, 2) == 0.0' };
    const open = new Input(Float32Array.from([0, 0, 1, 0]) as unknown as number[], [4]);
    const shut = new Input(Float32Array.from([0, 0, 0, 0]) as unknown as number[], [4]);
    let changedByUngated = 0;
    // 30 grids under STEREOCUT_FULL_TESTS=1, 18 by default: each push scheme with each BFS scheme, several times either way.
    const grids = scaled(30, 18);
    for (let i = 0; i < grids; i++) {
      const W = 1 + Math.floor(rng() * 24);
      const H = 1 + Math.floor(rng() * 24);
      const reach = 1 + Math.floor(rng() * 5);
      const push = [LOCKSTEP_PUSH, SWEEP_PUSH, SPLIT_SWEEP_PUSH][i % 3];
      const g = rng() < 0.5 ? expansionLikeGraph(rng, W, H, { reversed: rng() < 0.5 }) : randomGridGraph(rng, W, H, exactKinds[Math.floor(rng() * exactKinds.length)]);
      const { caps, state } = initialKernelState(g);
      const settings = (planes: number): IGPUKernelSettings => pushRelabelKernelSettings(W, H, reach, planes);
      const relabel = globalRelabelPasses(cpu.gpu, i % 2 ? SCAN_BFS : LEVEL_BFS, settings);
      const relabelGated = globalRelabelPasses(cpu.gpu, i % 2 ? SCAN_BFS : LEVEL_BFS, settings, gate);
      const plain = iterationPasses(cpu.gpu, push, settings);
      const gated = iterationPasses(cpu.gpu, push, settings, gate);
      // Three iterations and global relabels (from scratch and continued) from the state after a global relabel, with each set of passes.
      const run = async (G: Input | null): Promise<number[]> => {
        const pipe = cpu.gpu.createPipeline(function (S: unknown, C: unknown, Gs: unknown) {
          let s: unknown = relabel(S, C, 8, true);
          const out: unknown[] = [s];
          for (let it = 0; it < 3; it++) {
            for (let j = 0; j < plain.length; j++) s = G ? gated[j](s, C, Gs) : plain[j](s, C);
            out.push(s);
          }
          out.push(G ? relabelGated(s, C, 2, true, Gs) : relabel(s, C, 2, true));
          out.push(G ? relabelGated(s, C, 1, false, Gs) : relabel(s, C, 1, false));
          return out;
        });
        const out = (await pipe(new Input(state as unknown as number[], [W, H, STATE_PLANES]), new Input(caps as unknown as number[], [W, H, 4]), G ?? shut)) as unknown as number[][][][];
        void pipe.destroy();
        return out.flatMap((o) => o.flatMap((plane) => plane.flatMap((row) => Array.from(row))));
      };
      const ungated = await run(null);
      expect(await run(open)).toEqual(ungated);
      const n = W * H * STATE_PLANES;
      const start = ungated.slice(0, n);
      const still = await run(shut);
      for (let k = 1; k < still.length / n; k++) expect(still.slice(k * n, (k + 1) * n)).toEqual(start);
      if (ungated.slice(n).some((v, j) => v !== start[j % n])) changedByUngated++;
    }
    // The shut gate is only shown to hold back passes that would have changed something: on more than a third of the grids.
    expect(changedByUngated).toBeGreaterThan(grids / 3);
  });

  test('stats count pipeline calls, iterations and global relabels', async () => {
    const solver = new PushRelabelSolver(cpu, { iterationsPerRelabel: 4, bfsPassesPerCall: 6 });
    const r = await solver.solve(expansionLikeGraph(seededRandom(9), 16, 12));
    const s = r.stats;
    expect(s.pipelineCalls).toBeGreaterThanOrEqual(1);
    expect(s.readbacks).toBe(s.pipelineCalls);
    expect(s.globalRelabels).toBeGreaterThanOrEqual(1);
    expect(s.iterations % 4).toBe(0);
    expect(s.iterations).toBe(4 * (s.globalRelabels - 1));
    expect(s.bfsPasses).toBeGreaterThanOrEqual(6 * s.globalRelabels);
  });

  test('input capacity arrays are left unchanged', async () => {
    const solver = new PushRelabelSolver(cpu);
    const g = expansionLikeGraph(seededRandom(11), 15, 13);
    const before = cloneGridGraph(g);
    await solver.solve(g);
    for (const k of ['source', 'sink', 'right', 'rightRev', 'down', 'downRev'] as const) expect(g[k]).toEqual(before[k]);
  });
});

describe('f32 exactness bound', () => {
  test('the largest exact graph is solved, one unit more is refused with a message naming 2^24', async () => {
    const ok = createGridGraph(2, 1);
    ok.source[0] = MAX_GPU_EXACT_CAPACITY;
    ok.right[0] = 5;
    ok.sink[1] = 7;
    expect(f32ExactnessViolation(ok)).toBeNull();
    await expectSameAsBk(new PushRelabelSolver(cpu), ok, 'bound');

    const over = cloneGridGraph(ok);
    over.rightRev[0] = 1; // pixel 0 could now hold 2^24 + 1 units of excess
    expect(f32ExactnessViolation(over)).toMatch(/pixel 0 .*2\^24/);
    const solver = new PushRelabelSolver(cpu);
    await expect(solver.solve(over)).rejects.toThrow(GpuPrecisionError);
    await expect(solver.solve(over)).rejects.toThrow(/f32-exact bound 2\^24 = 16777216.*use the bk backend/);
  });

  test('large-capacity random graphs are refused, or solved by BK through the factory and reported', async () => {
    const g = randomGridGraph(seededRandom(21), 9, 7, 'large');
    await expect(new PushRelabelSolver(cpu).solve(g)).rejects.toThrow(GpuPrecisionError);
    const solver = await createMaxFlowSolver('gpujs-cpu', { cpuKernels: 'cpu' });
    const r = await solver.solve(g);
    const ref = bk.solveSync(g);
    expect(r.flow).toBe(ref.flow);
    expect(r.sinkSide).toEqual(ref.sinkSide);
    expect(r.stats.bkFallback).toBe(1);
    const strict = await createMaxFlowSolver('gpujs-cpu', { cpuKernels: 'cpu', fallbackToBk: false });
    await expect(strict.solve(g)).rejects.toThrow(/2\^24/);
  });
});

describe('options and factory', () => {
  test('bad options are rejected with the option named', () => {
    expect(() => resolvePushRelabelOptions({ iterationsPerRelabel: 0 })).toThrow(/iterationsPerRelabel/);
    expect(() => resolvePushRelabelOptions({ bfsPassesPerCall: 1.5 })).toThrow(/bfsPassesPerCall/);
    expect(() => resolvePushRelabelOptions({ globalRelabel: 'sometimes' as never })).toThrow(/globalRelabel/);
    expect(() => resolvePushRelabelOptions({ push: 'wave' as never })).toThrow(/option push/);
    expect(() => resolvePushRelabelOptions({ bfs: 'dfs' as never })).toThrow(/option bfs/);
    expect(() => resolvePushRelabelOptions({ reach: 0 })).toThrow(/option reach/);
    expect(() => resolvePushRelabelOptions({ reach: 5000 })).toThrow(/option reach/);
  });

  test('backends by name: bk, gpujs-cpu, auto (BK without WebGPU); unknown names rejected', async () => {
    expect((await createMaxFlowSolver('bk')).name).toBe('bk');
    const pr = await createMaxFlowSolver('gpujs-cpu', { cpuKernels: 'cpu' });
    expect(pr.name).toBe('pushrelabel-cpu');
    const g = randomGridGraph(seededRandom(8), 6, 5, 'uniform');
    expect((await pr.solve(g)).flow).toBe(bk.solveSync(g).flow);
    const auto = await createMaxFlowSolver('auto');
    expect(['bk', 'pushrelabel-webgpu']).toContain(auto.name);
    await expect(createMaxFlowSolver('cuda' as never)).rejects.toThrow(/unknown value 'cuda'/);
  });
});
