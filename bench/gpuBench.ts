/**
 * Device measurements of α-expansion with the moves on the GPU (run on the
 * built JS: `node dist/bench/gpuBench.js OUT.json SECTION... `). Every
 * run's solver compiles its own plans (keepPlans false) unless its section
 * says otherwise, so that runs compare like with like. Sections:
 *   verify     4 cycles of tsukuba, venus, teddy, cones with every cut
 *              re-solved by BK on the CPU (graph, flow and cut compared)
 *   scenes     full 4-cycle runs of the same four and Adirondack, device and
 *              BK, with the phase split, cuts, rounds and iterations
 *   ablation   teddy and tsukuba: graph variant, init, order, K and B,
 *              fixed vs adaptive rounds, and the per-graph solver of phase 1
 *              with fused and per-pass global relabel
 *   kernels    tsukuba and teddy: push sweep vs lockstep, BFS scan vs level,
 *              K, B and the reach of sweeps and scans
 *   resume     tsukuba, teddy and Adirondack with moves that did not
 *              converge redone from scratch instead of resumed (compare
 *              with the scenes section's device rows)
 *   split      the same three with the split sweep (a gather walks the runs
 *              once per pixel, a loop-free pass applies them)
 *   bfs        the same three with B = 16 and B = 32 BFS passes per
 *              global relabel (the default is 16 up to 512 pixels a side)
 *   gate       the same three without the gate (rounds after a move
 *              converged run in full instead of as copies)
 *   compile    the same three with plan compiles left out of the rounds
 *              choice (planCompileRounds and planCompileRoundsPerRound 0)
 *   options    the same three with the device options of $GPU_BENCH_OPTIONS
 *              (JSON), for side-by-side runs of any option
 *   cold       the same three with every move started from zero flow
 *              (warmStart false; the default starts a move from its α's
 *              previous flows)
 *   host       tsukuba, teddy and Adirondack, each twice with every call
 *              recorded in one compute pass (the default) and twice with
 *              a compute pass per step (gpu.js's own recording),
 *              alternating, after a warm-up run: kernel builds, plan
 *              compiles, the calls' time until submit (upload, recording)
 *              and after it (device, readback), from wrappers of gpu.js's
 *              WebGPU internals (gpuHostProfile.ts)
 *   ahead      the same as host, alternating calls recorded ahead (the
 *              default: the next call's passes recorded while the device
 *              runs the current one) with calls recorded when made
 *   inplace    the same as host, alternating calls made in place with flat
 *              results (the default: no snapshot of the arguments, results
 *              as flat arrays) with gpu.js's own call and shaped results
 *   literals   the same as host, alternating literals shared between a
 *              solver's plans (the default: the volume, weights and
 *              V table bound without copies and uploaded once per device)
 *              with gpu.js's copy and buffer per plan and seat
 *              (gpu/runtime/gpujs/sharedLiterals.ts)
 *   pairs      tsukuba, teddy and Adirondack, $GPU_BENCH_REPS (default 4)
 *              runs each with the default device options and with those of
 *              $GPU_BENCH_OPTIONS, alternating, every run compiling its own
 *              plans (keepPlans false), then a table of the moves' times
 *   kept       tsukuba, teddy and Adirondack, each run once, then twice
 *              taking the program (kernels, compiled plans) the run before
 *              kept (the default) and twice compiling its own (keepPlans
 *              false), alternating (gpu/move/keptPrograms.ts)
 *   clocks     tsukuba, teddy and Adirondack, each run after 4.5 s of an
 *              idle GPU (its clock dropped), alternating the clock warm-up
 *              on (the default) and off, twice, then one run right after
 *              (gpu/runtime/clockWarmup.ts)
 *   threads    teddy and Adirondack, alternating the cost volume and WTA
 *              on worker threads (the default for volumes of 4 M entries
 *              and more) with both on the main thread, twice each, after a
 *              warm-up run (costs/parallelCosts.ts)
 *   builds     the same as host, alternating kernel builds shared between
 *              plans (the default: translations and shader modules kept,
 *              emptied before every run, as in a fresh process) with every
 *              plan building its kernels anew (gpu/runtime/gpujs/kernelBuildCache.ts)
 *   pipelines  synthetic scenes of sizes new to the process (so every
 *              compute pipeline is new to Dawn and to the driver's disk
 *              cache, as in a fresh process), alternating a plan's
 *              pipelines created together before it compiles (the default)
 *              with gpu.js creating them one by one, three pairs
 *   workgroups tsukuba, teddy and Adirondack with the 2D/3D kernels in
 *              workgroups of 8×8 (gpu.js's own), 16×16, 32×8 and 64×4
 *              threads, alternating, twice (gpu/runtime/gpujs/workgroupSize.ts)
 *   dispatch   device time of one dispatch of a [W, H, 5] copy written in
 *              WGSL directly, in workgroups of 64, 128 and 256 threads,
 *              and of an empty dispatch, at three sizes (no gpu.js)
 *   passes     device time of one pass of each state kernel at four sizes,
 *              with 8×8 workgroups and with the default shape,
 *              and of the sweep and the BFS scan gated shut (copies); BFS
 *              passes work on the [W, H] distances; and of a whole
 *              convergence check (tiles of 8, 4, 2 and 1 pixels a side,
 *              then its OR levels); the sweeps and scan at reach 32 and
 *              at reach 8 (sweepH8, sweepV8, bfsScan8: the default up to
 *              2^20 pixels); $GPU_BENCH_PASSES (names, comma-separated),
 *              $GPU_BENCH_SIZES (e.g. 384x288,450x375) and
 *              $GPU_BENCH_SHAPES (e.g. 16x16,32x8) narrow it
 *   large      a synthetic W×H pair with L labels, costs computed on the
 *              device from the images (no volume anywhere):
 *              large:WxHxL:init:cycles[:push], init wta, zero or
 *              labels=FILE (uint16); $GPU_BENCH_CHECKPOINT: labels
 *              written there after every cycle; $GPU_BENCH_OPTIONS: device
 *              options as JSON
 * Scenes come from $STEREO_DATA (Middlebury folders). The JSON is rewritten
 * after every run, so a run cut short still reports.
 */
