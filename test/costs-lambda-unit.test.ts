import { seededRandom as rng } from '../data/random';
import { buildStereoEnergy, computeDataCostVolume, defaultTau, smoothnessUnit, LAMBDA_REFERENCE_TAU, type CostKind } from '../costs';
import { volumeOf } from '../data/energy';
import { randomRaster } from './support/randomRaster';

/**
 * λ on one scale for every cost kind (costs/costOptions.ts smoothnessUnit):
 * the energy is den·D + num·λ·w·V with num/den = defaultTau(kind, 3) / 26,
 * so at each kind's default τ a smoothness weight stands in the same ratio
 * to the largest data cost, and census (the reference) is unchanged.
 */

const KINDS: CostKind[] = ['sad', 'ssd', 'sad+sgrad', 'census'];

describe('λ on one scale for every cost kind', () => {
  test('the unit: census 1; the others their default colour τ over 26, in lowest terms', () => {
    expect(LAMBDA_REFERENCE_TAU).toBe(26);
    expect(smoothnessUnit('census')).toEqual({ num: 1, den: 1 });
    expect(smoothnessUnit('sad')).toEqual({ num: 30, den: 13 });
    expect(smoothnessUnit('ssd')).toEqual({ num: 600, den: 13 });
    expect(smoothnessUnit('sad+sgrad')).toEqual({ num: 60, den: 13 });
    for (const kind of KINDS) {
      const { num, den } = smoothnessUnit(kind);
      if (kind !== 'census') expect(num * LAMBDA_REFERENCE_TAU).toBe(den * defaultTau(kind, 3));
    }
  });

  test.each(KINDS.flatMap((k) => [[k, 1], [k, 3]] as const))('%s, %i channel(s): at the default τ a weight is λ/26 of the largest data cost; the data term is den × the plain costs', (kind, channels) => {
    const rand = rng(kind.length * 10 + channels);
    const left = randomRaster(13, 9, channels, 256, rand);
    const right = randomRaster(13, 9, channels, 256, rand);
    for (const lambda of [5, 2.5, 12]) {
      // No cue: every weight is the plain λ weight.
      const e = buildStereoEnergy(left, right, { ndisp: 4, kind, lambda, cueFactor: 1, smoothness: 'linear', truncation: 2 });
      const maxCost = e.matcher.options.maxCost;
      const w = e.wH[0];
      expect(w * LAMBDA_REFERENCE_TAU).toBe(lambda * maxCost);
      const { num, den } = smoothnessUnit(kind);
      expect(w).toBe(Math.round(lambda * e.scale) * num);
      // The data term: the plain costs (the cost scale and a grey pair's channel weight) times den.
      const weight = channels === 1 && kind !== 'census' ? 3 : 1;
      const plain = computeDataCostVolume(left, right, 4, { kind, scale: e.scale * weight });
      expect(Array.from(volumeOf(e))).toEqual(Array.from(plain, (v) => v * den));
    }
  });

  test('census energies are those of λ in bits (unit 1): weights λ·scale, ×factor under the cue', () => {
    const rand = rng(3);
    const left = randomRaster(12, 8, 3, 256, rand);
    const right = randomRaster(12, 8, 3, 256, rand);
    const e = buildStereoEnergy(left, right, { ndisp: 5, kind: 'census', lambda: 5, cueThreshold: 12, cueFactor: 2, smoothness: 'linear', truncation: 2 });
    expect(e.scale).toBe(1);
    expect(new Set(Array.from(e.wH.subarray(0, 11)).filter((v) => v > 0)).size).toBeGreaterThan(0);
    for (const v of [...e.wH, ...e.wV]) expect([0, 5, 10]).toContain(v);
    expect(Array.from(volumeOf(e))).toEqual(Array.from(computeDataCostVolume(left, right, 5, { kind: 'census', scale: 1 })));
  });
});
