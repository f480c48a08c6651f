import { seededRandom } from '../data/random';
import * as fs from 'fs';
import * as path from 'path';
import { buildStereoEnergy, imagesTerm, stackEnergies, wtaFromMatcher, wtaInit, type StereoEnergy } from '../costs';
import { volumeOf, volumeTerm } from '../data/energy';
import type { CostKind, BorderRule } from '../costs/costOptions';
import { loadScene } from '../data/scene';
import { GpuMoveSolver } from '../gpu/move/gpuMoveSolver';
import { createGpuContext, type GpuContext } from '../gpu/runtime/context';
import { randomRaster } from './support/randomRaster';
import { fullTest } from './support/testScope';

// The device WTA's kernels on gpu.js's cpu backend (CI has no GPU), against the host's WTA (costs/wta.ts).
jest.setTimeout(300_000);

let cpu: GpuContext;
beforeAll(async () => { cpu = await createGpuContext('cpu'); });
afterAll(() => cpu.destroy());


function solverFor(e: StereoEnergy, kind: 'volume' | 'images'): GpuMoveSolver {
  return kind === 'volume'
    ? new GpuMoveSolver(cpu, e, { variant: 'reversed', keepPlans: false })
    : new GpuMoveSolver(cpu, { ...e, data: imagesTerm(e.matcher) }, { variant: 'reversed', keepPlans: false });
}

