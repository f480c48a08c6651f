import { buildStereoEnergy, mirroredSwappedEnergy, stackEnergies, type StereoEnergyOptions } from '../costs';
import { isIntegral8 } from '../costs/intensity';
import type { MrfEnergy } from '../data/energy';
import { seededRandom } from '../data/random';
import { createPairKernel, pairArguments, pairFits } from '../gpu/costs/pairKernel';
import { createGpuContext, type GpuContext } from '../gpu/runtime/context';
import { randomRaster } from './support/randomRaster';
import { sharedSamples } from '../data/raster';

// The grey images and weights the device makes from an energy's pair (gpu/costs/pairKernel.ts), on gpu.js's cpu backend, against the host's.
jest.setTimeout(300_000);

let cpu: GpuContext;
beforeAll(async () => { cpu = await createGpuContext('cpu'); });
afterAll(() => cpu.destroy());

const options = (cueThreshold: number, lambda: number, pairOnDevice: boolean): StereoEnergyOptions => ({
  ndisp: 4, kind: 'census', censusWindow: { width: 3, height: 3 }, lambda, cueThreshold, cueFactor: 3, smoothness: 'linear', truncation: 2, onDemand: true, pairOnDevice,
});

/** The pair's energy, one view or stacked with its mirrored, swapped view (the left–right check). */
function energyOf(left: ReturnType<typeof randomRaster>, right: ReturnType<typeof randomRaster>, o: StereoEnergyOptions, views: 1 | 2): MrfEnergy {
  const first = buildStereoEnergy(left, right, o);
  return views === 1 ? first : stackEnergies([first, mirroredSwappedEnergy(first, o)]);
}

describe('an energy’s pair on the device', () => {
  test('the kernel’s planes are the host’s grey images and weights, value for value, on 60 random pairs (grey and colour, one view and the check’s two, in this thread’s memory or shared)', () => {
    const rand = seededRandom(2711);
    for (let t = 0; t < 60; t++) {
      const W = 1 + Math.floor(rand() * 19);
      const H = 1 + Math.floor(rand() * 9);
      const channels = rand() < 0.5 ? 1 : 3;
      // Few levels make many equal neighbours; steps of 13 put differences on both sides of the thresholds.
      const levels = [2, 20, 256][Math.floor(rand() * 3)];
      // Every other pair read into shared memory, as a pair read for matching is (the kernel's grey input a copy of it).
      const place = (r: ReturnType<typeof randomRaster>): ReturnType<typeof randomRaster> => (t % 2 === 0 ? r : { ...r, data: Object.assign(sharedSamples(r.data.length), r.data) as Float32Array });
      const left = place(randomRaster(W, H, channels, levels, rand));
      const right = place(randomRaster(W, H, channels, levels, rand));
      const views = rand() < 0.5 ? 1 : 2;
      const o = options([5, 12, 14, 27, 300][Math.floor(rand() * 5)], [1, 4, 2.5][Math.floor(rand() * 3)], true);
      const e = energyOf(left, right, o, views);
      const pair = e.pairSource!;
      expect(pair.views).toEqual(views === 1 ? ['pair'] : ['pair', 'mirrored']);
      expect(pairFits(pair, e.width, e.height, e.bandHeight ?? e.height)).toBe(true);
      const k = createPairKernel(cpu.gpu, e.width, e.height, pair, false);
      try {
        const out = k(...pairArguments(pair)) as unknown as ArrayLike<ArrayLike<ArrayLike<number>>>;
        const images = e.data as Extract<MrfEnergy['data'], { kind: 'images' }>;
        const planes = [images.left.data, images.right.data, e.wH, e.wV];
        for (let z = 0; z < 4; z++) {
          for (let y = 0; y < e.height; y++) {
            for (let x = 0; x < e.width; x++) {
              const want = planes[z][y * e.width + x];
              if (out[z][y][x] !== want) throw new Error(`pair ${t} (${W}×${H}×${channels}, ${views} views): plane ${z} at (${x},${y}) is ${out[z][y][x]}, the host's ${want}`);
            }
          }
        }
      } finally {
        k.destroy();
      }
    }
  });

  test('with the pair on the device the energy makes its weights and census images when read, the same as without', () => {
    const rand = seededRandom(77);
    for (let t = 0; t < 20; t++) {
      const W = 2 + Math.floor(rand() * 12);
      const H = 2 + Math.floor(rand() * 8);
      const channels = rand() < 0.5 ? 1 : 3;
      const left = randomRaster(W, H, channels, 20, rand);
      const right = randomRaster(W, H, channels, 20, rand);
      for (const views of [1, 2] as const) {
        const lazy = energyOf(left, right, options(14, 4, true), views);
        const eager = energyOf(left, right, options(14, 4, false), views);
        expect(eager.pairSource).toBeUndefined();
        expect(lazy.wH).toEqual(eager.wH);
        expect(lazy.wV).toEqual(eager.wV);
        expect(lazy.data).toEqual(eager.data);
      }
    }
  });

  test('only an 8-bit pair is given: 16-bit, fractional or non-finite samples keep the host’s conversion (and its errors)', () => {
    const rand = seededRandom(5);
    const left = randomRaster(6, 4, 3, 256, rand);
    const right = randomRaster(6, 4, 3, 256, rand);
    expect(isIntegral8(left)).toBe(true);
    expect(buildStereoEnergy(left, right, options(12, 4, true)).pairSource).toBeDefined();
    expect(buildStereoEnergy(left, right, { ...options(12, 4, true), onDemand: false }).pairSource).toBeUndefined();
    const wide = { ...left, maxval: 65535 };
    expect(isIntegral8(wide)).toBe(false);
    expect(buildStereoEnergy(wide, { ...right, maxval: 65535 }, options(12, 4, true)).pairSource).toBeUndefined();
    for (const bad of [0.5, 256, -1, Number.NaN]) {
      const data = Float32Array.from(left.data);
      data[7] = bad;
      expect(isIntegral8({ ...left, data })).toBe(false);
    }
    const nan = Float32Array.from(left.data);
    nan[4] = Number.NaN;
    expect(() => buildStereoEnergy({ ...left, data: nan }, right, options(12, 4, true))).toThrow(/^left image: sample at \(1,0\) is NaN/);
  });
});
