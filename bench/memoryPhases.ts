/**
 * Where a match's peak host memory is reached: one matcher's runs on one
 * scene, a row per phase (each pyramid level, its end, the check), with
 * the process's peak resident memory so far at the phase's end and the
 * main thread's typed arrays at its start (the strip threads' own are the
 * difference):
 *
 *   node dist/bench/memoryPhases.js SCENE [RUNS] [BACKEND]
 *
 * RUNS (2): matches of the pair in turn, by one matcher (createMatcher), so
 * the later ones keep its device program and strip threads, as a caller
 * matching many pairs does. BACKEND: gpu (default), bk, …
 */
import { loadScene } from '../data/scene';
import { createMatcher, type MatchEvent } from '../stereo/match';
import type { BackendName } from '../stereo/params';

const MB = 1024 * 1024;

interface Mark { phase: string; at: number; arrays: number }

async function main(): Promise<void> {
  const [dir, runsArg, backendArg] = process.argv.slice(2);
  if (!dir) throw new Error('usage: node dist/bench/memoryPhases.js SCENE [RUNS] [BACKEND]');
  const runs = Number(runsArg ?? 2);
  if (!(Number.isInteger(runs) && runs >= 1)) throw new Error(`RUNS: a whole number ≥ 1 (got ${runsArg})`);
  const scene = await loadScene(dir);
  const marks: Mark[] = [];
  const rows: string[] = [];
  // A phase's row is written when the next one starts: the peak so far then covers the phase.
  const mark = (phase: string): void => {
    const last = marks[marks.length - 1];
    if (last) rows.push(`| ${last.phase} | ${((performance.now() - last.at) / 1000).toFixed(2)} | ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} | ${(last.arrays / MB).toFixed(0)} |`);
    marks.push({ phase, at: performance.now(), arrays: process.memoryUsage().arrayBuffers });
  };
  const onEvent = (e: MatchEvent): void => {
    if (e.kind === 'level') mark(`run ${run + 1}, level ${e.level} (${e.shape.width}×${e.shape.height})`);
    else if (e.kind === 'levelDone') mark(`run ${run + 1}, level ${e.report.level} done`);
    else if (e.kind === 'leftRightCheck') mark(`run ${run + 1}, check and fill`);
  };
  let run = 0;
  const matcher = createMatcher({ ndisp: scene.ndisp, minDisp: scene.minDisp ?? 0, onEvent }, { backend: (backendArg ?? 'gpu') as BackendName });
  for (; run < runs; run++) {
    mark(`run ${run + 1}, start`);
    await matcher.compute(scene.left, scene.right);
  }
  mark('dispose');
  await matcher.dispose();
  mark('end');
  console.log(`# ${scene.name}, ${scene.left.width}×${scene.left.height}, ${runs} run(s), backend ${backendArg ?? 'gpu'}\n`);
  console.log('| phase | s | peak RSS so far at its end (MB) | main thread\'s typed arrays at its start (MB) |\n|---|---:|---:|---:|');
  for (const r of rows) console.log(r);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
