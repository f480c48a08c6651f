import { CallCostModel } from '../expansion/callCostModel';
import { seededRandom } from '../expansion/labelOrder';

const prior = { call: 3, gated: 0.5, compile: 100, weight: 4 };

/** A call of a plan with R rounds, of which `full` ran in full, timed by the true costs (ms) with relative noise. */
function callOf(rand: () => number, R: number, truth: { call: number; full: number; gated: number }, noise: number): [number, number, number] {
  const full = Math.floor(rand() * (R + 1));
  const gated = R - full;
  const ms = (truth.call + truth.full * full + truth.gated * gated) * (1 + noise * (2 * rand() - 1));
  return [full, gated, ms];
}

describe('CallCostModel: costs of a device call fitted to the calls', () => {
  test('the prior until enough calls are measured', () => {
    const m = new CallCostModel(prior);
    expect(m.costs()).toEqual({ call: 3, gated: 0.5, compile: 100 });
    for (let i = 0; i < 7; i++) m.observe(i % 4, 4 - (i % 4), 10 + 2 * (i % 4), false);
    expect(m.costs()).toEqual({ call: 3, gated: 0.5, compile: 100 });
  });

  test('recovers random true costs (in full rounds) from noisy calls of varied rounds', () => {
    const rand = seededRandom(42);
    for (let trial = 0; trial < 50; trial++) {
      const truth = { call: 1 + rand() * 40, full: 0.5 + rand() * 5, gated: rand() * 2 };
      const m = new CallCostModel(prior);
      for (let i = 0; i < 300; i++) {
        const R = [1, 2, 4, 6, 8, 12, 16, 24][Math.floor(rand() * 8)];
        const [full, gated, ms] = callOf(rand, R, truth, 0.02);
        m.observe(full, gated, ms, false);
      }
      const c = m.costs();
      expect(Math.abs(c.call - truth.call / truth.full)).toBeLessThan(0.05 * (truth.call / truth.full) + 0.2);
      expect(Math.abs(c.gated - truth.gated / truth.full)).toBeLessThan(0.05 * (truth.gated / truth.full) + 0.05);
      expect(c.compile).toBe(100);
    }
  });

  test('calls that all have the same rounds: the fit leans on the prior ratios and still predicts the calls', () => {
    const rand = seededRandom(7);
    const truth = { call: 12, full: 3, gated: 0.6 };
    const m = new CallCostModel(prior);
    const seen: Array<[number, number, number]> = [];
    for (let i = 0; i < 100; i++) {
      const c = callOf(rand, 4, truth, 0);
      seen.push(c);
      m.observe(...c, false);
    }
    const c = m.costs();
    for (const v of [c.call, c.gated]) {
      expect(Number.isFinite(v)).toBe(true);
      expect(v).toBeGreaterThanOrEqual(0);
    }
    // With full + gated = 4 on every call only call + 4·gated and full − gated are determined (in ms); the ratio c.call + 4·c.gated must match.
    const perFull = (truth.call + 4 * truth.gated) / (truth.full - truth.gated);
    expect(Math.abs((c.call + 4 * c.gated) / (1 - c.gated) - perFull) / perFull).toBeLessThan(0.05);
  });

  test('a compile costs what first calls of new plans took beyond the fit', () => {
    const rand = seededRandom(3);
    const truth = { call: 20, full: 4, gated: 0.4 };
    const m = new CallCostModel(prior);
    for (let i = 0; i < 60; i++) {
      const R = [2, 4, 8, 16][i % 4];
      const [full, gated, ms] = callOf(rand, R, truth, 0.01);
      // Every tenth call compiles its plan: 400 ms more (100 full rounds).
      m.observe(full, gated, i % 10 === 0 ? ms + 400 : ms, i % 10 === 0);
    }
    const c = m.costs();
    expect(Math.abs(c.compile - 100)).toBeLessThan(5);
    expect(Math.abs(c.call - 5)).toBeLessThan(0.5);
  });

  test('an unusable fit (time falling with the rounds) keeps the prior; bad priors are refused', () => {
    const m = new CallCostModel(prior);
    for (let i = 0; i < 40; i++) {
      const full = i % 8;
      m.observe(full, (3 * i) % 5, 100 - 10 * full, false);
    }
    expect(m.costs()).toEqual({ call: 3, gated: 0.5, compile: 100 });
    expect(() => new CallCostModel({ ...prior, gated: -1 })).toThrow(/gated/);
    expect(() => new CallCostModel({ ...prior, compile: NaN })).toThrow(/compile/);
  });
});
