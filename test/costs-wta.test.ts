import { seededRandom as rng } from '../data/random';
import { boxFilter, wtaFromSlices, wtaInit } from '../costs';

/** Window sum read cell by cell (clipped at the borders), then first argmin. */
function naiveWta(vol: Int32Array, W: number, H: number, L: number, win: number): Uint16Array {
  const r = (win - 1) / 2;
  const out = new Uint16Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      let best = Infinity;
      let arg = -1;
      for (let d = 0; d < L; d++) {
        let s = 0;
        for (let yy = Math.max(0, y - r); yy <= Math.min(H - 1, y + r); yy++) {
          for (let xx = Math.max(0, x - r); xx <= Math.min(W - 1, x + r); xx++) s += vol[(yy * W + xx) * L + d];
        }
        if (s < best) {
          best = s;
          arg = d;
        }
      }
      out[y * W + x] = arg;
    }
  }
  return out;
}

/** Random volume; a small value range makes ties frequent, so the tie rule is exercised. */
function randomVolume(rand: () => number, n: number, range: number): Int32Array {
  const v = new Int32Array(n);
  for (let i = 0; i < n; i++) v[i] = Math.floor(rand() * range);
  return v;
}

describe('box filter', () => {
  test('equals a direct clipped window sum for every odd window, including windows wider than the image', () => {
    const rand = rng(7);
    for (let trial = 0; trial < 80; trial++) {
      const W = 1 + Math.floor(rand() * 13);
      const H = 1 + Math.floor(rand() * 13);
      const win = 1 + 2 * Math.floor(rand() * 10);
      const s = randomVolume(rand, W * H, 1000);
      const out = new Float64Array(W * H);
      boxFilter(s, W, H, win, out, new Float64Array(W * H), new Float64Array(W));
      const r = (win - 1) / 2;
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          let want = 0;
          for (let yy = Math.max(0, y - r); yy <= Math.min(H - 1, y + r); yy++) {
            for (let xx = Math.max(0, x - r); xx <= Math.min(W - 1, x + r); xx++) want += s[yy * W + xx];
          }
          expect(out[y * W + x]).toBe(want);
        }
      }
    }
  });

  test('sums of large costs over a large window do not overflow', () => {
    const W = 40;
    const H = 40;
    const s = new Int32Array(W * H).fill(2 ** 31 - 1);
    const out = new Float64Array(W * H);
    boxFilter(s, W, H, 81, out, new Float64Array(W * H), new Float64Array(W));
    expect(out[20 * W + 20]).toBe((2 ** 31 - 1) * W * H);
  });
});

describe('winner-take-all initialization', () => {
  test('matches the naive window sum + argmin on random volumes (many windows, 1×N and N×1 images)', () => {
    const rand = rng(2024);
    const shapes: [number, number][] = [[1, 1], [1, 17], [17, 1], [2, 9], [9, 2]];
    let ties = 0;
    for (let trial = 0; trial < 120; trial++) {
      const [W, H] = trial < shapes.length * 4 ? shapes[trial % shapes.length] : [1 + Math.floor(rand() * 14), 1 + Math.floor(rand() * 14)];
      const L = 1 + Math.floor(rand() * 9);
      const win = 1 + 2 * Math.floor(rand() * 7);
      const range = rand() < 0.5 ? 3 : 500;
      const vol = randomVolume(rand, W * H * L, range);
      const got = wtaInit(vol, W, H, L, win);
      const want = naiveWta(vol, W, H, L, win);
      expect(Array.from(got)).toEqual(Array.from(want));
      if (range === 3 && L > 1) ties++;
    }
    expect(ties).toBeGreaterThan(20);
  });

  test('ties go to the smallest disparity', () => {
    const vol = new Int32Array(3 * 2 * 4).fill(5);
    expect(Array.from(wtaInit(vol, 3, 2, 4, 3))).toEqual([0, 0, 0, 0, 0, 0]);
    // Labels 1 and 3 tie below the rest everywhere: 1 wins.
    for (let p = 0; p < 6; p++) {
      vol[p * 4 + 1] = 2;
      vol[p * 4 + 3] = 2;
    }
    expect(Array.from(wtaInit(vol, 3, 2, 4, 1))).toEqual([1, 1, 1, 1, 1, 1]);
  });

  test('the slice-driven variant equals the volume variant, asking for each disparity once', () => {
    const rand = rng(55);
    for (let trial = 0; trial < 20; trial++) {
      const W = 1 + Math.floor(rand() * 20);
      const H = 1 + Math.floor(rand() * 20);
      const L = 1 + Math.floor(rand() * 12);
      const vol = randomVolume(rand, W * H * L, 100);
      const asked: number[] = [];
      const fromSlices = wtaFromSlices(
        (d) => {
          asked.push(d);
          const s = new Int32Array(W * H);
          for (let p = 0; p < W * H; p++) s[p] = vol[p * L + d];
          return s;
        },
        W,
        H,
        L,
        5,
      );
      expect(asked).toEqual(Array.from({ length: L }, (_, d) => d));
      expect(Array.from(fromSlices)).toEqual(Array.from(wtaInit(vol, W, H, L, 5)));
    }
  });

  test('bad arguments are one-line errors', () => {
    const vol = new Int32Array(4 * 3 * 2);
    expect(() => wtaInit(vol, 4, 3, 2, 4)).toThrow(/^wta: window: got 4, expected an odd integer ≥ 1$/);
    expect(() => wtaInit(vol, 4, 3, 2, 0)).toThrow(/^wta: window: /);
    expect(() => wtaInit(vol, 4, 3, 3, 9)).toThrow(/^wta: cost volume has 24 entries, expected 36 \(4×3×3\)$/);
    expect(() => wtaInit(vol, 4, 3, 0, 9)).toThrow(/^wta: ndisp: /);
    expect(() => wtaFromSlices(() => new Int32Array(5), 4, 3, 2)).toThrow(/^wta: slice for disparity 0 has 5 entries, expected 12/);
  });
});