import { DEFAULT_WORKGROUP, resolveDeviceFlags } from '../gpu/runtime/deviceFlags';
import { seededRandom } from '../data/random';
import * as fs from 'fs';
import * as path from 'path';
import { generateSyntheticScene } from '../data/synthetic';
import { readLabeling, writeLabeling } from '../data/smrf';
import { loadScene } from '../data/scene';
import type { Scene } from '../data/sceneTypes';
import { alphaExpansion, type MoveProgress } from '../expansion/alphaExpansion';
import { GpuMoveSolver } from '../gpu/move/gpuMoveSolver';
import { type GpuMoveOptions, type GpuMoveSettings } from '../gpu/move/moveSettings';
import { GraphMoveSolver, type MoveSolver } from '../expansion/moveSolver';
import { createGpuContext } from '../gpu/runtime/context';
import { buildStereoEnergy, type CostThreading } from '../costs';
import { energyOptions } from '../stereo/matchViews';
import { clearKernelBuildCache } from '../gpu/runtime/gpujs/kernelBuildCache';
import type { WorkgroupShape } from '../gpu/runtime/gpujs/workgroupSize';
import { Input } from '../gpu/runtime/gpujs/gpuJs';
import type { IGPUKernelSettings } from 'gpu.js';
import { initialKernelState, PushRelabelSolver, pushRelabelKernelSettings, type PushRelabelOptions } from '../gpu/maxflow/pushRelabel';
import { median } from '../app/bench/median';
import { gatedKernel, globalRelabelPasses, iterationPasses, UNCHANGED_STATE } from '../gpu/maxflow/pushRelabelKernels';
import { SCAN_BFS, SPLIT_SWEEP_PUSH, type PushScheme } from '../gpu/maxflow/kernelFamilies';
import { bfsScanSource, bfsStartSource, withHeightsSource } from '../gpu/maxflow/bfsKernels';
import { bfsLevelSource } from './kernels/levelBfsKernel';
import { pushRelabelSource } from './kernels/lockstepKernels';
import { ABLATION_FAMILIES } from './kernels/ablationFamilies';
import { STATE_PLANES } from '../gpu/maxflow/pushRelabelLayout';
import { sweepPushSource } from '../gpu/maxflow/sweepKernels';
import { expansionLikeGraph } from '../test/support/randomGraphs';
import { checkTilesSource, MOVE_DONE_GATE, orTilesSource, reductionLevels, TILE } from '../gpu/move/reductionKernels';
import { createMoveSolver } from '../stereo/backends';
import { installHostProfiler } from './gpuHostProfile';
import { costOptions, costsLeftToDevice, match, resolveParams, startingLabels, stereoEnergy, warmUpForBackend } from '../stereo/match';
import type { BackendName, MatchParams } from '../stereo/params';
import { sceneParamsFor } from '../stereo/sceneParams';
import { gpuJsInternal } from '../gpu/runtime/gpujs/internals';
import { placeBackend } from '../gpu/runtime/backends';

type Json = Record<string, unknown>;

interface RunSpec {
  backend: BackendName | 'pr-pipeline' | 'pr-perPass';
  params?: Partial<MatchParams>;
  /** The device moves' settings, and in `device` the flags the run's context is made with (per run: runs never share flags). */
  gpu?: GpuMoveSettings;
  verify?: boolean;
  /** The clock warm-up before the costs (gpu backend only; default as match(): off when the costs are left to the device). */
  warmUp?: boolean;
  /** When the volume and the WTA go to worker threads (costs/parallelCosts.ts); absent: the defaults. */
  costThreads?: Partial<CostThreading>;
}

