import { ProgramStore } from '../../gpu/move/keptPrograms';
import * as path from 'path';
import { Worker } from 'worker_threads';
import { InputError } from '../../data/errors';
import { workerEntry } from '../../data/sourceLoader';
import { checkBackend, placeBackend } from '../../graphcut/backends';
import type { BackendName } from '../params';
import { runTrial, SceneCache, type TrialJob, type TrialRecord } from './trial';

/** What a trial thread answers (worker.ts). */
interface Reply {
  id: number;
  record?: TrialRecord;
  error?: string;
  /** The trial failed for its input (an InputError): it fails the same way anywhere. */
  input?: boolean;
}

/**
 * Worker threads that run trials, one at a time each, keeping the scenes
 * they loaded. `run` takes a free thread (waiting for one when all are busy);
 * a thread that dies fails its trial and is replaced. Trials must not run on
 * the main thread where it has to stay responsive (a queue worker renews its
 * jobs' locks from it).
 */
export class TrialThreads {
  private readonly idle: Worker[] = [];
  private readonly all = new Set<Worker>();
  private readonly waiting: ((w: Worker) => void)[] = [];
  private readonly entry = workerEntry(path.join(__dirname, 'worker'));
  private nextId = 0;
  private closed = false;

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`trial threads: size must be an integer ≥ 1 (got ${size})`);
  }

  private spawn(): Worker {
    const w = new Worker(this.entry.code, { eval: this.entry.eval });
    this.all.add(w);
    return w;
  }

  private take(): Promise<Worker> {
    const w = this.idle.pop();
    if (w) return Promise.resolve(w);
    if (this.all.size < this.size) return Promise.resolve(this.spawn());
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private give(w: Worker): void {
    const next = this.waiting.shift();
    if (next) next(w);
    else this.idle.push(w);
  }

  /** Runs one trial on a thread. An InputError where the trial failed for its input; an Error otherwise. */
  async run(job: TrialJob): Promise<TrialRecord> {
    if (this.closed) throw new Error('trial threads: closed');
    const w = await this.take();
    const id = this.nextId++;
    return new Promise<TrialRecord>((resolve, reject) => {
      const cleanup = (): void => {
        w.off('message', onMessage);
        w.off('error', onError);
        w.off('exit', onExit);
      };
      const onMessage = (msg: Reply): void => {
        if (msg.id !== id) return;
        cleanup();
        this.give(w);
        if (msg.record) resolve(msg.record);
        else reject(msg.input ? new InputError(msg.error ?? 'no result') : new Error(msg.error ?? 'no result'));
      };
      const lost = (why: string): void => {
        cleanup();
        this.all.delete(w);
        void w.terminate();
        // The thread is gone: a fresh one takes its place for whoever waits.
        if (!this.closed && this.waiting.length > 0) this.give(this.spawn());
        reject(new Error(`trial thread ${why}`));
      };
      const onError = (e: Error): void => lost(`failed: ${e.message}`);
      const onExit = (code: number): void => lost(`exited with code ${code}`);
      w.on('message', onMessage);
      w.on('error', onError);
      w.on('exit', onExit);
      w.postMessage({ id, job });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.all].map((w) => w.terminate()));
    this.all.clear();
    this.idle.length = 0;
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
