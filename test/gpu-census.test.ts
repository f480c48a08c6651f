import { buildStereoEnergy, imagesTerm, wtaInit } from '../costs';
import type { BorderRule } from '../costs/costOptions';
import { volumeOf } from '../data/energy';
import { seededRandom } from '../data/random';
import { generateSyntheticScene } from '../data/synthetic';
import { GpuMoveSolver } from '../gpu/move/gpuMoveSolver';
import { createGpuContext, type GpuContext } from '../gpu/runtime/context';
import { randomRaster } from './support/randomRaster';
import { match } from '../stereo/match';

// The device's census costs (gpu/costs/costKernels.ts, from the codes as 16-bit halves) on gpu.js's cpu backend, against the host's.
jest.setTimeout(300_000);

let cpu: GpuContext;
beforeAll(async () => { cpu = await createGpuContext('cpu'); });
afterAll(() => cpu.destroy());

describe('census costs on the device', () => {
  test('the device WTA from the census codes equals the host WTA from the census volume: windows 3x3 to 11x9, borders, label offsets, grey and colour, window 1 (the costs themselves) and larger', async () => {
    const rand = seededRandom(20261125);
    const windows = [{ width: 3, height: 3 }, { width: 5, height: 5 }, { width: 7, height: 7 }, { width: 9, height: 7 }, { width: 11, height: 9 }, { width: 1, height: 3 }];
    const borders: BorderRule[] = ['clamp', 'tau'];
    for (let t = 0; t < 24; t++) {
      const W = 4 + Math.floor(rand() * 10);
      const H = 2 + Math.floor(rand() * 7);
      const L = 1 + Math.floor(rand() * Math.min(6, W - 2));
      const minDisp = Math.floor(rand() * (W - L));
      const window = t % 2 === 0 ? 1 : 1 + 2 * Math.floor(rand() * 4);
      const channels = rand() < 0.5 ? 1 : 3;
      const censusWindow = windows[t % windows.length];
      const border = borders[Math.floor(t / 6) % 2];
      const left = randomRaster(W, H, channels, 2 + Math.floor(rand() * 6), rand);
      const right = randomRaster(W, H, channels, 2 + Math.floor(rand() * 6), rand);
      const e = buildStereoEnergy(left, right, { ndisp: L, minDisp, kind: 'census', censusWindow, border, lambda: 3, smoothness: 'linear', truncation: 2 });
      const expected = wtaInit(volumeOf(e), W, H, L, window);
      const s = new GpuMoveSolver(cpu, { ...e, data: imagesTerm(e.matcher) }, { variant: 'reversed', keepPlans: false });
      try {
        const got = await s.deviceWta(window, W * H * L);
        const diff = got ? got.findIndex((v, p) => v !== expected[p]) : -2;
        if (diff !== -1) throw new Error(`case ${t} (${W}×${H}, labels ${minDisp}+0..${L - 1}, window ${window}, census ${censusWindow.width}x${censusWindow.height}, ${border}): ${got ? `pixel ${diff}: ${got[diff]} against ${expected[diff]}` : 'no result'}`);
      } finally {
        s.dispose();
      }
    }
  });

  test('a match with the costs on the device (census, a label offset) ends with the labels and energy of BK on the volume', async () => {
    const scene = generateSyntheticScene({ width: 40, height: 24, ndisp: 8, seed: 5 });
    const p = { cost: 'census' as const, ndisp: 6, minDisp: 1, lrCheck: false, cycles: 1 };
    const bk = await match(scene.left, scene.right, { ...p, backend: 'bk' });
    const dev = await match(scene.left, scene.right, { ...p, backend: 'gpujs-cpu', costs: 'on-demand' });
    expect(dev.finalEnergy.total).toBe(bk.finalEnergy.total);
    expect(Array.from(dev.disparity)).toEqual(Array.from(bk.disparity));
  });
});
