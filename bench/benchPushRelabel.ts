/**
 * Device measurements of the push-relabel solver (run with node on the built
 * JS: `node dist/bench/benchPushRelabel.js OUT.json [backend]`).
 *
 * 1. correctness against Boykov–Kolmogorov (flow and canonical cut) on seeded
 *    random grids from 1×1 to 64×64 of every kind, and refusal of graphs
 *    beyond the f32-exact bound;
 * 2. time per solve on Tsukuba-sized (384×288) expansion-like graphs for
 *    several schedules (K, fused vs per-pass global relabel), with BK's time;
 * 3. one 1024×1024 expansion-like graph;
 * 4. kernel layout: one [W,H,4] kernel per iteration against four per-field
 *    [W,H] kernels, same arithmetic, chained in one pipeline.
 * Results are written after every section, so a run cut short still reports.
 */
import { seededRandom } from '../data/random';
import * as fs from 'fs';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { Input } from '../gpu/runtime/gpujs/gpuJs';
import { createGpuContext, type GpuContext, type GpuPreference } from '../gpu/runtime/context';
import type { GridGraph } from '../graphcut/gridGraph';
import { GpuPrecisionError, PushRelabelSolver, type PushRelabelOptions } from '../gpu/maxflow/pushRelabel';
import { pushRelabelSource } from './kernels/lockstepKernels';
import { STATE_PLANES } from '../gpu/maxflow/pushRelabelLayout';
import { expansionLikeGraph, randomGridGraph, RANDOM_GRAPH_KINDS } from '../test/support/randomGraphs';

type Json = Record<string, unknown>;

