import * as os from 'os';
import * as path from 'path';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { InputError } from '../../data/errors';
import { ThreadLost, ThreadPool } from '../../data/threadPool';
import type { BackendName } from '../../stereo/params';
import { trialExecutor, type TrialExecutor } from '../tune/pool';
import { describePoint } from '../tune/results';
import type { TrialJob, TrialRecord } from '../tune/trial';
import { checkRedis, redisLost, type QueueAddress } from './redisQueue';
import { encodeResult, runSceneJob, type SceneJobData } from './sceneJob';

/** A scene job on one of `threads` (sceneThread.ts); the result comes back encoded. */
async function sceneOnThread(threads: ThreadPool, data: SceneJobData): Promise<unknown> {
  try {
    return await threads.run<unknown>(data);
  } catch (e) {
    throw e instanceof ThreadLost ? new Error(`scene ${e.message}`) : e;
  }
}

/**
 * How often a lost worker's job is taken back: BullMQ renews a running job's
 * lock every half of this, and a job whose lock expired goes back to the
 * queue for another worker (a stall). Default 30 s, BullMQ's own.
 */
export const DEFAULT_LOCK_SECONDS = 30;
/** Stalls a job survives (a worker lost mid-job each time) before it fails: a job that kills its workers is not retried forever. */
export const MAX_STALLS = 2;

export interface QueueWorkerOptions {
  concurrency: number;
  backend: BackendName;
  lockSeconds?: number;
  /** A line per finished job (stdout) and per failed one (stderr). */
  log: (line: string) => void;
  warn: (line: string) => void;
}

/** How long Redis may stay unreachable before a worker gives up (its jobs go to other workers when their locks expire). */
export const LOST_AFTER_MS = 20000;

export interface RunningWorker {
  /** The backend its trials run on. */
  backend: string;
  concurrency: number;
  /** Settles with an error naming the URL once Redis has been unreachable for LOST_AFTER_MS. */
  lost: Promise<Error>;
  /** Stops taking jobs, lets the running ones finish, and disconnects. */
  close(): Promise<void>;
}

/**
 * A queue worker: takes jobs from the queue until closed, `concurrency` at
 * a time, and runs each where trialExecutor places it (BK trials on threads,
 * so that this thread keeps renewing the jobs' locks). A trial that fails for
 * its input fails its job at once (UnrecoverableError: it would fail the same
 * way anywhere); any other failure is retried, up to the job's attempts.
 */
export async function startQueueWorker(a: QueueAddress, o: QueueWorkerOptions): Promise<RunningWorker> {
  await checkRedis(a);
  const executor: TrialExecutor = await trialExecutor(o.backend, o.concurrency);
  // BK scene jobs on threads, one per job at once (a match keeps a core busy for its whole run: here it would stop the lock renewals); a thread ends when no job is left for it.
  const sceneThreads = executor.backend === 'bk' ? new ThreadPool(path.join(__dirname, 'sceneThread'), { threads: executor.size, start: 'asNeeded' }) : undefined;
  const lockMs = (o.lockSeconds ?? DEFAULT_LOCK_SECONDS) * 1000;
  /** Runs a job's work; an input failure fails the job at once, anything else is retried up to its attempts. */
  const guarded = async <T>(what: string, work: () => Promise<T>, done: (r: T) => string): Promise<T> => {
    try {
      const r = await work();
      o.log(`${what}: ${done(r)}`);
      return r;
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      o.warn(`${what} failed: ${msg}`);
      if (e instanceof InputError) throw new UnrecoverableError(msg);
      throw e;
    }
  };
  const runJob = async (job: Job): Promise<unknown> => {
    if (job.name === 'trial') {
      const t = job.data as TrialJob;
      return guarded(`trial ${t.scene} ${describePoint(t.point)}`, () => executor.run({ ...t, backend: executor.backend }),
        (r: TrialRecord) => `energy ${r.energy}, ${(r.timeMs / 1000).toFixed(1)} s on ${r.backend}`);
    }
    if (job.name === 'scene') {
      const d = job.data as SceneJobData;
      return guarded(`scene ${d.dir}`, async () => (sceneThreads ? sceneOnThread(sceneThreads, d) : encodeResult(await runSceneJob(d, executor.backend))), () => 'matched');
    }
    throw new UnrecoverableError(`unknown job kind '${job.name}' (this worker runs trial and scene jobs)`);
  };
  const worker = new Worker(a.name, runJob, {
    connection: a.connection,
    // Each job records who ran it (job.processedBy): this host and process.
    name: `${os.hostname()}:${process.pid}`,
    concurrency: executor.size,
    lockDuration: lockMs,
    stalledInterval: lockMs,
    maxStalledCount: MAX_STALLS,
  });
  // A connection error starts a watch: Redis is probed every 2 s; back within LOST_AFTER_MS, work goes on; not, `lost` settles.
  let declareLost: (e: Error) => void = () => undefined;
  const lost = new Promise<Error>((resolve) => { declareLost = resolve; });
  let watching = false;
  worker.on('error', (e) => {
    if (watching) return;
    watching = true;
    o.warn(`${a.url}: ${e.message}; trying again for ${LOST_AFTER_MS / 1000} s`);
    void (async () => {
      const since = Date.now();
      for (;;) {
        try {
          await checkRedis(a);
          watching = false;
          return;
        } catch (err) {
          if (Date.now() - since >= LOST_AFTER_MS) return declareLost(redisLost(a, e));
        }
        await new Promise((r) => setTimeout(r, 2000));
      }
    })();
  });
  await worker.waitUntilReady();
  return {
    backend: executor.backend,
    concurrency: executor.size,
    lost,
    close: async () => {
      await worker.close();
      await executor.close();
      await sceneThreads?.close();
    },
  };
}
