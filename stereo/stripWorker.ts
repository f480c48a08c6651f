/**
 * A thread of the strip pool (stereo/stripRunner.ts): runs one strip of a
 * finer pyramid level per task, after the warm-up job the pool gave it
 * (levelStrips.ts warmUpJob), if any.
 */
import { workerData } from 'piscina';
import { solveStrip, type StripDone, type StripJob } from './levelStrips';

const warmUp = (workerData as { warmUp?: StripJob } | undefined)?.warmUp;
// Its outcome does not matter: a failure here shows again, with its job, in the first real strip.
const ready: Promise<unknown> = warmUp ? solveStrip(warmUp).catch(() => undefined) : Promise.resolve();

export default async function runStrip(job: StripJob): Promise<StripDone> {
  await ready;
  return solveStrip(job);
}
