import { seededRandom as rng } from '../data/random';
import type { Raster } from '../data/raster';
import { computeEnergy, volumeOf } from '../data/energy';
import { buildStereoEnergy, computeDataCostVolume, computeSmoothnessWeights, costScale, smoothnessUnit } from '../costs';

function randomImage(rand: () => number, W: number, H: number, C: number, maxval: number): Raster {
  // Small steps between neighbours so both sides of the cue threshold occur.
  const data = new Float32Array(W * H * C);
  const step = Math.max(1, Math.round((maxval * 12) / 255));
  for (let i = 0; i < data.length; i++) {
    const prev = i >= C ? data[i - C] : Math.floor(rand() * maxval);
    data[i] = Math.min(maxval, Math.max(0, prev + Math.floor((rand() - 0.5) * 2 * step)));
  }
  return { width: W, height: H, channels: C, data, maxval };
}

describe('smoothness weights with the static cue', () => {
  test('equal a direct computation on random grey and RGB images', () => {
    const rand = rng(31);
    let cued = 0;
    let plain = 0;
    for (let trial = 0; trial < 60; trial++) {
      const W = 1 + Math.floor(rand() * 12);
      const H = 1 + Math.floor(rand() * 12);
      const C = rand() < 0.5 ? 1 : 3;
      const maxval = rand() < 0.8 ? 255 : 65535;
      const im = randomImage(rand, W, H, C, maxval);
      const lambda = [4, 2, 3, 10, 2.5, 0.75, 0][trial % 7];
      const cueThreshold = [5, 0, 8, 3.5, 255.5, 1e12][trial % 6];
      const cueFactor = [2, 1, 3, 1.5][Math.floor(trial / 4) % 4];
      const { wH, wV, scale } = computeSmoothnessWeights(im, { lambda, cueThreshold, cueFactor });
      expect(scale).toBe(costScale(lambda, cueFactor));
      const s8 = (x: number, y: number, c: number): number => Math.round((im.data[(y * W + x) * C + c] * 255) / maxval);
      const weight = (x0: number, y0: number, x1: number, y1: number): number => {
        let m = 0;
        for (let c = 0; c < C; c++) m = Math.max(m, Math.abs(s8(x0, y0, c) - s8(x1, y1, c)));
        if (m < cueThreshold && cueFactor !== 1) cued++;
        else plain++;
        return m < cueThreshold ? lambda * cueFactor * scale : lambda * scale;
      };
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          const p = y * W + x;
          // Exact: the scale makes λ·factor·scale an integer, so no rounding is needed here.
          expect(wH[p]).toBeCloseTo(x + 1 < W ? weight(x, y, x + 1, y) : 0, 9);
          expect(wV[p]).toBeCloseTo(y + 1 < H ? weight(x, y, x, y + 1) : 0, 9);
          expect(Number.isInteger(wH[p]) && Number.isInteger(wV[p])).toBe(true);
        }
      }
    }
    expect(cued).toBeGreaterThan(200);
    expect(plain).toBeGreaterThan(200);
  });

  test('cue factor 1 or threshold 0 gives λ everywhere (last column / row 0)', () => {
    const im = randomImage(rng(5), 5, 4, 3, 255);
    for (const opts of [{ lambda: 4, cueFactor: 1 }, { lambda: 4, cueThreshold: 0 }]) {
      const { wH, wV, scale } = computeSmoothnessWeights(im, opts);
      expect(scale).toBe(1);
      for (let y = 0; y < 4; y++) {
        for (let x = 0; x < 5; x++) {
          expect(wH[y * 5 + x]).toBe(x < 4 ? 4 : 0);
          expect(wV[y * 5 + x]).toBe(y < 3 ? 4 : 0);
        }
      }
    }
  });

  test('cost scale: smallest power of ten making λ and λ·factor integers', () => {
    expect(costScale(4, 2)).toBe(1);
    expect(costScale(10, 1)).toBe(1);
    expect(costScale(2.5, 2)).toBe(10);
    expect(costScale(2.5, 1.5)).toBe(100);
    expect(costScale(0.125, 1)).toBe(1000);
    expect(costScale(2.3, 2)).toBe(10);
    expect(() => costScale(0.1234, 1)).toThrow(/^smoothness weights: lambda: got 0.1234, expected a number of at most 3 decimals$/);
    expect(() => costScale(0.5, 1.0001)).toThrow(/^smoothness weights: cueFactor: /);
  });

  test('bad options name the option', () => {
    const im = randomImage(rng(1), 3, 3, 1, 255);
    for (const lambda of [-1, NaN, Infinity]) expect(() => computeSmoothnessWeights(im, { lambda })).toThrow(/^smoothness weights: lambda: /);
    expect(() => computeSmoothnessWeights(im, { lambda: 1, cueThreshold: -1 })).toThrow(/^smoothness weights: cueThreshold: /);
    expect(() => computeSmoothnessWeights(im, { lambda: 1, cueFactor: 0.5 })).toThrow(/^smoothness weights: cueFactor: /);
    expect(() => computeSmoothnessWeights(im, { lambda: 1, scale: 1.5 })).toThrow(/cost scale/);
    // Option errors, as the library's are: a RangeError for a number outside the range, a TypeError for a value of another type.
    expect(() => computeSmoothnessWeights(im, { lambda: -1 })).toThrow(RangeError);
    expect(() => computeSmoothnessWeights(im, { lambda: '5' as unknown as number })).toThrow(TypeError);
    expect(() => computeDataCostVolume(im, im, 2, { tau: 'x' as unknown as number })).toThrow(TypeError);
  });
});

