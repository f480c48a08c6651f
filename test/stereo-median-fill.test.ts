import * as fs from 'fs';
import * as path from 'path';
import type { Raster } from '../data/raster';
import { seededRandom } from '../data/random';
import { SharedStage } from '../data/sharedStage';
import { MEDIAN_BAND_ROWS, MEDIAN_COLOUR, MEDIAN_RADIUS, MEDIAN_SPACING, MEDIAN_STAGE_PIXELS, medianBand, medianBandCount, medianFill, medianFillInBands, type MedianRunner } from '../stereo/medianFill';
import { randomRaster } from './support/randomRaster';

/**
 * The weighted median fill (stereo/medianFill.ts) against a direct
 * reading of its definition: every sample of the window listed with its
 * weight, sorted by disparity, and the first whose cumulative weight
 * reaches half the total taken. The weights are written out here from
 * the definition (fixed point of e^(−distance/radius) and
 * e^(−colour difference/MEDIAN_COLOUR)), not taken from the module.
 */

const UNIT = 1 << 10;

function weight(di: number, dj: number, colourSum: number, channels: number): number {
  const spatial = Math.round(UNIT * Math.exp(-Math.hypot(di, dj) * MEDIAN_SPACING / MEDIAN_RADIUS));
  const colour = Math.round(UNIT * Math.exp(-colourSum / channels / MEDIAN_COLOUR));
  return (spatial * colour) >> 10;
}

function reference(disp: Uint16Array, marked: Uint8Array, img: Raster, scale: number): Uint16Array {
  const { width: W, height: H, channels: ch } = img;

  const k = MEDIAN_RADIUS / MEDIAN_SPACING;
  const step = MEDIAN_SPACING * scale;
  const out = disp.slice();
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      if (!marked[p]) continue;
      const samples: Array<{ d: number; w: number }> = [];
      for (let j = -k; j <= k; j++) {
        for (let i = -k; i <= k; i++) {
          const u = x + i * step;
          const v = y + j * step;
          if (u < 0 || v < 0 || u >= W || v >= H) continue;
          const q = v * W + u;
          let sum = 0;
          for (let c = 0; c < ch; c++) sum += Math.abs(img.data[p * ch + c] - img.data[q * ch + c]);
          samples.push({ d: disp[q], w: weight(i, j, Math.round(sum * 255 / img.maxval), ch) });
        }
      }
      samples.sort((a, b) => a.d - b.d);
      const total = samples.reduce((s, e) => s + e.w, 0);
      let acc = 0;
      for (const e of samples) {
        acc += e.w;
        if (2 * acc >= total) { out[p] = e.d; break; }
      }
    }
  }
  return out;
}

function randomCase(seed: number): { disp: Uint16Array; marked: Uint8Array; img: Raster } {
  const rng = seededRandom(seed);
  const W = 8 + Math.floor(rng() * 40);
  const H = 6 + Math.floor(rng() * 30);
  const img = randomRaster(W, H, rng() < 0.5 ? 1 : 3, 2 + Math.floor(rng() * 6), rng);
  // Some images on another scale (16-bit, or a PFM's 0–1): the colour difference is taken on the 0–255 scale.
  if (rng() < 0.3) {
    const maxval = rng() < 0.5 ? 65535 : 1;
    for (let i = 0; i < img.data.length; i++) img.data[i] = (img.data[i] * maxval) / 255;
    img.maxval = maxval;
  }
  const ndisp = 1 + Math.floor(rng() * 40);
  const disp = new Uint16Array(W * H).map(() => Math.floor(rng() * ndisp));
  const rate = rng();
  const marked = new Uint8Array(W * H).map(() => (rng() < rate ? 1 : 0));
  return { disp, marked, img };
}

