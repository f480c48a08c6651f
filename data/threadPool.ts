/**
 * The project's pool of worker threads: piscina, started from the compiled
 * module or, from the TypeScript sources, through the require hook
 * (sourceLoader.ts). Every pool of the product is one of these, except
 * costs/parallelCosts.ts, whose callers are synchronous (DESIGN.md).
 *
 * A pool's module exports a handler made by poolTask (poolTask.ts): a task
 * that fails answers its error, so that run() tells the task's own failure
 * (thrown again here, the same class and message) from the loss of its
 * thread (ThreadLost), which each pool handles in its own way: a read or an
 * image is then done on the calling thread, a trial fails.
 */
import { Piscina } from 'piscina';
import { InputError } from './errors';
import type { TaskOutcome } from './poolTask';
import { workerModule } from './sourceLoader';

/**
 * A task that did not come back because its thread did not: the thread
 * failed or exited, its module did not load, the task could not be sent to
 * it, or the pool was closed. `why` says which, in a few words.
 */
export class ThreadLost extends Error {
  constructor(readonly why: string) {
    super(`thread ${why}`);
  }
}

/** What piscina rejected a task with, in ThreadLost's words (piscina says `worker exited with code: N` for an exit). */
function lossOf(e: unknown): ThreadLost {
  const message = e instanceof Error ? e.message : String(e);
  const exit = /^worker exited with code: (-?\d+)$/.exec(message);
  return new ThreadLost(exit ? `exited with code ${exit[1]}` : `failed: ${message}`);
}

export interface ThreadPoolOptions {
  /** The most threads at once. */
  threads: number;
  /**
   * 'now': every thread starts with the pool, loads its module while the
   * caller goes on, and is kept until close(); the tasks it is sent (up to
   * tasksPerThread at once; later ones wait here) reach it without this
   * thread's event loop, so it works even while this thread is held (by
   * Dawn, say). 'asNeeded': a thread starts when a task finds none free.
   */
  start: 'now' | 'asNeeded';
  /** For threads started as needed: whether an idle one is kept (with what its module holds, loaded scenes say) or ended at once. */
  keepIdle?: boolean;
  /** Tasks a thread is sent at once, before it answers the first (1 unless given). */
  tasksPerThread?: number;
}

export class ThreadPool {
  private readonly pool: Piscina;
  /** Why every task is lost from now on (closed, or a module that did not load), and the threads' end. */
  private ended: { why: ThreadLost; threadsGone: Promise<void> } | undefined;

  /** A pool of the module at `module`, a path without extension (its default export made by poolTask). */
  constructor(module: string, options: ThreadPoolOptions) {
    this.pool = new Piscina({
      ...workerModule(module),
      minThreads: options.start === 'now' ? options.threads : 0,
      maxThreads: options.threads,
      idleTimeout: options.keepIdle ? Infinity : 0,
      concurrentTasksPerWorker: options.tasksPerThread ?? 1,
    });
    // A thread failing with no task is one whose module did not load: every thread would fail so, and the tasks waiting for one would wait forever.
    this.pool.on('error', (e: unknown) => void this.end(lossOf(e)));
  }

  /** Whether the pool has ended (close(), or a module that did not load): every task is then lost. */
  get closed(): boolean {
    return this.ended !== undefined;
  }

  /**
   * Runs `task` on a thread and gives its value; rejects with the task's
   * own error (an InputError where it was one), or with ThreadLost. The
   * buffers of `transferList` are moved to the thread, not copied.
   */
  async run<T>(task: unknown, transferList: ArrayBuffer[] = []): Promise<T> {
    const ended = this.endedFor();
    if (ended) throw ended;
    let outcome: TaskOutcome<T>;
    try {
      outcome = await this.pool.run(task, { transferList }) as TaskOutcome<T>;
    } catch (e) {
      throw this.endedFor() ?? lossOf(e);
    }
    if ('value' in outcome) return outcome.value;
    throw outcome.input ? new InputError(outcome.error) : new Error(outcome.error);
  }

  /** Ends the threads; the tasks not answered by then are lost. */
  close(): Promise<void> {
    return this.end(new ThreadLost('closed'));
  }

  /** What a task is lost to once the pool has ended. */
  private endedFor(): ThreadLost | undefined {
    return this.ended?.why;
  }

  private end(why: ThreadLost): Promise<void> {
    this.ended ??= { why, threadsGone: this.pool.destroy() };
    return this.ended.threadsGone;
  }
}
