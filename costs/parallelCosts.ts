/**
 * The cost volume and the WTA initialisation of large scenes on worker
 * threads. Both are pure loops over the volume (teddy, 450×375×60: 0.3 s
 * and 0.2 s on one core of the H200 machine's host, a sixth of a whole GPU
 * run), and both split without changing a single value: the volume by rows
 * (each row's costs depend on that row of the images only), the WTA by
 * disparity (each range's winners, merged in order with strict <, keep the
 * smallest disparity on a tie, as one pass does).
 *
 * The callers are synchronous, so the main thread waits on shared memory
 * (Atomics.wait) while the workers run; each worker reports on the same
 * memory when it has finished or failed, whatever failed (loading included).
 * Whenever the threads cannot do the job (a failure, a timeout, no second
 * core), the caller computes it on its own thread as before. Pairs too large
 * for a volume (costs on demand) get their WTA from cost slices the workers
 * compute from the pair itself, a range of disparities each.
 */
import * as os from 'os';
import * as path from 'path';
import { isMainThread, Worker } from 'worker_threads';
import type { Raster } from '../data/raster';
import type { CostThreading, DataCostOptions } from './costOptions';
import { runningFromSource, TS_REQUIRE_HOOK } from '../data/sourceLoader';

/**
 * When the threads are used, unless a caller's options say otherwise
 * (DataCostOptions threads). Starting the workers costs tens of ms (once
 * per process: they are kept), so volumes below `minEntries` (tsukuba, 1.8 M
 * entries, takes 35 ms on one core) stay on the caller's thread, and so do
 * machines with fewer than `minCores` cores (on a 2-core machine teddy's
 * costs and WTA took 0.51 s on two threads started for them against 0.36 s
 * on one); so does everything inside a worker thread (`stereocut tune`
 * runs its trials on threads already) and, unless `fromSource` is set, code
 * run from the TypeScript sources (the tests), whose workers would compile
 * the sources again.
 */
export const COST_THREADING: Readonly<CostThreading> = Object.freeze({ minEntries: 4_000_000, minCores: 4, maxThreads: 8, entriesPerThread: 1_000_000, timeoutMs: 60_000, fromSource: false });

/** Worker threads for a job over `entries` volume entries under `given` (over COST_THREADING): 0 for the caller's thread alone. */
export function costThreads(entries: number, cores = os.availableParallelism(), given?: Partial<CostThreading>): number {
  const t = { ...COST_THREADING, ...given };
  if (entries < t.minEntries || cores < Math.max(2, t.minCores) || !isMainThread || (runningFromSource() && !t.fromSource)) return 0;
  return Math.max(2, Math.min(cores, t.maxThreads, Math.ceil(entries / t.entriesPerThread)));
}

/** Rows y0..y1 − 1 of the volume of a pair, written into the shared `out`. */
export interface VolumeJob { kind: 'volume'; left: Raster; right: Raster; options: DataCostOptions; ndisp: number; y0: number; y1: number; out: SharedArrayBuffer }
/** The WTA of disparities from..to − 1 of a shared volume, into the shared `best` (box sums) and `label`. */
export interface WtaJob { kind: 'wta'; volume: SharedArrayBuffer; width: number; height: number; labels: number; window: number; from: number; to: number; best: SharedArrayBuffer; label: SharedArrayBuffer }
/** The same from cost slices computed from the pair (no volume: costs on demand); the rasters' data in shared memory. */
export interface WtaSlicesJob { kind: 'wtaSlices'; left: Raster; right: Raster; options: DataCostOptions; width: number; height: number; window: number; from: number; to: number; best: SharedArrayBuffer; label: SharedArrayBuffer }
export type CostJob = VolumeJob | WtaJob | WtaSlicesJob;

