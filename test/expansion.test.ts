import { seededRandom } from '../data/random';
import { BinaryStepBuilder, applyCut, GraphVariant } from '../expansion/binaryStep';
import { computeEnergy, pairwise, volumeOf, MrfEnergy, SmoothnessKind } from '../data/energy';
import { exactTermBounds } from '../gpu/move/readouts';
import { alphaExpansion } from '../expansion/alphaExpansion';
import { GraphMoveSolver } from '../expansion/moveSolver';
import { labelOrderForCycle } from '../expansion/labelOrder';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { cutCapacity } from '../graphcut/gridGraph';
import { randomEnergy, randomLabels } from './support/randomEnergy';


/** The best expansion move by enumerating every subset of pixels that may switch to α. */
function bruteForceMove(e: MrfEnergy, labels: Uint16Array, alpha: number): number {
  const n = labels.length;
  let best = Infinity;
  const trial = new Uint16Array(n);
  for (let mask = 0; mask < 1 << n; mask++) {
    for (let p = 0; p < n; p++) trial[p] = (mask >> p) & 1 ? alpha : labels[p];
    const en = computeEnergy(e, trial).total;
    if (en < best) best = en;
  }
  return best;
}

const bk = new BoykovKolmogorovSolver();
const variants: GraphVariant[] = ['classic', 'reversed'];

describe('binary step construction', () => {
  test('the cut of either variant is the optimal expansion move (brute force over all moves, tiny grids)', () => {
    const rand = seededRandom(42);
    for (let trial = 0; trial < 400; trial++) {
      const W = 1 + Math.floor(rand() * 3);
      const H = 1 + Math.floor(rand() * 3);
      const L = 2 + Math.floor(rand() * 4);
      const kind: SmoothnessKind = rand() < 0.5 ? 'linear' : 'potts';
      const e = randomEnergy(rand, W, H, L, kind);
      const labels = randomLabels(rand, W * H, L);
      const alpha = Math.floor(rand() * L);
      const best = bruteForceMove(e, labels, alpha);
      for (const variant of variants) {
        const step = new BinaryStepBuilder(W, H).build(e, labels, alpha, variant);
        const cut = bk.solveSync(step.graph);
        expect(cut.flow).toBe(cutCapacity(step.graph, cut.sinkSide));
        expect(cut.flow + step.constant).toBe(best);
        const moved = labels.slice();
        applyCut(moved, cut.sinkSide, alpha, variant);
        expect(computeEnergy(e, moved).total).toBe(best);
      }
    }
  });

  test('every cut value plus the constant is the energy of the labeling it encodes (random cuts)', () => {
    const rand = seededRandom(7);
    for (let trial = 0; trial < 200; trial++) {
      const W = 1 + Math.floor(rand() * 6);
      const H = 1 + Math.floor(rand() * 6);
      const L = 2 + Math.floor(rand() * 5);
      const e = randomEnergy(rand, W, H, L, rand() < 0.5 ? 'linear' : 'potts');
      const labels = randomLabels(rand, W * H, L);
      const alpha = Math.floor(rand() * L);
      for (const variant of variants) {
        const step = new BinaryStepBuilder(W, H).build(e, labels, alpha, variant);
        const side = new Uint8Array(W * H);
        for (let p = 0; p < side.length; p++) side[p] = rand() < 0.5 ? 1 : 0;
        const moved = labels.slice();
        applyCut(moved, side, alpha, variant);
        expect(cutCapacity(step.graph, side) + step.constant).toBe(computeEnergy(e, moved).total);
      }
    }
  });

  test('classic and reversed reach the same energy on the same step (64×48, many α)', () => {
    const rand = seededRandom(3);
    const e = randomEnergy(rand, 64, 48, 8, 'linear');
    const labels = randomLabels(rand, 64 * 48, 8);
    for (let alpha = 0; alpha < 8; alpha++) {
      const energies = variants.map((v) => {
        const step = new BinaryStepBuilder(64, 48).build(e, labels, alpha, v);
        const cut = bk.solveSync(step.graph);
        const moved = labels.slice();
        applyCut(moved, cut.sinkSide, alpha, v);
        const en = computeEnergy(e, moved).total;
        expect(en).toBe(cut.flow + step.constant);
        expect(en).toBeLessThanOrEqual(computeEnergy(e, labels).total);
        return en;
      });
      expect(energies[0]).toBe(energies[1]);
    }
  });

  test('a capacity beyond the int32-safe bound is refused', () => {
    const e: MrfEnergy = {
      width: 2, height: 1, labels: 2, data: { kind: 'volume', costs: new Int32Array([0, 2 ** 31 - 1, 0, 0]) },
      smoothness: 'linear', truncation: 1, wH: new Int32Array([1, 0]), wV: new Int32Array(2),
    };
    expect(() => new BinaryStepBuilder(2, 1).build(e, new Uint16Array([0, 0]), 1, 'reversed')).toThrow(/exceeds/);
  });
});

