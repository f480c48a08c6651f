import { seededRandom as rng } from '../data/random';
import { randomRaster } from './support/randomRaster';
import * as intensityModule from '../costs/intensity';
import { mirrorSamples } from '../data/raster';
import type { Raster } from '../data/raster';
import {
  DataCostMatcher,
  computeDataCostSlice,
  computeDataCostVolume,
  defaultTau,
  maxRawCost,
  toIntensity8,
  type BorderRule,
  type CostKind,
  parseCensusWindow,
} from '../costs';
import { bandedTerm } from '../costs/bandedTerm';
import { BandedMoveScratch } from '../expansion/bandedMoves';

/**
 * A random pair: the right image is the left shifted by a random disparity
 * plus noise, so costs span both the truncated and the untruncated range.
 */
function randomPair(rand: () => number, W: number, H: number, C: number, maxval: number): [Raster, Raster] {
  const spread = rand() < 0.5 ? maxval : Math.max(1, Math.floor(maxval / 8));
  const left = new Float32Array(W * H * C);
  for (let i = 0; i < left.length; i++) left[i] = Math.floor(rand() * (spread + 1));
  const right = new Float32Array(W * H * C);
  const shift = Math.floor(rand() * 4);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const xs = Math.min(W - 1, x + shift);
      for (let c = 0; c < C; c++) {
        const noise = Math.floor((rand() - 0.5) * spread * 0.2);
        right[(y * W + x) * C + c] = Math.min(maxval, Math.max(0, left[(y * W + xs) * C + c] + noise));
      }
    }
  }
  return [
    { width: W, height: H, channels: C, data: left, maxval },
    { width: W, height: H, channels: C, data: right, maxval },
  ];
}

/** Direct formula, pixel by pixel, straight from the raster samples. */
function naiveCost(
  L: Raster,
  R: Raster,
  x: number,
  y: number,
  d: number,
  kind: CostKind,
  tau: number,
  scale: number,
  border: BorderRule,
): number {
  const W = L.width;
  const H = L.height;
  const C = L.channels;
  const s8 = (im: Raster, xx: number, yy: number, c: number): number =>
    Math.min(255, Math.max(0, Math.round((im.data[(yy * W + xx) * C + c] * 255) / im.maxval)));
  const dx = (im: Raster, xx: number, yy: number, c: number): number => (xx + 1 < W ? s8(im, xx + 1, yy, c) - s8(im, xx, yy, c) : 0);
  const dy = (im: Raster, xx: number, yy: number, c: number): number => (yy + 1 < H ? s8(im, xx, yy + 1, c) - s8(im, xx, yy, c) : 0);
  const cap = Math.round(tau * scale);
  let xr = x - d;
  if (xr < 0) {
    if (border === 'tau') return cap;
    xr = 0;
  }
  let raw = 0;
  for (let c = 0; c < C; c++) {
    const diff = s8(L, x, y, c) - s8(R, xr, y, c);
    if (kind === 'ssd') raw += diff * diff;
    else raw += Math.abs(diff);
    if (kind === 'sad+sgrad') raw += Math.abs(dx(L, x, y, c) - dx(R, xr, y, c)) + Math.abs(dy(L, x, y, c) - dy(R, xr, y, c));
  }
  return Math.min(raw * scale, cap);
}

const KINDS: CostKind[] = ['sad', 'ssd', 'sad+sgrad'];

