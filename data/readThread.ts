import * as path from 'path';
import { Worker } from 'worker_threads';
import { readImage } from './imageIO';
import type { Raster } from './raster';
import { loadScene, type LoadSceneOptions } from './scene';
import type { Scene } from './sceneTypes';
import { workerEntry } from './sourceLoader';

/** A read a worker thread can do: a scene folder (loadScene) or an image file (readImage). */
export type ReadJob = { kind: 'scene'; dir: string; options?: LoadSceneOptions } | { kind: 'image'; file: string };

/** What a job gives. */
export type ReadResult<J extends ReadJob> = J extends { kind: 'scene' } ? Scene : Raster;

/** A job done on the calling thread, as the worker does it (readThreadWorker.ts). */
export function readHere(job: ReadJob): Promise<Scene | Raster> {
  return job.kind === 'scene' ? loadScene(job.dir, job.options) : readImage(job.file);
}

/** Jobs whose results are asked for by index, in order: done on a worker thread (ReadsOnThread) or here (readsHere). */
export interface Reads<J extends ReadJob> {
  result(i: number): Promise<ReadResult<J>>;
  /** No result is asked for any more. */
  close(): void;
}

/** The jobs done on the calling thread, each when its result is asked for. */
export function readsHere<J extends ReadJob>(jobs: readonly J[]): Reads<J> {
  return { result: (i) => readHere(jobs[i]) as Promise<ReadResult<J>>, close: () => undefined };
}

/**
 * Reads (scene folders, images) done on a worker thread, for a main thread
 * that is about to block: a fresh process's WebGPU adapter and device are
 * made inside Dawn, which holds the main thread meanwhile, and the inputs
 * (PNG decoding, ground truth, masks) can be read then instead of after.
 *
 * The thread does the jobs in order and sends each result as it is done,
 * its sample arrays moved, not copied (readThreadWorker.ts). `result(i)`
 * gives job i's result, or rejects with the error the read gave there (the
 * same one-line message). Should the thread fail to start, or stop before
 * it has sent every result, the rest are read on the calling thread: the
 * thread only ever saves time.
 */
export class ReadsOnThread<J extends ReadJob = ReadJob> implements Reads<J> {
  private readonly results: Promise<ReadResult<J>>[];
  private readonly settle: Array<{ resolve(r: ReadResult<J>): void; reject(e: unknown): void }> = [];
  private worker: Worker | undefined;
  private received = 0;
  private closed = false;
  /** Jobs done on the calling thread (the thread stopped or never started), for a caller that wants to know. */
  doneHere = 0;

  /** `module`: the thread's module without extension (tests name others). */
  constructor(private readonly jobs: readonly J[], module = path.join(__dirname, 'readThreadWorker')) {
    this.results = jobs.map((_, i) => {
      const p = new Promise<ReadResult<J>>((resolve, reject) => { this.settle[i] = { resolve, reject }; });
      // A failed read is an error only once its result is asked for.
      p.catch(() => undefined);
      return p;
    });
    try {
      const entry = workerEntry(module);
      const w = new Worker(entry.code, { eval: entry.eval, workerData: { jobs } });
      w.unref();
      w.on('message', (m: { i: number; result?: ReadResult<J>; error?: string }) => {
        this.received = m.i + 1;
        if (m.result) this.settle[m.i].resolve(m.result);
        else this.settle[m.i].reject(new Error(m.error));
      });
      w.on('error', () => this.doRestHere());
      w.on('exit', () => this.doRestHere());
      this.worker = w;
    } catch {
      this.doRestHere();
    }
  }

  /** Job i's result (see the class comment). */
  result(i: number): Promise<ReadResult<J>> {
    return this.results[i];
  }

  /** Ends the thread; jobs not done by then are not done at all. */
  close(): void {
    this.closed = true;
    void this.worker?.terminate();
    this.worker = undefined;
  }

  /** The thread is gone: the jobs it did not send are done on this thread, in order. */
  private doRestHere(): void {
    if (this.closed) return;
    this.closed = true;
    this.worker = undefined;
    void (async () => {
      for (let i = this.received; i < this.jobs.length; i++) {
        this.doneHere++;
        try {
          this.settle[i].resolve(await readHere(this.jobs[i]) as ReadResult<J>);
        } catch (e) {
          this.settle[i].reject(e);
        }
      }
    })();
  }
}
