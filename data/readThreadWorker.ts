/**
 * The thread of ReadsOnThread (readThread.ts): every job is sent to it at
 * once, and it reads them in the order they came, one after another, so
 * that the first results come first. A result's sample arrays are moved to
 * the receiving thread.
 */
import { poolTask } from './poolTask';
import type { Raster } from './raster';
import { readHere, type ReadJob } from './readThread';
import type { Scene } from './sceneTypes';

function arraysOf(r: Scene | Raster): (ArrayBufferView | undefined)[] {
  return 'left' in r
    ? [r.left.data, r.right.data, r.groundTruth, r.groundTruthRight, r.masks.nonocc, r.masks.all, r.masks.disc]
    : [r.data];
}

/** The reads so far: each job starts once the one before it is done and its result sent (a turn of the event loop later). */
let last: Promise<unknown> = Promise.resolve();

function readInTurn(job: ReadJob): Promise<Scene | Raster> {
  const read = last.then(() => readHere(job));
  last = read.then(afterSending, afterSending);
  return read;
}

const afterSending = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export default poolTask(readInTurn, arraysOf);
