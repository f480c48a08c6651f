import * as path from 'path';
import { ThreadLost, ThreadPool } from '../../data/threadPool';
import { ProgramStore } from '../../gpu/move/keptPrograms';
import { checkBackend, placeBackend } from '../../gpu/runtime/backends';
import type { BackendName } from '../../stereo/params';
import { runTrial, SceneCache, type TrialJob, type TrialRecord } from './trial';

/**
 * Worker threads that run trials (worker.ts), one at a time each, keeping
 * the scenes they loaded: a thread starts when a trial finds none free, up to
 * `size`, and is kept until close(). A thread that dies fails its trial and
 * is replaced. Trials must not run on the main thread where it has to stay
 * responsive (a queue worker renews its jobs' locks from it).
 */
export class TrialThreads {
  private readonly pool: ThreadPool;

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`trial threads: size must be an integer ≥ 1 (got ${size})`);
    this.pool = new ThreadPool(path.join(__dirname, 'worker'), { threads: size, start: 'asNeeded', keepIdle: true });
  }

  /** Runs one trial on a thread. An InputError where the trial failed for its input; an Error otherwise. */
  async run(job: TrialJob): Promise<TrialRecord> {
    if (this.pool.closed) throw new Error('trial threads: closed');
    try {
      return await this.pool.run<TrialRecord>(job);
    } catch (e) {
      throw e instanceof ThreadLost ? new Error(`trial ${e.message}`) : e;
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/**
 * Runs trials on an executor, `executor.size` at a time, and hands every
 * record to `onRecord` as soon as it arrives (in finishing order). The first
 * failing trial stops the run: the executor is closed and the promise
 * rejects with the trial's error, naming the scene and point.
 */
export async function runOnExecutor(jobs: TrialJob[], executor: TrialExecutor, onRecord: (r: TrialRecord) => void): Promise<void> {
  let next = 0;
  let failed: Error | undefined;
  const lane = async (): Promise<void> => {
    while (failed === undefined && next < jobs.length) {
      const j = jobs[next++];
      try {
        const r = await executor.run(j);
        if (failed === undefined) onRecord(r);
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        failed ??= msg.startsWith('trial thread') ? new Error(`tune worker: ${msg}`) : new Error(`trial ${j.scene} ${j.key.split('|')[1]}: ${msg}`);
        await executor.close();
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(executor.size, jobs.length) }, lane));
  } finally {
    await executor.close();
  }
  if (failed) throw failed;
}

/** Where trials run in this process: on `size` threads (BK), or one after another on this thread (the GPU). */
export interface TrialExecutor {
  /** The backend every trial here runs on ('bk' or a GPU backend; never 'auto'). */
  backend: BackendName;
  /** Trials that can run at once. */
  size: number;
  /** Runs one trial on `backend`; rejects with an InputError where the trial failed for its input. */
  run(job: TrialJob): Promise<TrialRecord>;
  close(): Promise<void>;
}

/**
 * Places trials as `backend` asks: BK (or 'auto' without a WebGPU adapter)
 * on `size` worker threads, since each trial is one CPU core's work; a GPU
 * backend on this thread, one trial at a time, since the threads would share
 * one device.
 */
export async function trialExecutor(backend: BackendName, size: number): Promise<TrialExecutor> {
  const place = await placeBackend(checkBackend(backend));
  if (place.runs === 'bk') {
    const threads = new TrialThreads(size);
    return { backend: 'bk', size, run: (job) => threads.run({ ...job, backend: 'bk' }), close: () => threads.close() };
  }
  const on: BackendName = backend === 'auto' ? 'gpu' : backend;
  const cache = new SceneCache();
  // The device program of the last trial's shape, for the next trial (the trials of a sweep differ in values, not shape).
  const programs = new ProgramStore();
  let queue = Promise.resolve();
  return {
    backend: on, size: 1,
    run: (job) => {
      const r = queue.then(() => runTrial({ ...job, backend: on }, cache, programs));
      queue = r.then(() => undefined, () => undefined);
      return r;
    },
    close: async () => {
      await queue;
      programs.release();
    },
  };
}