async function runScene(scene: Scene, spec: RunSpec): Promise<Json> {
  const t0 = performance.now();
  const params = resolveParams({ ...sceneParamsFor(scene.name), ...spec.params });
  // As match(): with the device moves the costs are left to the device unless the run's params say --costs volume.
  const leftToDevice = spec.backend === 'gpu' && costsLeftToDevice(params, scene.ndisp, await placeBackend('gpu'), spec.verify ?? false);
  const clockWarmup = spec.backend === 'gpu' ? await warmUpForBackend('gpu', spec.warmUp, leftToDevice, resolveDeviceFlags(spec.gpu?.device)) : undefined;
  const energy = spec.costThreads
    ? buildStereoEnergy(scene.left, scene.right, { ...energyOptions(scene.left, scene.ndisp, params, leftToDevice, 0, 1), threads: spec.costThreads })
    : stereoEnergy(scene.left, scene.right, scene.ndisp, params, leftToDevice);
  const t1 = performance.now();
  let solver: MoveSolver;
  if (spec.backend === 'pr-pipeline' || spec.backend === 'pr-perPass') {
    const ctx = await createGpuContext('webgpu', spec.gpu?.device);
    const pr: PushRelabelOptions = { globalRelabel: spec.backend === 'pr-perPass' ? 'perPass' : 'pipeline' };
    solver = new GraphMoveSolver(energy, new PushRelabelSolver(ctx, pr), params.graph);
  } else {
    // Every run compiles its own plans, as it did before plans were kept between runs, so that sections compare like with like; the kept section asks for them.
    // The benchmarks' kernel families (the lockstep push, the level BFS) are at hand for the settings that name them.
    solver = await createMoveSolver(energy, { backend: spec.backend, graph: params.graph, verify: spec.verify ?? false, gpu: { keepPlans: false, families: ABLATION_FAMILIES, ...spec.gpu }, ...costOptions(energy, leftToDevice) });
  }
  const t2 = performance.now();
  const init = await startingLabels(energy, params, solver);
  const t3 = performance.now();
  // Per cut: pixels changed, rounds it needed, and the calls it took beyond the first (continued or redone).
  const perMove: number[][] = [];
  const onMove = (m: MoveProgress): void => {
    if (m.stats) perMove.push([m.changed, m.stats.rounds ?? 0, (m.stats.resumedCalls ?? 0) + (m.stats.redoneMoves ?? 0)]);
  };
  const r = await alphaExpansion(energy, init, solver, { order: params.order, cycles: params.cycles, seed: params.seed, onMove });
  const t4 = performance.now();
  const counters = solver instanceof GpuMoveSolver ? { ...solver.counters, executors: solver.executorKinds() } : undefined;
  // Per call: rounds, BFS passes, resumed (0/1), failed checks, converged (0/1), ms, ms until submitted, warm-started (0/1), compiled its plan (0/1).
  const ms2 = (v: number): number => Math.round(v * 100) / 100;
  const calls = solver instanceof GpuMoveSolver ? solver.calls.map((c) => [c.rounds, c.bfs, c.resumed ? 1 : 0, c.failedChecks, c.converged ? 1 : 0, ms2(c.deviceMs), ms2(c.submitMs), c.warm ? 1 : 0, c.compiled ? 1 : 0]) : undefined;
  solver.dispose?.();
  const stats: Record<string, number> = {};
  for (const c of r.cycles) for (const [k, v] of Object.entries(c.stats)) stats[k] = (stats[k] ?? 0) + v;
  return {
    scene: scene.name, size: `${energy.width}x${energy.height}`, labels: energy.labels, backend: r.backend, device: r.device,
    spec, graph: params.graph, init: params.init, order: params.order,
    initialEnergy: r.initialEnergy.total, energies: r.cycles.map((c) => c.energy.total), finalEnergy: r.finalEnergy.total,
    cuts: r.cuts, pixelsChanged: r.cycles.map((c) => c.pixelsChanged),
    perCycle: r.cycles.map((c) => ({ cuts: c.cuts, buildMs: c.buildMs, flowMs: c.flowMs, rounds: c.stats.rounds })),
    costsOnDevice: leftToDevice,
    ms: { costs: t1 - t0, setup: t2 - t1, init: t3 - t2, expansion: t4 - t3, total: t4 - t0, build: r.cycles.reduce((s, c) => s + c.buildMs, 0), flow: r.cycles.reduce((s, c) => s + c.flowMs, 0) },
    stats, counters, perMove: counters ? perMove : undefined, calls, clockWarmup,
  };
}

/** Idle time before each run of the clocks section: longer than a GPU driver keeps its clock raised after the last work, so each run starts from the idle clock. */
const CLOCK_IDLE_MS = 4500;

/** Sections that run tsukuba, teddy and Adirondack with one device option changed: the label of the runs and the option. */
const ONE_OPTION_SECTIONS = new Map<string, [string, GpuMoveSettings]>([
  ['resume', ['redo', { resume: false }]],
  ['split', ['split-sweep', { push: 'split-sweep' }]],
  ['gate', ['ungated', { gate: false }]],
  ['compile', ['compiles ignored', { planCompileRounds: 0, planCompileRoundsPerRound: 0 }]],
  ['cold', ['cold starts', { warmStart: false }]],
]);

/** Extra device options for the large and options sections from $GPU_BENCH_OPTIONS (JSON, e.g. '{"warmStart":false}'). */
function benchOptions(): GpuMoveSettings {
  const raw = process.env.GPU_BENCH_OPTIONS;
  if (!raw) return {};
  try {
    return JSON.parse(raw) as GpuMoveSettings;
  } catch (e) {
    throw new Error(`GPU_BENCH_OPTIONS: not JSON (${(e as Error).message})`);
  }
}

/** Runs per setting of the pairs section, from $GPU_BENCH_REPS (default 4). */
function benchReps(): number {
  const raw = process.env.GPU_BENCH_REPS ?? '4';
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`GPU_BENCH_REPS: expected a positive integer, got '${raw}'`);
  return n;
}

/** The pairs section's table on stderr: per scene and setting, the moves' time of each run and the median, and the time of the calls that compiled a plan. */
function printPairs(runs: Json[]): void {
  const groups = new Map<string, number[][]>();
  for (const r of runs) {
    const label = String(r.label);
    if (label.startsWith('warm-up') || r.error) continue;
    const ms = r.ms as { expansion: number };
    const compiled = ((r.calls as number[][] | undefined) ?? []).filter((c) => c[8] === 1).reduce((t, c) => t + c[5], 0);
    const list = groups.get(label) ?? [];
    list.push([ms.expansion, compiled]);
    groups.set(label, list);
  }
  process.stderr.write('| run | moves, ms (each run) | median | calls that compiled, ms (median) |\n|---|---|---:|---:|\n');
  for (const [label, list] of groups) {
    process.stderr.write(`| ${label} | ${list.map((v) => v[0].toFixed(0)).join(' / ')} | ${median(list.map((v) => v[0])).toFixed(0)} | ${median(list.map((v) => v[1])).toFixed(0)} |\n`);
  }
}

/**
 * A synthetic W×H pair with L labels, costs on demand. `initKind` is wta,
 * zero, or labels=FILE (a uint16 labeling, e.g. an earlier run's
 * checkpoint). With $GPU_BENCH_CHECKPOINT set, the labeling is written
 * there after every cycle, so a run longer than one command continues in
 * the next (its first cycle then runs every move: which labels could be
 * skipped is not carried over).
 */
