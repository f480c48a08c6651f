import * as os from 'os';
import * as path from 'path';
import { isMainThread } from 'worker_threads';
import { runningFromSource } from '../data/sourceLoader';
import { ThreadPool } from '../data/threadPool';
import { solveStrip, type StripDone, type StripRunner } from './levelStrips';
import { movableBuffers } from '../data/poolTask';
import { SharedStage } from '../data/sharedStage';
import type { MatchResult, StripPool } from './matchTypes';

/** The strips one after another on this thread. */
export const runStripsHere: StripRunner = async (jobs, onDone) => {
  const out = [];
  for (const job of jobs) {
    const d = await solveStrip(job);
    onDone?.(d);
    out.push(d);
  }
  return out;
};

/** Pixels of a pair's full size from which its finer levels run on threads (below, starting them costs more than they save). */
export const PARALLEL_PIXELS = 250_000;

/**
 * Threads a pool of this process may start: every core, from the main
 * thread of compiled code. None inside a worker thread (`stereocut tune`
 * runs its trials on threads already), on one core, or from the
 * TypeScript sources (the tests: jest runs a test file on every core
 * already, and each thread would load the modules again through the
 * require hook; a test that wants threads makes its own pool,
 * stripPool(n)). A sequence's median bands take these (stereo/
 * sequence.ts starts them once for all its frames).
 */
export function poolThreads(cores = os.availableParallelism()): number {
  return isMainThread && !runningFromSource() && cores > 1 ? cores : 0;
}

/** Threads for the strips of a pair of `pixels` pixels: poolThreads, but none under PARALLEL_PIXELS. */
export function stripThreads(pixels: number, cores = os.availableParallelism()): number {
  return pixels >= PARALLEL_PIXELS ? poolThreads(cores) : 0;
}

/** A pool of `threads` threads, or this thread for fewer than 2. */
export function stripPool(threads: number): StripPool {
  if (threads < 2) return { run: runStripsHere, threads: 0, close: async () => undefined };
  const pool = new ThreadPool(path.join(__dirname, 'stripWorker'), { threads, start: 'now' });
  const pairStage = new SharedStage();
  const medianStage = new SharedStage();
  return {
    threads,
    // A job's crops are moved to its thread (one array where one crop stands for both images), or shared where they are views of the pool's pair stage.
    run: (jobs, onDone) => Promise.all(jobs.map((job) => pool.run<StripDone>(job, movableBuffers([job.left.data, job.right.data])).then((d) => {
      onDone?.(d);
      return d;
    }))),
    terms: (bands) => Promise.all(bands.map((b) => pool.run<number>(b, movableBuffers([b.left.data, b.right.data])))),
    // A band's own slices are moved to its thread; views of the stage are shared.
    median: (bands) => Promise.all(bands.map((b) => pool.run<Uint16Array>(b, movableBuffers([b.disp, b.marked, b.left.data])))),
    // The view's pair is its own (mirrored copies): moved to the thread.
    view: (job) => pool.run<MatchResult>(job, movableBuffers([job.viewLeft.data, job.viewRight.data])),
    medianStage,
    pairStage,
    close: () => {
      pairStage.clear();
      medianStage.clear();
      return pool.close();
    },
  };
}