describe('alpha-expansion driver', () => {
  test('no move ever raises the energy; cut predictions match recomputed energies (all kinds, both variants)', async () => {
    const rand = seededRandom(11);
    for (let trial = 0; trial < 12; trial++) {
      const kind: SmoothnessKind = (['linear', 'potts', 'quadratic'] as const)[trial % 3];
      const e = randomEnergy(rand, 12 + Math.floor(rand() * 10), 8 + Math.floor(rand() * 8), 3 + Math.floor(rand() * 6), kind);
      const init = randomLabels(rand, e.width * e.height, e.labels);
      for (const variant of variants) {
        let last = Infinity;
        const solver = new GraphMoveSolver(e, bk, variant);
        const energies: number[] = [];
        const result = await alphaExpansion(e, init, solver, {
          cycles: 3, checkMoves: kind !== 'quadratic', order: 'sequential',
          onMove: () => { energies.push(0); },
        });
        expect(energies.length).toBe(3 * e.labels);
        expect(result.initialEnergy.total).toBe(computeEnergy(e, init).total);
        for (const c of result.cycles) {
          expect(c.energy.total).toBeLessThanOrEqual(last);
          last = c.energy.total;
        }
        expect(result.finalEnergy.total).toBe(computeEnergy(e, result.labels).total);
        expect(result.finalEnergy.total).toBeLessThanOrEqual(result.initialEnergy.total);
      }
    }
  });

  test('classic and reversed drivers reach the same energy after a cycle from the same start (costs with no ties)', async () => {
    // With the canonical cut both variants return a minimum cut, but ties may be
    // broken to different (equal-energy) labelings; continuous random costs make ties rare,
    // so compare the first move exactly and later cycles for optimality only.
    const rand = seededRandom(5);
    const e = randomEnergy(rand, 30, 20, 6, 'linear');
    const D = volumeOf(e);
    for (let i = 0; i < D.length; i++) D[i] = D[i] * 1000 + Math.floor(rand() * 997);
    const init = randomLabels(rand, 600, 6);
    const a = await alphaExpansion(e, init, new GraphMoveSolver(e, bk, 'classic'), { cycles: 1, order: 'sequential' });
    const b = await alphaExpansion(e, init, new GraphMoveSolver(e, bk, 'reversed'), { cycles: 1, order: 'sequential' });
    expect(a.cycles[0].energy.total).toBe(b.cycles[0].energy.total);
  });

  test('skipping moves with nothing changed since their last expansion changes nothing (reversed graph, canonical cut)', async () => {
    const rand = seededRandom(21);
    for (let trial = 0; trial < 6; trial++) {
      const e = randomEnergy(rand, 20, 14, 4 + trial, trial % 2 ? 'potts' : 'linear');
      const init = randomLabels(rand, 280, e.labels);
      const run = (skipUnchanged: boolean) => alphaExpansion(e, init, new GraphMoveSolver(e, bk, 'reversed'), { cycles: 5, skipUnchanged });
      const [a, b] = await Promise.all([run(true), run(false)]);
      expect(Array.from(a.labels)).toEqual(Array.from(b.labels));
      expect(a.cycles.map((c) => c.energy.total)).toEqual(b.cycles.map((c) => c.energy.total));
      expect(b.cycles.every((c) => c.skipped === 0)).toBe(true);
      // Once a cycle changes nothing, the next one is skipped entirely.
      for (let i = 1; i < a.cycles.length; i++) {
        if (a.cycles[i - 1].pixelsChanged === 0) expect(a.cycles[i].skipped).toBe(e.labels);
      }
      expect(a.cuts).toBeLessThanOrEqual(b.cuts);
    }
  });

  test("cycles: 'converge' stops after a cycle with no decrease", async () => {
    const rand = seededRandom(9);
    const e = randomEnergy(rand, 16, 12, 5, 'linear');
    const r = await alphaExpansion(e, new Uint16Array(16 * 12), new GraphMoveSolver(e, bk, 'reversed'), { cycles: 'converge' });
    const n = r.cycles.length;
    expect(n).toBeGreaterThanOrEqual(1);
    const prev = n >= 2 ? r.cycles[n - 2].energy.total : r.initialEnergy.total;
    expect(r.cycles[n - 1].energy.total).toBe(prev);
    for (let i = 0; i + 1 < n; i++) {
      const before = i === 0 ? r.initialEnergy.total : r.cycles[i - 1].energy.total;
      expect(r.cycles[i].energy.total).toBeLessThan(before);
    }
  });

  test('onCycle sees every cycle with the labeling that has its energy; a run continued from one ends where the whole run ends', async () => {
    for (let trial = 0; trial < 10; trial++) {
      const rand = seededRandom(100 + trial);
      const e = randomEnergy(rand, 12, 9, 2 + trial % 5, (['linear', 'quadratic', 'potts'] as SmoothnessKind[])[trial % 3]);
      const init = randomLabels(rand, 12 * 9, e.labels);
      const seen: { cycle: number; total: number; labels: Uint16Array }[] = [];
      const whole = await alphaExpansion(e, init, new GraphMoveSolver(e, bk, 'reversed'), {
        cycles: 3, skipUnchanged: false, onCycle: (c, labels) => { seen.push({ cycle: c.cycle, total: c.energy.total, labels: labels.slice() }); },
      });
      // Three cycles, or fewer when one changed nothing (the run ends there).
      expect(seen.map((c) => c.cycle)).toEqual([1, 2, 3].slice(0, whole.cycles.length));
      if (seen.length < 3) expect(whole.cycles[seen.length - 1].pixelsChanged).toBe(0);
      for (const c of seen) expect(computeEnergy(e, c.labels).total).toBe(c.total);
      expect(seen[seen.length - 1].labels).toEqual(whole.labels);
      // Without skips the moves depend only on the labeling, so a continuation from cycle 1's labels repeats cycles 2 and 3.
      const rest = await alphaExpansion(e, seen[0].labels, new GraphMoveSolver(e, bk, 'reversed'), { cycles: 2, skipUnchanged: false });
      expect(rest.labels).toEqual(whole.labels);
    }
  });

  test('bad initial labelings and cycle counts are refused', async () => {
    const rand = seededRandom(1);
    const e = randomEnergy(rand, 4, 4, 3, 'linear');
    const s = new GraphMoveSolver(e, bk, 'reversed');
    await expect(alphaExpansion(e, new Uint16Array(15), s)).rejects.toThrow(/16/);
    await expect(alphaExpansion(e, new Uint16Array(16).fill(3), s)).rejects.toThrow(/outside 0..2/);
    await expect(alphaExpansion(e, new Uint16Array(16), s, { cycles: -1 })).rejects.toThrow(/^alphaExpansion: cycles: got -1, expected an integer ≥ 0 or 'converge'$/);
    await expect(alphaExpansion(e, new Uint16Array(16), s, { cycles: 'converge', maxCycles: 1.5 })).rejects.toThrow(/^alphaExpansion: maxCycles: got 1.5, expected an integer ≥ 0$/);
  });
});

