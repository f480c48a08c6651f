import { poolTask } from '../../data/poolTask';
import { encodeResult, runSceneJob, type SceneJobData } from './sceneJob';

/**
 * A scene thread of a queue worker (queueWorker.ts): matches one scene job
 * with BK per task and answers the result encoded.
 */
export default poolTask(async (data: SceneJobData) => encodeResult(await runSceneJob(data, 'bk')));