function sameCut(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function correctness(ctx: GpuContext, seeds: number): Promise<Json> {
  const solver = new PushRelabelSolver(ctx);
  const bk = new BoykovKolmogorovSolver();
  const sizes: Array<[number, number]> = [[1, 1], [1, 7], [7, 1], [2, 2], [5, 3], [8, 8], [13, 9], [16, 16], [31, 17], [32, 32], [48, 40], [64, 64]];
  let cases = 0;
  let mismatches = 0;
  let refusedOk = 0;
  const failures: string[] = [];
  for (let seed = 0; seed < seeds; seed++) {
    for (const [W, H] of sizes) {
      for (const kind of RANDOM_GRAPH_KINDS) {
        const g = randomGridGraph(seededRandom(1000 * seed + W * 97 + H), W, H, kind);
        const ref = bk.solveSync(g);
        try {
          const r = await solver.solve(g);
          cases++;
          if (r.flow !== ref.flow || !sameCut(r.sinkSide, ref.sinkSide)) {
            mismatches++;
            failures.push(`${W}x${H} ${kind} seed ${seed}: flow ${r.flow} vs bk ${ref.flow}`);
          }
        } catch (e) {
          if (e instanceof GpuPrecisionError && kind === 'large') refusedOk++;
          else failures.push(`${W}x${H} ${kind} seed ${seed}: ${(e as Error).message}`);
        }
      }
    }
  }
  return { cases, mismatches, refusedLargeCapacityGraphs: refusedOk, failures: failures.slice(0, 20), executors: solver.executorKinds() };
}

async function timeSolver(solver: PushRelabelSolver, graphs: GridGraph[], refs: Array<{ flow: number; sinkSide: Uint8Array }>, repeats: number): Promise<Json> {
  const perGraph: Json[] = [];
  for (let i = 0; i < graphs.length; i++) {
    await solver.solve(graphs[i]); // compile + warm
    const times: number[] = [];
    let last: Json = {};
    let correct = true;
    for (let r = 0; r < repeats; r++) {
      const t = performance.now();
      const res = await solver.solve(graphs[i]);
      times.push(performance.now() - t);
      last = res.stats;
      correct = correct && res.flow === refs[i].flow && sameCut(res.sinkSide, refs[i].sinkSide);
    }
    perGraph.push({ graph: i, medianMs: median(times), timesMs: times, correct, stats: last });
  }
  return { perGraph, meanOfMediansMs: perGraph.reduce((s, g) => s + (g.medianMs as number), 0) / perGraph.length };
}

async function schedules(ctx: GpuContext, W: number, H: number, count: number, configs: Array<[string, PushRelabelOptions, number]>): Promise<Json> {
  const graphs: GridGraph[] = [];
  for (let i = 0; i < count; i++) graphs.push(expansionLikeGraph(seededRandom(42 + i), W, H, { reversed: i % 2 === 1, labels: 16 }));
  const bk = new BoykovKolmogorovSolver();
  const refs = graphs.map((g) => bk.solveSync(g));
  const bkMs = graphs.map((g) => {
    const times: number[] = [];
    for (let r = 0; r < 3; r++) {
      const t = performance.now();
      bk.solveSync(g);
      times.push(performance.now() - t);
    }
    return median(times);
  });
  const out: Json = { size: `${W}x${H}`, graphs: count, bkMedianMs: bkMs, flows: refs.map((r) => r.flow) };
  for (const [label, options, repeats] of configs) {
    const solver = new PushRelabelSolver(ctx, options);
    try {
      out[label] = { options, ...(await timeSolver(solver, label.includes('perPass') ? graphs.slice(0, 1) : graphs, refs, repeats)), executors: solver.executorKinds() };
    } catch (e) {
      out[label] = { options, error: (e as Error).message };
    }
    solver.dispose();
  }
  return out;
}

/** One [W,H,4] kernel per iteration against four [W,H] kernels over separate planes (same arithmetic). */
async function layout(ctx: GpuContext, W: number, H: number, iterations: number): Promise<Json> {
  const g = expansionLikeGraph(seededRandom(5), W, H, { labels: 16 });
  const n = W * H;
  const S = new Float32Array(STATE_PLANES * n);
  const C = new Float32Array(4 * n);
  for (let p = 0; p < n; p++) {
    const t = Math.min(g.source[p], g.sink[p]);
    S[p] = g.source[p] - g.sink[p];
    S[n + p] = g.sink[p] - t > 0 ? 1 : 2 + (p % 7);
    C[p] = g.right[p];
    C[n + p] = g.rightRev[p];
    C[2 * n + p] = g.down[p];
    C[3 * n + p] = g.downRev[p];
  }
  const constants = { W, H, INF: n + 1 };
  const inp = (a: Float32Array, dims: [number, number, number] | [number, number]): Input => new Input(a as unknown as number[], dims);
  const combined = ctx.gpu.createKernel(pushRelabelSource(), { output: [W, H, STATE_PLANES], constants });
  const names = ['V', 'HH', 'FR', 'FD'];
  const fieldSource = (k: number): string => pushRelabelSource()
    .replace('function (S, C)', `function (${names.join(', ')}, C)`)
    .replace('const z = this.thread.z;', `const z = ${k};`)
    .replace(/S\[(\d)\]/g, (_m, d: string) => names[Number(d)]);
  const fields = [0, 1, 2, 3].map((k) => ctx.gpu.createKernel(fieldSource(k), { output: [W, H], constants }));
  const pCombined = ctx.gpu.createPipeline(function (this: { constants: Record<string, unknown> }, s: unknown, c: unknown) {
    const N = this.constants.N as number;
    for (let i = 0; i < N; i++) s = combined(s, c);
    return s;
  }, { constants: { N: iterations } });
  const pFields = ctx.gpu.createPipeline(function (this: { constants: Record<string, unknown> }, v: unknown, h: unknown, fr: unknown, fd: unknown, c: unknown) {
    const N = this.constants.N as number;
    for (let i = 0; i < N; i++) {
      const v2 = fields[0](v, h, fr, fd, c);
      const h2 = fields[1](v, h, fr, fd, c);
      const fr2 = fields[2](v, h, fr, fd, c);
      const fd2 = fields[3](v, h, fr, fd, c);
      v = v2; h = h2; fr = fr2; fd = fd2;
    }
    return [v, h, fr, fd];
  }, { constants: { N: iterations } });
  const plane = (k: number): Float32Array => S.slice(k * n, (k + 1) * n);
  const runC = async (): Promise<number> => {
    const t = performance.now();
    await pCombined(inp(S, [W, H, STATE_PLANES]), inp(C, [W, H, 4]));
    return performance.now() - t;
  };
  const runF = async (): Promise<number> => {
    const t = performance.now();
    await pFields(inp(plane(0), [W, H]), inp(plane(1), [W, H]), inp(plane(2), [W, H]), inp(plane(3), [W, H]), inp(C, [W, H, 4]));
    return performance.now() - t;
  };
  await runC();
  await runF();
  const tc: number[] = [];
  const tf: number[] = [];
  for (let r = 0; r < 3; r++) {
    tc.push(await runC());
    tf.push(await runF());
  }
  // Same result from both layouts, every plane.
  const rc = (await pCombined(inp(S, [W, H, STATE_PLANES]), inp(C, [W, H, 4]))) as unknown as Float32Array[][];
  const rf = (await pFields(inp(plane(0), [W, H]), inp(plane(1), [W, H]), inp(plane(2), [W, H]), inp(plane(3), [W, H]), inp(C, [W, H, 4]))) as unknown as Float32Array[][];
  let identical = true;
  for (let z = 0; z < STATE_PLANES && identical; z++) for (let y = 0; y < H && identical; y++) for (let x = 0; x < W; x++) if (rc[z][y][x] !== rf[z][y][x]) { identical = false; break; }
  return {
    size: `${W}x${H}`, iterations,
    combinedMs: median(tc), perFieldMs: median(tf),
    combinedUsPerIteration: (median(tc) * 1000) / iterations, perFieldUsPerIteration: (median(tf) * 1000) / iterations,
    identicalResults: identical, executors: [pCombined.executorKind, pFields.executorKind],
  };
}

async function main(): Promise<void> {
  const outPath = process.argv[2];
  if (!outPath) throw new Error('benchPushRelabel: usage: node dist/bench/benchPushRelabel.js OUT.json [auto|webgpu|webasm|cpu] [quick|smoke]');
  const preference = (process.argv[3] ?? 'auto') as GpuPreference;
  // 'quick': fewer graphs and schedules; 'smoke': tiny sizes, to check the script itself on a CPU backend.
  const quick = process.argv[4] === 'quick';
  const smoke = process.argv[4] === 'smoke';
  const [tw, th] = smoke ? [40, 30] : [384, 288];
  const [lw, lh] = smoke ? [64, 64] : [1024, 1024];
  const ctx = await createGpuContext(preference);
  const report: Json = { date: new Date().toISOString(), device: ctx.device, mode: ctx.mode, node: process.version };
  const save = (): void => fs.writeFileSync(outPath, JSON.stringify(report, null, 1));
  const section = async (name: string, f: () => Promise<Json>): Promise<void> => {
    const t = performance.now();
    try {
      report[name] = { ...(await f()), sectionMs: performance.now() - t };
    } catch (e) {
      report[name] = { error: (e as Error).stack ?? String(e) };
    }
    report.deviceErrors = ctx.deviceErrors.slice(0, 10);
    save();
    process.stderr.write(`${name} done in ${(performance.now() - t).toFixed(0)} ms\n`);
  };
  await section('correctness', () => correctness(ctx, smoke ? 1 : 2));
  const base: Array<[string, PushRelabelOptions, number]> = [
    ['K32', { iterationsPerRelabel: 32 }, 3],
    ['K128', { iterationsPerRelabel: 128 }, 3],
    ['K256', { iterationsPerRelabel: 256 }, 3],
    ['K512', { iterationsPerRelabel: 512 }, 3],
    ['K128-bfs32', { iterationsPerRelabel: 128, bfsPassesPerCall: 32, bfsContinuePasses: 128 }, 3],
    ['K128-bfs256', { iterationsPerRelabel: 128, bfsPassesPerCall: 256, bfsContinuePasses: 1024 }, 3],
  ];
  if (!quick) base.push(['K128-perPass', { iterationsPerRelabel: 128, globalRelabel: 'perPass' }, 1]);
  await section('tsukuba', () => schedules(ctx, tw, th, quick || smoke ? 1 : 4, base));
  if (!quick) {
    await section('layout384', () => layout(ctx, tw, th, 200));
    await section('layout1024', () => layout(ctx, lw, lh, 100));
    await section('large1024', () => schedules(ctx, lw, lh, 1, [
      ['K128', { iterationsPerRelabel: 128 }, 2],
      ['K512', { iterationsPerRelabel: 512, bfsPassesPerCall: 256, bfsContinuePasses: 1024 }, 2],
      ['K1024', { iterationsPerRelabel: 1024, bfsPassesPerCall: 512, bfsContinuePasses: 1024 }, 2],
    ]));
  }
  ctx.destroy();
}

main().then(() => process.exit(0), (e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