describe('label order', () => {
  test('frequent: by descending count, ties by label; sequential; random is a seeded permutation', () => {
    const labels = [2, 2, 1, 3, 3, 3, 0, 2, 3];
    expect(labelOrderForCycle('frequent', labels, 5, 0, 1)).toEqual([3, 2, 0, 1, 4]);
    expect(labelOrderForCycle('sequential', labels, 5, 0, 1)).toEqual([0, 1, 2, 3, 4]);
    const r1 = labelOrderForCycle('random', labels, 20, 0, 7);
    expect([...r1].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(labelOrderForCycle('random', labels, 20, 0, 7)).toEqual(r1);
    expect(labelOrderForCycle('random', labels, 20, 1, 7)).not.toEqual(r1);
  });
});

describe('the device moves\' term bounds (exactTermBounds)', () => {
  test('the largest data cost and w·V(a, b), against a direct search over every term, on random energies of every smoothness kind', () => {
    const rand = seededRandom(8);
    for (let t = 0; t < 30; t++) {
      const kind = (['linear', 'potts', 'quadratic'] as const)[t % 3];
      const e = randomEnergy(rand, 2 + Math.floor(rand() * 9), 2 + Math.floor(rand() * 7), 2 + Math.floor(rand() * 9), kind);
      const n = e.width * e.height;
      let maxW = 0;
      for (let p = 0; p < n; p++) maxW = Math.max(maxW, e.wH[p], e.wV[p]);
      let maxV = 0;
      for (let a = 0; a < e.labels; a++) for (let b = 0; b < e.labels; b++) maxV = Math.max(maxV, pairwise(e.smoothness, e.truncation, a, b));
      const costs = volumeOf(e);
      expect(exactTermBounds(e, null)).toEqual({ maxDataCost: costs.reduce((m, c) => Math.max(m, c), 0), maxEdgeTerm: maxW * maxV });
    }
    // Beyond what f32 holds exactly: refused, naming the bound.
    const big = randomEnergy(seededRandom(3), 4, 3, 3, 'linear');
    big.wH[0] = 2 ** 22;
    expect(() => exactTermBounds(big, null)).toThrow(/above the f32-exact bound/);
  });

  test('with a pair the weights are bounded by its two values, and never read (the device makes them)', () => {
    const e = randomEnergy(seededRandom(9), 5, 4, 6, 'linear');
    const raster = { width: 5, height: 4, channels: 1, data: new Float32Array(20), maxval: 255 };
    const withPair = { ...e, pairSource: { left: raster, right: raster, views: ['pair'] as const, plain: 7, cued: 21, limit: 12 } };
    for (const key of ['wH', 'wV'] as const) Object.defineProperty(withPair, key, { get: () => { throw new Error(`${key} read`); } });
    let maxV = 0;
    for (let d = 0; d < e.labels; d++) maxV = Math.max(maxV, pairwise(e.smoothness, e.truncation, 0, d));
    expect(exactTermBounds(withPair, null).maxEdgeTerm).toBe(21 * maxV);
  });
});
