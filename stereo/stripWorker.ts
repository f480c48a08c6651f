/**
 * A thread of the strip pool (stereo/stripRunner.ts): runs one strip of a
 * finer pyramid level, or one band of the finest level's median fill, per
 * task.
 */
import { solveStrip, type StripDone, type StripJob } from './levelStrips';
import { isMedianBand, medianBand, type MedianBand } from './medianFill';

export default function runStrip(job: StripJob | MedianBand): Promise<StripDone> | Uint16Array {
  return isMedianBand(job) ? medianBand(job) : solveStrip(job);
}