/** The workers' source: each runs the jobs it is sent, counting each finished (and failed, on any error, loading included) in the shared state. */
function workerSource(module: string): string {
  const fromSource = runningFromSource();
  return `
const { workerData, parentPort } = require('worker_threads');
const state = new Int32Array(workerData.state);
let run = null;
try {
  ${fromSource ? `require(${JSON.stringify(TS_REQUIRE_HOOK)});` : ''}
  run = require(${JSON.stringify(`${module}${fromSource ? '.ts' : '.js'}`)}).runCostJob;
} catch (e) {}
parentPort.on('message', (job) => {
  try {
    if (!run) throw new Error('cost worker did not load');
    run(job);
  } catch (e) {
    Atomics.store(state, 1, 1);
  }
  Atomics.add(state, 0, 1);
  Atomics.notify(state, 0);
});
`;
}

/** Worker threads kept for the process (started on the first large job; they do not keep it alive), and the state they report on. */
interface Pool { module: string; workers: Worker[]; state: Int32Array }
let pool: Pool | null = null;

function threadPool(size: number, module: string): Pool | null {
  if (pool && (pool.module !== module || pool.workers.length < size)) {
    for (const w of pool.workers) void w.terminate();
    pool = null;
  }
  if (!pool) {
    const state = new Int32Array(new SharedArrayBuffer(8));
    const source = workerSource(module);
    const workers: Worker[] = [];
    try {
      for (let i = 0; i < size; i++) {
        const w = new Worker(source, { eval: true, workerData: { state: state.buffer } });
        w.unref();
        workers.push(w);
      }
    } catch {
      for (const w of workers) void w.terminate();
      return null;
    }
    pool = { module, workers, state };
  }
  return pool;
}

/**
 * Runs `jobs` on the pool's threads, one each, and waits for all of them.
 * True when every job finished without an error within `given`'s timeoutMs
 * (over COST_THREADING); on a timeout the pool is dropped. `module` is the
 * workers' module (without extension); tests name others.
 */
export function runOnThreads(jobs: CostJob[], module = path.join(__dirname, 'costWorker'), given?: Partial<CostThreading>): boolean {
  const t = { ...COST_THREADING, ...given };
  const p = threadPool(Math.max(jobs.length, Math.min(os.availableParallelism(), t.maxThreads)), module);
  if (!p) return false;
  const { state } = p;
  Atomics.store(state, 0, 0);
  Atomics.store(state, 1, 0);
  jobs.forEach((job, i) => p.workers[i].postMessage(job));
  const deadline = performance.now() + t.timeoutMs;
  // Completion counts only while time is left: a timeout of 0 waits for nothing and fails, however fast the threads.
  let done = 0;
  for (let left = t.timeoutMs; left > 0; left = deadline - performance.now()) {
    done = Atomics.load(state, 0);
    if (done >= jobs.length || Atomics.wait(state, 0, done, left) === 'timed-out') break;
  }
  if (done < jobs.length) {
    // A worker that does not answer is not trusted with later jobs.
    for (const w of p.workers) void w.terminate();
    pool = null;
    return false;
  }
  return Atomics.load(state, 1) === 0;
}

/**
 * The volume of a large pair computed on worker threads, row bands each, in
 * a SharedArrayBuffer; null when it is small or the threads failed (the
 * caller then computes it).
 */
export function volumeOnThreads(left: Raster, right: Raster, options: DataCostOptions, width: number, height: number, ndisp: number): Int32Array | null {
  const threads = Math.min(costThreads(width * height * ndisp, undefined, options.threads), height);
  if (threads === 0) return null;
  const out = new SharedArrayBuffer(4 * width * height * ndisp);
  const jobs: CostJob[] = [];
  for (let t = 0; t < threads; t++) {
    const y0 = Math.floor((t * height) / threads);
    const y1 = Math.floor(((t + 1) * height) / threads);
    if (y1 > y0) jobs.push({ kind: 'volume', left, right, options, ndisp, y0, y1, out });
  }
  return runOnThreads(jobs, undefined, options.threads) ? new Int32Array(out) : null;
}