describe('stereo energy terms', () => {
  test('data and weights carry the same cost scale, so the energy is the scaled energy', () => {
    const rand = rng(77);
    const L = randomImage(rand, 9, 7, 3, 255);
    const R = randomImage(rand, 9, 7, 3, 255);
    const e = buildStereoEnergy(L, R, { ndisp: 5, lambda: 2.5, cueFactor: 2, kind: 'sad+sgrad', smoothness: 'linear', truncation: 2 });
    expect(e.scale).toBe(10);
    // λ's unit for sad+sgrad (smoothnessUnit): the data term carries den, the weights num.
    const { num, den } = smoothnessUnit('sad+sgrad');
    const unscaled = computeDataCostVolume(L, R, 5, { kind: 'sad+sgrad' });
    expect(Array.from(volumeOf(e))).toEqual(Array.from(unscaled, (v) => v * 10 * den));
    const w = computeSmoothnessWeights(L, { lambda: 2.5 });
    expect(Array.from(e.wH)).toEqual(Array.from(w.wH, (v) => v * num));
    // Energy of a random labeling: 10·(den·Σ D + num·Σ 2.5·factor·V), exactly.
    const labels = Array.from({ length: 63 }, () => Math.floor(rand() * 5));
    const en = computeEnergy(e, labels);
    let want = 0;
    for (let p = 0; p < 63; p++) want += unscaled[p * 5 + labels[p]];
    let smooth = 0;
    for (let p = 0; p < 63; p++) {
      const x = p % 9;
      if (x < 8) smooth += (w.wH[p] / 10) * Math.min(2, Math.abs(labels[p] - labels[p + 1]));
      if (p + 9 < 63) smooth += (w.wV[p] / 10) * Math.min(2, Math.abs(labels[p] - labels[p + 9]));
    }
    expect(en.total).toBeCloseTo(10 * (den * want + num * smooth), 6);
  });

  test('bad energy options name the option', () => {
    const im = randomImage(rng(2), 4, 4, 1, 255);
    const base = { ndisp: 3, lambda: 1, smoothness: 'linear' as const, truncation: 2 };
    expect(() => buildStereoEnergy(im, im, { ...base, truncation: -1 })).toThrow(/^stereo energy: truncation: /);
    expect(() => buildStereoEnergy(im, im, { ...base, ndisp: 0 })).toThrow(/^data costs: ndisp: /);
    expect(() => buildStereoEnergy(im, im, { ...base, smoothness: 'cubic' as 'linear' })).toThrow(/^stereo energy: smoothness: /);
  });
});