describe('8-bit intensities', () => {
  test('rounds value·255/maxval for 8-bit, 16-bit and float rasters', () => {
    const r16: Raster = { width: 3, height: 1, channels: 1, data: new Float32Array([0, 257 * 100 + 128, 65535]), maxval: 65535 };
    expect(Array.from(toIntensity8(r16).data)).toEqual([0, Math.round(((257 * 100 + 128) * 255) / 65535), 255]);
    // A float map within half an 8-bit step of 0..maxval rounds in; beyond, it is refused, never clamped.
    const rf: Raster = { width: 4, height: 1, channels: 1, data: new Float32Array([0.5, 1.0015, -0.0015, 0.002]), maxval: 1 };
    expect(Array.from(toIntensity8(rf).data)).toEqual([128, 255, 0, 1]);
    expect(() => toIntensity8({ ...rf, data: new Float32Array([0.5, 1.2, 0, 0]) }, 'f.pfm')).toThrow(/^f\.pfm: sample at \(1,0\) is 1\.2\d*, outside 0\.\.1/);
    expect(() => toIntensity8({ ...rf, data: new Float32Array([0.5, 0, -0.1, 0]) }, 'f.pfm')).toThrow(/sample at \(2,0\) is -0\.1\d*, outside/);
    // Every 16-bit value against Math.round.
    const all = new Float32Array(65536).map((_, i) => i);
    const q = toIntensity8({ width: 65536, height: 1, channels: 1, data: all, maxval: 65535 }).data;
    // One expect over the values that differ (none): 65536 expect calls would cost seconds.
    const wrong: Array<[number, number, number]> = [];
    for (let v = 0; v < 65536; v++) if (q[v] !== Math.round((v * 255) / 65535)) wrong.push([v, q[v], Math.round((v * 255) / 65535)]);
    expect(q).toHaveLength(65536);
    expect(wrong).toEqual([]);
  });

  test('rejects malformed rasters with a message naming the input', () => {
    const bad: Raster = { width: 2, height: 2, channels: 3, data: new Float32Array(5), maxval: 255 };
    expect(() => toIntensity8(bad, 'left.png')).toThrow(/^left\.png: 5 samples, expected 12/);
    const nan: Raster = { width: 1, height: 1, channels: 1, data: new Float32Array([NaN]), maxval: 255 };
    expect(() => toIntensity8(nan, 'x.pfm')).toThrow(/x\.pfm: sample at \(0,0\) is NaN/);
    // The first non-finite sample names its pixel: the green sample of (2, 1) in a 3×2 RGB raster.
    const inf: Raster = { width: 3, height: 2, channels: 3, data: new Float32Array(18).fill(7), maxval: 255 };
    inf.data[(1 * 3 + 2) * 3 + 1] = -Infinity;
    inf.data[17] = NaN;
    expect(() => toIntensity8(inf, 'y.pfm')).toThrow(/y\.pfm: sample at \(2,1\) is -Infinity/);
    const ch: Raster = { width: 1, height: 1, channels: 2, data: new Float32Array(2), maxval: 255 };
    expect(() => toIntensity8(ch, 'a')).toThrow(/2 channels/);
  });

  test('an 8-bit pair\'s matcher converts each image when it is first read, and only that one (a strip\'s weights read one image); its mirrored matcher likewise', () => {
    const rand = rng(5);
    const [L, R] = randomPair(rand, 7, 4, 3, 255);
    const convert = jest.spyOn(intensityModule, 'toIntensity8');
    try {
      const m = new DataCostMatcher(L, R, { kind: 'census' });
      const mirrored = m.mirroredSwapped({ kind: 'census' });
      expect(convert).not.toHaveBeenCalled();
      // The mirrored pair's right image is the left one mirrored: reading it converts the left image alone.
      expect(Array.from(mirrored.rightIntensity.data)).toEqual(Array.from(mirrorSamples(toIntensity8(L).data, 7, 4, 3)));
      // The matcher's conversion, then this test's own.
      expect(convert.mock.calls.map((c) => c[1])).toEqual(['left image', undefined]);
      convert.mockClear();
      expect(m.leftIntensity).toBe(m.leftIntensity);
      expect(convert).not.toHaveBeenCalled(); // converted once, above
      expect(Array.from(m.rightIntensity.data)).toEqual(Array.from(toIntensity8(R).data));
      expect(convert.mock.calls.map((c) => c[1])).toEqual(['right image', undefined]);
    } finally {
      convert.mockRestore();
    }
  });
});