async function large(W: number, H: number, L: number, initKind: string, cycles: number, push: PushScheme | undefined, progress: Json[], save: () => void): Promise<Json> {
  const t0 = performance.now();
  const scene = generateSyntheticScene({ width: W, height: H, ndisp: L, seed: 7 });
  const t1 = performance.now();
  const given = initKind.startsWith('labels=') ? readLabeling(initKind.slice('labels='.length), W, H, L) : undefined;
  const checkpoint = process.env.GPU_BENCH_CHECKPOINT;
  const cycleLog: Json[] = [];
  // Costs on demand: no volume on the host or the device, each label's costs computed by the move kernels.
  const r = await match(scene.left, scene.right, {
    gpu: { ...(push ? { push, families: ABLATION_FAMILIES } : {}), ...benchOptions() },
    // GPU_BENCH_MODE=cpu runs the same device moves on gpu.js's CPU backend (a check of the section off the GPU).
    ndisp: L, backend: process.env.GPU_BENCH_MODE === 'cpu' ? 'gpujs-cpu' : 'gpu', costs: 'on-demand', init: initKind === 'wta' ? 'wta' : 'zero', initialLabels: given, cycles,
    // Progress on stderr, so a run stopped by a time limit still shows how far it got.
    onMove: (m) => {
      const at = (performance.now() - t1) / 1000;
      process.stderr.write(`cycle ${m.cycle} move ${m.index}/${m.count} α=${m.alpha} changed ${m.changed} rounds ${m.stats?.rounds ?? '-'} at ${at.toFixed(1)} s\n`);
      progress.push({ ...m, at });
      save();
    },
    onCycle: (c, labels) => {
      if (checkpoint) writeLabeling(checkpoint, labels);
      const at = (performance.now() - t1) / 1000;
      cycleLog.push({ cycle: c.cycle, energy: c.energy.total, cuts: c.cuts, skipped: c.skipped, pixelsChanged: c.pixelsChanged, at });
      process.stderr.write(`cycle ${c.cycle} done: energy ${c.energy.total}, ${c.cuts} cuts, at ${at.toFixed(1)} s${checkpoint ? `, labels in ${checkpoint}` : ''}\n`);
      save();
    },
  });
  const gt = scene.groundTruth!;
  let bad = 0;
  let known = 0;
  for (let i = 0; i < W * H; i++) if (Number.isFinite(gt[i])) { known++; if (Math.abs(r.disparity[i] - gt[i]) > 1) bad++; }
  return {
    size: `${W}x${H}`, labels: L, init: initKind, backend: r.backend, device: r.device,
    energies: [r.initialEnergy.total, ...r.cycles.map((c) => c.energy.total)], cuts: r.cuts, cycles: cycleLog,
    ms: { scene: t1 - t0, ...r.times }, badPixelPercent: (100 * bad) / known,
  };
}

/**
 * Device time of one pass of each state kernel at W×H: pipelines of 20 and
 * 120 passes on an expansion-shaped graph after a global relabel, timed 3
 * times each; (t120 − t20) / 100 cancels the per-call upload and readback
 * (each pipeline returns only a convergence test's tiles). The kernels in
 * workgroups of `shape` (their context's flag).
 */
