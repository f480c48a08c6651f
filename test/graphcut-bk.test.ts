import { seededRandom } from '../data/random';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { bruteForceMinCut } from './support/bruteForce';
import { cloneGridGraph, createGridGraph, cutCapacity, MAX_CAPACITY, type GridGraph } from '../graphcut/gridGraph';
import { expansionLikeGraph, randomGridGraph, randomInt, RANDOM_GRAPH_KINDS, type RandomGraphKind } from './support/randomGraphs';
import { referenceMaxFlow } from './support/referenceMaxflow';

const solver = new BoykovKolmogorovSolver();

function describeGraph(seed: number, kind: RandomGraphKind, g: GridGraph): string {
  return `seed ${seed}, kind ${kind}, ${g.width}×${g.height}`;
}

/** Index of the first pixel where two cuts differ, or -1. */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return 0;
  for (let p = 0; p < a.length; p++) if (a[p] !== b[p]) return p;
  return -1;
}

describe('BoykovKolmogorovSolver against exhaustive search on tiny grids', () => {
  /** Solves g and compares with brute force; returns a description of the mismatch, or null. */
  function mismatch(g: GridGraph, where: string): { message: string | null; ties: boolean; flow: number } {
    const r = solver.solveSync(g);
    const b = bruteForceMinCut(g);
    let message: string | null = null;
    if (r.flow !== b.minCut) message = `${where}: flow ${r.flow}, brute force ${b.minCut}`;
    else if (cutCapacity(g, r.sinkSide) !== r.flow) message = `${where}: cut capacity ${cutCapacity(g, r.sinkSide)} ≠ flow ${r.flow}`;
    else {
      const p = firstDifference(r.sinkSide, b.minimalSinkSide);
      if (p >= 0) message = `${where}: sinkSide differs from the smallest minimum sink side at pixel ${p}`;
    }
    return { message, ties: b.minimumCount > 1, flow: r.flow };
  }

  // Failures are collected and compared once: one expect per graph would dominate the run time.
  test('flow = brute-force minimum cut and sinkSide = the smallest minimum sink side, 8000 graphs up to 4×4', () => {
    const failures: string[] = [];
    let withTies = 0;
    let withLarge = 0;
    for (let seed = 0; seed < 8000; seed++) {
      const rng = seededRandom(seed);
      const kind = RANDOM_GRAPH_KINDS[seed % RANDOM_GRAPH_KINDS.length];
      const g = randomGridGraph(rng, randomInt(rng, 1, 4), randomInt(rng, 1, 4), kind);
      const m = mismatch(g, describeGraph(seed, kind, g));
      if (m.message !== null) failures.push(m.message);
      if (m.ties) withTies++;
      if (m.flow > MAX_CAPACITY / 8) withLarge++;
    }
    expect(failures).toEqual([]);
    // The canonical-cut check only bites when several cuts are minimal; make sure many graphs have ties,
    // and that many flows are large enough to need exact arithmetic beyond small integers.
    expect(withTies).toBeGreaterThan(2000);
    expect(withLarge).toBeGreaterThan(200);
  });

  test('every 4×4 graph of the tie-heavy kind (capacities 0..3) matches, 1000 more graphs', () => {
    const failures: string[] = [];
    for (let seed = 0; seed < 1000; seed++) {
      const g = randomGridGraph(seededRandom(10_000 + seed), 4, 4, 'tiny');
      const m = mismatch(g, describeGraph(10_000 + seed, 'tiny', g));
      if (m.message !== null) failures.push(m.message);
    }
    expect(failures).toEqual([]);
  });

  test('all-zero graphs of every small size: flow 0 and every pixel on the source side', () => {
    for (let w = 1; w <= 4; w++) {
      for (let h = 1; h <= 4; h++) {
        const r = solver.solveSync(createGridGraph(w, h));
        expect(r.flow).toBe(0);
        expect(Array.from(r.sinkSide)).toEqual(new Array(w * h).fill(0));
        expect(r.stats.augmentations).toBe(0);
      }
    }
  });
});

