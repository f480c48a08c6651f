import { seededRandom } from '../data/random';
import { computeEnergy, type MrfEnergy, type SmoothnessKind } from '../data/energy';
import { alphaExpansion } from '../expansion/alphaExpansion';
import { BandedMoveScratch, BandedMoveSolver } from '../expansion/bandedMoves';
import { GraphMoveSolver } from '../expansion/moveSolver';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { SparseCut } from '../graphcut/sparseCut';
import { ReferenceFlowNetwork } from './support/referenceMaxflow';
import { randomEnergy } from './support/randomEnergy';

/** A random banded energy: randomEnergy's volume restricted to a random band per pixel, and the same energy as a volume with a forbidding cost outside the bands. */
function randomBanded(rand: () => number, W: number, H: number, L: number, kind: SmoothnessKind): { banded: MrfEnergy; full: MrfEnergy; initial: Uint16Array } {
  const e = randomEnergy(rand, W, H, L, kind);
  const n = W * H;
  const vol = (e.data as { costs: Int32Array }).costs;
  const lo = new Uint16Array(n);
  const offset = new Int32Array(n + 1);
  const initial = new Uint16Array(n);
  const his: number[] = [];
  for (let p = 0; p < n; p++) {
    const a = Math.floor(rand() * L);
    const b = Math.min(L - 1, a + Math.floor(rand() * 4));
    lo[p] = a;
    his.push(b);
    offset[p + 1] = offset[p] + b - a + 1;
    initial[p] = a + Math.floor(rand() * (b - a + 1));
  }
  const costs = new Int32Array(offset[n]);
  // Outside the bands: more than any move could save at one pixel (its data cost plus four edges at the largest V), so no optimal move takes such a label.
  let wMax = 0;
  for (let p = 0; p < n; p++) wMax = Math.max(wMax, e.wH[p], e.wV[p]);
  const forbid = 40 + 4 * wMax * (kind === 'potts' ? 1 : e.truncation) + 1;
  const full = new Int32Array(n * L).fill(forbid);
  for (let p = 0; p < n; p++) {
    for (let l = lo[p]; l <= his[p]; l++) {
      costs[offset[p] + l - lo[p]] = vol[p * L + l];
      full[p * L + l] = vol[p * L + l];
    }
  }
  return { banded: { ...e, data: { kind: 'banded', lo, offset, costs } }, full: { ...e, data: { kind: 'volume', costs: full } }, initial };
}

