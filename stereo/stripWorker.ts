/**
 * A thread of the strip pool (stereo/stripRunner.ts): runs one strip of a
 * finer pyramid level, one band of a level's terms, one band of the
 * finest level's median fill, or one view of the coarsest level on the
 * host (stereo/viewJob.ts), per task.
 */
import { poolTask } from '../data/poolTask';
import { BandedMoveScratch } from '../expansion/bandedMoves';
import { solveStrip, type StripDone, type StripJob } from './levelStrips';
import { isMedianBand, medianBand, type MedianBand } from './medianFill';
import { isTermsBand, makeTermsBand, type TermsBand } from './levelTerms';
import { warmUpStrips } from './stripWarmup';
import { isViewJob, matchViewJob } from './viewJob';
import type { MatchResult, ViewJob } from './matchTypes';

// The thread's strips and bands of terms run one at a time (one task a thread), each built in the arrays the last one grew;
// the two use slots of their own, so a band that runs while a warm-up strip awaits leaves that strip's arrays whole.
const scratch = new BandedMoveScratch();

// A band's filtered rows and a strip's labels are moved back, not copied (a copy would leave the thread garbage that it
// collects seldom). Made before the warm-up starts: poolTask readies the thread to move buffers, so the code the warm-up
// compiles is the code the strips keep.
const task = poolTask<StripJob | MedianBand | TermsBand | ViewJob, StripDone | Uint16Array | number | MatchResult>(
  async (job) => (isMedianBand(job) ? medianBand(job) : isTermsBand(job) ? makeTermsBand(job, scratch) : isViewJob(job) ? matchViewJob(job) : (await warm, solveStrip(job, scratch))),
  (v) => (v instanceof Uint16Array ? [v] : typeof v === 'number' ? [] : 'labels' in v ? [v.labels] : [v.disparity]),
);

// Started with the thread, while the match's coarsest level runs; a strip waits for it (they share the scratch). It only
// warms code up: should it fail, the strips run as they would without it (test/coarse-to-fine.test.ts runs it).
const warm = warmUpStrips(scratch).catch(() => undefined);

export default task;