async function passCosts(W: number, H: number, shape: WorkgroupShape): Promise<Json> {
  const ctx = await createGpuContext((process.env.GPU_BENCH_MODE as 'webgpu' | 'cpu' | undefined) ?? 'webgpu', { workgroup: shape });
  const g = expansionLikeGraph(seededRandom(1), W, H, { reversed: true });
  const n = W * H;
  const { caps, state } = initialKernelState(g);
  // Kernels at the reach of the older rows (32) unless given: the default reach is 8 up to 2^20 pixels.
  const settings = (planes: number, reach = 32): IGPUKernelSettings => pushRelabelKernelSettings(W, H, reach, planes);
  const gpu = ctx.gpu;
  const kernel = (source: string, planes = STATE_PLANES, reach?: number): ((...a: unknown[]) => unknown) => {
    const kern = gpu.createKernel(source, settings(planes, reach));
    return (...a: unknown[]) => kern(...a);
  };
  const split = iterationPasses(gpu, SPLIT_SWEEP_PUSH, settings);
  const relabel = globalRelabelPasses(gpu, SCAN_BFS, settings);
  const start = kernel(bfsStartSource(), 1);
  const merge = kernel(withHeightsSource());
  const level = kernel(bfsLevelSource(), 1);
  const scan = kernel(bfsScanSource(), 1);
  const check = gpu.createKernel(checkTilesSource(), { output: [Math.ceil(W / TILE), Math.ceil(H / TILE)], constants: { W, H, INF: n + 1 }, precision: 'single' } as IGPUKernelSettings);
  // Gated shut by G below: copies of their input.
  const sweepShut = gatedKernel(gpu, sweepPushSource('h'), settings(STATE_PLANES), MOVE_DONE_GATE, UNCHANGED_STATE);
  const scanShut = gatedKernel(gpu, bfsScanSource(), settings(1), MOVE_DONE_GATE, 'D[this.thread.y][this.thread.x]');
  type Passes = (s: unknown, C: unknown, G: unknown, passes: number) => unknown;
  const statePasses = (f: (s: unknown, C: unknown, G: unknown) => unknown): Passes => (s, C, G, passes) => {
    for (let i = 0; i < passes; i++) s = f(s, C, G);
    return s;
  };
  const distancePasses = (f: (s: unknown, C: unknown, D: unknown, G: unknown) => unknown): Passes => (s, C, G, passes) => {
    let D = start(s);
    for (let i = 0; i < passes; i++) D = f(s, C, D, G);
    return merge(s, D);
  };
  const lockstep = kernel(pushRelabelSource());
  const sweepH = kernel(sweepPushSource('h'));
  const sweepV = kernel(sweepPushSource('v'));
  const sweepH8 = kernel(sweepPushSource('h'), STATE_PLANES, 8);
  const sweepV8 = kernel(sweepPushSource('v'), STATE_PLANES, 8);
  const scan8 = kernel(bfsScanSource(), 1, 8);
  const items: Record<string, Passes> = {
    sweepH8: statePasses((s, C) => sweepH8(s, C)),
    sweepV8: statePasses((s, C) => sweepV8(s, C)),
    bfsScan8: distancePasses((s, C, D) => scan8(s, C, D)),
    lockstep: statePasses((s, C) => lockstep(s, C)),
    sweepH: statePasses((s, C) => sweepH(s, C)),
    sweepV: statePasses((s, C) => sweepV(s, C)),
    splitH: statePasses((s, C) => split[0](s, C)),
    splitV: statePasses((s, C) => split[1](s, C)),
    sweepHGated: statePasses((s, C, G) => sweepShut(s, C, G)),
    bfsLevel: distancePasses((s, C, D) => level(s, C, D)),
    bfsScan: distancePasses((s, C, D) => scan(s, C, D)),
    bfsScanGated: distancePasses((s, C, D, G) => scanShut(s, C, D, G)),
    checkTiles: (s, C, _G, passes) => {
      let r: unknown = null;
      for (let i = 0; i < passes; i++) r = check(s, C);
      return r;
    },
    // A whole convergence check as a round runs it, per tile side: the tiles, then its OR levels (reductionLevels).
    ...Object.fromEntries([8, 4, 2, 1].map((side): [string, Passes] => {
      const levels = reductionLevels(W, H, side);
      const tiles = gpu.createKernel(checkTilesSource(side), { output: levels[0], constants: { W, H, INF: n + 1 }, precision: 'single', loopMaxIterations: 1 << 20 } as IGPUKernelSettings);
      const ors = levels.slice(1).map((out, i) => gpu.createKernel(orTilesSource(), { output: out, constants: { AW: levels[i][0], AH: levels[i][1] }, precision: 'single', loopMaxIterations: 1 << 20 } as IGPUKernelSettings));
      return [`check${side}`, (st, C, _G, passes) => {
        let r: unknown = null;
        for (let i = 0; i < passes; i++) r = ors.reduce((a, f) => f(a), tiles(st, C));
        return r;
      }];
    })),
  };
  const S0 = new Input(state as unknown as number[], [W, H, STATE_PLANES]);
  const C = new Input(caps as unknown as number[], [W, H, 4]);
  // A tally whose latest check passed: the gated kernels return their input.
  const G = new Input(Float32Array.from([0, 0, 0, 0]) as unknown as number[], [4]);
  const out: Json = { size: `${W}x${H}` };
  const only = process.env.GPU_BENCH_PASSES?.split(',');
  const unknown = only?.filter((name) => !(name in items)) ?? [];
  if (unknown.length > 0) throw new BenchConfigError(`GPU_BENCH_PASSES: unknown pass ${unknown.join(', ')} (expected some of ${Object.keys(items).join(', ')})`);
  for (const [name, run] of Object.entries(items)) {
    if (only && !only.includes(name)) continue;
    const time = async (passes: number): Promise<number> => {
      const pipe = gpu.createPipeline(function (S: unknown, Cs: unknown, Gs: unknown) {
        const s = relabel(S, Cs, 8, true);
        const r = run(s, Cs, Gs, passes);
        return name.startsWith('check') ? r : check(r, Cs);
      });
      await pipe(S0, C, G);
      let best = Infinity;
      for (let rep = 0; rep < 3; rep++) {
        const t = performance.now();
        await pipe(S0, C, G);
        best = Math.min(best, performance.now() - t);
      }
      void pipe.destroy();
      return best;
    };
    const t20 = await time(20);
    const t120 = await time(120);
    out[name] = { msPerPass: (t120 - t20) / 100, callMs20: t20, callMs120: t120 };
  }
  ctx.destroy();
  return out;
}

/** A bad setting of the bench's environment: it ends the whole command instead of being recorded as one run's error. */
class BenchConfigError extends Error {}

/** `$name` as a comma-separated list of AxB pairs of positive integers (e.g. 384x288,450x375), or undefined when unset; anything else throws, naming the variable. */
function pairsFromEnv(name: string): Array<[number, number]> | undefined {
  const value = process.env[name];
  if (value === undefined || value === '') return undefined;
  return value.split(',').map((item) => {
    const m = /^(\d+)x(\d+)$/.exec(item.trim());
    if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new BenchConfigError(`${name}: expected pairs like 384x288, comma-separated, got '${item}'`);
    return [Number(m[1]), Number(m[2])];
  });
}

/** `run`'s result with the workgroup shape its context was made with (the run's device flag workgroup). */
async function inWorkgroups(shape: WorkgroupShape, run: (shape: WorkgroupShape) => Promise<Json>): Promise<Json> {
  return { ...(await run(shape)), workgroup: shape };
}

/** The parts of a WebGPU device the dispatch section uses (the webgpu package's types are not a dependency). */
interface RawDevice {
  createBuffer(d: { size: number; usage: number }): { destroy(): void };
  createShaderModule(d: { code: string }): unknown;
  createComputePipeline(d: { layout: 'auto'; compute: { module: unknown; entryPoint: string } }): { getBindGroupLayout(i: number): unknown };
  createBindGroup(d: { layout: unknown; entries: Array<{ binding: number; resource: { buffer: unknown } }> }): unknown;
  createCommandEncoder(): { beginComputePass(): { setPipeline(p: unknown): void; setBindGroup(i: number, g: unknown): void; dispatchWorkgroups(x: number, y?: number, z?: number): void; end(): void }; finish(): unknown };
  queue: { writeBuffer(b: unknown, o: number, d: ArrayBufferView): void; submit(c: unknown[]): void; onSubmittedWorkDone(): Promise<void> };
}

