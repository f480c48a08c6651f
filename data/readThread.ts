import * as path from 'path';
import { readImage } from './imageIO';
import { ownSamples, sharedSamples, type Raster } from './raster';
import { loadScene, type LoadSceneOptions } from './scene';
import type { Scene } from './sceneTypes';
import { ThreadLost, ThreadPool } from './threadPool';

/** A read a worker thread can do: a scene folder (loadScene) or an image file (readImage). */
export type ReadJob = { kind: 'scene'; dir: string; options?: LoadSceneOptions } | { kind: 'image'; file: string; /** An image of a pair to match: its samples in shared memory (data/raster.ts sharedSamples). */ pair?: boolean };

/** What a job gives. */
export type ReadResult<J extends ReadJob> = J extends { kind: 'scene' } ? Scene : Raster;

/** A job done on the calling thread, as the worker does it (readThreadWorker.ts). */
export function readHere(job: ReadJob): Promise<Scene | Raster> {
  return job.kind === 'scene' ? loadScene(job.dir, job.options) : readImage(job.file, job.pair ? sharedSamples : ownSamples);
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
 * The thread (a ThreadPool of one, started with every job sent to it, so
 * that it reads them all without this thread's help) does the jobs in
 * order and answers each as it is done, its sample arrays moved, not
 * copied (readThreadWorker.ts). `result(i)` gives job i's result, or
 * rejects with the error the read gave there (the same class and one-line
 * message). Should the thread fail to start, or stop before it has answered
 * every job, the rest are read on the calling thread: the thread only ever
 * saves time.
 */
export class ReadsOnThread<J extends ReadJob = ReadJob> implements Reads<J> {
  private readonly results: Promise<ReadResult<J>>[];
  private readonly pool: ThreadPool | undefined;
  /** The reads done on this thread after the thread was lost, one after another in the jobs' order. */
  private doneInTurn: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Jobs done on the calling thread (the thread stopped or never started), for a caller that wants to know. */
  doneHere = 0;

  /** `module`: the thread's module without extension (tests name others). */
  constructor(jobs: readonly J[], module = path.join(__dirname, 'readThreadWorker')) {
    let pool: ThreadPool | undefined;
    try {
      pool = new ThreadPool(module, { threads: 1, start: 'now', tasksPerThread: Math.max(1, jobs.length) });
    } catch {
      pool = undefined;
    }
    this.pool = pool;
    this.results = jobs.map((job) => {
      const p = (pool ? pool.run<ReadResult<J>>(job) : Promise.reject(new ThreadLost('not started'))).catch((e: unknown) => {
        if (!(e instanceof ThreadLost)) throw e;
        // Jobs lost to close() are not done at all.
        if (this.closed) return new Promise<never>(() => undefined);
        void pool?.close();
        return this.readOnThisThread(job);
      });
      // A failed read is an error only once its result is asked for.
      p.catch(() => undefined);
      return p;
    });
  }

  /** Job i's result (see the class comment). */
  result(i: number): Promise<ReadResult<J>> {
    return this.results[i];
  }

  /** Ends the thread; jobs not done by then are not done at all. */
  close(): void {
    this.closed = true;
    void this.pool?.close();
  }

  /** `job` read on this thread, after the reads done here before it. */
  private readOnThisThread(job: J): Promise<ReadResult<J>> {
    const read = this.doneInTurn.then(() => {
      this.doneHere++;
      return readHere(job) as Promise<ReadResult<J>>;
    });
    this.doneInTurn = read.catch(() => undefined);
    return read;
  }
}
