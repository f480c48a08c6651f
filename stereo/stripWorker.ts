/**
 * A thread of the strip pool (stereo/stripRunner.ts): runs one strip of a
 * finer pyramid level, or one band of the finest level's median fill, per
 * task.
 */
import { poolTask } from '../data/poolTask';
import { BandedMoveScratch } from '../expansion/bandedMoves';
import { solveStrip, type StripDone, type StripJob } from './levelStrips';
import { isMedianBand, medianBand, type MedianBand } from './medianFill';

// The thread's strips run one at a time (one task a thread), each built in the arrays the last one grew.
const scratch = new BandedMoveScratch();

// A band's filtered rows are moved back, not copied.
export default poolTask<StripJob | MedianBand, StripDone | Uint16Array>((job) => (isMedianBand(job) ? medianBand(job) : solveStrip(job, scratch)), (v) => (v instanceof Uint16Array ? [v] : []));