describe('BoykovKolmogorovSolver special graphs with known answers', () => {
  test('terminal edges only: flow = Σ min(c_s, c_t), sink side = pixels with c_t > c_s', () => {
    for (let seed = 0; seed < 20; seed++) {
      const g = randomGridGraph(seededRandom(70_000 + seed), 37, 23, 'terminals');
      const r = solver.solveSync(g);
      let flow = 0;
      const expected = new Uint8Array(g.source.length);
      for (let p = 0; p < g.source.length; p++) {
        flow += Math.min(g.source[p], g.sink[p]);
        expected[p] = g.sink[p] > g.source[p] ? 1 : 0;
      }
      expect(r.flow).toBe(flow);
      expect(firstDifference(r.sinkSide, expected)).toBe(-1);
      expect(r.stats.augmentations).toBe(0);
    }
  });

  test('a source at one corner and a sink at the other of a uniform grid: the flow is the bottleneck', () => {
    // 10×10 grid, all grid edges 1 in both directions, s → pixel 0 and pixel 99 → t of capacity 100:
    // each corner has two grid edges, so the flow is 2; both edges into pixel 99 end up saturated, so
    // pixel 99 is the only one that still reaches the sink.
    const g = createGridGraph(10, 10);
    for (let p = 0; p < 100; p++) {
      if (p % 10 !== 9) { g.right[p] = 1; g.rightRev[p] = 1; }
      if (p < 90) { g.down[p] = 1; g.downRev[p] = 1; }
    }
    g.source[0] = 100;
    g.sink[99] = 100;
    const r = solver.solveSync(g);
    expect(r.flow).toBe(2);
    const expected = new Uint8Array(100);
    expected[99] = 1;
    expect(Array.from(r.sinkSide)).toEqual(Array.from(expected));
  });

  test('capacities at MAX_CAPACITY in both directions of every edge still solve exactly', () => {
    for (let seed = 0; seed < 10; seed++) {
      const rng = seededRandom(80_000 + seed);
      const g = createGridGraph(6, 5);
      for (let p = 0; p < 30; p++) {
        g.source[p] = rng() < 0.5 ? MAX_CAPACITY : randomInt(rng, 0, MAX_CAPACITY);
        g.sink[p] = rng() < 0.5 ? MAX_CAPACITY : randomInt(rng, 0, MAX_CAPACITY);
        if (p % 6 !== 5) { g.right[p] = MAX_CAPACITY; g.rightRev[p] = MAX_CAPACITY; }
        if (p < 24) { g.down[p] = MAX_CAPACITY; g.downRev[p] = MAX_CAPACITY; }
      }
      const r = solver.solveSync(g);
      const ref = referenceMaxFlow(g);
      expect(r.flow).toBe(ref.flow);
      expect(firstDifference(r.sinkSide, ref.sinkSide)).toBe(-1);
    }
  });
});