describe('data costs against the direct formula', () => {
  test('every kind, grey and RGB, 8- and 16-bit, both border rules, truncation and scale', () => {
    const rand = rng(1234);
    let truncated = 0;
    let below = 0;
    let borderPixels = 0;
    for (let trial = 0; trial < 60; trial++) {
      const W = 1 + Math.floor(rand() * 12);
      const H = 1 + Math.floor(rand() * 7);
      const C = rand() < 0.5 ? 1 : 3;
      const maxval = rand() < 0.8 ? 255 : 65535;
      const [L, R] = randomPair(rand, W, H, C, maxval);
      const kind = KINDS[trial % 3];
      const border: BorderRule = rand() < 0.5 ? 'tau' : 'clamp';
      // Sometimes the default τ, sometimes a small or fractional one to force truncation.
      const tau = rand() < 0.3 ? undefined : rand() < 0.5 ? Math.floor(rand() * 60) : rand() * 200;
      const scale = rand() < 0.5 ? 1 : [10, 100, 7][Math.floor(rand() * 3)];
      const ndisp = 1 + Math.floor(rand() * (W + 3));
      const opts = { kind, tau, scale, border };
      const vol = computeDataCostVolume(L, R, ndisp, opts);
      expect(vol.length).toBe(W * H * ndisp);
      const effTau = tau ?? defaultTau(kind, C);
      const cap = Math.round(effTau * scale);
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          for (let d = 0; d < ndisp; d++) {
            const want = naiveCost(L, R, x, y, d, kind, effTau, scale, border);
            const got = vol[(y * W + x) * ndisp + d];
            if (got !== want) throw new Error(`trial ${trial} ${kind} ${border} (${x},${y}) d=${d}: got ${got}, want ${want}`);
            if (x - d < 0) borderPixels++;
            else if (want === cap) truncated++;
            else below++;
          }
        }
      }
    }
    // The trials really exercised all three regimes.
    expect(truncated).toBeGreaterThan(100);
    expect(below).toBeGreaterThan(100);
    expect(borderPixels).toBeGreaterThan(100);
  });

  test('a slice equals the volume layer, into a fresh or a reused buffer', () => {
    const rand = rng(99);
    for (let trial = 0; trial < 30; trial++) {
      const W = 1 + Math.floor(rand() * 15);
      const H = 1 + Math.floor(rand() * 9);
      const C = rand() < 0.5 ? 1 : 3;
      const [L, R] = randomPair(rand, W, H, C, 255);
      const opts = { kind: KINDS[trial % 3], border: (trial % 2 ? 'tau' : 'clamp') as BorderRule, scale: 1 + (trial % 4) };
      const ndisp = 1 + Math.floor(rand() * (W + 2));
      const vol = computeDataCostVolume(L, R, ndisp, opts);
      const matcher = new DataCostMatcher(L, R, opts);
      const buf = new Int32Array(W * H).fill(-7);
      for (let d = 0; d < ndisp; d++) {
        const a = computeDataCostSlice(L, R, d, opts);
        const b = matcher.slice(d, buf);
        expect(b).toBe(buf);
        const layer = Array.from({ length: W * H }, (_, p) => vol[p * ndisp + d]);
        expect([trial, d, Array.from(a.subarray(0, W * H))]).toEqual([trial, d, layer]);
        expect([trial, d, Array.from(b.subarray(0, W * H))]).toEqual([trial, d, layer]);
      }
    }
  });

  test('banded costs (coarse to fine) equal the volume at every label of every band: every kind, both borders, census codes of one to three words, a disparity offset, rows from any first row', () => {
    const rand = rng(123);
    const kinds: CostKind[] = ['census', 'sad', 'ssd', 'sad+sgrad'];
    const windows = ['3x3', '5x5', '7x7', '9x7', '9x9'];
    let borderCosts = 0;
    const scratch = new BandedMoveScratch();
    for (let trial = 0; trial < 60; trial++) {
      const W = 2 + Math.floor(rand() * 14);
      const H = 1 + Math.floor(rand() * 8);
      const C = rand() < 0.5 ? 1 : 3;
      const [L, R] = randomPair(rand, W, H, C, 255);
      const kind = kinds[trial % kinds.length];
      const opts = { kind, border: (rand() < 0.5 ? 'tau' : 'clamp') as BorderRule, scale: 1 + Math.floor(rand() * 3), minDisp: Math.floor(rand() * 4), censusWindow: parseCensusWindow(windows[Math.floor(rand() * windows.length)]) };
      const ndisp = 1 + Math.floor(rand() * (W + 2));
      const vol = computeDataCostVolume(L, R, ndisp, opts);
      const matcher = new DataCostMatcher(L, R, opts);
      // Bands of rows firstRow .. H − 1, each a random run of labels.
      const firstRow = Math.floor(rand() * H);
      const n = (H - firstRow) * W;
      const lo = new Uint16Array(n);
      const hi = new Uint16Array(n);
      for (let p = 0; p < n; p++) {
        lo[p] = Math.floor(rand() * ndisp);
        hi[p] = Math.min(ndisp - 1, lo[p] + Math.floor(rand() * 6));
      }
      const band = bandedTerm(matcher, lo, hi, firstRow);
      // The same term in a thread's scratch, which every trial's term reuses (sizes up and down): the same arrays' values.
      const kept = bandedTerm(matcher, lo, hi, firstRow, scratch);
      expect([Array.from(kept.offset), Array.from(kept.costs), Array.from(kept.lo)]).toEqual([Array.from(band.offset), Array.from(band.costs), Array.from(band.lo)]);
      expect(kept.costs.buffer).toBe(scratch.costs(0).buffer);
      const got: number[] = [];
      const want: number[] = [];
      for (let p = 0; p < n; p++) {
        const q = firstRow * W + p;
        for (let l = lo[p]; l <= hi[p]; l++) {
          got.push(band.costs[band.offset[p] + l - lo[p]]);
          want.push(vol[q * ndisp + l]);
          if ((q % W) < l + opts.minDisp) borderCosts++;
        }
      }
      expect([trial, kind, got]).toEqual([trial, kind, want]);
    }
    expect(borderCosts).toBeGreaterThan(50);
  });

  test('the x−d < 0 rules: τ for no evidence, or column 0 of the right image', () => {
    // One row: left 10,20,30; right 40,50,60. At d = 2, x = 0 and 1 have no match.
    const L: Raster = { width: 3, height: 1, channels: 1, data: new Float32Array([10, 20, 30]), maxval: 255 };
    const R: Raster = { width: 3, height: 1, channels: 1, data: new Float32Array([40, 50, 60]), maxval: 255 };
    expect(Array.from(computeDataCostSlice(L, R, 2, { kind: 'sad', tau: 100, border: 'tau' }))).toEqual([100, 100, 10]);
    expect(Array.from(computeDataCostSlice(L, R, 2, { kind: 'sad', tau: 100, border: 'clamp' }))).toEqual([30, 20, 10]);
    expect(Array.from(computeDataCostSlice(L, R, 2, { kind: 'sad', tau: 25, border: 'clamp' }))).toEqual([25, 20, 10]);
    // Default is clamp; a disparity beyond the width leaves no pixel with a match.
    expect(Array.from(computeDataCostSlice(L, R, 5, { kind: 'sad', tau: 100 }))).toEqual([30, 20, 10]);
    expect(Array.from(computeDataCostSlice(L, R, 5, { kind: 'ssd', tau: 10000, border: 'tau' }))).toEqual([10000, 10000, 10000]);
  });

  test('gradient term uses forward differences, zero in the last column and row', () => {
    // 2×2 grey; at d = 0 the SAD part is |L−R| and the gradient part compares differences.
    const L: Raster = { width: 2, height: 2, channels: 1, data: new Float32Array([0, 10, 4, 8]), maxval: 255 };
    const R: Raster = { width: 2, height: 2, channels: 1, data: new Float32Array([1, 1, 1, 1]), maxval: 255 };
    // (0,0): |0−1| + |10−0| + |4−0| = 15; (1,0): |10−1| + 0 + |−2−0| = 11;
    // (0,1): |4−1| + |4−0| + 0 = 7;  (1,1): |8−1| + 0 + 0 = 7.
    expect(Array.from(computeDataCostSlice(L, R, 0, { kind: 'sad+sgrad', tau: 1000 }))).toEqual([15, 11, 7, 7]);
  });
});

