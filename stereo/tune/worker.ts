import { parentPort } from 'worker_threads';
import { InputError } from '../../data/errors';
import { runTrial, SceneCache, type TrialJob } from './trial';

/**
 * Worker thread body: runs trials one at a time as the pool sends them,
 * keeping the scenes it has loaded. Replies {id, record} or {id, error,
 * input} (input: the trial failed for its input, an InputError).
 */
if (!parentPort) throw new Error('stereo/tune/worker: must run as a worker thread');
const port = parentPort;
const cache = new SceneCache();
port.on('message', (msg: { id: number; job: TrialJob }) => {
  runTrial(msg.job, cache).then(
    (record) => port.postMessage({ id: msg.id, record }),
    (err: unknown) => port.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err), input: err instanceof InputError }),
  );
});
