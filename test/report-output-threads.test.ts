import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { generateSyntheticScene } from '../data/synthetic';
import { drawImage, type ImageJob } from '../app/report/outputImages';
import { ImageWriters, imageThreadsFor, MAX_IMAGE_THREADS } from '../app/report/outputThreads';

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

/** The five jobs drawn here into `<name>-here`, and the same jobs into `<name>-threads`; returns both folders. */
function folders(name: string): [string, string] {
  const here = path.join(tmp, `${name}-here`);
  const there = path.join(tmp, `${name}-threads`);
  fs.mkdirSync(here);
  fs.mkdirSync(there);
  return [here, there];
}

/** Resolves once a write sent now is answered: by then the threads have taken every job sent before it (they are handed out in order). */
async function settled(writers: ImageWriters, dir: string): Promise<void> {
  await writers.write({ kind: 'disparity', file: path.join(dir, 'marker.png'), disparity, width: 37, height: 23, scale: 36 });
  fs.rmSync(path.join(dir, 'marker.png'));
}

test('prepared images: nothing is written before write(), then the file drawn here; discarded ones are never written', async () => {
  const writers = new ImageWriters(2);
  try {
    const [here, there] = folders('prepared');
    for (const job of jobs(here)) await drawImage(job);
    const prepared = jobs(there).map((job) => writers.prepare(job));
    await settled(writers, there);
    await settled(writers, there);
    expect(fs.readdirSync(there)).toEqual([]);
    for (const p of prepared.slice(0, 3)) await p.write();
    prepared[3].discard();
    await prepared[4].write();
    await expect(prepared[3].write()).rejects.toThrow(/once/);
    expect(() => prepared[0].discard()).toThrow(/once/);
    await settled(writers, there);
    const written = fs.readdirSync(there).sort();
    expect(written).toEqual(['disp-color.png', 'disp.png', 'error.png', 'left.png']);
    for (const f of written) expect([f, fs.readFileSync(path.join(there, f)).equals(fs.readFileSync(path.join(here, f)))]).toEqual([f, true]);
    expect(writers.doneHere).toBe(0);
  } finally {
    writers.close();
  }
});

test('prepared images whose thread is lost, or that were never sent to one, are drawn here at write()', async () => {
  for (const [name, writers] of [
    ['lost', new ImageWriters(1, path.join(__dirname, 'support', 'exitingImageThread'))],
    ['unloadable', new ImageWriters(2, path.join(tmp, 'no-such-module'))],
    ['closed', (() => { const w = new ImageWriters(1); w.close(); return w; })()],
  ] as const) {
    try {
      const [here, there] = folders(`prepared-${name}`);
      for (const job of jobs(here)) await drawImage(job);
      const prepared = jobs(there).map((job) => writers.prepare(job));
      // Give a thread time to fail: still nothing is written before write().
      await new Promise((r) => setTimeout(r, 200));
      expect([name, fs.readdirSync(there)]).toEqual([name, []]);
      for (const p of prepared) await p.write();
      for (const f of fs.readdirSync(here)) expect([name, f, fs.readFileSync(path.join(there, f)).equals(fs.readFileSync(path.join(here, f)))]).toEqual([name, f, true]);
      expect([name, writers.doneHere]).toEqual([name, 5]);
    } finally {
      writers.close();
    }
  }
});

test('a drawing that fails is reported by write() with the file named; discarding it reports nothing', async () => {
  const writers = new ImageWriters(1);
  try {
    const bad: ImageJob = { kind: 'disparity', file: path.join(tmp, 'too-bright.png'), disparity, width: 37, height: 23, scale: 100000 };
    await expect(writers.prepare(bad).write()).rejects.toThrow(/cannot write .*too-bright\.png: --(png-)?scale/);
    writers.prepare(bad).discard();
    await settled(writers, tmp);
    expect(fs.existsSync(bad.file)).toBe(false);
  } finally {
    writers.close();
  }
});
