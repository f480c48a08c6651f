/**
 * How a match's cost grows with the image: one row per scene folder and
 * backend, each measured in a fresh process (its peak memory is the
 * process's own), with the pyramid's per-level split:
 *
 *   node dist/bench/scaling.js [--backend bk|gpu|…]… [--set key=value]… [--repeat N] SCENE…
 *
 * SCENE: any scene folder (bench/upscaledScene.ts makes ×2, ×4 copies of a
 * Middlebury scene). --set passes a match() parameter (levels=1, cycles=3,
 * censusWindow=9x9, …) to every row. --repeat N matches N times in the
 * process and reports the last (warm: device programs compiled, the
 * finer levels' strip threads kept from the first, caches started) beside
 * the first. Scores: bad pixels of the nonocc
 * region (else known) at 1, 2 and 4 px.
 */
import { execFileSync } from 'child_process';
import { loadScene } from '../data/scene';
import { evaluateDisparity } from '../data/metrics';
import { parseCensusWindow } from '../costs';
import { createMatcher, type MatchOptions, type MatchResult } from '../stereo/match';
import type { BackendName } from '../stereo/params';

/** A row's process is stopped after this long (a row of the table, not the whole run). */
const TIMEOUT_MS = 300_000;

interface Row {
  scene: string;
  backend: string;
  size: string;
  labels: number;
  levels: string;
  cuts: number;
  msPerCut: number;
  totalMs: number;
  firstMs: number;
  rssMb: number;
  bad: number[];
  split: string;
}

function parseSet(sets: string[]): Partial<MatchOptions> {
  const o: Record<string, unknown> = {};
  for (const s of sets) {
    const [k, v] = s.split('=');
    o[k] = k === 'censusWindow' ? parseCensusWindow(v) : v === 'auto' || v === 'converge' ? v : v === 'true' ? true : v === 'false' ? false : Number.isNaN(Number(v)) ? v : Number(v);
  }
  return o as Partial<MatchOptions>;
}

async function one(dir: string, backend: BackendName, sets: string[], repeat: number): Promise<Row> {
  const scene = await loadScene(dir);
  // One matcher for the repeats, as a caller that matches many pairs keeps one: its device program and strip threads carry over.
  const matcher = createMatcher({ ndisp: scene.ndisp, minDisp: scene.minDisp ?? 0, ...parseSet(sets) }, { backend });
  const run = (): Promise<MatchResult> => matcher.compute(scene.left, scene.right);
  const first = await run();
  let r = first;
  for (let i = 1; i < repeat; i++) r = await run();
  await matcher.dispose();
  const mask = scene.masks.nonocc && !scene.nonoccDerived ? 'nonocc' : 'known';
  const ev = evaluateDisparity(r.disparity, scene.groundTruth!, r.width, r.height, { thresholds: [1, 2, 4], masks: scene.masks, nonoccDerived: scene.nonoccDerived, regions: [mask] });
  const py = r.pyramid;
  const split = py
    ? [`L${py.shapes.length - 1} ${py.shapes[0].width}×${py.shapes[0].height} ${(py.coarsest.times.totalMs / 1000).toFixed(2)} s (${py.coarsest.cuts} cuts)`,
      ...py.levels.map((l) => `L${l.level} band ${l.meanBand.toFixed(1)} costs ${(l.costsMs / 1000).toFixed(2)} s moves ${(l.expansionMs / 1000).toFixed(2)} s (${l.cuts} cuts, ${(l.nodes / Math.max(1, l.cuts) / 1000).toFixed(1)}k nodes/cut; ${l.strips} strips, thread time ${(l.threadMs / 1000).toFixed(2)} s, longest ${l.longestStripMs.toFixed(0)} ms; waits ≤ ${l.longestDispatchMs.toFixed(0)} ms to start, ≤ ${l.longestReturnMs.toFixed(0)} ms back)`)].join('; ')
    : `one level (${r.cuts} cuts)`;
  const expansionMs = r.times.expansionMs;
  return {
    scene: scene.name, backend: r.backend, size: `${r.width}×${r.height}`, labels: r.ndisp, levels: String(py ? py.shapes.length : 1), cuts: r.cuts + (py ? py.coarsest.cuts : 0),
    msPerCut: expansionMs / Math.max(1, r.cuts + (py ? py.coarsest.cuts : 0)), totalMs: r.times.totalMs, firstMs: first.times.totalMs, rssMb: process.resourceUsage().maxRSS / 1024,
    bad: ev.regions[0].bad, split,
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const backends: string[] = [];
  const sets: string[] = [];
  const scenes: string[] = [];
  let single = false;
  let repeat = 1;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--backend') backends.push(args[++i]);
    else if (args[i] === '--set') sets.push(args[++i]);
    else if (args[i] === '--one') single = true;
    else if (args[i] === '--repeat') repeat = Number(args[++i]);
    else scenes.push(args[i]);
  }
  if (single) {
    // Exit once written: a WebGPU runtime keeps native handles open after the work.
    process.stdout.write(`${JSON.stringify(await one(scenes[0], (backends[0] ?? 'auto') as BackendName, sets, repeat))}\n`, () => process.exit(0));
    return;
  }
  if (scenes.length === 0) {
    console.error('usage: node dist/bench/scaling.js [--backend NAME]… [--set key=value]… SCENE…');
    process.exit(2);
  }
  console.log(`| scene | backend | size | labels | levels | cuts | ms/cut | whole s${repeat > 1 ? ' (first)' : ''} | peak RSS MB | bad>1 | bad>2 | bad>4 | per level |`);
  console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const dir of scenes) {
    for (const b of backends.length ? backends : ['auto']) {
      let out: string;
      try {
        out = execFileSync(process.execPath, [__filename, '--one', dir, '--backend', b, '--repeat', String(repeat), ...sets.flatMap((s) => ['--set', s])], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24, timeout: TIMEOUT_MS });
      } catch (e) {
        console.log(`| ${dir} | ${b} | failed: ${(e as Error).message.split('\n')[0]} |`);
        continue;
      }
      const r = JSON.parse(out.trim().split('\n').pop()!) as Row;
      console.log(`| ${r.scene} | ${r.backend} | ${r.size} | ${r.labels} | ${r.levels} | ${r.cuts} | ${r.msPerCut.toFixed(1)} | ${(r.totalMs / 1000).toFixed(2)}${repeat > 1 ? ` (${(r.firstMs / 1000).toFixed(2)})` : ''} | ${r.rssMb.toFixed(0)} | ${r.bad.map((b) => b.toFixed(2)).join(' | ')} | ${r.split} |`);
    }
  }
}

main().catch((e: Error) => { console.error(e.message); process.exit(1); });
