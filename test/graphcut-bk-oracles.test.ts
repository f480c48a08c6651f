import { seededRandom } from '../data/random';
import { bruteForceMinCut } from './support/bruteForce';
import { createGridGraph, cutCapacity, validateGridGraph, type GridGraph } from '../graphcut/gridGraph';
import { expansionLikeGraph, LARGE_CAPACITY, randomGridGraph, randomInt, RANDOM_GRAPH_KINDS } from './support/randomGraphs';
import { ReferenceFlowNetwork, referenceMaxFlow } from './support/referenceMaxflow';

/**
 * The oracles the max-flow tests rely on are tested themselves: the Gray-code
 * brute force against a naive enumeration that recomputes every cut from
 * scratch, the Dinic reference against the brute force and a textbook
 * network, and the random generators for determinism and validity.
 */

/** Every cut computed from scratch with cutCapacity: slow, but obviously right. */
function naiveMinCut(g: GridGraph): { minCut: number; minimal: number[]; maximal: number[]; count: number } {
  const n = g.width * g.height;
  const side = new Uint8Array(n);
  let best = Infinity;
  let count = 0;
  let inter: number[] = [];
  let union: number[] = [];
  for (let mask = 0; mask < 2 ** n; mask++) {
    for (let p = 0; p < n; p++) side[p] = (mask >> p) & 1;
    const c = cutCapacity(g, side);
    if (c < best) {
      best = c;
      count = 1;
      inter = Array.from(side);
      union = Array.from(side);
    } else if (c === best) {
      count++;
      inter = inter.map((v, p) => v & side[p]);
      union = union.map((v, p) => v | side[p]);
    }
  }
  return { minCut: best, minimal: inter, maximal: union, count };
}

describe('bruteForceMinCut', () => {
  test('agrees with a from-scratch enumeration on 400 graphs of up to 9 pixels', () => {
    const failures: string[] = [];
    for (let seed = 0; seed < 400; seed++) {
      const rng = seededRandom(100_000 + seed);
      const kind = RANDOM_GRAPH_KINDS[seed % RANDOM_GRAPH_KINDS.length];
      const g = randomGridGraph(rng, randomInt(rng, 1, 3), randomInt(rng, 1, 3), kind);
      const fast = bruteForceMinCut(g);
      const slow = naiveMinCut(g);
      const same = fast.minCut === slow.minCut && fast.minimumCount === slow.count
        && Array.from(fast.minimalSinkSide).join() === slow.minimal.join()
        && Array.from(fast.maximalSinkSide).join() === slow.maximal.join();
      if (!same) failures.push(`seed ${100_000 + seed} ${kind} ${g.width}×${g.height}`);
    }
    expect(failures).toEqual([]);
  });

  test('a hand-made 2×1 graph: s→a 3, a→t 1, a→b 2, b→t 5 has min cut 3 with sink side {b}', () => {
    const g = createGridGraph(2, 1);
    g.source[0] = 3;
    g.sink[0] = 1;
    g.right[0] = 2;
    g.sink[1] = 5;
    const b = bruteForceMinCut(g);
    expect(b.minCut).toBe(3);
    // Sink sides and their cuts: {} 1 + 5 = 6, {a} 3 + 5 = 8, {b} 1 + 2 = 3, {a, b} 3: two minimum cuts.
    expect(b.minimumCount).toBe(2);
    expect(Array.from(b.minimalSinkSide)).toEqual([0, 1]);
    expect(Array.from(b.maximalSinkSide)).toEqual([1, 1]);
  });

  test('refuses graphs too large to enumerate', () => {
    expect(() => bruteForceMinCut(createGridGraph(5, 5))).toThrow('bruteForce: 5×5 has 25 pixels, more than the 20 it can enumerate');
  });
});

