/**
 * The thread of ReadsOnThread (readThread.ts): does the jobs of
 * `workerData.jobs` in order and posts each result, or its error's message,
 * as `{ i, result }` or `{ i, error }`. The results' arrays are moved to the
 * receiving thread (each buffer listed once).
 */
import { parentPort, workerData } from 'worker_threads';
import type { Raster } from './raster';
import { readHere, type ReadJob } from './readThread';
import type { Scene } from './sceneTypes';

function buffersOf(r: Scene | Raster): ArrayBuffer[] {
  const arrays = 'left' in r
    ? [r.left.data, r.right.data, r.groundTruth, r.groundTruthRight, r.masks.nonocc, r.masks.all, r.masks.disc]
    : [r.data];
  const buffers = new Set<ArrayBuffer>();
  for (const a of arrays) if (a && a.buffer instanceof ArrayBuffer) buffers.add(a.buffer);
  return [...buffers];
}

async function doAll(jobs: ReadJob[]): Promise<void> {
  for (const [i, job] of jobs.entries()) {
    try {
      const result = await readHere(job);
      try {
        parentPort!.postMessage({ i, result }, buffersOf(result));
      } catch {
        // A buffer that cannot be moved (Node's pooled ones): the result is copied instead.
        parentPort!.postMessage({ i, result });
      }
    } catch (e) {
      parentPort!.postMessage({ i, error: e instanceof Error ? e.message : String(e) });
    }
  }
}

void doAll((workerData as { jobs: ReadJob[] }).jobs);
