import * as os from 'os';
import { checkBackend } from '../../gpu/runtime/backends';
import type { Io } from './common';

export interface WorkerArgs {
  queue: string;
  concurrency?: number;
  backend: string;
  'lock-seconds'?: number;
  quiet: boolean;
}

/**
 * `stereocut worker --queue URL`: runs the queue's jobs until stopped. The
 * first SIGINT or SIGTERM stops taking jobs and lets the running ones
 * finish (exit 0); a second exits at once (130), and what was running goes
 * back to the queue when its lock expires.
 */
export async function workerCommand(a: WorkerArgs, io: Io): Promise<number> {
  const { parseQueueUrl } = await import('../queue/redisQueue');
  const address = parseQueueUrl(a.queue);
  const backend = checkBackend(a.backend);
  const { startQueueWorker } = await import('../queue/queueWorker');
  const w = await startQueueWorker(address, {
    concurrency: a.concurrency ?? os.availableParallelism(),
    backend,
    lockSeconds: a['lock-seconds'],
    log: (l) => { if (!a.quiet) io.out(l); },
    warn: (l) => io.err(`stereocut worker: ${l}`),
  });
  io.err(`stereocut worker: taking jobs from ${address.url}, ${w.concurrency} at a time on ${w.backend} (Ctrl-C or SIGTERM: finish the running jobs and stop)`);
  let stopping = false;
  const stopped = new Promise<void>((resolve) => {
    const stop = (): void => {
      if (stopping) process.exit(130);
      stopping = true;
      io.err('stereocut worker: stopping after the running jobs (again: quit at once)');
      w.close().then(resolve, (e: unknown) => {
        io.err(`stereocut worker: ${e instanceof Error ? e.message : String(e)}`);
        resolve();
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  const lost = await Promise.race([stopped.then(() => undefined), w.lost]);
  if (lost) throw lost;
  return 0;
}
