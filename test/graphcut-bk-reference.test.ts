import { seededRandom } from '../data/random';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { cutCapacity, type GridGraph } from '../graphcut/gridGraph';
import { expansionLikeGraph, randomGridGraph, randomInt, RANDOM_GRAPH_KINDS, type RandomGraphKind } from './support/randomGraphs';
import { referenceMaxFlow } from './support/referenceMaxflow';
import { scaled } from './support/testScope';

/**
 * BK against an independent Dinic max-flow on a generic adjacency list
 * (graphcut/referenceMaxflow.ts): same flow value, the returned cut has that
 * capacity (max-flow = min-cut), and the returned sink side is exactly the set
 * of pixels that reach the sink in Dinic's residual graph (the canonical cut).
 */

const solver = new BoykovKolmogorovSolver();

interface Check {
  failure: string | null;
  flow: number;
}

function checkAgainstReference(g: GridGraph, where: string): Check {
  const r = solver.solveSync(g);
  const ref = referenceMaxFlow(g);
  if (r.flow !== ref.flow) return { failure: `${where}: flow ${r.flow}, reference ${ref.flow}`, flow: r.flow };
  const cut = cutCapacity(g, r.sinkSide);
  if (cut !== r.flow) return { failure: `${where}: cut capacity ${cut} ≠ flow ${r.flow}`, flow: r.flow };
  for (let p = 0; p < r.sinkSide.length; p++) {
    if (r.sinkSide[p] !== ref.sinkSide[p]) {
      return { failure: `${where}: pixel ${p} is ${r.sinkSide[p] ? 'sink' : 'source'} side, reference says otherwise`, flow: r.flow };
    }
  }
  return { failure: null, flow: r.flow };
}

function where(seed: number, kind: RandomGraphKind, g: GridGraph): string {
  return `seed ${seed}, kind ${kind}, ${g.width}×${g.height}`;
}

// Failures are collected and compared once per test so that a mismatch names every bad seed.
describe('BoykovKolmogorovSolver against an independent Dinic max-flow', () => {
  const perKind = scaled(20, 7);
  test(`64×64 grids, ${perKind} of each kind`, () => {
    const failures: string[] = [];
    let aboveInt32 = 0;
    for (let seed = 0; seed < perKind * RANDOM_GRAPH_KINDS.length; seed++) {
      const kind = RANDOM_GRAPH_KINDS[seed % RANDOM_GRAPH_KINDS.length];
      const g = randomGridGraph(seededRandom(20_000 + seed), 64, 64, kind);
      const c = checkAgainstReference(g, where(20_000 + seed, kind, g));
      if (c.failure !== null) failures.push(c.failure);
      if (c.flow > 2 ** 31) aboveInt32++;
    }
    expect(failures).toEqual([]);
    // The flow value must be summed in doubles: some of these flows do not fit an int32.
    expect(aboveInt32).toBeGreaterThan(5);
  });

  test('300 grids of random shapes from 1×1 to 48×48', () => {
    const failures: string[] = [];
    for (let seed = 0; seed < 300; seed++) {
      const rng = seededRandom(30_000 + seed);
      const kind = RANDOM_GRAPH_KINDS[seed % RANDOM_GRAPH_KINDS.length];
      const g = randomGridGraph(rng, randomInt(rng, 1, 48), randomInt(rng, 1, 48), kind);
      const c = checkAgainstReference(g, where(30_000 + seed, kind, g));
      if (c.failure !== null) failures.push(c.failure);
    }
    expect(failures).toEqual([]);
  });

  // The largest grids: 200×150 under STEREOCUT_FULL_TESTS=1, 128×96 by default (three times the pixels of the 64×64 ones).
  const [bigW, bigH] = [scaled(200, 128), scaled(150, 96)];
  test(`${bigW}×${bigH} grids, one of each kind`, () => {
    const failures: string[] = [];
    for (let k = 0; k < RANDOM_GRAPH_KINDS.length; k++) {
      const kind = RANDOM_GRAPH_KINDS[k];
      const g = randomGridGraph(seededRandom(40_000 + k), bigW, bigH, kind);
      const c = checkAgainstReference(g, where(40_000 + k, kind, g));
      if (c.failure !== null) failures.push(c.failure);
    }
    expect(failures).toEqual([]);
  });

  test('α-expansion-shaped graphs: normal and reversed constructions, weak to strong smoothness', () => {
    const failures: string[] = [];
    let seed = 50_000;
    for (const reversed of [false, true]) {
      for (const lambda of [1, 5, 20, 80, 300]) {
        for (const truncation of [1, 2, 4]) {
          const g = expansionLikeGraph(seededRandom(seed), 96, 72, { reversed, lambda, truncation });
          const c = checkAgainstReference(g, `seed ${seed}, expansion reversed=${reversed} λ=${lambda} K=${truncation}`);
          if (c.failure !== null) failures.push(c.failure);
          seed++;
        }
      }
    }
    expect(failures).toEqual([]);
  });

  test('single rows and columns (long paths) and long thin grids', () => {
    const failures: string[] = [];
    const shapes: Array<[number, number]> = [[1000, 1], [1, 1000], [500, 2], [2, 500], [300, 3]];
    shapes.forEach(([w, h], k) => {
      for (const kind of ['uniform', 'tiny', 'sparse', 'large', 'disconnected', 'expansion'] as RandomGraphKind[]) {
        const g = randomGridGraph(seededRandom(60_000 + k), w, h, kind);
        const c = checkAgainstReference(g, where(60_000 + k, kind, g));
        if (c.failure !== null) failures.push(c.failure);
      }
    });
    expect(failures).toEqual([]);
  });
});
