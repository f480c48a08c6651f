import * as path from 'path';
import { Worker } from 'worker_threads';
import { workerEntry } from '../../data/sourceLoader';
import type { TrialJob, TrialRecord } from './trial';

/**
 * Runs trials on `size` worker threads, each busy with one trial at a time,
 * and hands every record to `onRecord` as soon as it arrives (in finishing
 * order). The first failing trial stops the pool: workers are terminated and
 * the promise rejects with the trial's error, naming the scene and point.
 */
export async function runOnWorkers(jobs: TrialJob[], size: number, onRecord: (r: TrialRecord) => void): Promise<void> {
  if (jobs.length === 0) return;
  const n = Math.max(1, Math.min(size, jobs.length));
  const entry = workerEntry(path.join(__dirname, 'worker'));
  const workers: Worker[] = [];
  let next = 0;
  let finished = 0;
  let failed = false;
  try {
    await new Promise<void>((resolve, reject) => {
      const fail = (e: Error) => {
        if (failed) return;
        failed = true;
        reject(e);
      };
      const feed = (w: Worker) => {
        if (failed) return;
        if (next >= jobs.length) return;
        const id = next++;
        w.postMessage({ id, job: jobs[id] });
      };
      for (let i = 0; i < n; i++) {
        const w = new Worker(entry.code, { eval: entry.eval });
        workers.push(w);
        w.on('message', (msg: { id: number; record?: TrialRecord; error?: string }) => {
          if (failed) return;
          if (msg.error !== undefined || !msg.record) {
            const j = jobs[msg.id];
            fail(new Error(`trial ${j.scene} ${j.key.split('|')[1]}: ${msg.error ?? 'no result'}`));
            return;
          }
          try {
            onRecord(msg.record);
          } catch (e) {
            fail(e instanceof Error ? e : new Error(String(e)));
            return;
          }
          finished++;
          if (finished === jobs.length) resolve();
          else feed(w);
        });
        w.on('error', (e) => fail(new Error(`tune worker: ${e.message}`)));
        w.on('exit', (code) => {
          if (!failed && finished < jobs.length && code !== 0) fail(new Error(`tune worker exited with code ${code}`));
        });
        feed(w);
      }
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