describe('WTA on the device', () => {
  test('views stacked in bands (the left–right check): each band\'s labels are the host WTA of its view alone, on 30 random pairs of views, both data sources', async () => {
    const rand = seededRandom(20261126);
    for (let t = 0; t < 30; t++) {
      const W = 2 + Math.floor(rand() * 10);
      const H = 1 + Math.floor(rand() * 7);
      const L = 1 + Math.floor(rand() * 6);
      const window = 1 + 2 * Math.floor(rand() * 5);
      const bands = 2 + Math.floor(rand() * 2);
      const kind = (['sad', 'sad+sgrad', 'census'] as const)[t % 3];
      const views = Array.from({ length: bands }, () => buildStereoEnergy(randomRaster(W, H, 1, 4, rand), randomRaster(W, H, 1, 4, rand), {
        ndisp: L, kind, lambda: 3, smoothness: 'linear', truncation: 2, ...(kind === 'census' ? { censusWindow: { width: 3, height: 3 } } : {}),
      }));
      const expected = views.flatMap((v) => Array.from(wtaInit(volumeOf(v), W, H, L, window)));
      for (const source of ['volume', 'images'] as const) {
        const stacked = stackEnergies(source === 'volume' ? views : views.map((v) => ({ ...v, data: imagesTerm(v.matcher) })));
        const s = new GpuMoveSolver(cpu, stacked, { variant: 'reversed', keepPlans: false });
        try {
          const got = await s.deviceWta(window);
          expect(got ? Array.from(got) : null).toEqual(expected);
        } finally {
          s.dispose();
        }
      }
    }
  });

  test('equals the host WTA on 120 random pairs: sizes 1×1 to 13×9, 1–12 labels, windows 1–15, every cost kind and border, chunks of one label to all of them, both data sources', async () => {
    const rand = seededRandom(20261122);
    const kinds: CostKind[] = ['sad', 'ssd', 'sad+sgrad'];
    const borders: BorderRule[] = ['clamp', 'tau'];
    let multiChunk = 0;
    for (let t = 0; t < 120; t++) {
      const W = 1 + Math.floor(rand() * 13);
      const H = 1 + Math.floor(rand() * 9);
      const L = 1 + Math.floor(rand() * 12);
      const window = 1 + 2 * Math.floor(rand() * 8);
      const channels = rand() < 0.5 ? 1 : 3;
      const levels = 2 + Math.floor(rand() * 4);
      const kind = kinds[t % 3];
      const border = borders[Math.floor(t / 3) % 2];
      const left = randomRaster(W, H, channels, levels, rand);
      const right = randomRaster(W, H, channels, levels, rand);
      const e = buildStereoEnergy(left, right, { ndisp: L, kind, border, lambda: 1 + Math.floor(rand() * 30), smoothness: 'linear', truncation: 2 });
      const expected = wtaInit(volumeOf(e), W, H, L, window);
      // Chunks of 1, 2, … labels up to all of them: first, middle and last picks.
      const perChunk = 1 + Math.floor(rand() * L);
      if (perChunk < L) multiChunk++;
      for (const source of ['volume', 'images'] as const) {
        const s = solverFor(e, source);
        try {
          const got = await s.deviceWta(window, perChunk * W * H);
          const diff = got ? got.findIndex((v, p) => v !== expected[p]) : -2;
          if (diff !== -1) throw new Error(`case ${t} (${W}×${H}, ${L} labels, window ${window}, ${kind}, ${border}, ${channels} channel(s), ${perChunk} labels a chunk, ${source}): ${got ? `label differs at pixel ${diff}: ${got[diff]} against ${expected[diff]}` : 'no result'}`);
        } finally {
          s.dispose();
        }
      }
    }
    expect(multiChunk).toBeGreaterThan(40);
  });

  test('costs on demand: the same labels as the host WTA from the matcher, on a synthetic-like 40×30 pair with sad+sgrad costs', async () => {
    const rand = seededRandom(7);
    const left = randomRaster(40, 30, 3, 256, rand);
    const right = randomRaster(40, 30, 3, 256, rand);
    const e = buildStereoEnergy(left, right, { ndisp: 10, kind: 'sad+sgrad', lambda: 20, smoothness: 'linear', truncation: 2, onDemand: true });
    expect(e.data.kind).toBe('images');
    const s = new GpuMoveSolver(cpu, e, { variant: 'classic', keepPlans: false });
    try {
      expect(Array.from((await s.deviceWta(9, 3 * 40 * 30))!)).toEqual(Array.from(wtaFromMatcher(e.matcher, 10, 9)));
    } finally {
      s.dispose();
    }
  });

  test('a window whose sums could reach 2^24 gives no labels (the host WTA then runs), and a bad window or chunk is refused', async () => {
    // Every cost 2^21: a 3×3 window sums nine of them, past 2^24; a 1×1 window is exact (all labels tie: label 0).
    const rand = seededRandom(3);
    const left = randomRaster(6, 5, 1, 4, rand);
    const right = randomRaster(6, 5, 1, 4, rand);
    const e = buildStereoEnergy(left, right, { ndisp: 3, kind: 'sad', lambda: 1, smoothness: 'linear', truncation: 2 });
    const s = new GpuMoveSolver(cpu, { ...e, data: volumeTerm(volumeOf(e).map(() => 2 ** 21)) }, { variant: 'reversed', keepPlans: false });
    try {
      expect(await s.deviceWta(3)).toBeUndefined();
      expect(await s.deviceWta(1)).toEqual(new Uint16Array(30));
      await expect(s.deviceWta(4)).rejects.toThrow('WTA: window: got 4, expected an odd integer ≥ 1');
      await expect(s.deviceWta(0)).rejects.toThrow('WTA: window: got 0, expected an odd integer ≥ 1');
      await expect(s.deviceWta(3, 0)).rejects.toThrow('WTA chunk of 0 entries');
      // gpu.js's CPU backends leave the WTA to the host.
      expect(await s.initialWta(3)).toBeUndefined();
    } finally {
      s.dispose();
    }
  });

  const dataRoot = process.env.STEREO_DATA ?? path.join(__dirname, '..', '..', 'shared', 'data', 'middlebury');
  const tsukuba = path.join(dataRoot, 'tsukuba');
  const haveTsukuba = fs.existsSync(tsukuba);
  if (!haveTsukuba) test.skip(`tsukuba: no data at ${tsukuba} (set STEREO_DATA)`, () => undefined);
  else {
    // Under STEREOCUT_FULL_TESTS=1 only: the 120 random pairs above cover every case on small grids.
    fullTest('tsukuba 384×288, 16 labels, window 9: the host WTA\'s labels from the volume and from the images, in one chunk and in three', async () => {
      const scene = await loadScene(tsukuba);
      const e = buildStereoEnergy(scene.left, scene.right, { ndisp: scene.ndisp, kind: 'sad', lambda: 20, smoothness: 'linear', truncation: 2 });
      const expected = wtaInit(volumeOf(e), e.width, e.height, e.labels, 9);
      for (const source of ['volume', 'images'] as const) {
        for (const perChunk of [16, 6]) {
          const s = solverFor(e, source);
          try {
            const got = await s.deviceWta(9, perChunk * e.width * e.height);
            expect(got && got.findIndex((v, p) => v !== expected[p])).toBe(-1);
          } finally {
            s.dispose();
          }
        }
      }
    });
  }
});
