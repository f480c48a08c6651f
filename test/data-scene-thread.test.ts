import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { seededRandom } from '../data/random';
import { encodePnm } from '../data/pnm';
import { loadScene } from '../data/scene';
import { ScenesOnThread } from '../data/sceneThread';
import type { Scene } from '../data/sceneTypes';
import { findMiddlebury } from './support/middleburyData';

jest.setTimeout(60_000);

let tmp: string;
beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-scene-thread-')); });
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A scene as comparable text: every typed array by its kind, length and a hash of its bytes. */
function digest(scene: Scene): string {
  return JSON.stringify(scene, (_k, v: unknown) => {
    if (ArrayBuffer.isView(v)) {
      const bytes = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
      return `${v.constructor.name}[${bytes.length}] ${createHash('sha256').update(bytes).digest('hex')}`;
    }
    return v;
  });
}

/** What loadScene gives for a folder, as digest text or its error message. */
async function direct(dir: string): Promise<string> {
  try { return digest(await loadScene(dir)); } catch (e) { return `error: ${(e as Error).message}`; }
}

async function onThread(t: ScenesOnThread, i: number): Promise<string> {
  try { return digest(await t.scene(i)); } catch (e) { return `error: ${(e as Error).message}`; }
}

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

describe('scenes read on a worker thread', () => {
  test('equal loadScene\'s, scene by scene, errors included (same messages, later scenes still read)', async () => {
    const notScene = path.join(tmp, 'not-a-scene');
    fs.mkdirSync(notScene, { recursive: true });
    fs.writeFileSync(path.join(notScene, 'left.png'), 'x');
    const dirs = [writeVenusLike('a', 1), path.join(tmp, 'missing'), writeVenusLike('b', 2), notScene, writeVenusLike('c', 3)];
    const t = new ScenesOnThread(dirs);
    try {
      for (let i = 0; i < dirs.length; i++) expect(await onThread(t, i)).toBe(await direct(dirs[i]));
      expect(t.readHere).toBe(0);
    } finally {
      t.close();
    }
    expect((await direct(dirs[1])).startsWith('error: ')).toBe(true);
    expect((await direct(dirs[3])).startsWith('error: ')).toBe(true);
  });

  test('a thread that cannot start its module leaves every scene to the calling thread, with the same results', async () => {
    const dirs = [writeVenusLike('d', 4), path.join(tmp, 'missing-too'), writeVenusLike('e', 5)];
    const t = new ScenesOnThread(dirs, {}, path.join(tmp, 'no-such-module'));
    try {
      for (let i = 0; i < dirs.length; i++) expect(await onThread(t, i)).toBe(await direct(dirs[i]));
      expect(t.readHere).toBe(dirs.length);
    } finally {
      t.close();
    }
  });

  const root = findMiddlebury();
  const real = root ? ['tsukuba', 'teddy', 'Adirondack_TrainingQ'].map((s) => path.join(root, s)).filter((d) => fs.existsSync(d)) : [];
  (real.length > 0 ? test : test.skip)(`Middlebury folders equal loadScene's${real.length > 0 ? '' : ' (skipped: no Middlebury data; set STEREO_DATA or put ../shared/data beside the project)'}`, async () => {
    const t = new ScenesOnThread(real);
    try {
      for (let i = 0; i < real.length; i++) expect(await onThread(t, i)).toBe(await direct(real[i]));
      expect(t.readHere).toBe(0);
    } finally {
      t.close();
    }
  });
});