/** Disparity ranges for `threads` threads over `labels`, each with its shared best sums and labels. */
function wtaRanges(threads: number, labels: number, n: number): Array<{ from: number; to: number; best: SharedArrayBuffer; label: SharedArrayBuffer }> {
  const ranges = [];
  for (let t = 0; t < threads; t++) {
    const from = Math.floor((t * labels) / threads);
    const to = Math.floor(((t + 1) * labels) / threads);
    if (to > from) ranges.push({ from, to, best: new SharedArrayBuffer(8 * n), label: new SharedArrayBuffer(2 * n) });
  }
  return ranges;
}

/** The ranges' winners merged in increasing order, strictly smaller sums only: ties keep the smallest disparity, as one pass does. */
function mergeWtaRanges(ranges: ReadonlyArray<{ best: SharedArrayBuffer; label: SharedArrayBuffer }>, n: number): Uint16Array {
  const best = new Float64Array(ranges[0].best);
  const label = new Uint16Array(n);
  label.set(new Uint16Array(ranges[0].label));
  for (let t = 1; t < ranges.length; t++) {
    const b = new Float64Array(ranges[t].best);
    const l = new Uint16Array(ranges[t].label);
    for (let p = 0; p < n; p++) {
      if (b[p] < best[p]) {
        best[p] = b[p];
        label[p] = l[p];
      }
    }
  }
  return label;
}

/**
 * The WTA labels of a large volume computed on worker threads, a range of
 * disparities each, merged in order; null when the volume is small or the
 * threads failed. A volume not in shared memory is copied there first.
 */
export function wtaOnThreads(volume: Int32Array, width: number, height: number, labels: number, window: number, given?: Partial<CostThreading>): Uint16Array | null {
  const threads = Math.min(costThreads(volume.length, undefined, given), labels);
  if (threads === 0) return null;
  const n = width * height;
  let shared = volume.buffer instanceof SharedArrayBuffer && volume.byteOffset === 0 && volume.byteLength === volume.buffer.byteLength ? volume.buffer : null;
  if (!shared) {
    shared = new SharedArrayBuffer(volume.byteLength);
    new Int32Array(shared).set(volume);
  }
  const jobs: WtaJob[] = wtaRanges(threads, labels, n).map((r) => ({ kind: 'wta', volume: shared, width, height, labels, window, ...r }));
  return runOnThreads(jobs, undefined, given) ? mergeWtaRanges(jobs, n) : null;
}

/** `r` with its samples in shared memory, so that every worker reads the same copy instead of receiving one. */
function sharedRaster(r: Raster): Raster {
  if (r.data.buffer instanceof SharedArrayBuffer) return r;
  const data = new Float32Array(new SharedArrayBuffer(r.data.byteLength));
  data.set(r.data);
  return { ...r, data };
}

/**
 * The WTA labels of a large pair whose volume is never stored (costs on
 * demand: the full-size MiddEval3 pairs), on worker threads: each builds
 * its own matcher from the pair (in shared memory) and runs the slices of a
 * range of disparities; merged in order. On one core of the H200 machine's
 * host a 3000×2000 pair with 300 labels took 31 s. Null when the pair is
 * small or the threads failed.
 */
export function wtaSlicesOnThreads(left: Raster, right: Raster, options: DataCostOptions, width: number, height: number, labels: number, window: number): Uint16Array | null {
  const threads = Math.min(costThreads(width * height * labels, undefined, options.threads), labels);
  if (threads === 0) return null;
  const n = width * height;
  const [l, r] = [sharedRaster(left), sharedRaster(right)];
  const jobs: WtaSlicesJob[] = wtaRanges(threads, labels, n).map((range) => ({ kind: 'wtaSlices', left: l, right: r, options, width, height, window, ...range }));
  return runOnThreads(jobs, undefined, options.threads) ? mergeWtaRanges(jobs, n) : null;
}
