/**
 * A thread of ImageWriters (outputThreads.ts). A task `{ write: job }` draws
 * the job and writes its file; `{ encode: job }` draws and compresses it and
 * answers the bytes (moved, not copied), which `{ file, bytes }` writes
 * later. The colour images are drawn into one buffer per size (reused: each
 * drawing reads it before the thread's next task runs).
 */
import { poolTask } from '../../data/poolTask';
import { encodeImage, writeImageBytes, type ImageJob } from './outputImages';

export type ImageThreadTask =
  | { write: ImageJob }
  | { encode: ImageJob }
  | { file: string; bytes: Uint8Array };

let rgb: Float32Array | undefined;

async function imageTask(task: ImageThreadTask): Promise<Uint8Array | null> {
  if ('bytes' in task) {
    writeImageBytes(task.file, task.bytes);
    return null;
  }
  const job = 'write' in task ? task.write : task.encode;
  if (job.kind === 'colorized' || job.kind === 'errors') {
    const [W, H] = job.kind === 'colorized' ? [job.width, job.height] : [job.left.width, job.left.height];
    if (rgb?.length !== W * H * 3) rgb = new Float32Array(W * H * 3);
  }
  const bytes = await encodeImage(job, rgb);
  if ('encode' in task) return bytes;
  writeImageBytes(job.file, bytes);
  return null;
}

export default poolTask(imageTask, (bytes) => [bytes ?? undefined]);
