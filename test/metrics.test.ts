import { seededRandom } from '../data/random';
import { evaluateDisparity, errorImage, colorizeDisparity } from '../data/metrics';

describe('evaluateDisparity', () => {
  test('hand-computed example: regions, thresholds, unknown ground truth, average and RMS error', () => {
    // 3×2: errors 0, 0.5, 1, 2, unknown, 4
    const gt = new Float32Array([1, 2, 3, 4, Infinity, 6]);
    const d = [1, 2.5, 4, 6, 9, 2];
    const nonocc = new Uint8Array([1, 1, 1, 0, 1, 0]);
    const e = evaluateDisparity(d, gt, 3, 2, { thresholds: [0.5, 1, 3], masks: { nonocc } });
    const known = e.regions.find((r) => r.region === 'known')!;
    expect(known.pixels).toBe(5);
    // > 0.5: 1, 2, 4 → 3/5; > 1: 2, 4 → 2/5; > 3: 4 → 1/5
    expect(known.bad).toEqual([60, 40, 20]);
    expect(known.avgError).toBeCloseTo((0 + 0.5 + 1 + 2 + 4) / 5, 12);
    expect(known.rms).toBeCloseTo(Math.sqrt((0 + 0.25 + 1 + 4 + 16) / 5), 12);
    const no = e.regions.find((r) => r.region === 'nonocc')!;
    expect(no.pixels).toBe(3); // the unknown pixel is excluded even though the mask has it
    expect(no.bad).toEqual([100 / 3, 0, 0]);
  });

  test('properties over random maps: 0 for the ground truth, monotone in the threshold, masks never count more pixels', () => {
    const rand = seededRandom(17);
    for (let t = 0; t < 50; t++) {
      const W = 1 + Math.floor(rand() * 30);
      const H = 1 + Math.floor(rand() * 20);
      const gt = new Float32Array(W * H).map(() => (rand() < 0.1 ? Infinity : rand() * 40));
      const d = Float32Array.from(gt, (g) => (Number.isFinite(g) ? g + (rand() - 0.5) * 8 : rand() * 40));
      const masks = { nonocc: new Uint8Array(W * H).map(() => (rand() < 0.7 ? 1 : 0)), disc: new Uint8Array(W * H).map(() => (rand() < 0.2 ? 1 : 0)) };
      const thresholds = [0.25, 0.5, 1, 2, 4];
      const e = evaluateDisparity(d, gt, W, H, { thresholds, masks });
      const known = e.regions[0];
      for (const r of e.regions) {
        expect(r.pixels).toBeLessThanOrEqual(known.pixels);
        for (let i = 1; i < thresholds.length; i++) expect(r.bad[i]).toBeLessThanOrEqual(r.bad[i - 1]);
        expect(r.rms).toBeGreaterThanOrEqual(r.avgError - 1e-9);
      }
      const exact = evaluateDisparity(gt, gt, W, H, { thresholds, masks });
      for (const r of exact.regions) expect(r.bad.every((b) => b === 0)).toBe(true);
    }
  });

  test('bad inputs are named', () => {
    const gt = new Float32Array(4);
    expect(() => evaluateDisparity([0, 0, 0], gt, 2, 2)).toThrow(/3 pixels/);
    expect(() => evaluateDisparity([0, 0, 0, 0], gt, 2, 2, { thresholds: [] })).toThrow(/^evaluate: thresholds: got \[\], expected at least one threshold$/);
    expect(() => evaluateDisparity([0, 0, 0, 0], gt, 2, 2, { thresholds: [NaN] })).toThrow(/^evaluate: thresholds: got NaN, expected finite numbers ≥ 0$/);
    expect(() => evaluateDisparity([0, 0, 0, 0], gt, 2, 2, { regions: ['disc'] })).toThrow(/no disc mask/);
  });
});

test('error image: bad pixels red, others grey, unknown dimmed; colour map black for unknown', () => {
  const left = { width: 2, height: 2, channels: 1, data: new Float32Array([100, 100, 100, 100]), maxval: 255 };
  const img = errorImage(left, [0, 5, 0, 0], new Float32Array([0, 0, Infinity, 0.5]), 1);
  expect(Array.from(img.data)).toEqual([100, 100, 100, 255, 0, 0, 50, 50, 50, 100, 100, 100]);
  const c = colorizeDisparity([0, 10, Infinity, 5], 2, 2, 10);
  expect(Array.from(c.data.slice(6, 9))).toEqual([0, 0, 0]);
  expect(c.data[0] + c.data[1] + c.data[2]).toBeGreaterThan(0);
});
