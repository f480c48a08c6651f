import * as path from 'path';
import { Worker } from 'worker_threads';
import { InputError } from '../../data/errors';
import { workerEntry } from '../../data/sourceLoader';
import type { TrialJob, TrialRecord } from './trial';

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
 * Runs trials on `size` threads and hands every record to `onRecord` as soon
 * as it arrives (in finishing order). The first failing trial stops the run:
 * the threads are terminated and the promise rejects with the trial's error,
 * naming the scene and point.
 */
export async function runOnWorkers(jobs: TrialJob[], size: number, onRecord: (r: TrialRecord) => void): Promise<void> {
  if (jobs.length === 0) return;
  const threads = new TrialThreads(Math.max(1, Math.min(size, jobs.length)));
  let next = 0;
  let failed: Error | undefined;
  const lane = async (): Promise<void> => {
    while (failed === undefined && next < jobs.length) {
      const j = jobs[next++];
      try {
        const r = await threads.run(j);
        if (failed === undefined) onRecord(r);
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        failed ??= msg.startsWith('trial thread') ? new Error(`tune worker: ${msg}`) : new Error(`trial ${j.scene} ${j.key.split('|')[1]}: ${msg}`);
        await threads.close();
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: threads.size }, lane));
  } finally {
    await threads.close();
  }
  if (failed) throw failed;
}
