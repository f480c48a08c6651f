import { Job, Queue, QueueEvents } from 'bullmq';
import { checkRedis, redisLost, type QueueAddress } from './redisQueue';

/** Work for the queue's workers (queueWorker.ts): a tuning trial, or a scene of `run`. */
export interface QueuedJob {
  /** Content-derived (sha256): the same work asked twice is one job. */
  id: string;
  name: 'trial' | 'scene';
  data: object;
}

export interface QueueCounts {
  running: number;
  failed: number;
}

/** How often the coordinator reads the state of the jobs it waits for (events say it sooner; this catches any missed). */
const SWEEP_MS = 2000;
/** Attempts of a job whose run threw (not for its input): a worker's own trouble may not recur elsewhere. */
export const JOB_ATTEMPTS = 3;

/**
 * Puts `jobs` on the queue (a job already there, finished or not, is not
 * added again: a resumed coordinator collects what finished meanwhile) and
 * waits until every one has completed or failed for good. Each result goes
 * to `onResult` once; a job that failed earlier is tried again, since it was
 * asked for again. Returns the jobs that failed, with their reasons. Redis
 * unreachable at the start or lost later: an error naming the URL.
 */
export async function runQueued(
  a: QueueAddress, jobs: QueuedJob[], onResult: (id: string, value: unknown) => void, onCounts: (c: QueueCounts) => void,
): Promise<{ id: string; reason: string }[]> {
  await checkRedis(a);
  const queue = new Queue(a.name, { connection: a.connection });
  const events = new QueueEvents(a.name, { connection: a.connection });
  /** An error of a command (Redis gone for good: ioredis gave up reconnecting), or of reading a job. */
  let lost: unknown;
  /** The connection's last error: a reconnect in progress, reported only if Redis does not come back. */
  let lastError: Error | undefined;
  /** An error of onResult's (a result it refused): reported as it is, not as a Redis failure. */
  let own: Error | undefined;
  queue.on('error', (e) => { lastError = e; });
  events.on('error', (e) => { lastError = e; });
  const pending = new Set(jobs.map((j) => j.id));
  const failed = new Map<string, string>();
  const running = new Set<string>();
  let wake: (() => void) | undefined;
  const nudge = (): void => { wake?.(); };

  /** Reads one job's state; settles it when finished. */
  const check = async (id: string, retryFailed: boolean): Promise<void> => {
    if (!pending.has(id)) return;
    // The state first: a finished job's fields are final, while a job read before it finished lacks its result.
    const state = await queue.getJobState(id);
    if (state !== 'completed' && state !== 'failed') {
      if (state === 'active') running.add(id);
      else running.delete(id);
      return;
    }
    const job = await Job.fromId(queue, id);
    if (!job || !pending.has(id)) return;
    if (state === 'completed') {
      pending.delete(id);
      running.delete(id);
      try {
        onResult(id, job.returnvalue);
      } catch (e) {
        own ??= e instanceof Error ? e : new Error(String(e));
      }
    } else {
      if (retryFailed) {
        await job.retry('failed');
        return;
      }
      pending.delete(id);
      running.delete(id);
      failed.set(id, job.failedReason || 'failed');
    }
  };

  try {
    await events.waitUntilReady();
    events.on('completed', ({ jobId }) => { void check(jobId, false).then(nudge, (e) => { lost ??= e; nudge(); }); });
    events.on('failed', ({ jobId }) => { void check(jobId, false).then(nudge, (e) => { lost ??= e; nudge(); }); });
    events.on('active', ({ jobId }) => { if (pending.has(jobId)) { running.add(jobId); nudge(); } });
    events.on('stalled', ({ jobId }) => { running.delete(jobId); nudge(); });
    const add = async (list: QueuedJob[]): Promise<void> => {
      const opts = { attempts: JOB_ATTEMPTS, removeOnComplete: false, removeOnFail: false };
      for (let i = 0; i < list.length; i += 500) {
        await queue.addBulk(list.slice(i, i + 500).map((j) => ({ name: j.name, data: j.data, opts: { ...opts, jobId: j.id } })));
      }
    };
    const unique = [...new Map(jobs.map((j) => [j.id, j])).values()];
    await add(unique);
    // Jobs that finished before this coordinator (a resume), or failed then: settled or tried again now.
    await Promise.all(unique.map((j) => check(j.id, true)));
    while (pending.size > 0 && own === undefined) {
      if (lost !== undefined) throw lost;
      onCounts({ running: running.size, failed: failed.size });
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, SWEEP_MS);
      });
      clearTimeout(timer);
      wake = undefined;
      if (lost !== undefined) throw lost;
      // A job removed meanwhile (by hand) is added again; the rest are read.
      const ids = [...pending];
      const present = await Promise.all(ids.map((id) => queue.getJobState(id)));
      const missing = unique.filter((j) => pending.has(j.id) && present[ids.indexOf(j.id)] === 'unknown');
      if (missing.length > 0) await add(missing);
      await Promise.all(ids.map((id) => check(id, false)));
    }
    onCounts({ running: 0, failed: failed.size });
  } catch (e) {
    throw own ?? redisLost(a, lastError ?? e);
  } finally {
    await Promise.allSettled([events.close(), queue.close()]);
  }
  if (own) throw own;
  return [...failed].map(([id, reason]) => ({ id, reason }));
}
