/**
 * A thread of the strip pool (stereo/stripRunner.ts): runs one strip of a
 * finer pyramid level per task.
 */
import { poolTask } from '../data/poolTask';
import { solveStrip } from './levelStrips';

export default poolTask(solveStrip);
