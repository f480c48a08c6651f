import { poolTask } from '../../data/poolTask';
import { runTrial, SceneCache, type TrialJob } from './trial';

/**
 * A trial thread (TrialThreads, pool.ts): runs one trial per task, keeping
 * the scenes it has loaded for the next.
 */
const cache = new SceneCache();

export default poolTask((job: TrialJob) => runTrial(job, cache));