describe('ReferenceFlowNetwork (Dinic)', () => {
  test('the classic six-node textbook network has maximum flow 23', () => {
    const net = new ReferenceFlowNetwork(6);
    const [s, v1, v2, v3, v4, t] = [0, 1, 2, 3, 4, 5];
    net.addEdge(s, v1, 16);
    net.addEdge(s, v2, 13);
    net.addEdge(v1, v3, 12);
    net.addEdge(v2, v1, 4);
    net.addEdge(v2, v4, 14);
    net.addEdge(v3, v2, 9);
    net.addEdge(v3, t, 20);
    net.addEdge(v4, v3, 7);
    net.addEdge(v4, t, 4);
    expect(net.maxFlow(s, t)).toBe(23);
    // The minimum cut is {s, v1, v2, v4 | v3, t}: 12 + 7 + 4 = 23; only v3 and t still reach t.
    expect(Array.from(net.nodesReaching(t))).toEqual([0, 0, 0, 1, 0, 1]);
  });

  test('parallel edges add up', () => {
    const net = new ReferenceFlowNetwork(4);
    // s→a twice (1 + 1), s→b 1, a→b 2, a→t 1, b→t 2: both the source side (3) and the sink side (3) limit the flow to 3.
    net.addEdge(0, 1, 1);
    net.addEdge(0, 1, 1);
    net.addEdge(0, 2, 1);
    net.addEdge(1, 2, 2);
    net.addEdge(1, 3, 1);
    net.addEdge(2, 3, 2);
    expect(net.maxFlow(0, 3)).toBe(3);
  });

  test('rejects negative capacities and networks without two nodes', () => {
    expect(() => new ReferenceFlowNetwork(1)).toThrow('referenceMaxflow: a network needs at least 2 nodes (got 1)');
    expect(() => new ReferenceFlowNetwork(3).addEdge(0, 1, -2)).toThrow('referenceMaxflow: edge 0→1 has negative capacity -2');
  });

  test('on 2000 tiny grids: flow = brute-force minimum, residual sink reach = smallest minimum sink side', () => {
    const failures: string[] = [];
    for (let seed = 0; seed < 2000; seed++) {
      const rng = seededRandom(110_000 + seed);
      const kind = RANDOM_GRAPH_KINDS[seed % RANDOM_GRAPH_KINDS.length];
      const g = randomGridGraph(rng, randomInt(rng, 1, 4), randomInt(rng, 1, 4), kind);
      const ref = referenceMaxFlow(g);
      const b = bruteForceMinCut(g);
      if (ref.flow !== b.minCut || Array.from(ref.sinkSide).join() !== Array.from(b.minimalSinkSide).join()) {
        failures.push(`seed ${110_000 + seed} ${kind} ${g.width}×${g.height}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('random grid graphs', () => {
  test('the same seed gives the same graph, different seeds different graphs', () => {
    for (const kind of RANDOM_GRAPH_KINDS) {
      if (kind === 'zero') continue;
      const a = randomGridGraph(seededRandom(7), 20, 15, kind);
      const b = randomGridGraph(seededRandom(7), 20, 15, kind);
      const c = randomGridGraph(seededRandom(8), 20, 15, kind);
      expect(a).toEqual(b);
      expect(a).not.toEqual(c);
    }
  });

  test('every kind is a valid grid graph with capacities up to LARGE_CAPACITY', () => {
    for (let seed = 0; seed < 80; seed++) {
      const rng = seededRandom(seed);
      const kind = RANDOM_GRAPH_KINDS[seed % RANDOM_GRAPH_KINDS.length];
      const g = randomGridGraph(rng, randomInt(rng, 1, 40), randomInt(rng, 1, 40), kind);
      expect(() => validateGridGraph(g)).not.toThrow();
      for (const a of [g.source, g.sink, g.right, g.rightRev, g.down, g.downRev]) {
        expect(Math.max(0, ...a)).toBeLessThanOrEqual(LARGE_CAPACITY);
      }
    }
  });

  test('kinds have their stated shape', () => {
    const sum = (a: Int32Array): number => a.reduce((s, v) => s + v, 0);
    const zero = randomGridGraph(seededRandom(1), 9, 9, 'zero');
    for (const a of [zero.source, zero.sink, zero.right, zero.rightRev, zero.down, zero.downRev]) expect(sum(a)).toBe(0);
    const terminals = randomGridGraph(seededRandom(1), 9, 9, 'terminals');
    expect(sum(terminals.right) + sum(terminals.rightRev) + sum(terminals.down) + sum(terminals.downRev)).toBe(0);
    expect(sum(terminals.source)).toBeGreaterThan(0);
    const large = randomGridGraph(seededRandom(1), 9, 9, 'large');
    expect(Math.max(...large.right)).toBeGreaterThan(LARGE_CAPACITY - 1001);
    // Disconnected: some full column line or row line carries no grid edge at all.
    let zeroLines = 0;
    for (let seed = 0; seed < 20; seed++) {
      const g = randomGridGraph(seededRandom(seed), 12, 10, 'disconnected');
      for (let x = 0; x + 1 < 12; x++) {
        let s = 0;
        for (let y = 0; y < 10; y++) s += g.right[y * 12 + x] + g.rightRev[y * 12 + x];
        if (s === 0) zeroLines++;
      }
      for (let y = 0; y + 1 < 10; y++) {
        let s = 0;
        for (let x = 0; x < 12; x++) s += g.down[y * 12 + x] + g.downRev[y * 12 + x];
        if (s === 0) zeroLines++;
      }
    }
    expect(zeroLines).toBeGreaterThan(40);
  });

  test('expansion-shaped graphs: one edge direction per construction, both terminals used, non-trivial cut', () => {
    const normal = expansionLikeGraph(seededRandom(3), 60, 40, { reversed: false });
    const reversed = expansionLikeGraph(seededRandom(3), 60, 40, { reversed: true });
    const sum = (a: Int32Array): number => a.reduce((s, v) => s + v, 0);
    expect(sum(normal.rightRev) + sum(normal.downRev)).toBe(0);
    expect(sum(normal.right) + sum(normal.down)).toBeGreaterThan(0);
    expect(sum(reversed.right) + sum(reversed.down)).toBe(0);
    expect(sum(reversed.rightRev) + sum(reversed.downRev)).toBeGreaterThan(0);
    for (const g of [normal, reversed]) {
      expect(sum(g.source)).toBeGreaterThan(0);
      expect(sum(g.sink)).toBeGreaterThan(0);
      const cut = referenceMaxFlow(g).sinkSide;
      const sinkCount = cut.reduce((s, v) => s + v, 0);
      expect(sinkCount).toBeGreaterThan(0);
      expect(sinkCount).toBeLessThan(cut.length);
    }
  });

  test('rejects an unknown kind with a clear message', () => {
    expect(() => randomGridGraph(seededRandom(1), 3, 3, 'bogus' as never)).toThrow("randomGraphs: unknown graph kind 'bogus'");
  });
});
