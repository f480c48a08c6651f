/**
 * The thread of ImageWriters (outputThreads.ts). Each request names a job:
 * `{ id, job }` draws and writes it; `{ id, job, hold: true }` draws and
 * compresses it and keeps the bytes until `{ id, commit: true }` writes them
 * (or `{ id, discard: true }` drops them). Every request but a discard is
 * answered `{ id }`, or `{ id, error }` with the one-line message. The
 * colour images are drawn into one buffer per size (reused: each drawing
 * reads it before the next job runs).
 */
import { parentPort } from 'worker_threads';
import { encodeImage, writeImageBytes, type ImageJob } from './outputImages';

export type ImageThreadRequest =
  | { id: number; job: ImageJob; hold?: boolean }
  | { id: number; commit: true }
  | { id: number; discard: true };

export interface ImageThreadReply { id: number; error?: string }

let rgb: Float32Array | undefined;
const held = new Map<number, { job: ImageJob; bytes: Uint8Array }>();

const answer = (id: number, e?: unknown): void =>
  parentPort!.postMessage(e === undefined ? { id } : { id, error: e instanceof Error ? e.message : String(e) });

parentPort!.on('message', (m: ImageThreadRequest) => {
  if ('discard' in m) {
    held.delete(m.id);
    return;
  }
  if ('commit' in m) {
    const h = held.get(m.id);
    held.delete(m.id);
    try {
      if (!h) throw new Error(`image thread: no image held as ${m.id}`);
      writeImageBytes(h.job, h.bytes);
      answer(m.id);
    } catch (e) {
      answer(m.id, e);
    }
    return;
  }
  const { job } = m;
  if (job.kind === 'colorized' || job.kind === 'errors') {
    const [W, H] = job.kind === 'colorized' ? [job.width, job.height] : [job.left.width, job.left.height];
    if (rgb?.length !== W * H * 3) rgb = new Float32Array(W * H * 3);
  }
  encodeImage(job, rgb).then(
    (bytes) => {
      try {
        if (m.hold) held.set(m.id, { job, bytes });
        else writeImageBytes(job, bytes);
        answer(m.id);
      } catch (e) {
        answer(m.id, e);
      }
    },
    (e: unknown) => answer(m.id, e),
  );
});
