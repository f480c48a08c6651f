/**
 * How a level's strips would share T threads: each strip of a scene's
 * finest level timed alone on this thread, then the level's wall time
 * simulated on T threads for three orders of the even strips (the windows
 * start as their two even strips end, in the order they become ready):
 * row order (what stereo/coarseToFine.ts does), longest first by the
 * labels their bands hold (an estimate a level has before it runs them),
 * and longest first by their measured times. A machine with fewer cores
 * than T cannot time T threads, but it can time each strip.
 *
 *   node dist/bench/stripSchedule.js SCENE [THREADS...]
 *
 * THREADS: 16 if none is given. The match runs on BK, one strip at a time.
 */
import { loadScene } from '../data/scene';
import { match } from '../stereo/match';
import { runStripsHere } from '../stereo/stripRunner';
import type { StripPool } from '../stereo/matchTypes';
import { stripSpan, type StripJob } from '../stereo/levelStrips';

interface Timed { view: number; k: number; even: boolean; work: number; ms: number }

/** The level's wall time on `threads` threads, the even strips queued in `order` (the strips of one view are `byView[v]`, row order). */
function simulate(byView: Timed[][], threads: number, order: Timed[]): number {
  const queue = [...order];
  const done = new Set<Timed>();
  const waiting = byView.flatMap((strips) => strips.filter((s) => !s.even));
  const running: Array<{ strip: Timed; end: number }> = [];
  let now = 0;
  while (queue.length > 0 || waiting.length > 0 || running.length > 0) {
    while (running.length < threads && queue.length > 0) {
      const strip = queue.shift()!;
      running.push({ strip, end: now + strip.ms });
    }
    running.sort((a, b) => a.end - b.end);
    const next = running.shift()!;
    now = next.end;
    done.add(next.strip);
    // A window is ready once the even strips beside it (those that exist) are done.
    for (let i = 0; i < waiting.length; i++) {
      const w = waiting[i];
      const strips = byView[w.view];
      if ([w.k - 1, w.k + 1].every((k) => k >= strips.length || done.has(strips[k]))) {
        queue.push(w);
        waiting.splice(i--, 1);
      }
    }
  }
  return now;
}

async function main(): Promise<void> {
  const [dir, ...threadArgs] = process.argv.slice(2);
  if (!dir) throw new Error('usage: node dist/bench/stripSchedule.js SCENE [THREADS...]');
  const threads = threadArgs.length > 0 ? threadArgs.map(Number) : [16];
  for (const t of threads) if (!(Number.isInteger(t) && t >= 1)) throw new Error(`THREADS: whole numbers ≥ 1 (got ${threadArgs.join(' ')})`);
  const scene = await loadScene(dir);
  // Each level's jobs, with their times: the last level run is the finest.
  let levelJobs: Array<{ job: StripJob; ms: number }> = [];
  let height = -1;
  const pool: StripPool = {
    threads: 0,
    close: async () => undefined,
    run: async (jobs, onDone) => {
      if (jobs[0] && jobs[0].height !== height) { height = jobs[0].height; levelJobs = []; }
      const out = await runStripsHere(jobs, onDone);
      out.forEach((d, i) => levelJobs.push({ job: jobs[i], ms: d.costsMs + d.expansionMs }));
      return out;
    },
  };
  await match(scene.left, scene.right, { ndisp: scene.ndisp, minDisp: scene.minDisp ?? 0, backend: 'bk', stripPool: pool });
  if (levelJobs.length === 0) throw new Error(`${dir}: matched at one level (no strips); give a pair of 0.5 MP or more`);
  const rows = levelJobs.reduce((r, { job }) => Math.max(r, job.own1 - job.own0), 0);
  const byView: Timed[][] = [[], []];
  for (const { job, ms } of levelJobs) {
    const k = Math.round(job.own0 / rows);
    const a = stripSpan(job.y0, job.y1, job.height).a;
    const W = job.left.width;
    let work = 0;
    for (let q = (job.own0 - a) * W; q < (job.own1 - a) * W; q++) work += job.hi[q] - job.lo[q] + 1;
    byView[job.view][k] = { view: job.view, k, even: k % 2 === 0, work, ms };
  }
  const views = byView.filter((v) => v.length > 0);
  const evens = views.flatMap((strips) => strips.filter((s) => s.even));
  const total = views.flat().reduce((s, x) => s + x.ms, 0);
  console.log(`# ${dir}: finest level ${height} rows, ${views.flat().length} strips, ${total.toFixed(0)} ms of strip time on one thread, the longest ${Math.max(...views.flat().map((s) => s.ms)).toFixed(0)} ms`);
  console.log('');
  console.log('| threads | time / threads (ms) | evens in row order | longest first by band labels | longest first by time |');
  console.log('|---:|---:|---:|---:|---:|');
  const byWork = [...evens].sort((a, b) => b.work - a.work || a.view - b.view || a.k - b.k);
  const byTime = [...evens].sort((a, b) => b.ms - a.ms);
  for (const t of threads) {
    console.log(`| ${t} | ${(total / t).toFixed(0)} | ${simulate(views, t, evens).toFixed(0)} | ${simulate(views, t, byWork).toFixed(0)} | ${simulate(views, t, byTime).toFixed(0)} |`);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
