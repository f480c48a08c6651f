/**
 * The thread of ImageWriters (outputThreads.ts): draws and writes each
 * image job it is sent (outputImages.ts drawImage) and answers `{ id }`,
 * or `{ id, error }` with the write's one-line message. The colour images
 * are drawn into one buffer per size (reused: each write reads it before
 * the next job runs).
 */
import { parentPort } from 'worker_threads';
import { drawImage, type ImageJob } from './outputImages';

let rgb: Float32Array | undefined;

parentPort!.on('message', (m: { id: number; job: ImageJob }) => {
  const job = m.job;
  if (job.kind === 'colorized' || job.kind === 'errors') {
    const [W, H] = job.kind === 'colorized' ? [job.width, job.height] : [job.left.width, job.left.height];
    if (rgb?.length !== W * H * 3) rgb = new Float32Array(W * H * 3);
  }
  drawImage(job, rgb).then(
    () => parentPort!.postMessage({ id: m.id }),
    (e: unknown) => parentPort!.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) }),
  );
});
