/**
 * A worker thread of coarse to fine (stereo/coarseToFine.ts): refines one
 * view at one level and posts its map and account back, or the error's
 * message.
 */
import { parentPort, workerData } from 'worker_threads';
import { refineView, type ViewJob } from './coarseToFine';

refineView(workerData as ViewJob)
  .then((done) => parentPort!.postMessage({ done }, [done.map.buffer as ArrayBuffer]))
  .catch((e: unknown) => parentPort!.postMessage({ error: e instanceof Error ? e.message : String(e) }));
