import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { seededRandom } from '../data/random';
import { encodePnm } from '../data/pnm';
import { loadScene } from '../data/scene';
import { ReadsOnThread, type ReadJob } from '../data/readThread';
import { readImage } from '../data/imageIO';
import { findMiddlebury } from './support/middleburyData';

jest.setTimeout(60_000);

let tmp: string;
beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-scene-thread-')); });
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A scene as comparable text: every typed array by its kind, length and a hash of its bytes. */
function digest(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (ArrayBuffer.isView(v)) {
      const bytes = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
      return `${v.constructor.name}[${bytes.length}] ${createHash('sha256').update(bytes).digest('hex')}`;
    }
    return v;
  });
}

/** A read's outcome as text: the digest of what it gave, or its error message. */
async function outcome(read: Promise<unknown>): Promise<string> {
  try { return digest(await read); } catch (e) { return `error: ${(e as Error).message}`; }
}

/** A job done directly, by the function a caller would call: loadScene or readImage. */
function direct(job: ReadJob): Promise<unknown> {
  return job.kind === 'scene' ? loadScene(job.dir, job.options) : readImage(job.file);
}

/**
 * Every job's result from a ReadsOnThread (its thread module `module`, the
 * real one by default) against the job done directly, in order; returns how
 * many jobs the thread left to the calling thread.
 */
async function expectSameAsDirect(jobs: ReadJob[], module?: string): Promise<number> {
  const t = new ReadsOnThread(jobs, module);
  try {
    for (let i = 0; i < jobs.length; i++) expect(await outcome(t.result(i))).toBe(await outcome(direct(jobs[i])));
    return t.doneHere;
  } finally {
    t.close();
  }
}

const scenes = (dirs: string[]): ReadJob[] => dirs.map((dir) => ({ kind: 'scene', dir }));

/** A 2001-layout scene folder (venus's names): random RGB views and ground truths of both views. */
function writeVenusLike(name: string, seed: number): string {
  const rand = seededRandom(seed);
  const d = path.join(tmp, name);
  fs.mkdirSync(d, { recursive: true });
  const W = 20 + Math.floor(rand() * 30);
  const H = 10 + Math.floor(rand() * 20);
  const rgb = () => ({ width: W, height: H, channels: 3, maxval: 255, data: Float32Array.from({ length: W * H * 3 }, () => Math.floor(rand() * 256)) });
  const gt = () => ({ width: W, height: H, channels: 1, maxval: 255, data: Float32Array.from({ length: W * H }, () => (rand() < 0.1 ? 0 : 8 * Math.floor(rand() * 19))) });
  fs.writeFileSync(path.join(d, 'im2.ppm'), encodePnm(rgb()));
  fs.writeFileSync(path.join(d, 'im6.ppm'), encodePnm(rgb()));
  fs.writeFileSync(path.join(d, 'disp2.pgm'), encodePnm(gt()));
  fs.writeFileSync(path.join(d, 'disp6.pgm'), encodePnm(gt()));
  return d;
}

const root = findMiddlebury();

describe('scene folders and images read on a worker thread', () => {
  test('equal loadScene\'s, scene by scene, errors included (same messages, later scenes still read)', async () => {
    const notScene = path.join(tmp, 'not-a-scene');
    fs.mkdirSync(notScene, { recursive: true });
    fs.writeFileSync(path.join(notScene, 'left.png'), 'x');
    const dirs = [writeVenusLike('a', 1), path.join(tmp, 'missing'), writeVenusLike('b', 2), notScene, writeVenusLike('c', 3)];
    expect(await expectSameAsDirect(scenes(dirs))).toBe(0);
    expect((await outcome(loadScene(dirs[1]))).startsWith('error: ')).toBe(true);
    expect((await outcome(loadScene(dirs[3]))).startsWith('error: ')).toBe(true);
  });

  test('images (PPM, PGM, PNG, a missing file, a corrupt one) equal readImage\'s', async () => {
    const d = writeVenusLike('f', 6);
    fs.writeFileSync(path.join(d, 'bad.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));
    const pngs = root ? [path.join(root, 'teddy', 'im2.png'), path.join(root, 'teddy', 'disp2.png')].filter((f) => fs.existsSync(f)) : [];
    const files = [path.join(d, 'im2.ppm'), path.join(d, 'disp2.pgm'), path.join(d, 'nope.png'), path.join(d, 'bad.png'), path.join(d, 'im6.ppm'), ...pngs];
    expect(await expectSameAsDirect(files.map((file) => ({ kind: 'image', file })))).toBe(0);
  });

  test('a thread that cannot start its module leaves every scene to the calling thread, with the same results', async () => {
    const dirs = [writeVenusLike('d', 4), path.join(tmp, 'missing-too'), writeVenusLike('e', 5)];
    expect(await expectSameAsDirect(scenes(dirs), path.join(tmp, 'no-such-module'))).toBe(dirs.length);
  });

  const real = root ? ['tsukuba', 'teddy', 'Adirondack_TrainingQ'].map((s) => path.join(root, s)).filter((d) => fs.existsSync(d)) : [];
  (real.length > 0 ? test : test.skip)(`Middlebury folders equal loadScene's${real.length > 0 ? '' : ' (skipped: no Middlebury data; set STEREO_DATA or put ../shared/data beside the project)'}`, async () => {
    expect(await expectSameAsDirect(scenes(real))).toBe(0);
  });
});
