import { seededRandom as rng } from '../data/random';
import type { Raster } from '../data/raster';
import { buildStereoEnergy, channelWeight, imagesTerm, type CostKind } from '../costs';
import { match } from '../stereo';

/**
 * Grey and colour pairs on one energy scale (costs/costOptions.ts
 * channelWeight): a grey pair and the same pair stored as RGB with R = G = B
 * must give the same energy, term by term, and therefore the same labels.
 */

/** A smooth random grey pair: the right view is the left shifted by 2 with noise, so costs are neither all zero nor all truncated. */
function greyPair(seed: number, W: number, H: number): [Raster, Raster] {
  const rand = rng(seed);
  const left = new Float32Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) left[y * W + x] = Math.floor(128 + 90 * Math.sin((x + 3 * rand()) / 3) * Math.cos(y / 4) + 20 * rand());
  }
  const right = new Float32Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) right[y * W + x] = Math.max(0, Math.min(255, left[y * W + Math.min(W - 1, x + 2)] + Math.floor((rand() - 0.5) * 12)));
  }
  const r = (data: Float32Array): Raster => ({ width: W, height: H, channels: 1, data, maxval: 255 });
  return [r(left), r(right)];
}

function replicated(g: Raster): Raster {
  const data = new Float32Array(g.data.length * 3);
  for (let i = 0; i < g.data.length; i++) data[3 * i] = data[3 * i + 1] = data[3 * i + 2] = g.data[i];
  return { width: g.width, height: g.height, channels: 3, data, maxval: g.maxval };
}

const KINDS: CostKind[] = ['sad', 'ssd', 'sad+sgrad', 'census'];

describe('grey and colour pairs on one scale', () => {
  test('the weight: 3 for a grey pair of the SAD family, 1 for colour and for census', () => {
    expect(channelWeight('sad', 1)).toBe(3);
    expect(channelWeight('ssd', 1)).toBe(3);
    expect(channelWeight('sad+sgrad', 1)).toBe(3);
    expect(channelWeight('census', 1)).toBe(1);
    for (const k of KINDS) expect(channelWeight(k, 3)).toBe(1);
  });

  test.each(KINDS)('%s: a grey pair and its R = G = B twin give the same energy, with the default τ and with τ_RGB = 3·τ_grey', (kind) => {
    const [gl, gr] = greyPair(7, 23, 11);
    const [cl, cr] = [replicated(gl), replicated(gr)];
    const taus: Array<[number | undefined, number | undefined]> = [[undefined, undefined]];
    if (kind !== 'census') taus.push(kind === 'ssd' ? [150, 450] : [7, 21]);
    for (const [tauGrey, tauRgb] of taus) {
      for (const lambda of [5, 2.5]) {
        const base = { ndisp: 6, lambda, smoothness: 'linear' as const, truncation: 2, kind, cueThreshold: 12 };
        const g = buildStereoEnergy(gl, gr, { ...base, tau: tauGrey });
        const c = buildStereoEnergy(cl, cr, { ...base, tau: tauRgb });
        expect(g.scale).toBe(c.scale);
        expect(g.data.kind).toBe('volume');
        expect(c.data.kind).toBe('volume');
        if (g.data.kind !== 'volume' || c.data.kind !== 'volume') return;
        expect(Array.from(g.data.costs)).toEqual(Array.from(c.data.costs));
        expect(Array.from(g.wH)).toEqual(Array.from(c.wH));
        expect(Array.from(g.wV)).toEqual(Array.from(c.wV));
        // Neither all truncated nor all zero: the comparison means something.
        const distinct = new Set(Array.from(g.data.costs));
        expect(distinct.size).toBeGreaterThan(3);
      }
    }
  });

  test('the device images term carries the same weighted scale as the host volume', () => {
    const [gl, gr] = greyPair(3, 17, 9);
    const e = buildStereoEnergy(gl, gr, { ndisp: 5, lambda: 5, smoothness: 'linear', truncation: 2, kind: 'sad', onDemand: true });
    const t = imagesTerm(e.matcher);
    if (t.kind !== 'images') throw new Error('expected an images term');
    // The channel weight 3, and SAD's λ unit (smoothnessUnit: the data term carries den = 13).
    expect(t.spec.scale).toBe(3 * 13 * e.scale);
    expect(t.spec.maxCost).toBe(3 * 20 * 13 * e.scale);
    expect(t.left.channels).toBe(1);
  });

  test.each(['sad', 'census'] as const)('match --cost %s: the grey pair and its twin end with the same disparities and energy', async (cost) => {
    const [gl, gr] = greyPair(11, 40, 24);
    const opts = { ndisp: 6, cost, backend: 'bk' as const, lrCheck: false, cycles: 2 };
    const g = await match(gl, gr, opts);
    const c = await match(replicated(gl), replicated(gr), opts);
    expect(Array.from(g.disparity)).toEqual(Array.from(c.disparity));
    expect(g.finalEnergy).toEqual(c.finalEnergy);
    // τ stays on each pair's own channel sum (20 grey levels, 60 over RGB); census τ counts bits.
    expect(c.params.tau).toBe(cost === 'sad' ? 3 * g.params.tau : g.params.tau);
  });
});
