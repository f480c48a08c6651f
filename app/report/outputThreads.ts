import * as os from 'os';
import * as path from 'path';
import { movableBuffers } from '../../data/poolTask';
import { ThreadLost, ThreadPool } from '../../data/threadPool';
import { drawImage, writeImageBytes, type ImageJob } from './outputImages';
import type { ImageThreadTask } from './outputThreadWorker';

/** The most threads an ImageWriters starts: a scene has five images, the left image's about as costly as two of the others. */
export const MAX_IMAGE_THREADS = 3;

/**
 * Threads for a machine of `cores`: one core is the caller's, and none on
 * two cores or fewer, where the compression (Node's thread pool) already
 * keeps the other core busy.
 */
export function imageThreadsFor(cores: number): number {
  return cores <= 2 ? 0 : Math.min(MAX_IMAGE_THREADS, cores - 1);
}

/** The machine's cores, as Node reports them. */
export function machineCores(): number {
  return os.availableParallelism?.() ?? os.cpus().length;
}

/**
 * An image drawn ahead (ImageWriters.prepare): its file is written by
 * write(), or never, after discard(). Either is called at most once.
 */
export interface PreparedImage {
  write(): Promise<void>;
  discard(): void;
}

/** A promise that never settles: what a job lost to close() gives (see close()). */
const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/**
 * Worker threads (data/threadPool.ts) that draw and write a scene's image
 * files (outputImages.ts) while the calling thread goes on: `stereocut run`
 * starts them before it reads its scenes, so that they load their modules
 * while the main thread loads its own and sets the device up, and a
 * scene's five images are drawn and compressed side by side instead of
 * one after the other on the main thread.
 *
 * write(job) resolves once the file is written, or rejects with the
 * write's own one-line error. Each job's arrays are copied to its thread.
 * Should the threads fail to start, or a thread stop with jobs unanswered
 * (or a job fail to reach one), those jobs and every later one are done on
 * the calling thread (drawImage): the threads only ever save time, and the
 * files are the same either way. A thread keeps the process alive while it
 * has a job; close() ends them.
 */
export class ImageWriters {
  private readonly pool: ThreadPool | undefined;
  /** Set by close(): the jobs the threads had then are not done at all. */
  private closedByCaller = false;
  /** Jobs done on the calling thread (a thread failed or none started), for a caller that wants to know. */
  doneHere = 0;

  /** `count` threads; `module`: the thread's module without extension (tests name others). */
  constructor(count: number, module = path.join(__dirname, 'outputThreadWorker')) {
    let pool: ThreadPool | undefined;
    try {
      if (count > 0) pool = new ThreadPool(module, { threads: count, start: 'now' });
    } catch {
      pool = undefined;
    }
    this.pool = pool;
  }

  /** Draws and writes `job` on a thread, or here when none is left. */
  write(job: ImageJob): Promise<void> {
    return this.onThread({ write: job }, [], () => this.here(job)).then(() => undefined);
  }

  /**
   * Draws and compresses `job` on a thread now, and writes its file only
   * when the handle's write() is called: for images that do not depend on
   * work still running, so that their compression overlaps it and nothing
   * is written should that work fail. Without threads the image is drawn
   * at write(), here.
   */
  prepare(job: ImageJob): PreparedImage {
    // The bytes, or undefined where the image is to be drawn here at write().
    const drawn = this.onThread<Uint8Array | undefined>({ encode: job }, [], async () => undefined);
    // A drawing that failed is reported by write(); one never written is nobody's concern.
    drawn.catch(() => undefined);
    let used = false;
    const use = (): void => {
      if (used) throw new Error('ImageWriters.prepare: an image is written or discarded once');
      used = true;
    };
    return {
      write: async () => {
        use();
        const bytes = await drawn;
        if (bytes === undefined) return this.here(job);
        // Written by a thread; here, as drawn, when none is left; drawn again here should the thread be lost with the bytes.
        if (!this.pool || this.pool.closed) return writeImageBytes(job.file, bytes);
        await this.onThread({ file: job.file, bytes }, movableBuffers([bytes]), () => this.here(job));
      },
      discard: () => {
        use();
      },
    };
  }

  /**
   * Runs `task` on a thread; where no thread is left, or the thread is lost
   * with it, gives `here()` instead, and every later job is done here.
   */
  private async onThread<T>(task: ImageThreadTask, transferList: ArrayBuffer[], here: () => Promise<T>): Promise<T> {
    if (!this.pool || this.pool.closed) return here();
    try {
      return await this.pool.run<T>(task, transferList);
    } catch (e) {
      if (!(e instanceof ThreadLost)) throw e;
      if (this.closedByCaller) return never();
      void this.pool.close();
      return here();
    }
  }

  /** Ends the threads (after the writes asked for have settled: a write still running would be lost, and never settle). */
  close(): void {
    this.closedByCaller = true;
    void this.pool?.close();
  }

  private here(job: ImageJob): Promise<void> {
    this.doneHere++;
    return drawImage(job);
  }
}
