import { Input } from 'gpu.js';
import { censusGrey, censusTransform, toIntensity8, type CensusWindow } from '../costs';
import { seededRandom } from '../data/random';
import { censusCodesSource, censusHalves, greyPlanes } from '../gpu/costs/censusKernel';
import { kernelSettings } from '../gpu/move/deviceProgram';
import { createGpuContext, type GpuContext } from '../gpu/runtime/context';
import { randomRaster } from './support/randomRaster';
import { assembleWgsl } from './support/wgslAssembly';

// The device's census codes (gpu/costs/censusKernel.ts) on gpu.js's cpu backend, bit for bit against the host's (costs/census.ts).
jest.setTimeout(300_000);

let cpu: GpuContext;
beforeAll(async () => { cpu = await createGpuContext('cpu'); });
afterAll(() => cpu.destroy());

/** The kernel's planes [6][H][W·C] read back as one Float32Array in IM order (x fastest, then y, then plane). */
function deviceCodes(W: number, H: number, window: CensusWindow, left: Int32Array, right: Int32Array): Float32Array {
  const C = censusHalves(window);
  const k = cpu.gpu.createKernel(censusCodesSource(W, H, window), kernelSettings([W * C, H, 6], {}));
  try {
    const g = greyPlanes({ width: W, height: H, channels: 1, data: left }, { width: W, height: H, channels: 1, data: right });
    const out = k(new Input(g as unknown as number[], [W, H, 2])) as unknown as ArrayLike<ArrayLike<ArrayLike<number>>>;
    const flat = new Float32Array(6 * H * W * C);
    for (let z = 0; z < 6; z++) for (let y = 0; y < H; y++) for (let x = 0; x < W * C; x++) flat[(z * H + y) * W * C + x] = out[z][y][x];
    return flat;
  } finally {
    k.destroy();
  }
}

describe('census codes on the device', () => {
  // Odd windows 3x3 .. 9x9, non-square ones (one row, one column, 9x7, 7x9) and 11x11 (120 bits: four words, the last one partly filled).
  const windows: CensusWindow[] = [
    { width: 3, height: 3 }, { width: 5, height: 5 }, { width: 7, height: 7 }, { width: 9, height: 9 },
    { width: 9, height: 7 }, { width: 7, height: 9 }, { width: 5, height: 3 }, { width: 3, height: 1 }, { width: 1, height: 5 }, { width: 11, height: 11 },
  ];
  test.each(windows.map((w) => [`${w.width}x${w.height}`, w] as const))('%s: the halves of the host codes, bit for bit, on random images smaller and larger than the window (replicated borders), grey and colour', (_name, window) => {
    const rand = seededRandom(7000 + window.width * 31 + window.height);
    const sizes: Array<[number, number]> = [[1, 1], [2, 3], [window.width - 1 || 1, window.height + 1], [17, 11], [6 + Math.floor(rand() * 20), 4 + Math.floor(rand() * 12)]];
    for (const [W, H] of sizes) {
      for (const channels of [1, 3]) {
        // Few grey levels make many equal neighbours (equal is not below: the bit stays clear).
        const levels = rand() < 0.5 ? 3 : 256;
        const li = toIntensity8(randomRaster(W, H, channels, levels, rand));
        const ri = toIntensity8(randomRaster(W, H, channels, levels, rand));
        const got = deviceCodes(W, H, window, censusGrey(li), censusGrey(ri));
        const C = censusHalves(window);
        const n = W * H;
        const expected = new Float32Array(6 * n * C);
        for (const [plane, im] of [[0, li], [1, ri]] as const) {
          const codes = censusTransform(im, window).codes;
          for (let i = 0; i < codes.length; i++) {
            expected[plane * n * C + 2 * i] = codes[i] & 0xffff;
            expected[plane * n * C + 2 * i + 1] = codes[i] >>> 16;
          }
        }
        const diff = got.findIndex((v, i) => v !== expected[i]);
        if (diff !== -1) throw new Error(`${W}×${H}×${channels}: entry ${diff} (plane ${Math.floor(diff / (n * C))}) is ${got[diff]}, the host's ${expected[diff]}`);
      }
    }
  });

  test('the kernel builds to WGSL with gpu.js\'s WebGPU backend (no device needed): every value f32, G read at i32 casts of clamped coordinates', () => {
    for (const window of windows) {
      const [W, H] = [13, 9];
      const g = new Input(new Float32Array(2 * W * H) as unknown as number[], [W, H, 2]);
      const { wgsl } = assembleWgsl(censusCodesSource(W, H, window), [W * censusHalves(window), H, 6], [g], {});
      const body = wgsl.slice(wgsl.indexOf('fn main'));
      expect(body).toContain('get_user_G(i32(user_z), i32(user_yr), i32(user_xr))');
      expect(body).toContain('result[data_index] = user_v;');
      // No integer-typed user variable but the loop counters: the arithmetic and comparisons stay in f32.
      expect(body.match(/var user_\w+ : i32/g)).toEqual(['var user_i : i32', 'var user_j : i32']);
    }
  });

  test('grey planes refuse images that are not grey or differ in size', () => {
    const a = { width: 2, height: 2, channels: 1, data: new Int32Array(4) };
    expect(() => greyPlanes(a, { ...a, channels: 3, data: new Int32Array(12) })).toThrow(/two grey images/);
    expect(() => greyPlanes(a, { ...a, width: 1, data: new Int32Array(2) })).toThrow(/two grey images/);
  });
});
