/**
 * The left–right check's two views matched as one energy of the views
 * stacked (costs/energyTerms.ts stackEnergies, stereo/match.ts). Oracle: the
 * two views matched apart, each a match() of its own pair, then checked. With
 * the same label order and every move run (sequential order, no skipping,
 * fixed cycles) each joint move is the two views' moves side by side, so the
 * maps, the marked pixels and the energies (their sum) must be equal exactly,
 * whatever the costs, the init or the backend. The banded kernels on their
 * own (census codes, the device WTA, the sad+sgrad gradients) are checked
 * against the host's per-band results.
 */
import { generateSynthetic } from '../data/synthetic';
import { seededRandom } from '../data/random';
import { bandHeightOf } from '../data/energy';
import { mirrorRaster, mirrorSamples, type Raster } from '../data/raster';
import { buildStereoEnergy, mirroredSwappedEnergy, stackEnergies } from '../costs';
import { match, type MatchOptions } from '../stereo/match';
import { leftRightCheck, mirrorRows } from '../stereo/leftRightCheck';
import { censusHalves, censusPlanesOnBackend, hostCensusPlanes } from '../gpu/costs/censusKernel';
import { medianFill } from '../stereo/medianFill';
import { createGpuContext } from '../gpu/runtime/context';
import { censusGrey, censusTransform } from '../costs/census';
import { toIntensity8 } from '../costs/intensity';
import { scaled } from './support/testScope';

/** The pair mirrored and swapped (mirror(right), mirror(left)): its left-view disparity, mirrored back, is the right view's (right pixel x matches left pixel x + d). */
const mirroredSwappedPair = (left: Raster, right: Raster): [Raster, Raster] => [mirrorRaster(right), mirrorRaster(left)];

/** The check done the old way: each view matched apart, then compared. */
async function apart(left: Raster, right: Raster, o: MatchOptions): Promise<{ disparity: Uint16Array; inconsistent: number; energy: number }> {
  const a = await match(left, right, { ...o, lrCheck: false });
  const [ml, mr] = mirroredSwappedPair(left, right);
  const b = await match(ml, mr, { ...o, lrCheck: false, initialLabels: undefined });
  const checked = leftRightCheck(a.disparity, mirrorRows(b.disparity, a.width, a.height), a.width, a.height, o.lrFill ?? true);
  const disparity = (o.lrFill ?? true) && (o.lrMedian ?? true) ? medianFill(checked.disparity, checked.marked, left, 1) : checked.disparity;
  return { disparity, inconsistent: checked.invalid, energy: a.finalEnergy.total + b.finalEnergy.total };
}

const EXACT: Partial<MatchOptions> = { order: 'sequential', skipUnchanged: false, lrCheck: true };

