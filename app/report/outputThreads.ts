import * as os from 'os';
import * as path from 'path';
import { Worker } from 'worker_threads';
import { workerEntry } from '../../data/sourceLoader';
import { drawImage, type ImageJob } from './outputImages';
import type { ImageThreadReply, ImageThreadRequest } from './outputThreadWorker';

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
 * A job a thread was sent and has not answered. `held`: drawn and kept on
 * the thread until committed, and answered `true` once held; should the
 * thread be lost first, it answers `false` (the job is then drawn here when
 * it is committed, never before).
 */
interface Pending { job: ImageJob; held: boolean; resolve(heldThere: boolean): void; reject(e: unknown): void }

/**
 * An image drawn ahead (ImageWriters.prepare): its file is written by
 * write(), or never, after discard(). Either is called at most once.
 */
export interface PreparedImage {
  write(): Promise<void>;
  discard(): void;
}

/** A thread and the jobs it was sent and has not answered. */
interface ImageThread { worker: Worker; pending: Map<number, Pending> }

/**
 * Worker threads that draw and write a scene's image files
 * (outputImages.ts) while the calling thread goes on: `stereocut run`
 * starts them before it reads its scenes, so that they load their modules
 * while the main thread loads its own and sets the device up, and a
 * scene's five images are drawn and compressed side by side instead of
 * one after the other on the main thread.
 *
 * write(job) resolves once the file is written, or rejects with the
 * write's own one-line error. Each job's arrays are copied to its thread.
 * Should a thread fail to start or stop with jobs unanswered, those jobs
 * are done on the calling thread (drawImage) and later ones go to the
 * threads left, or are done here once none is: the threads only ever save
 * time, and the files are the same either way. A thread's listener keeps
 * the process alive while it runs; close() ends them.
 */
export class ImageWriters {
  private readonly threads: ImageThread[] = [];
  private next = 0;
  private ids = 0;
  private closed = false;
  /** Jobs done on the calling thread (a thread failed or none started), for a caller that wants to know. */
  doneHere = 0;

  /** `count` threads; `module`: the thread's module without extension (tests name others). */
  constructor(count: number, module = path.join(__dirname, 'outputThreadWorker')) {
    for (let i = 0; i < count; i++) {
      try {
        const entry = workerEntry(module);
        const thread: ImageThread = { worker: new Worker(entry.code, { eval: entry.eval }), pending: new Map() };
        thread.worker.unref();
        thread.worker.on('message', (m: ImageThreadReply) => {
          const p = thread.pending.get(m.id);
          if (!p) return;
          thread.pending.delete(m.id);
          if (m.error === undefined) p.resolve(p.held);
          else p.reject(new Error(m.error));
        });
        thread.worker.on('error', () => this.lose(thread));
        thread.worker.on('exit', () => this.lose(thread));
        this.threads.push(thread);
      } catch {
        break;
      }
    }
  }

  /** Draws and writes `job` on the next thread (round robin), or here when none is left. */
  write(job: ImageJob): Promise<void> {
    const thread = this.nextThread();
    if (!thread) return this.here(job);
    const id = this.ids++;
    return this.send(thread, job, false, { id, job }).then(() => undefined);
  }

  /**
   * Draws and compresses `job` on a thread now, and writes its file only
   * when the handle's write() is called: for images that do not depend on
   * work still running, so that their compression overlaps it and nothing
   * is written should that work fail. Without threads the image is drawn
   * at write(), here.
   */
  prepare(job: ImageJob): PreparedImage {
    const thread = this.nextThread();
    if (!thread) return { write: () => this.here(job), discard: () => undefined };
    const id = this.ids++;
    const held = this.send(thread, job, true, { id, job, hold: true });
    // A drawing that failed is reported by write(); one never written is nobody's concern.
    held.catch(() => undefined);
    let used = false;
    const use = (): void => {
      if (used) throw new Error('ImageWriters.prepare: an image is written or discarded once');
      used = true;
    };
    return {
      write: async () => {
        use();
        const heldThere = await held;
        // The thread may have been lost since it answered: the image is then drawn here.
        if (!heldThere || !this.threads.includes(thread)) return this.here(job);
        await this.send(thread, job, false, { id, commit: true });
      },
      discard: () => {
        use();
        void held.then((heldThere) => {
          if (heldThere && this.threads.includes(thread)) this.post(thread, { id, discard: true });
        }, () => undefined);
      },
    };
  }

  /** The thread the next job goes to (round robin), or undefined when none is left. */
  private nextThread(): ImageThread | undefined {
    return this.closed || this.threads.length === 0 ? undefined : this.threads[this.next++ % this.threads.length];
  }

  /**
   * Sends `request` about `job` to `thread` and resolves with the thread's
   * answer (see Pending). A job that cannot be sent (its data does not
   * clone) is done here: drawn and written, or, held, left to be drawn at
   * its commit.
   */
  private send(thread: ImageThread, job: ImageJob, held: boolean, request: ImageThreadRequest): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      thread.pending.set(request.id, { job, held, resolve, reject });
      try {
        thread.worker.postMessage(request);
      } catch {
        thread.pending.delete(request.id);
        if (held) resolve(false);
        else this.here(job).then(() => resolve(false), reject);
      }
    });
  }

  /** A message that needs no answer. */
  private post(thread: ImageThread, request: ImageThreadRequest): void {
    try {
      thread.worker.postMessage(request);
    } catch {
      /* the thread is gone: what it held goes with it */
    }
  }

  /** Ends the threads (after the writes asked for have settled: a write still running would be lost). */
  close(): void {
    this.closed = true;
    for (const t of this.threads) {
      t.pending.clear();
      void t.worker.terminate();
    }
    this.threads.length = 0;
  }

  /** A thread is gone: the jobs it did not answer are done here, and it gets no more. */
  private lose(thread: ImageThread): void {
    const at = this.threads.indexOf(thread);
    if (at < 0) return;
    this.threads.splice(at, 1);
    for (const p of thread.pending.values()) {
      if (p.held) p.resolve(false);
      else this.here(p.job).then(() => p.resolve(false), p.reject);
    }
    thread.pending.clear();
  }

  private here(job: ImageJob): Promise<void> {
    this.doneHere++;
    return drawImage(job);
  }
}
