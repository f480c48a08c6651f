import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { execFileSync } from 'child_process';
import type { Scene } from '../../data/sceneTypes';
import { match } from '../../stereo/match';
import { checkBackend } from '../../gpu/runtime/backends';
import { isWebGpuAvailable } from '../../gpu/runtime/context';
import { installGpuJsAdaptations } from '../../gpu/runtime/gpujs/install';
import type { BackendName, MatchParams } from '../../stereo/params';
import { sceneParamsFor } from '../../stereo/sceneParams';
import { badPixelPercent } from '../tune/badPixels';
import { loadSceneSpec, sceneLabel } from '../tune/scenes';
import { median } from './median';
import { cumulativeSteps, parseTechniques, type BenchStep, type StepKernels, type TechniqueId } from './techniques';
import { NO_FAMILIES, PRODUCT_FAMILIES } from '../../gpu/maxflow/kernelFamilies';
import type { KernelFamilies } from '../../gpu/maxflow/pushRelabelKernels';

/** One measured run: a scene, a backend, a step of the technique chain. */
export interface BenchRun {
  scene: string;
  backend: string;
  device: string;
  step: BenchStep['id'];
  label: string;
  config: BenchStep['config'];
  /** Milliseconds (median over repeats): phases of the pipeline and the max-flow split where the backend reports it. */
  times: {
    costsMs: number; initMs: number; buildMs: number; flowMs: number; totalMs: number;
    /** Push-relabel iterations alone, global relabels alone, and calls that fuse both (undefined: not reported by this backend). */
    pushRelabelMs?: number; globalRelabelMs?: number; fusedMs?: number;
  };
  /** Every repeat's total, for spread. */
  totalsMs: number[];
  badNonocc?: number;
  badAll?: number;
  energy: number;
  cuts: number;
  cycles: number;
}

export interface BenchResult {
  version: 1;
  command: string;
  date: string;
  commit: string;
  host: { cpu: string; cores: number; node: string; platform: string };
  scenes: string[];
  backends: string[];
  techniques: TechniqueId[];
  cycles: number;
  repeat: number;
  k: { baseline: number; tuned: number };
  runs: BenchRun[];
}

export interface BenchOptions {
  scenes?: string[];
  backends?: BackendName[];
  techniques?: string[];
  cycles?: number;
  repeat?: number;
  k?: { baseline?: number; tuned?: number };
  /** Fixed parameters over the scenes' own (the technique switches override graph, init and order). */
  fixed?: Partial<MatchParams>;
  command?: string;
  onRun?: (r: BenchRun) => void;
  /**
   * Kernel families the device steps may use besides the product's: the
   * ablation script (bench/gpuAblation.ts) gives the lockstep push and level
   * BFS that the sweep and scan techniques start from. Passed to every
   * device run as match()'s `gpu.families`; without them those two steps
   * are left out.
   */
  families?: KernelFamilies;
}

/**
 * The names of the families a device step may use: the product's (the
 * block families only where `blocks`: WebGPU with the workgroup entry) and
 * `families`.
 */
export function stepKernels(blocks: boolean, families: KernelFamilies = NO_FAMILIES): StepKernels {
  const names = (kind: 'push' | 'bfs'): string[] => [...PRODUCT_FAMILIES[kind], ...families[kind]].map((f) => f.name).filter((n) => blocks || n !== 'block');
  return { push: names('push'), bfs: names('bfs') };
}

/** The data root: $STEREO_DATA (the root or its middlebury/ folder), else ../shared/data beside the project. */
export function defaultBenchScenes(names = ['tsukuba', 'teddy']): string[] {
  const projectRoot = path.resolve(__dirname, '..', '..', ...(__dirname.includes(`${path.sep}dist${path.sep}`) ? ['..'] : []));
  const roots = [process.env.STEREO_DATA, path.resolve(projectRoot, '..', 'shared', 'data')].filter((r): r is string => !!r);
  return names.map((n) => {
    for (const root of roots) for (const dir of [path.join(root, 'middlebury', n), path.join(root, n)]) if (fs.existsSync(dir)) return dir;
    throw new Error(`bench: scene ${n} not found under ${roots.join(' or ')} (set STEREO_DATA or name scene folders)`);
  });
}

/** The commit being measured: $STEREOCUT_COMMIT where the checkout has no .git (a copied tree on a GPU machine), else git's HEAD. */
function gitCommit(): string {
  if (process.env.STEREOCUT_COMMIT) return process.env.STEREOCUT_COMMIT;
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: __dirname, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    return 'unknown';
  }
}