describe('the left–right check\'s views matched as one energy', () => {
  const cases = scaled(12, 6);
  test.each(Array.from({ length: cases }, (_, i) => i))('random pair %i on BK: the maps, marked pixels and energies of the views matched apart', async (i) => {
    const rng = seededRandom(100 + i);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rng() * xs.length)];
    const { scene } = generateSynthetic({ width: 24 + Math.floor(rng() * 24), height: 16 + Math.floor(rng() * 14), ndisp: 6 + Math.floor(rng() * 4), seed: 7 + i });
    const o: MatchOptions = {
      ...EXACT,
      ndisp: 6 + (i % 4),
      backend: 'bk',
      cost: pick(['census', 'sad', 'sad+sgrad'] as const),
      costs: pick(['volume', 'auto'] as const),
      init: pick(['wta', 'zero'] as const),
      cycles: 1 + (i % 3),
      lrFill: i % 2 === 0,
      lrMedian: i % 4 !== 2,
      ...(i % 3 === 0 ? { censusWindow: { width: 5, height: 3 } } : {}),
    };
    const joint = await match(scene.left, scene.right, o);
    const ref = await apart(scene.left, scene.right, o);
    expect(Array.from(joint.disparity)).toEqual(Array.from(ref.disparity));
    expect(joint.inconsistentPixels).toBe(ref.inconsistent);
    expect(joint.finalEnergy.total).toBe(ref.energy);
    expect(joint.times.checkMs).toBeGreaterThanOrEqual(0);
  });

  test('a given start map is the left view\'s; the right view starts from its WTA; checkpoints get the left view\'s labels', async () => {
    const { scene } = generateSynthetic({ width: 30, height: 20, ndisp: 6, seed: 3 });
    const given = new Uint16Array(30 * 20).map((_, p) => p % 6);
    const seen: number[] = [];
    const o: MatchOptions = { ...EXACT, ndisp: 6, backend: 'bk', cycles: 2, initialLabels: given, onCycle: (_r, labels) => { seen.push(labels.length); } };
    const joint = await match(scene.left, scene.right, o);
    const a = await match(scene.left, scene.right, { ...o, lrCheck: false, onCycle: undefined });
    const [ml, mr] = mirroredSwappedPair(scene.left, scene.right);
    const b = await match(ml, mr, { ...o, lrCheck: false, initialLabels: undefined, onCycle: undefined });
    expect(joint.initialEnergy.total).toBe(a.initialEnergy.total + b.initialEnergy.total);
    expect(joint.finalEnergy.total).toBe(a.finalEnergy.total + b.finalEnergy.total);
    expect(seen).toEqual([600, 600]);
  });

  test('on the kernels (gpu.js\'s CPU backend, costs and WTA on the device): the views matched apart on BK', async () => {
    const { scene } = generateSynthetic({ width: 20, height: 16, ndisp: 5, seed: 11 });
    for (const cost of ['census', 'sad+sgrad'] as const) {
      const o: MatchOptions = { ...EXACT, ndisp: 5, cost, costs: 'on-demand', cycles: 1, censusWindow: { width: 3, height: 5 } };
      const joint = await match(scene.left, scene.right, { ...o, backend: 'gpujs-cpu' });
      const ref = await apart(scene.left, scene.right, { ...o, backend: 'bk', costs: 'volume' });
      expect(Array.from(joint.disparity)).toEqual(Array.from(ref.disparity));
      expect(joint.finalEnergy.total).toBe(ref.energy);
    }
  });
});

test('mirrorSamples reverses each row pixel by pixel, channels in order: the direct formula over random sizes, channels and array types', () => {
  const rng = seededRandom(77);
  for (let t = 0; t < 60; t++) {
    const W = 1 + Math.floor(rng() * 9);
    const H = 1 + Math.floor(rng() * 5);
    const C = [1, 3, 2][t % 3];
    const make = [(n: number) => new Float32Array(n), (n: number) => new Int32Array(n), (n: number) => new Uint16Array(n)][Math.floor(t / 3) % 3];
    const data = make(W * H * C).map(() => Math.floor(rng() * 1000));
    const before = data.slice();
    const out = mirrorSamples(data, W, H, C);
    expect(out.constructor).toBe(data.constructor);
    for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) for (let c = 0; c < C; c++) expect(out[(y * W + (W - 1 - x)) * C + c]).toBe(data[(y * W + x) * C + c]);
    // The input is left as it was.
    expect(Array.from(data)).toEqual(Array.from(before));
  }
});

