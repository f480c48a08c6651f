import {
  DataCostMatcher,
  censusGrey,
  censusGreyOfRaster,
  censusTransform,
  censusWords,
  computeDataCostVolume,
  defaultCensusTau,
  parseCensusWindow,
  popcount32,
  toIntensity8,
  wtaFromMatcher,
  wtaInit,
  type CensusWindow,
} from '../costs';
import { seededRandom as rng } from '../data/random';
import { mirrorSamples, type Raster } from '../data/raster';

function randomImage(rand: () => number, W: number, H: number, C: number, levels: number): Raster {
  const data = new Float32Array(W * H * C);
  for (let i = 0; i < data.length; i++) data[i] = Math.floor(rand() * levels) * Math.floor(255 / Math.max(1, levels - 1));
  return { width: W, height: H, channels: C, data, maxval: 255 };
}

/** The right image: the left shifted by `shift` plus a little noise. */
function shifted(rand: () => number, L: Raster, shift: number): Raster {
  const { width: W, height: H, channels: C } = L;
  const data = new Float32Array(L.data.length);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const xs = Math.min(W - 1, x + shift);
      for (let c = 0; c < C; c++) data[(y * W + x) * C + c] = Math.min(255, Math.max(0, L.data[(y * W + xs) * C + c] + Math.floor((rand() - 0.5) * 30)));
    }
  }
  return { ...L, data };
}

/** Grey straight from the raster by the documented formula. */
function grey(im: Raster, x: number, y: number): number {
  const W = im.width;
  const xc = Math.min(W - 1, Math.max(0, x));
  const yc = Math.min(im.height - 1, Math.max(0, y));
  const i = (yc * W + xc) * im.channels;
  if (im.channels === 1) return im.data[i];
  return Math.floor((299 * im.data[i] + 587 * im.data[i + 1] + 114 * im.data[i + 2] + 500) / 1000);
}

/** The census cost of one pixel and disparity, by the definition: count window positions whose comparison differs. */
function directCost(L: Raster, R: Raster, w: CensusWindow, x: number, y: number, d: number, tau: number, scale: number): number {
  const xr = Math.max(0, x - d);
  const rx = (w.width - 1) / 2;
  const ry = (w.height - 1) / 2;
  let h = 0;
  for (let dy = -ry; dy <= ry; dy++) {
    for (let dx = -rx; dx <= rx; dx++) {
      if (dx === 0 && dy === 0) continue;
      const bl = grey(L, x + dx, y + dy) < grey(L, x, y);
      const br = grey(R, xr + dx, y + dy) < grey(R, xr, y);
      if (bl !== br) h++;
    }
  }
  return Math.min(h * scale, Math.round(tau * scale));
}

const WINDOWS: CensusWindow[] = [
  { width: 3, height: 3 }, { width: 5, height: 5 }, { width: 7, height: 7 }, { width: 9, height: 7 },
  { width: 9, height: 9 }, { width: 11, height: 11 }, { width: 3, height: 1 }, { width: 1, height: 5 },
];