/**
 * Device time of one dispatch of a [W, H, Z] copy (b = a + 1, each thread
 * one element, indexed as gpu.js indexes its 3D outputs) in workgroups of
 * several shapes, written in WGSL directly on gpu.js's device; "empty" is
 * one workgroup that returns at once. Dispatches of one compute pass
 * alternate between two buffers, so each reads the last one's output;
 * (t220 − t20) / 200 over submit to onSubmittedWorkDone, best of 5.
 */
async function dispatchCosts(W: number, H: number, Z: number): Promise<Json> {
  const ctx = await createGpuContext('webgpu');
  const { WebGPUContext } = gpuJsInternal<{ WebGPUContext: { acquire(): Promise<{ device: RawDevice }> } }>('web-gpu/context');
  const { device } = await WebGPUContext.acquire();
  const n = W * H * Z;
  const STORAGE_COPY = 128 | 4 | 8; // GPUBufferUsage STORAGE | COPY_SRC | COPY_DST
  const bufs = [device.createBuffer({ size: 4 * n, usage: STORAGE_COPY }), device.createBuffer({ size: 4 * n, usage: STORAGE_COPY })];
  const dims = device.createBuffer({ size: 16, usage: 64 | 8 }); // UNIFORM | COPY_DST
  device.queue.writeBuffer(dims, 0, new Uint32Array([W, H, Z, 0]));
  const copy = (wx: number, wy: number): string => `struct P { W: u32, H: u32, Z: u32, pad: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> b: array<f32>;
@compute @workgroup_size(${wx}, ${wy}, 1) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x >= p.W || g.y >= p.H || g.z >= p.Z) { return; }
  let i = g.x + p.W * (g.y + p.H * g.z);
  b[i] = a[i] + 1.0;
}`;
  const shapes: Array<[string, number, number]> = [['8x8', 8, 8], ['32x4', 32, 4], ['16x16', 16, 16], ['32x8', 32, 8], ['64x4', 64, 4], ['256x1', 256, 1]];
  const out: Json = { size: `${W}x${H}x${Z}` };
  const cases: Array<[string, string, number[]]> = [
    ...shapes.map(([name, wx, wy]): [string, string, number[]] => [name, copy(wx, wy), [Math.ceil(W / wx), Math.ceil(H / wy), Z]]),
    ['empty', copy(8, 8), [1, 1, 1]],
  ];
  for (const [name, code, groups] of cases) {
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module: device.createShaderModule({ code }), entryPoint: 'main' } });
    const bindGroups = [0, 1].map((k) => device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [{ binding: 0, resource: { buffer: dims } }, { binding: 1, resource: { buffer: bufs[k] } }, { binding: 2, resource: { buffer: bufs[1 - k] } }],
    }));
    const time = async (dispatches: number): Promise<number> => {
      let best = Infinity;
      for (let rep = 0; rep < 5; rep++) {
        const encoder = device.createCommandEncoder();
        const pass = encoder.beginComputePass();
        pass.setPipeline(pipeline);
        for (let i = 0; i < dispatches; i++) {
          pass.setBindGroup(0, bindGroups[i & 1]);
          pass.dispatchWorkgroups(groups[0], groups[1], groups[2]);
        }
        pass.end();
        const commands = encoder.finish();
        const t = performance.now();
        device.queue.submit([commands]);
        await device.queue.onSubmittedWorkDone();
        best = Math.min(best, performance.now() - t);
      }
      return best;
    };
    await time(5);
    const t20 = await time(20);
    const t220 = await time(220);
    out[name] = { usPerDispatch: (1000 * (t220 - t20)) / 200, t20, t220 };
  }
  // Up to 240 MB at 3000×2000: freed before the next size or section.
  for (const b of [...bufs, dims]) b.destroy();
  ctx.destroy();
  return out;
}