describe('data cost options and inputs', () => {
  const img = (W: number, H: number, C: number): Raster => ({ width: W, height: H, channels: C, data: new Float32Array(W * H * C), maxval: 255 });

  test('bad options give one-line errors naming the option', () => {
    const a = img(4, 3, 1);
    for (const tau of [-1, NaN, Infinity]) {
      expect(() => computeDataCostVolume(a, a, 4, { tau })).toThrow(/^data costs: tau: /);
    }
    expect(() => computeDataCostVolume(a, a, 4, { kind: 'bogus' as CostKind })).toThrow(/^data costs: kind: got 'bogus' \(a string\), expected one of /);
    expect(() => computeDataCostVolume(a, a, 0)).toThrow(/^data costs: ndisp: /);
    expect(() => computeDataCostVolume(a, a, 2.5)).toThrow(/^data costs: ndisp: /);
    expect(() => computeDataCostVolume(a, a, 4, { scale: 0 })).toThrow(/cost scale/);
    expect(() => computeDataCostVolume(a, a, 4, { border: 'wrap' as BorderRule })).toThrow(/^data costs: border: /);
    expect(() => computeDataCostVolume(a, a, 4, { tau: 2 ** 31 })).toThrow(/^data costs: tau: .*32-bit/);
    // SSD over RGB reaches 195075 before truncation; times 20000 it would overflow int32.
    expect(() => computeDataCostVolume(img(4, 3, 3), img(4, 3, 3), 4, { kind: 'ssd', scale: 20000 })).toThrow(/cost scale 20000 is too large/);
    expect(maxRawCost('sad+sgrad', 3)).toBe(3 * (255 + 510 + 510));
    expect(() => computeDataCostSlice(a, a, -1)).toThrow(/disparity must be an integer/);
    expect(() => computeDataCostSlice(a, a, 0, {}, new Int32Array(5))).toThrow(/buffer has 5 entries, expected 12/);
    let message = '';
    try {
      computeDataCostVolume(a, a, 4, { tau: -1 });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/^data costs: tau: [^\n]+$/);
  });

  test('size or channel mismatch names both sizes', () => {
    expect(() => computeDataCostVolume(img(4, 3, 1), img(5, 3, 1), 2)).toThrow(/left image is 4×3×1 but right image is 5×3×1/);
    expect(() => computeDataCostVolume(img(4, 3, 3), img(4, 3, 1), 2)).toThrow(/left image is 4×3×3 but right image is 4×3×1/);
  });

  test('default τ per kind scales with the channel count', () => {
    expect(defaultTau('sad', 1)).toBe(20);
    expect(defaultTau('sad', 3)).toBe(60);
    expect(defaultTau('ssd', 3)).toBe(1200);
    expect(defaultTau('sad+sgrad', 3)).toBe(120);
  });
});

test('one raster given as both images is converted once: both intensities are the same image, the costs those of two copies', () => {
  const rand = rng(77);
  for (let trial = 0; trial < 6; trial++) {
    const r = randomRaster(3 + Math.floor(rand() * 12), 2 + Math.floor(rand() * 8), trial % 2 === 0 ? 1 : 3, 255, rand);
    const one = new DataCostMatcher(r, r, { kind: 'census', censusWindow: { width: 3, height: 3 } });
    expect(one.rightIntensity).toBe(one.leftIntensity);
    const copy = { ...r, data: Float32Array.from(r.data) };
    const two = new DataCostMatcher(r, copy, { kind: 'census', censusWindow: { width: 3, height: 3 } });
    expect(two.rightIntensity).not.toBe(two.leftIntensity);
    expect(Array.from(one.rightIntensity.data)).toEqual(Array.from(two.rightIntensity.data));
  }
});