/** One timed pipeline run with a step's switches (what match() does, with the device options exposed). */
async function runOnce(scene: Scene, name: string, backend: BackendName, step: BenchStep, base: Partial<MatchParams>, cycles: number, families: KernelFamilies | undefined) {
  const cfg = step.config;
  // The step's device switches as the run's schedule knobs; every run compiles its own plans (none kept from the run before), so that the steps of the technique chain compare like with like.
  // K counts iterations of the sweeps and lockstep passes; the block push has its own K (pairs of block launches per round, BLOCK_DEFAULTS).
  const flags = {
    push: cfg.push, bfs: cfg.bfs, ...(families ? { families } : {}), ...(cfg.push === 'block' ? {} : { iterationsPerRound: cfg.k }),
    fixedRounds: cfg.rounds === 'fixed', resume: cfg.resume, gate: cfg.gate, warmStart: cfg.warm, keepPlans: false,
  };
  const r = await match(scene.left, scene.right, {
    ...base, graph: cfg.graph, init: cfg.init, order: cfg.order, cycles, ndisp: scene.ndisp, backend, gpu: flags,
  });
  const sum = (k: string): number | undefined => (r.cycles.some((c) => c.stats[k] !== undefined) ? r.cycles.reduce((s, c) => s + (c.stats[k] ?? 0), 0) : undefined);
  const { costsMs, initMs, buildMs, flowMs, totalMs } = r.times;
  return {
    name, backend: r.backend, device: r.device,
    times: {
      costsMs, initMs, buildMs, flowMs, totalMs,
      pushRelabelMs: sum('pushRelabelMs'), globalRelabelMs: sum('globalRelabelMs'), fusedMs: sum('fusedMs'),
    },
    labels: r.disparity, energy: r.finalEnergy.total / r.costScale, cuts: r.cuts, cycles: r.cycles.length,
  };
}

/**
 * Runs every scene × backend × step. Steps of one scene and backend run
 * back to back, in the same process, so their ratios compare like with like;
 * each scene and backend gets one untimed warm-up run first (JIT and kernel compilation).
 */
export async function runBench(o: BenchOptions = {}): Promise<BenchResult> {
  const backends = o.backends && o.backends.length ? o.backends : (['bk'] as BackendName[]);
  for (const b of backends) checkBackend(b);
  const techniques = parseTechniques(o.techniques);
  const cycles = o.cycles ?? 4;
  if (!Number.isInteger(cycles) || cycles < 1) throw new Error(`--cycles: must be an integer ≥ 1 (got ${cycles})`);
  const repeat = o.repeat ?? 1;
  if (!Number.isInteger(repeat) || repeat < 1) throw new Error(`--repeat: must be an integer ≥ 1 (got ${repeat})`);
  const k = { baseline: o.k?.baseline ?? 8, tuned: o.k?.tuned ?? 16 };
  const specs = o.scenes && o.scenes.length ? o.scenes : defaultBenchScenes();
  for (const b of backends) cumulativeSteps(techniques, b, k); // option errors before any scene loads
  // The block steps run where their kernels can: WebGPU with the workgroup entry adaptation.
  const blocks = backends.some((b) => b !== 'bk') && (await isWebGpuAvailable()) && installGpuJsAdaptations().adaptations.workgroupEntry === true;
  const scenes: { spec: string; scene: Scene; name: string }[] = [];
  for (const spec of specs) {
    const scene = await loadSceneSpec(spec);
    scenes.push({ spec, scene, name: sceneLabel(spec, scene) });
  }
  const runs: BenchRun[] = [];
  for (const { scene, name } of scenes) {
    const base = { ...sceneParamsFor(name), ...(o.fixed ?? {}) };
    for (const backend of backends) {
      const steps = cumulativeSteps(techniques, backend, k, backend === 'bk' ? undefined : stepKernels(blocks, o.families));
      // Untimed warm-up: JIT compilation (every backend) and kernel compilation (device backends) stay out of the ratios.
      await runOnce(scene, name, backend, steps[0], base, 1, o.families);
      for (const step of steps) {
        const reps: Awaited<ReturnType<typeof runOnce>>[] = [];
        for (let i = 0; i < repeat; i++) reps.push(await runOnce(scene, name, backend, step, base, cycles, o.families));
        const totals = reps.map((x) => x.times.totalMs);
        const mid = reps[totals.indexOf(median(totals))] ?? reps[0];
        const med = (f: (x: (typeof reps)[number]) => number | undefined): number | undefined => {
          const v = reps.map(f);
          return v.every((x) => x !== undefined) ? median(v as number[]) : undefined;
        };
        const run: BenchRun = {
          scene: name, backend: mid.backend, device: mid.device, step: step.id, label: step.label, config: step.config,
          times: {
            costsMs: med((x) => x.times.costsMs)!, initMs: med((x) => x.times.initMs)!, buildMs: med((x) => x.times.buildMs)!,
            flowMs: med((x) => x.times.flowMs)!, totalMs: median(totals),
            pushRelabelMs: med((x) => x.times.pushRelabelMs), globalRelabelMs: med((x) => x.times.globalRelabelMs), fusedMs: med((x) => x.times.fusedMs),
          },
          totalsMs: totals,
          badNonocc: badPixelPercent(scene, mid.labels, 'nonocc', 1),
          badAll: badPixelPercent(scene, mid.labels, 'all', 1),
          energy: mid.energy, cuts: mid.cuts, cycles: mid.cycles,
        };
        runs.push(run);
        o.onRun?.(run);
      }
    }
  }
  const cpus = os.cpus();
  return {
    version: 1, command: o.command ?? 'stereocut bench', date: new Date().toISOString(), commit: gitCommit(),
    host: { cpu: cpus[0]?.model ?? 'unknown', cores: os.availableParallelism(), node: process.version, platform: `${os.platform()} ${os.arch()}` },
    scenes: scenes.map((s) => s.name), backends, techniques, cycles, repeat, k, runs,
  };
}
