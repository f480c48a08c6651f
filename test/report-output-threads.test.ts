import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { generateSyntheticScene } from '../data/synthetic';
import { drawImage, type ImageJob } from '../stereo/report/outputImages';
import { ImageWriters, imageThreadsFor, MAX_IMAGE_THREADS } from '../stereo/report/outputThreads';

/*
 * The threads that draw a scene's images for `stereocut run`: a thread that
 * cannot start or stops mid-way only moves its jobs back to the calling
 * thread, and the files are those drawn there. (That the threads' files
 * equal the original pipeline's is in data-output-exactness.test.ts.)
 */

let tmp: string;
beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-threads-')); });
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const scene = generateSyntheticScene({ width: 37, height: 23, ndisp: 7, seed: 3 });
const disparity = Uint16Array.from({ length: 37 * 23 }, (_, p) => p % 7);

/** The five images of a scene, into `dir`. */
function jobs(dir: string): ImageJob[] {
  const [W, H] = [37, 23];
  return [
    { kind: 'raster', file: path.join(dir, 'left.png'), image: scene.left },
    { kind: 'disparity', file: path.join(dir, 'disp.png'), disparity, width: W, height: H, scale: 36 },
    { kind: 'colorized', file: path.join(dir, 'disp-color.png'), values: disparity, width: W, height: H, max: 6 },
    { kind: 'colorized', file: path.join(dir, 'gt-color.png'), values: scene.groundTruth!, width: W, height: H, max: 6 },
    { kind: 'errors', file: path.join(dir, 'error.png'), left: scene.left, disparity, groundTruth: scene.groundTruth!, threshold: 1, mask: scene.masks.nonocc },
  ];
}

/** Writes the jobs with `writers` and compares every file with the one drawn on this thread. */
async function expectAsDrawnHere(writers: ImageWriters, name: string): Promise<void> {
  const here = path.join(tmp, `${name}-here`);
  const there = path.join(tmp, `${name}-writers`);
  fs.mkdirSync(here);
  fs.mkdirSync(there);
  for (const job of jobs(here)) await drawImage(job);
  await Promise.all(jobs(there).map((job) => writers.write(job)));
  for (const f of fs.readdirSync(here)) expect([f, fs.readFileSync(path.join(there, f)).equals(fs.readFileSync(path.join(here, f)))]).toEqual([f, true]);
  expect(fs.readdirSync(there).sort()).toEqual(fs.readdirSync(here).sort());
}

test('threads per machine: none on two cores or fewer, one core kept for the caller, at most MAX_IMAGE_THREADS', () => {
  expect([1, 2, 3, 4, 8, 16].map(imageThreadsFor)).toEqual([0, 0, 2, 3, MAX_IMAGE_THREADS, MAX_IMAGE_THREADS]);
});

test('a thread that cannot load its module: its jobs are drawn on the calling thread, the same files', async () => {
  const writers = new ImageWriters(2, path.join(tmp, 'no-such-module'));
  try {
    await expectAsDrawnHere(writers, 'unloadable');
    expect(writers.doneHere).toBe(5);
  } finally {
    writers.close();
  }
});

test('a thread that stops without answering: its jobs, and every later one, are drawn on the calling thread', async () => {
  const writers = new ImageWriters(1, path.join(__dirname, 'support', 'exitingImageThread'));
  try {
    await expectAsDrawnHere(writers, 'exiting');
    expect(writers.doneHere).toBe(5);
    await expectAsDrawnHere(writers, 'after');
    expect(writers.doneHere).toBe(10);
  } finally {
    writers.close();
  }
});

test('after close(), writes are drawn on the calling thread', async () => {
  const writers = new ImageWriters(1);
  writers.close();
  await expectAsDrawnHere(writers, 'closed');
  expect(writers.doneHere).toBe(5);
});