describe('census cost', () => {
  test('popcount counts the set bits of every 32-bit pattern', () => {
    const rand = rng(3);
    for (let k = 0; k < 2000; k++) {
      const v = (rand() * 2 ** 32) | 0;
      let n = 0;
      for (let b = 0; b < 32; b++) if ((v >>> b) & 1) n++;
      expect(popcount32(v)).toBe(n);
    }
    expect(popcount32(-1)).toBe(32);
    expect(popcount32(0)).toBe(0);
  });

  test('equals the direct per-pixel formula for every window size, borders included, grey and colour', () => {
    const rand = rng(11);
    for (const w of WINDOWS) {
      for (const C of [1, 3]) {
        const W = 9 + Math.floor(rand() * 6);
        const H = 6 + Math.floor(rand() * 5);
        const L = randomImage(rand, W, H, C, rand() < 0.5 ? 4 : 256);
        const R = shifted(rand, L, 2);
        const ndisp = 5;
        const tau = Math.floor(rand() * (w.width * w.height));
        const scale = 1 + Math.floor(rand() * 3);
        const vol = computeDataCostVolume(L, R, ndisp, { kind: 'census', censusWindow: w, tau, scale });
        // The whole volume against the formula in one expect (an expect per cost would cost a second).
        const direct: number[] = [];
        for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) for (let d = 0; d < ndisp; d++) direct.push(directCost(L, R, w, x, y, d, tau, scale));
        expect([w, C, Array.from(vol)]).toEqual([w, C, direct]);
      }
    }
  });

  test('codes: bit k of a pixel is set exactly when its k-th window neighbour is darker', () => {
    const rand = rng(5);
    const im = randomImage(rand, 8, 7, 3, 256);
    const w = { width: 9, height: 5 };
    const c = censusTransform(toIntensity8(im), w);
    expect(c.words).toBe(2);
    for (let y = 0; y < 7; y++) {
      for (let x = 0; x < 8; x++) {
        let k = 0;
        for (let dy = -2; dy <= 2; dy++) {
          for (let dx = -4; dx <= 4; dx++) {
            if (dx === 0 && dy === 0) continue;
            const bit = (c.codes[(y * 8 + x) * 2 + (k >> 5)] >>> (k & 31)) & 1;
            expect(bit).toBe(grey(im, x + dx, y + dy) < grey(im, x, y) ? 1 : 0);
            k++;
          }
        }
        // Bits past the window's 44 stay clear.
        expect(c.codes[(y * 8 + x) * 2 + 1] >>> 12).toBe(0);
      }
    }
  });

  test('codes of a row range: those rows as in the whole transform, every other row 0 (the rows of a worker\'s volume)', () => {
    const rand = rng(2511);
    for (const w of [{ width: 3, height: 3 }, { width: 9, height: 7 }, { width: 11, height: 11 }]) {
      const im = toIntensity8(randomImage(rand, 17, 12, 3, 5));
      const all = censusTransform(im, w);
      for (const [y0, y1] of [[0, 1], [3, 8], [11, 12], [0, 12], [5, 5]]) {
        const part = censusTransform(im, w, { y0, y1 });
        const rowLen = 17 * all.words;
        for (let y = 0; y < 12; y++) {
          const got = Array.from(part.codes.subarray(y * rowLen, (y + 1) * rowLen));
          expect(got).toEqual(y >= y0 && y < y1 ? Array.from(all.codes.subarray(y * rowLen, (y + 1) * rowLen)) : new Array(rowLen).fill(0));
        }
      }
    }
  });

  test('a monotone brightness change of one image (gain and offset) leaves every cost unchanged', () => {
    const rand = rng(21);
    // Samples 0..100, so the changed image stays inside 0..255.
    const small = (im: Raster): Raster => ({ ...im, data: im.data.map((v) => Math.round((v * 100) / 255)) });
    for (const C of [1, 3]) {
      const L = small(randomImage(rand, 16, 10, C, 256));
      const R = small(shifted(rand, randomImage(rand, 16, 10, C, 256), 3));
      // Grey pairs: gain 2 and offset 30. Colour: an offset (the luma weights sum to 1000, so grey moves by
      // exactly the offset; a gain would also be monotone but the integer luma's rounding can merge levels).
      const change = C === 1 ? (v: number) => 2 * v + 30 : (v: number) => v + 40;
      const R2: Raster = { ...R, data: R.data.map(change) };
      for (const w of [{ width: 5, height: 5 }, { width: 7, height: 7 }, { width: 9, height: 7 }]) {
        const a = computeDataCostVolume(L, R, 6, { kind: 'census', censusWindow: w });
        const b = computeDataCostVolume(L, R2, 6, { kind: 'census', censusWindow: w });
        expect(Array.from(b)).toEqual(Array.from(a));
        // SAD is not invariant: the change is visible to it.
        expect(Array.from(computeDataCostVolume(L, R2, 6, { kind: 'sad' }))).not.toEqual(Array.from(computeDataCostVolume(L, R, 6, { kind: 'sad' })));
      }
    }
  });

  test('label l is disparity minDisp + l: the volume of a range is the matching layers of the full volume', () => {
    const rand = rng(8);
    const L = randomImage(rand, 20, 6, 3, 256);
    const R = shifted(rand, L, 6);
    for (const kind of ['sad', 'sad+sgrad', 'census'] as const) {
      const full = computeDataCostVolume(L, R, 12, { kind });
      const part = computeDataCostVolume(L, R, 5, { kind, minDisp: 4 });
      for (let p = 0; p < 20 * 6; p++) for (let l = 0; l < 5; l++) expect(part[p * 5 + l]).toBe(full[p * 12 + 4 + l]);
      const m = new DataCostMatcher(L, R, { kind, minDisp: 4 });
      expect(Array.from(wtaFromMatcher(m, 5, 3))).toEqual(Array.from(wtaInit(part, 20, 6, 5, 3)));
    }
  });

  test('the grey of a raster made a row at a time is the grey of its 8-bit samples, and refuses what toIntensity8 refuses with its words (grey and colour, 8- and 16-bit, fractions)', () => {
    const rand = rng(41);
    for (let trial = 0; trial < 40; trial++) {
      const W = 1 + Math.floor(rand() * 12);
      const H = 1 + Math.floor(rand() * 8);
      const C = trial % 2 === 0 ? 1 : 3;
      const maxval = [255, 65535, 1, 1023][trial % 4];
      const data = Float32Array.from({ length: W * H * C }, () => (trial % 3 === 0 ? Math.floor(rand() * (maxval + 1)) : rand() * maxval));
      const r: Raster = { width: W, height: H, channels: C, data, maxval };
      expect({ trial, g: Array.from(censusGreyOfRaster(r)) }).toEqual({ trial, g: Array.from(censusGrey(toIntensity8(r))) });
      if (trial % 5 === 0) {
        const bad = { ...r, data: Float32Array.from(data) };
        bad.data[Math.floor(rand() * data.length)] = trial % 2 === 0 ? NaN : maxval * 2;
        let want = '';
        try { toIntensity8(bad, 'left image'); } catch (e) { want = (e as Error).message; }
        expect(want).not.toBe('');
        expect(() => censusGreyOfRaster(bad, 'left image')).toThrow(want);
      }
    }
  });

  test('codes given to a matcher (useCensusCodes): a mirrored, swapped matcher given the pair\'s codes mirrored, or as they are to read at the mirrored pixels, has the costs of its own codes (every window to 11×11, grey and colour, both borders); wrong codes are refused', () => {
    const rand = rng(23);
    for (let trial = 0; trial < 30; trial++) {
      const W = 3 + Math.floor(rand() * 14);
      const H = 1 + Math.floor(rand() * 9);
      const C = trial % 2 === 0 ? 1 : 3;
      const window = { width: 1 + 2 * Math.floor(rand() * 6), height: 1 + 2 * Math.floor(rand() * 6) };
      if (window.width * window.height < 2) window.width = 3;
      const ndisp = 1 + Math.floor(rand() * Math.min(6, W));
      const options = { kind: 'census' as const, censusWindow: window, border: trial % 3 === 0 ? 'clamp' as const : 'tau' as const };
      const first = new DataCostMatcher(randomImage(rand, W, H, C, 5), randomImage(rand, W, H, C, 5), options);
      const own = first.mirroredSwapped(options);
      const given = first.mirroredSwapped(options);
      const { left, right, words } = first.censusCodes();
      expect(words).toBe(censusWords(window));
      given.useCensusCodes(mirrorSamples(right, W, H, words), mirrorSamples(left, W, H, words));
      // Mirrored twice: the codes as they were.
      expect(mirrorSamples(mirrorSamples(left, W, H, words), W, H, words)).toEqual(left);
      expect({ trial, volume: Array.from(given.volume(ndisp)) }).toEqual({ trial, volume: Array.from(own.volume(ndisp)) });
      // Given the pair's codes as they are, read at the mirrored pixels: every pixel's costs at every run of labels, and then
      // (a mirrored copy made once) its volume.
      const reading = first.mirroredSwapped(options);
      reading.useCensusCodes(left, right, true);
      const want = own.volume(ndisp);
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          const l0 = Math.floor(rand() * ndisp);
          const count = 1 + Math.floor(rand() * (ndisp - l0));
          const got = new Int32Array(count + 1).fill(-1);
          reading.pixelCosts(x, y, l0, count, got, 1);
          expect({ trial, x, y, l0, costs: Array.from(got.subarray(1)) }).toEqual({ trial, x, y, l0, costs: Array.from(want.subarray((y * W + x) * ndisp + l0, (y * W + x) * ndisp + l0 + count)) });
        }
      }
      expect({ trial, volume: Array.from(reading.volume(ndisp)) }).toEqual({ trial, volume: Array.from(want) });
    }
    const im = randomImage(rng(2), 5, 4, 1, 256);
    const census = new DataCostMatcher(im, im, { kind: 'census' });
    const n = 5 * 4 * censusWords({ width: 7, height: 7 });
    expect(() => census.useCensusCodes(new Int32Array(n - 1), new Int32Array(n))).toThrow(/census codes of 39 and 40 words for a 5×4 pair of 2 words a pixel \(40\)/);
    expect(() => new DataCostMatcher(im, im, { kind: 'sad' }).useCensusCodes(new Int32Array(0), new Int32Array(0))).toThrow(/census codes given to a matcher of sad costs/);
  });

  test('default truncation is 13/24 of the code bits; bad windows are one-line errors naming censusWindow', () => {
    expect(defaultCensusTau({ width: 7, height: 7 })).toBe(26);
    expect(defaultCensusTau({ width: 9, height: 7 })).toBe(34);
    expect(parseCensusWindow('9x7')).toEqual({ width: 9, height: 7 });
    expect(parseCensusWindow('5')).toEqual({ width: 5, height: 5 });
    for (const bad of ['4x4', '7x4', '0', '0x0', '1x1', '33x3', 'x', '7x7x7', '-3x3', '7.5x7']) {
      expect(() => parseCensusWindow(bad)).toThrow(/^parseCensusWindow: censusWindow: got '[^\n]+$/);
    }
    const im = randomImage(rng(1), 6, 4, 1, 256);
    expect(() => computeDataCostVolume(im, im, 3, { kind: 'census', censusWindow: { width: 6, height: 6 } })).toThrow(/^census: censusWindow: /);
    expect(() => computeDataCostVolume(im, im, 3, { kind: 'census', minDisp: -1 })).toThrow(/^data costs: minDisp: got -1, /);
  });
});
