import * as os from 'os';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { InputError } from '../../data/errors';
import type { BackendName } from '../params';
import { trialExecutor, type TrialExecutor } from '../tune/pool';
import { describePoint } from '../tune/results';
import type { TrialJob, TrialRecord } from '../tune/trial';
import { checkRedis, type QueueAddress } from './redisQueue';

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

export interface RunningWorker {
  /** The backend its trials run on. */
  backend: string;
  concurrency: number;
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
  const lockMs = (o.lockSeconds ?? DEFAULT_LOCK_SECONDS) * 1000;
  const runJob = async (job: Job): Promise<TrialRecord> => {
    if (job.name !== 'trial') throw new UnrecoverableError(`unknown job kind '${job.name}' (this worker runs trial jobs)`);
    const t = job.data as TrialJob;
    try {
      const r = await executor.run({ ...t, backend: executor.backend });
      o.log(`trial ${t.scene} ${describePoint(t.point)}: energy ${r.energy}, ${(r.timeMs / 1000).toFixed(1)} s on ${r.backend}`);
      return r;
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      o.warn(`trial ${t.scene} ${describePoint(t.point)} failed: ${msg}`);
      if (e instanceof InputError) throw new UnrecoverableError(msg);
      throw e;
    }
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
  worker.on('error', (e) => o.warn(`${a.url}: ${e.message}`));
  await worker.waitUntilReady();
  return {
    backend: executor.backend,
    concurrency: executor.size,
    close: async () => {
      await worker.close();
      await executor.close();
    },
  };
}