describe('stacked energies and bands', () => {
  const { scene } = generateSynthetic({ width: 26, height: 18, ndisp: 6, seed: 5 });
  const [ml, mr] = mirroredSwappedPair(scene.left, scene.right);
  const options = { ndisp: 6, lambda: 5, smoothness: 'linear' as const, truncation: 2, kind: 'census' as const };

  test('the stack is the views one after the other, in bands of one view\'s rows, with no edge between them', () => {
    for (const onDemand of [false, true]) {
      const a = buildStereoEnergy(scene.left, scene.right, { ...options, onDemand });
      const b = buildStereoEnergy(ml, mr, { ...options, onDemand });
      const s = stackEnergies([a, b]);
      expect([s.width, s.height, s.labels, s.bandHeight, bandHeightOf(s)]).toEqual([26, 36, 6, 18, 18]);
      expect(Array.from(s.wV.subarray(17 * 26, 18 * 26))).toEqual(new Array(26).fill(0));
      expect(Array.from(s.wH)).toEqual([...a.wH, ...b.wH]);
      if (s.data.kind === 'volume' && a.data.kind === 'volume' && b.data.kind === 'volume') expect(Array.from(s.data.costs)).toEqual([...a.data.costs, ...b.data.costs]);
      if (s.data.kind === 'images' && a.data.kind === 'images' && b.data.kind === 'images') expect(Array.from(s.data.right.data)).toEqual([...a.data.right.data, ...b.data.right.data]);
    }
    const other = buildStereoEnergy(scene.left, scene.right, { ...options, ndisp: 5 });
    expect(() => stackEnergies([buildStereoEnergy(scene.left, scene.right, options), other])).toThrow(/different shapes or settings/);
    expect(() => bandHeightOf({ height: 36, bandHeight: 5 })).toThrow(/do not divide/);
  });

  test('the right view\'s energy from the left view\'s samples, rows reversed: that of the mirrored, swapped rasters, for every cost kind, grey and RGB', () => {
    const rng = seededRandom(21);
    for (let t = 0; t < 12; t++) {
      const W = 5 + Math.floor(rng() * 20);
      const H = 3 + Math.floor(rng() * 8);
      const C = t % 2 === 0 ? 1 : 3;
      const raster = (): Raster => ({ width: W, height: H, channels: C, maxval: 255, data: Float32Array.from({ length: W * H * C }, () => Math.floor(rng() * 256)) });
      const [l, r] = [raster(), raster()];
      const kind = (['census', 'sad', 'ssd', 'sad+sgrad'] as const)[t % 4];
      const o = { ndisp: 1 + Math.floor(rng() * 4), lambda: 1 + Math.floor(rng() * 9), smoothness: 'linear' as const, truncation: 2, kind, onDemand: t % 3 === 0, cueThreshold: 8 };
      const view = buildStereoEnergy(l, r, o);
      const [ml2, mr2] = mirroredSwappedPair(l, r);
      const expected = buildStereoEnergy(ml2, mr2, o);
      const got = mirroredSwappedEnergy(view, o);
      expect(Array.from(got.wH)).toEqual(Array.from(expected.wH));
      expect(Array.from(got.wV)).toEqual(Array.from(expected.wV));
      expect(got.scale).toBe(expected.scale);
      expect(JSON.stringify(got.data)).toEqual(JSON.stringify(expected.data));
      // The rasters, for worker threads, made on demand.
      expect(Array.from(got.matcher.left.data)).toEqual(Array.from(ml2.data));
      expect(Array.from(got.matcher.right.data)).toEqual(Array.from(mr2.data));
      expect(Array.from(got.matcher.volume(o.ndisp))).toEqual(Array.from(expected.matcher.volume(o.ndisp)));
    }
  });

  test('census codes on the kernels, band by band: the host\'s codes of each band as an image of its own', async () => {
    const cpu = await createGpuContext('cpu');
    try {
      const rng = seededRandom(9);
      for (let t = 0; t < 6; t++) {
        const W = 5 + Math.floor(rng() * 9);
        const band = 2 + Math.floor(rng() * 6);
        const H = band * (1 + Math.floor(rng() * 3));
        const grey = () => ({ width: W, height: H, channels: 1, data: Int32Array.from({ length: W * H }, () => Math.floor(rng() * 256)) });
        const window = { width: 1 + 2 * Math.floor(rng() * 3), height: 3 + 2 * Math.floor(rng() * 3) };
        const [l, r] = [grey(), grey()];
        const device = censusPlanesOnBackend(cpu.gpu, l, r, window, band);
        expect(Array.from(device)).toEqual(Array.from(hostCensusPlanes(l, r, window, band)));
        // The left plane of band k equals the codes of band k alone.
        const C = censusHalves(window);
        for (let y0 = 0; y0 < H; y0 += band) {
          const alone = censusTransform({ width: W, height: band, channels: 1, data: l.data.subarray(y0 * W, (y0 + band) * W) }, window).codes;
          const halves = Array.from(alone).flatMap((c) => [c & 0xffff, c >>> 16]);
          expect(Array.from(device.subarray(y0 * W * C, (y0 + band) * W * C))).toEqual(halves);
        }
      }
    } finally {
      cpu.destroy();
    }
  });

  test('census grey of the stacked images is the views\' grey stacked', () => {
    const a = censusGrey(toIntensity8(scene.left, 'left'));
    const b = censusGrey(toIntensity8(ml, 'mirrored right'));
    const s = buildStereoEnergy(scene.left, scene.right, { ...options, onDemand: true });
    const t = buildStereoEnergy(ml, mr, { ...options, onDemand: true });
    const stacked = stackEnergies([s, t]);
    if (stacked.data.kind !== 'images') throw new Error('expected images');
    expect(Array.from(stacked.data.left.data)).toEqual([...a, ...b]);
  });
});