describe('banded α-expansion moves', () => {
  test('each run equals α-expansion with BK on the full grid whose costs forbid every label outside the bands: same labels and energies, move by move (300 random energies, one scratch for all, as a strip thread keeps)', async () => {
    const rand = seededRandom(7);
    const scratch = new BandedMoveScratch();
    for (let trial = 0; trial < 300; trial++) {
      const W = 1 + Math.floor(rand() * 9);
      const H = 1 + Math.floor(rand() * 9);
      const L = 2 + Math.floor(rand() * 9);
      const kind: SmoothnessKind = rand() < 0.6 ? 'linear' : 'potts';
      const { banded, full, initial } = randomBanded(rand, W, H, L, kind);
      const order = (['frequent', 'sequential', 'random'] as const)[trial % 3];
      const seen: number[][] = [];
      const a = await alphaExpansion(banded, initial, new BandedMoveSolver(banded, scratch), { cycles: 3, order, seed: trial, checkMoves: true, onMove: (m) => seen.push([m.alpha, m.changed]) });
      const fullSeen: number[][] = [];
      const b = await alphaExpansion(full, initial, new GraphMoveSolver(full, new BoykovKolmogorovSolver(), 'reversed'), { cycles: 3, order, seed: trial, onMove: (m) => fullSeen.push([m.alpha, m.changed]) });
      expect(Array.from(a.labels)).toEqual(Array.from(b.labels));
      expect(a.cycles.map((c) => c.energy.total)).toEqual(b.cycles.map((c) => c.energy.total));
      expect(seen).toEqual(fullSeen);
      expect(computeEnergy(banded, a.labels).total).toBe(a.finalEnergy.total);
    }
  });

  test('a solver whose scratch went to a later solver refuses to move, and the later one moves as with a scratch of its own', async () => {
    const rand = seededRandom(5);
    const { banded, initial } = randomBanded(rand, 6, 5, 5, 'linear');
    const scratch = new BandedMoveScratch();
    const first = new BandedMoveSolver(banded, scratch);
    const second = new BandedMoveSolver(banded, scratch);
    await expect(first.move(1, initial.slice())).rejects.toThrow(/scratch was given to a later solver/);
    const shared = await alphaExpansion(banded, initial, second, { cycles: 2 });
    const own = await alphaExpansion(banded, initial, new BandedMoveSolver(banded), { cycles: 2 });
    expect(Array.from(shared.labels)).toEqual(Array.from(own.labels));
    expect(shared.finalEnergy).toEqual(own.finalEnergy);
  });

  test('the energy refuses a label outside its band, and a non-metric term is refused', async () => {
    const rand = seededRandom(3);
    const { banded } = randomBanded(rand, 3, 2, 6, 'linear');
    const labels = new Uint16Array(6);
    const lo = (banded.data as { lo: Uint16Array }).lo;
    labels.set(lo);
    expect(() => computeEnergy(banded, labels)).not.toThrow();
    const p = lo.findIndex((l) => l > 0);
    if (p >= 0) { labels[p] = 0; expect(() => computeEnergy(banded, labels)).toThrow(/outside its band/); }
    expect(() => new BandedMoveSolver({ ...banded, smoothness: 'quadratic', truncation: 9 })).toThrow(/not a metric/);
  });
});

describe('sparse cut', () => {
  test('max-flow value and canonical cut equal the reference on random graphs over random pixel subsets, one cut reused (500 graphs)', () => {
    const rand = seededRandom(11);
    const cut = new SparseCut();
    for (let trial = 0; trial < 500; trial++) {
      const W = 1 + Math.floor(rand() * 7);
      const H = 1 + Math.floor(rand() * 7);
      const ids = new Int32Array(W * H).fill(-1);
      let m = 0;
      for (let p = 0; p < W * H; p++) if (rand() < 0.7) ids[p] = m++;
      cut.begin(m);
      const edges: Array<[number, number, number]> = [];
      const src = Array.from({ length: m }, () => (rand() < 0.5 ? Math.floor(rand() * 20) : 0));
      const snk = Array.from({ length: m }, () => (rand() < 0.5 ? Math.floor(rand() * 20) : 0));
      for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) {
        const i = ids[y * W + x];
        if (i < 0) continue;
        for (const [d, q] of [[0, x + 1 < W ? y * W + x + 1 : -1], [2, y + 1 < H ? (y + 1) * W + x : -1]] as const) {
          if (q < 0 || ids[q] < 0) continue;
          const c1 = Math.floor(rand() * 15);
          const c2 = Math.floor(rand() * 15);
          cut.link(i, d, ids[q], c1, c2);
          edges.push([i, ids[q], c1], [ids[q], i, c2]);
        }
      }
      let through = 0;
      for (let i = 0; i < m; i++) { const k = Math.min(src[i], snk[i]); through += k; cut.terminal(i, src[i] - k, snk[i] - k); }
      const side = new Uint8Array(m);
      const { flow } = cut.solve(side);
      // Dinic's algorithm on a plain adjacency list: node m is the source, m + 1 the sink.
      const net = new ReferenceFlowNetwork(m + 2);
      for (let i = 0; i < m; i++) { net.addEdge(m, i, src[i]); net.addEdge(i, m + 1, snk[i]); }
      for (const [u, v, c] of edges) net.addEdge(u, v, c);
      expect(flow + through).toBe(net.maxFlow(m, m + 1));
      expect(Array.from(side)).toEqual(Array.from(net.nodesReaching(m + 1).subarray(0, m)));
    }
  });
});
