/**
 * A thread of the strip pool (stereo/stripRunner.ts): runs one strip of a
 * finer pyramid level, or one band of the finest level's median fill, per
 * task.
 */
import { poolTask } from '../data/poolTask';
import { solveStrip, type StripDone, type StripJob } from './levelStrips';
import { isMedianBand, medianBand, type MedianBand } from './medianFill';

// A band's filtered rows are moved back, not copied.
export default poolTask<StripJob | MedianBand, StripDone | Uint16Array>((job) => (isMedianBand(job) ? medianBand(job) : solveStrip(job)), (v) => (v instanceof Uint16Array ? [v] : []));
