import type { MrfEnergy, SmoothnessKind } from '../../data/energy';

/** A random MRF energy: data costs 0..39, weights 0..12 (a tenth of them 0), a random truncation. */
export function randomEnergy(rand: () => number, W: number, H: number, L: number, kind: SmoothnessKind): MrfEnergy {
  const n = W * H;
  const data = new Int32Array(n * L);
  for (let i = 0; i < data.length; i++) data[i] = Math.floor(rand() * 40);
  const wH = new Int32Array(n);
  const wV = new Int32Array(n);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      if (x + 1 < W) wH[p] = rand() < 0.1 ? 0 : 1 + Math.floor(rand() * 12);
      if (y + 1 < H) wV[p] = rand() < 0.1 ? 0 : 1 + Math.floor(rand() * 12);
    }
  }
  const truncation = kind === 'quadratic' ? 1 + Math.floor(rand() * 20) : 1 + Math.floor(rand() * 5);
  return { width: W, height: H, labels: L, data: { kind: 'volume', costs: data }, smoothness: kind, truncation, wH, wV };
}

/** A uniformly random labeling. */
export function randomLabels(rand: () => number, n: number, L: number): Uint16Array {
  const l = new Uint16Array(n);
  for (let i = 0; i < n; i++) l[i] = Math.floor(rand() * L);
  return l;
}
