import { parentPort } from 'worker_threads';
import { InputError } from '../../data/errors';
import type { BackendName } from '../../stereo/params';
import { encodeResult, runSceneJob, type SceneJobData } from './sceneJob';

/**
 * Thread body of one scene job (a BK match keeps a core busy for its whole
 * run; on the worker's main thread it would stop the job's lock renewals).
 * Replies {result} or {error, input}.
 */
if (!parentPort) throw new Error('app/queue/sceneThread: must run as a worker thread');
const port = parentPort;
port.once('message', (msg: { data: SceneJobData; backend: BackendName }) => {
  runSceneJob(msg.data, msg.backend).then(
    (r) => port.postMessage({ result: encodeResult(r) }),
    (e: unknown) => port.postMessage({ error: e instanceof Error ? e.message : String(e), input: e instanceof InputError }),
  );
});