describe('the weighted median fill of the marked pixels', () => {
  test.each(Array.from({ length: 40 }, (_, i) => i))('random case %i: the direct definition, at scales 1 and 3', (i) => {
    const { disp, marked, img } = randomCase(500 + i);
    for (const scale of [1, 3]) expect(Array.from(medianFill(disp, marked, img, scale))).toEqual(Array.from(reference(disp, marked, img, scale)));
  });

  test('only marked pixels change, and bands of rows filtered apart give the whole map', () => {
    for (let i = 0; i < 20; i++) {
      const { disp, marked, img } = randomCase(900 + i);
      const whole = medianFill(disp, marked, img, 1);
      for (let p = 0; p < disp.length; p++) if (!marked[p]) expect(whole[p]).toBe(disp[p]);
      const cut = 1 + (i % (img.height - 1));
      const top = medianFill(disp, marked, img, 1, 0, cut);
      const bottom = medianFill(disp, marked, img, 1, cut, img.height);
      const joined = whole.map((_, p) => (p < cut * img.width ? top[p] : bottom[p]));
      expect(Array.from(joined)).toEqual(Array.from(whole));
    }
  });

  test('bands with the rows their windows read, filtered apart and joined, give the whole map (any band count, scales 1–3; slices, or views of one kept stage, two medians at once on it)', async () => {
    const here: MedianRunner = async (bands) => bands.map(medianBand);
    const stage = new SharedStage();
    for (let i = 0; i < 20; i++) {
      const { disp, marked, img } = randomCase(1700 + i);
      const scale = 1 + (i % 3);
      const whole = medianFill(disp, marked, img, scale);
      const joined = await medianFillInBands(disp, marked, img, scale, 1 + (i % 7), here);
      expect(Array.from(joined)).toEqual(Array.from(whole));
      // On the stage (grown to the largest case so far): the bands are views of it, and a second median meanwhile takes slices.
      let views = 0;
      const counting: MedianRunner = async (bands) => {
        views += bands.filter((b) => b.disp.buffer instanceof SharedArrayBuffer && b.left.data.buffer instanceof SharedArrayBuffer).length;
        await new Promise((r) => setTimeout(r, 1));
        return bands.map(medianBand);
      };
      const other = randomCase(1800 + i);
      const [staged, beside] = await Promise.all([
        medianFillInBands(disp, marked, img, scale, 1 + (i % 7), counting, stage),
        medianFillInBands(other.disp, other.marked, other.img, scale, 2, here, stage),
      ]);
      expect(Array.from(staged)).toEqual(Array.from(whole));
      expect(Array.from(beside)).toEqual(Array.from(medianFill(other.disp, other.marked, other.img, scale)));
      expect(views).toBe(Math.ceil(img.height / Math.ceil(img.height / (1 + (i % 7)))));
    }
    // A map above MEDIAN_STAGE_PIXELS is not held (what a stage holds stays for its pool's life): its bands are slices.
    const n = MEDIAN_STAGE_PIXELS + 1;
    const big = { disp: new Uint16Array(n), marked: new Uint8Array(n), img: { width: n, height: 1, channels: 1, maxval: 255, data: new Float32Array(n) } as Raster };
    let sharedBands = 0;
    const watching: MedianRunner = async (bands) => {
      sharedBands += bands.filter((b) => b.disp.buffer instanceof SharedArrayBuffer).length;
      return bands.map(medianBand);
    };
    await medianFillInBands(big.disp, big.marked, big.img, 1, 1, watching, stage);
    expect(sharedBands).toBe(0);
    // At the limit it is.
    const at = { ...big.img, width: n - 1, data: big.img.data.subarray(0, n - 1) };
    await medianFillInBands(big.disp.subarray(0, n - 1), big.marked.subarray(0, n - 1), at, 1, 1, watching, stage);
    expect(sharedBands).toBe(1);
  });

  test('bands: one a thread, each of at least MEDIAN_BAND_ROWS rows, at least one', () => {
    for (let height = 1; height < 2000; height += 37) {
      for (const threads of [1, 2, 5, 16]) {
        const n = medianBandCount(height, threads);
        expect(n).toBeGreaterThanOrEqual(1);
        expect(n).toBeLessThanOrEqual(threads);
        if (n > 1) expect(Math.floor(height / n)).toBeGreaterThanOrEqual(MEDIAN_BAND_ROWS);
        if (n < threads) expect(Math.floor(height / (n + 1))).toBeLessThan(MEDIAN_BAND_ROWS);
      }
    }
  });

  test('the compiled strip pool\'s threads filter bands as this thread does', async () => {
    const dist = path.join(__dirname, '..', 'dist', 'stereo');
    if (!fs.existsSync(path.join(dist, 'stripWorker.js'))) throw new Error('dist/ is missing: run npm run build (npm ci does it through the prepare script)');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const runner = require(path.join(dist, 'stripRunner.js')) as { stripPool: (threads: number) => { median?: MedianRunner; medianStage?: SharedStage; threads: number; close(): Promise<void> } };
    const pool = runner.stripPool(2);
    try {
      for (let i = 0; i < 6; i++) {
        const { disp, marked, img } = randomCase(1900 + i);
        // Slices moved to the threads, then views of the pool's shared stage.
        const joined = await medianFillInBands(disp, marked, img, 2, 3, pool.median!, i % 2 === 0 ? undefined : pool.medianStage);
        expect(Array.from(joined)).toEqual(Array.from(medianFill(disp, marked, img, 2)));
      }
    } finally {
      await pool.close();
    }
  });

  test('a level twice as fine (every pixel doubled) at scale 2 gives the coarse map doubled', () => {
    // At scale 2 the window's samples fall on the doubled copies of the coarse samples, with the same weights.
    for (let i = 0; i < 10; i++) {
      const { disp, marked, img } = randomCase(1300 + i);
      const { width: W, height: H, channels: ch } = img;
      const up = <T extends Uint16Array | Uint8Array | Float32Array>(a: T, c: number): T => {
        const out = new (a.constructor as new (n: number) => T)(4 * a.length);
        for (let y = 0; y < 2 * H; y++) for (let x = 0; x < 2 * W; x++) for (let k = 0; k < c; k++) out[(y * 2 * W + x) * c + k] = a[((y >> 1) * W + (x >> 1)) * c + k];
        return out;
      };
      const fine = medianFill(up(disp, 1), up(marked, 1), { ...img, width: 2 * W, height: 2 * H, data: up(img.data, ch) }, 2);
      const coarse = medianFill(disp, marked, img, 1);
      for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) expect(fine[2 * y * 2 * W + 2 * x]).toBe(coarse[y * W + x]);
    }
  });

  test('a marked pixel takes the surface of its colour, not the row neighbour\'s', () => {
    // Left half dark at disparity 9, right half bright at disparity 3; a marked dark pixel beside the edge whose row fill gave 3.
    const W = 30;
    const H = 21;
    const data = new Float32Array(W * H).map((_, p) => (p % W < 15 ? 20 : 220));
    const disp = new Uint16Array(W * H).map((_, p) => (p % W < 15 ? 9 : 3));
    const marked = new Uint8Array(W * H);
    const p = 10 * W + 14;
    disp[p] = 3;
    marked[p] = 1;
    const out = medianFill(disp, marked, { width: W, height: H, channels: 1, data, maxval: 255 }, 1);
    expect(out[p]).toBe(9);
  });

  test('sizes that disagree, scales below 1 and images of other channel counts are refused by name', () => {
    const img: Raster = { width: 4, height: 3, channels: 1, data: new Float32Array(12), maxval: 255 };
    expect(() => medianFill(new Uint16Array(11), new Uint8Array(12), img, 1)).toThrow(/medianFill: a 4×3 image needs 12/);
    expect(() => medianFill(new Uint16Array(12), new Uint8Array(12), img, 0)).toThrow(/medianFill: scale must be an integer ≥ 1/);
    expect(() => medianFill(new Uint16Array(12), new Uint8Array(12), { ...img, channels: 2, data: new Float32Array(24) }, 1)).toThrow(/medianFill: images of 1 or 3 channels, got 2/);
  });
});