describe('BoykovKolmogorovSolver contract', () => {
  test('name, device, and solve() resolves to the same result as solveSync()', async () => {
    expect(solver.name).toBe('bk');
    expect(solver.device).toBe('CPU (Boykov–Kolmogorov)');
    const g = randomGridGraph(seededRandom(1), 30, 20, 'uniform');
    const a = await new BoykovKolmogorovSolver().solve(g);
    const b = solver.solveSync(g);
    expect(a.flow).toBe(b.flow);
    expect(Array.from(a.sinkSide)).toEqual(Array.from(b.sinkSide));
    for (const key of ['augmentations', 'orphans', 'adopted', 'growths', 'workspaceAllocated', 'timeMs']) {
      expect(typeof a.stats[key]).toBe('number');
    }
  });

  test('never modifies the input arrays', () => {
    for (let k = 0; k < RANDOM_GRAPH_KINDS.length; k++) {
      const g = randomGridGraph(seededRandom(90_000 + k), 40, 33, RANDOM_GRAPH_KINDS[k]);
      const before = cloneGridGraph(g);
      solver.solveSync(g);
      expect(g).toEqual(before);
    }
  });

  test('repeated solves with a reused workspace give identical results, also when sizes alternate', () => {
    const s = new BoykovKolmogorovSolver();
    const a = expansionLikeGraph(seededRandom(2), 80, 60);
    const b = randomGridGraph(seededRandom(3), 80, 60, 'uniform');
    const c = randomGridGraph(seededRandom(4), 33, 47, 'sparse');
    const first = [a, b, c].map((g) => s.solveSync(g));
    for (let round = 0; round < 3; round++) {
      for (const [k, g] of [a, b, c, b, a].entries()) {
        const r = s.solveSync(g);
        const want = first[[0, 1, 2, 1, 0][k]];
        expect(r.flow).toBe(want.flow);
        expect(Array.from(r.sinkSide)).toEqual(Array.from(want.sinkSide));
        expect(r.stats.augmentations).toBe(want.stats.augmentations);
        expect(r.stats.orphans).toBe(want.stats.orphans);
      }
    }
  });

  test('allocates its workspace once per grid size', () => {
    const s = new BoykovKolmogorovSolver();
    const a = randomGridGraph(seededRandom(11), 30, 20, 'uniform');
    const b = randomGridGraph(seededRandom(12), 30, 20, 'expansion');
    const c = randomGridGraph(seededRandom(13), 20, 30, 'uniform');
    expect([a, b, a, b, c, c, a].map((g) => s.solveSync(g).stats.workspaceAllocated)).toEqual([1, 0, 0, 0, 1, 0, 1]);
    s.dispose();
    expect(s.solveSync(a).stats.workspaceAllocated).toBe(1);
  });

  test('writes into a caller-supplied sinkSide buffer, overwriting stale contents', () => {
    const g = randomGridGraph(seededRandom(5), 25, 25, 'uniform');
    const want = solver.solveSync(g);
    const out = new Uint8Array(625).fill(7);
    const r = solver.solveSync(g, out);
    expect(r.sinkSide).toBe(out);
    expect(Array.from(out)).toEqual(Array.from(want.sinkSide));
    expect(() => solver.solveSync(g, new Uint8Array(624))).toThrow('bk: sinkSideOut has 624 entries, expected 625 (25×25)');
  });

  test('rejects wrong array lengths, negative or too large capacities, and edges leaving the grid', async () => {
    const good = randomGridGraph(seededRandom(6), 4, 3, 'uniform');
    const shortSink = { ...cloneGridGraph(good), sink: new Int32Array(11) };
    expect(() => solver.solveSync(shortSink)).toThrow('grid graph: sink has 11 entries, expected 12 (4×3)');
    const negative = cloneGridGraph(good);
    negative.down[2] = -1;
    expect(() => solver.solveSync(negative)).toThrow('grid graph: down[2] = -1 is outside 0..1073741823');
    const tooLarge = cloneGridGraph(good);
    tooLarge.source[0] = MAX_CAPACITY + 1;
    expect(() => solver.solveSync(tooLarge)).toThrow('grid graph: source[0] = 1073741824 is outside 0..1073741823');
    const wrap = cloneGridGraph(good);
    wrap.right[3] = 5;
    expect(() => solver.solveSync(wrap)).toThrow('right edge out of the grid at pixel 3');
    const below = cloneGridGraph(good);
    below.downRev[10] = 5;
    expect(() => solver.solveSync(below)).toThrow('down edge out of the grid at pixel 10');
    await expect(solver.solve(negative)).rejects.toThrow('down[2] = -1');
    const nonInteger = { ...cloneGridGraph(good), width: 2.5 };
    expect(() => solver.solveSync(nonInteger)).toThrow('bk: workspace size must be positive integers (got 2.5×3)');
    // Every violation is caught wherever it sits, including the very last entry of each array.
    for (const name of ['source', 'sink', 'right', 'rightRev', 'down', 'downRev'] as const) {
      for (const p of [0, 5, 11]) {
        const bad = cloneGridGraph(good);
        bad[name][p] = -7;
        expect(() => solver.solveSync(bad)).toThrow(`grid graph: ${name}[${p}] = -7 is outside 0..1073741823`);
      }
    }
    // A rejected graph leaves the solver usable, with the same answers as before.
    const fresh = new BoykovKolmogorovSolver().solveSync(good);
    const again = solver.solveSync(good);
    expect(again.flow).toBe(fresh.flow);
    expect(Array.from(again.sinkSide)).toEqual(Array.from(fresh.sinkSide));
  });
});
