/**
 * A thread of the strip pool (stereo/stripRunner.ts): runs one strip of a
 * finer pyramid level per task.
 */
import { solveStrip, type StripDone, type StripJob } from './levelStrips';

export default function runStrip(job: StripJob): Promise<StripDone> {
  return solveStrip(job);
}