async function main(): Promise<void> {
  const [outPath, ...sections] = process.argv.slice(2);
  if (!outPath) throw new Error('gpuBench: usage: node dist/bench/gpuBench.js OUT.json [verify] [scenes] [ablation] [large[:WxHxL[:init[:cycles]]]]');
  const root = process.env.STEREO_DATA ?? path.join(__dirname, '..', '..', '..', 'shared', 'data', 'middlebury');
  const report: Json = { date: new Date().toISOString(), node: process.version, root, sections };
  const save = (): void => fs.writeFileSync(outPath, JSON.stringify(report, null, 1));
  const scenes = new Map<string, Scene>();
  const scene = async (name: string): Promise<Scene> => {
    let s = scenes.get(name);
    if (!s) { s = await loadScene(path.join(root, name)); scenes.set(name, s); }
    return s;
  };
  const add = async (section: string, label: string, f: () => Promise<Json>): Promise<void> => {
    const list = (report[section] ??= []) as Json[];
    const t = performance.now();
    try {
      list.push({ label, ...(await f()) });
    } catch (e) {
      if (e instanceof BenchConfigError) throw e;
      list.push({ label, error: (e as Error).stack ?? String(e) });
    }
    save();
    process.stderr.write(`${section} ${label}: ${(performance.now() - t).toFixed(0)} ms\n`);
  };
  const four = ['tsukuba', 'venus', 'teddy', 'cones'];
  for (const full of sections) {
    // 'verify:tsukuba,venus' limits a section to some scenes.
    const [sec, only] = full.startsWith('large') ? ['large', undefined] : full.split(':');
    const pick = (names: string[]): string[] => (only ? names.filter((n) => only.split(',').includes(n)) : names);
    if (sec === 'verify') {
      for (const s of pick(four)) await add('verify', s, async () => runScene(await scene(s), { backend: 'gpu', verify: true }));
    } else if (sec === 'scenes') {
      for (const s of pick([...four, 'Adirondack_TrainingQ'])) {
        await add('scenes', `${s} gpu`, async () => runScene(await scene(s), { backend: 'gpu' }));
        await add('scenes', `${s} bk`, async () => runScene(await scene(s), { backend: 'bk' }));
      }
    } else if (sec === 'options' || ONE_OPTION_SECTIONS.has(sec)) {
      // The three scenes with one set of device options, to compare with the scenes section's defaults.
      const env = sec === 'options' ? benchOptions() : undefined;
      const [what, gpu] = env ? [JSON.stringify(env), env] : ONE_OPTION_SECTIONS.get(sec)!;
      for (const s of pick(['tsukuba', 'teddy', 'Adirondack_TrainingQ'])) {
        await add(sec, `${s} gpu ${what}`, async () => runScene(await scene(s), { backend: 'gpu', gpu }));
      }
    } else if (sec === 'host' || sec === 'ahead' || sec === 'builds' || sec === 'inplace' || sec === 'literals') {
      const profiler = installHostProfiler();
      // One switch off at a time, the rest at their defaults.
      const profiled = async (s: string, off: { onePass?: false; ahead?: false; shared?: false; inPlace?: false; literals?: false } = {}): Promise<Json> => {
        const { onePass = true, ahead = true, shared = true, inPlace = true, literals = true } = off;
        // Every run builds as a fresh process would: nothing kept from the runs before.
        clearKernelBuildCache();
        profiler.take();
        const device = { onePassCalls: onePass, kernelBuildCache: shared, inPlaceCalls: inPlace, sharedLiterals: literals };
        const r = await runScene(await scene(s), { backend: 'gpu', gpu: { recordAhead: ahead, device } });
        return { ...r, onePass, recordAhead: ahead, sharedBuilds: shared, inPlace, sharedLiterals: literals, host: profiler.take() };
      };
      // Per section: the label of a run with its switch off, and the switch.
      const [offLabel, offSwitch] = ({
        host: [' pass per step', { onePass: false }],
        ahead: [' not recorded ahead', { ahead: false }],
        builds: [' builds not shared', { shared: false }],
        inplace: [' gpu.js calls', { inPlace: false }],
        literals: [' literals per plan', { literals: false }],
      } as const)[sec];
      // The first run of a process also creates the device; it is not compared.
      await add(sec, 'warm-up tsukuba', () => profiled('tsukuba'));
      for (const s of pick(['tsukuba', 'teddy', 'Adirondack_TrainingQ'])) {
        for (const on of [true, false, true, false]) {
          await add(sec, `${s} gpu${on ? '' : offLabel}`, () => profiled(s, on ? {} : offSwitch));
        }
      }
    } else if (sec === 'pairs') {
      // Whole runs of each scene alternating the defaults and $GPU_BENCH_OPTIONS, after a warm-up run; every run compiles its own plans (runScene).
      const other = benchOptions();
      const reps = benchReps();
      await add(sec, 'warm-up tsukuba', async () => runScene(await scene('tsukuba'), { backend: 'gpu' }));
      for (const s of pick(['tsukuba', 'teddy', 'Adirondack_TrainingQ'])) {
        for (let rep = 0; rep < reps; rep++) {
          for (const [label, gpu] of [['defaults', {}], [JSON.stringify(other), other]] as const) {
            await add(sec, `${s} gpu ${label}`, async () => runScene(await scene(s), { backend: 'gpu', gpu }));
          }
        }
      }
      printPairs(report[sec] as Json[]);
    } else if (sec === 'kept') {
      // Per scene: one run that compiles and keeps its program, then runs that take it (the default) alternating with runs that compile their own (keepPlans false: such a run neither takes nor keeps).
      for (const s of pick(['tsukuba', 'teddy', 'Adirondack_TrainingQ'])) {
        await add(sec, `${s} gpu first run`, async () => runScene(await scene(s), { backend: 'gpu', gpu: { keepPlans: true } }));
        for (const keepPlans of [true, false, true, false]) {
          await add(sec, `${s} gpu${keepPlans ? ' kept plans' : ' own plans'}`, async () => ({ ...(await runScene(await scene(s), { backend: 'gpu', gpu: { keepPlans } })), keepPlans }));
        }
      }
    } else if (sec === 'clocks') {
      // Each run after the GPU idled long enough for its clock to drop, alternating the warm-up on and off, then one run right after the last (it finds the clock raised and skips the warm-up).
      const idle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, CLOCK_IDLE_MS));
      await add(sec, 'warm-up tsukuba', async () => runScene(await scene('tsukuba'), { backend: 'gpu' }));
      for (const s of pick(['tsukuba', 'teddy', 'Adirondack_TrainingQ'])) {
        for (const warmUp of [true, false, true, false]) {
          await idle();
          await add(sec, `${s} gpu after idle${warmUp ? '' : ' no warm-up'}`, async () => runScene(await scene(s), { backend: 'gpu', warmUp }));
        }
        await add(sec, `${s} gpu back to back`, async () => runScene(await scene(s), { backend: 'gpu' }));
      }
    } else if (sec === 'threads') {
      await add(sec, 'warm-up tsukuba', async () => runScene(await scene('tsukuba'), { backend: 'gpu' }));
      for (const s of pick(['teddy', 'Adirondack_TrainingQ'])) {
        for (const threaded of [true, false, true, false]) {
          await add(sec, `${s} gpu${threaded ? '' : ' costs on one thread'}`, async () => ({
            ...(await runScene(await scene(s), { backend: 'gpu', ...(threaded ? {} : { costThreads: { minEntries: Infinity } }) })), costThreads: threaded,
          }));
        }
      }
    } else if (sec === 'pipelines') {
      const profiler = installHostProfiler();
      await add(sec, 'warm-up synthetic 300x240', async () => runScene(generateSyntheticScene({ width: 300, height: 240, ndisp: 32, seed: 7 }), { backend: 'gpu' }));
      let width = 320;
      for (let rep = 0; rep < 3; rep++) {
        for (const together of [true, false]) {
          const W = (width += 8);
          await add(sec, `synthetic ${W}x240 ${together ? 'pipelines together' : 'pipelines one by one'}`, async () => {
            clearKernelBuildCache();
            profiler.take();
            const r = await runScene(generateSyntheticScene({ width: W, height: 240, ndisp: 32, seed: 7 }), { backend: 'gpu', gpu: { device: { parallelPipelines: together } } });
            return { ...r, parallelPipelines: together, host: profiler.take() };
          });
        }
      }
    } else if (sec === 'workgroups') {
      const shapes: WorkgroupShape[] = [[8, 8], [16, 16], [32, 8], [64, 4]];
      await add(sec, 'warm-up tsukuba', async () => runScene(await scene('tsukuba'), { backend: 'gpu' }));
      for (const s of pick(['tsukuba', 'teddy', 'Adirondack_TrainingQ'])) {
        for (let rep = 0; rep < 2; rep++) {
          for (const shape of shapes) await add(sec, `${s} gpu ${shape.join('x')}`, () => inWorkgroups(shape, async (workgroup) => runScene(await scene(s), { backend: 'gpu', gpu: { device: { workgroup } } })));
        }
      }
    } else if (sec === 'bfs') {
      for (const s of pick(['tsukuba', 'teddy', 'Adirondack_TrainingQ'])) {
        for (const B of [16, 32]) await add('bfs', `${s} gpu B${B}`, async () => runScene(await scene(s), { backend: 'gpu', gpu: { bfsPasses: B } }));
      }
    } else if (sec === 'ablation') {
      for (const s of pick(['tsukuba', 'teddy'])) {
        const variants: Array<[string, RunSpec]> = [
          ['default', { backend: 'gpu' }],
          ['classic', { backend: 'gpu', params: { graph: 'classic' } }],
          ['zero init', { backend: 'gpu', params: { init: 'zero' } }],
          ['sequential', { backend: 'gpu', params: { order: 'sequential' } }],
          ['K16', { backend: 'gpu', gpu: { iterationsPerRound: 16 } }],
          ['K64', { backend: 'gpu', gpu: { iterationsPerRound: 64 } }],
          ['K128 B32', { backend: 'gpu', gpu: { iterationsPerRound: 128, bfsPasses: 32 } }],
          ['K64 B16', { backend: 'gpu', gpu: { iterationsPerRound: 64, bfsPasses: 16 } }],
          ['K128 B16', { backend: 'gpu', gpu: { iterationsPerRound: 128, bfsPasses: 16 } }],
          ['B32', { backend: 'gpu', gpu: { bfsPasses: 32 } }],
          ['fixedRounds4', { backend: 'gpu', gpu: { fixedRounds: true, initialRounds: 4 } }],
          ['phase1 per-graph pipeline', { backend: 'pr-pipeline' }],
          ['phase1 per-graph perPass', { backend: 'pr-perPass', params: { cycles: 1 } }],
        ];
        for (const [label, spec] of variants) {
          await add('ablation', `${s} ${label}`, async () => runScene(await scene(s), spec));
        }
      }
    } else if (sec === 'kernels') {
      // Kernel schemes and round shapes: push sweep vs lockstep, BFS scan vs level, K, B and the reach.
      for (const s of pick(['tsukuba', 'teddy'])) {
        const grid: Array<[string, GpuMoveOptions['push'], GpuMoveOptions['bfs'], number, number, number]> = [
          ['lockstep level K64 B64', 'lockstep', 'level', 64, 64, 32],
          ['sweep scan K8 B16 R16', 'sweep', 'scan', 8, 16, 16],
          ['sweep scan K16 B16 R16', 'sweep', 'scan', 16, 16, 16],
          ['sweep scan K32 B16 R16', 'sweep', 'scan', 32, 16, 16],
          ['sweep scan K16 B16 R32', 'sweep', 'scan', 16, 16, 32],
          ['sweep scan K16 B8 R32', 'sweep', 'scan', 16, 8, 32],
        ];
        for (const [label, push, bfs, K, B, reach] of grid) {
          await add('kernels', `${s} ${label}`, async () => runScene(await scene(s), { backend: 'gpu', gpu: { push, bfs, iterationsPerRound: K, bfsPasses: B, reach } }));
        }
      }
    } else if (sec === 'large') {
      const [, dims, initKind, cyc, push] = full.split(':');
      const [W, H, L] = (dims ?? '3000x2000x300').split('x').map(Number);
      const progress: Json[] = [];
      report.largeProgress = progress;
      report.largeCheckpoint = process.env.GPU_BENCH_CHECKPOINT ?? null;
      await add('large', sec, () => large(W, H, L, initKind ?? 'zero', cyc ? Number(cyc) : 4, push as PushScheme | undefined, progress, save));
    } else if (sec === 'dispatch') {
      for (const [W, H] of [[384, 288], [718, 496], [3000, 2000]]) await add('dispatch', `${W}x${H}x5`, () => dispatchCosts(W, H, 5));
    } else if (sec === 'passes') {
      // Each size with gpu.js's 8×8 workgroups and with the default shape, or the sizes and shapes given (the kernels are built inside passCosts).
      const sizes = pairsFromEnv('GPU_BENCH_SIZES') ?? (process.env.GPU_BENCH_MODE ? [[24, 16]] : [[384, 288], [718, 496], [1500, 1000], [3000, 2000]]);
      const shapes = pairsFromEnv('GPU_BENCH_SHAPES') ?? [[8, 8], DEFAULT_WORKGROUP];
      for (const [W, H] of sizes) {
        for (const shape of shapes) await add('passes', `${W}x${H} ${shape.join('x')}`, () => inWorkgroups(shape, (workgroup) => passCosts(W, H, workgroup)));
      }
    } else {
      throw new Error(`gpuBench: unknown section '${sec}'`);
    }
  }
}

main().then(() => process.exit(0), (e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
