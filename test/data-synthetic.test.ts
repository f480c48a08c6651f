import { seededRandom } from '../data/random';
import { generateSynthetic, generateSyntheticScene, type SyntheticResult } from '../data/synthetic';

/**
 * Synthetic scenes: determinism, option handling, and ground truth checked
 * against the rendered images themselves (an independent recomputation: the
 * right view is rendered on its own, so a wrong disparity or a wrong
 * visibility flag shows up as a colour mismatch or a surface-id mismatch).
 */

function bytesOf(a: Float32Array): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

const SHAPES: { width: number; height: number; ndisp: number }[] = [
  { width: 160, height: 120, ndisp: 16 },
  { width: 64, height: 48, ndisp: 10 },
  { width: 97, height: 53, ndisp: 24 },
  { width: 16, height: 16, ndisp: 4 },
  { width: 200, height: 40, ndisp: 60 },
  { width: 48, height: 96, ndisp: 8 },
];

const CASES: { width: number; height: number; ndisp: number; seed: number }[] = [];
for (let k = 0; k < 24; k++) CASES.push({ ...SHAPES[k % SHAPES.length], seed: k * 7919 + 1 });

describe('generateSynthetic: determinism and options', () => {
  test('same seed gives identical left, right, ground truth and masks', () => {
    for (const c of CASES.slice(0, 8)) {
      const a = generateSyntheticScene(c);
      const b = generateSyntheticScene(c);
      expect(bytesOf(a.left.data).equals(bytesOf(b.left.data))).toBe(true);
      expect(bytesOf(a.right.data).equals(bytesOf(b.right.data))).toBe(true);
      expect(bytesOf(a.groundTruth!).equals(bytesOf(b.groundTruth!))).toBe(true);
      expect(bytesOf(a.groundTruthRight!).equals(bytesOf(b.groundTruthRight!))).toBe(true);
      expect(Buffer.from(a.masks.nonocc!).equals(Buffer.from(b.masks.nonocc!))).toBe(true);
    }
  });

  test('different seeds give different images and ground truth', () => {
    const seen = new Set<string>();
    for (let seed = 0; seed < 12; seed++) {
      const s = generateSyntheticScene({ width: 64, height: 48, ndisp: 12, seed });
      const key = bytesOf(s.left.data).toString('base64') + bytesOf(s.groundTruth!).toString('base64');
      expect(seen.has(key)).toBe(false);
      seen.add(key);
      const t = generateSyntheticScene({ width: 64, height: 48, ndisp: 12, seed: seed + 1 });
      expect(bytesOf(s.right.data).equals(bytesOf(t.right.data))).toBe(false);
      expect(bytesOf(s.groundTruth!).equals(bytesOf(t.groundTruth!))).toBe(false);
    }
  });

  test('sizes, ndisp and scene fields are honoured', () => {
    for (const c of CASES) {
      const s = generateSyntheticScene(c);
      const n = c.width * c.height;
      for (const r of [s.left, s.right]) {
        expect([r.width, r.height, r.channels, r.maxval, r.data.length]).toEqual([c.width, c.height, 3, 255, 3 * n]);
      }
      expect(s.groundTruth!.length).toBe(n);
      expect(s.groundTruthRight!.length).toBe(n);
      expect(s.masks.nonocc!.length).toBe(n);
      expect(s.masks.all!.length).toBe(n);
      expect(s.ndisp).toBe(c.ndisp);
      expect(s.ndispSource).toBe('generator');
      expect(s.layout).toBe('synthetic');
      expect(s.groundTruthScale).toBe(1);
      expect(s.nonoccDerived).toBe(false);
    }
  });

  test('defaults are 160x120 with 16 labels', () => {
    const s = generateSyntheticScene();
    expect([s.left.width, s.left.height, s.ndisp]).toEqual([160, 120, 16]);
  });

  test.each([
    [{ width: 15 }, /width: got 15, expected an integer in 16\.\.8192/],
    [{ width: 40.5 }, /width: got 40\.5, expected an integer/],
    [{ height: 0 }, /height: got 0, expected an integer in 16\.\.8192/],
    [{ ndisp: 3 }, /ndisp: got 3, expected an integer in 4\.\.80/],
    [{ width: 40, ndisp: 21 }, /ndisp: got 21, expected an integer in 4\.\.20/],
    [{ seed: 1.5 }, /seed: got 1\.5, expected an integer in 0\.\.4294967295/],
    // The state is 32 bits: these would alias 4294967295 and 1.
    [{ seed: -1 }, /seed: got -1, expected an integer in 0\.\.4294967295/],
    [{ seed: 2 ** 32 + 1 }, /seed: got 4294967297, expected an integer in 0\.\.4294967295/],
  ])('bad option %j is a one-line error naming it', (opts, re) => {
    expect(() => generateSyntheticScene(opts)).toThrow(re);
  });

  test('mulberry32 is deterministic, in [0, 1), and matches the published reference values', () => {
    // Reference: the original mulberry32 (Tommy Ettinger) computed with 32-bit integer arithmetic in BigInt.
    const ref = (seed: number, count: number): number[] => {
      const M = 0xffffffffn;
      const imul = (a: bigint, b: bigint): bigint => (a * b) & M;
      let s = BigInt(seed >>> 0);
      const out: number[] = [];
      for (let i = 0; i < count; i++) {
        s = (s + 0x6d2b79f5n) & M;
        let t = s;
        t = imul(t ^ (t >> 15n), t | 1n);
        t = (t ^ ((t + imul(t ^ (t >> 7n), t | 61n)) & M)) & M;
        out.push(Number((t ^ (t >> 14n)) & M) / 4294967296);
      }
      return out;
    };
    for (const seed of [0, 1, 42, 123456789, 0xffffffff]) {
      const g = seededRandom(seed);
      const got = Array.from({ length: 200 }, () => g());
      expect(got).toEqual(ref(seed, 200));
      for (const v of got) expect(v >= 0 && v < 1).toBe(true);
    }
  });
});

function checkGroundTruth(res: SyntheticResult, label: string): void {
  const { scene, surfaces, leftSurface, rightSurface } = res;
  const W = scene.left.width;
  const H = scene.left.height;
  const gtL = scene.groundTruth!;
  const gtR = scene.groundTruthRight!;
  const nonocc = scene.masks.nonocc!;
  const all = scene.masks.all!;
  const L = scene.left.data;
  const R = scene.right.data;
  let nonoccCount = 0;
  let exactChecked = 0;
  let colourMismatch = 0;
  let visibilityMismatch = 0;
  let rangeBad = 0;
  let planeBad = 0;
  let notSubset = 0;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const d = gtL[i];
      if (!(d >= 0 && d <= scene.ndisp - 1)) rangeBad++;
      if (!(gtR[i] >= 0 && gtR[i] <= scene.ndisp - 1)) rangeBad++;
      if (nonocc[i] && !all[i]) notSubset++;
      if (nonocc[i]) nonoccCount++;
      // The left ground truth is the plane of the surface shown there.
      const s = surfaces[leftSurface[i]];
      if (!(Math.abs(d - (s.a + s.b * x + s.c * y)) < 1e-3)) planeBad++;
      // Fronto-parallel surface at an integer disparity: the right image is an exact shift.
      if (s.b === 0 && s.c === 0 && Number.isInteger(d)) {
        const xr = x - d;
        const inside = xr >= 0 && xr < W;
        // Independent visibility: the right view, rendered on its own, shows this surface at xr.
        const seen = inside && rightSurface[y * W + xr] === leftSurface[i];
        if (seen !== (nonocc[i] === 1)) visibilityMismatch++;
        if (nonocc[i]) {
          exactChecked++;
          for (let c = 0; c < 3; c++) if (L[3 * i + c] !== R[3 * (y * W + xr) + c]) colourMismatch++;
          if (gtR[y * W + xr] !== d) colourMismatch++;
        }
      }
    }
  }
  const msg = `${label}: range ${rangeBad}, plane ${planeBad}, subset ${notSubset}, visibility ${visibilityMismatch}, colour ${colourMismatch}`;
  expect(msg).toBe(`${label}: range 0, plane 0, subset 0, visibility 0, colour 0`);
  expect(exactChecked).toBeGreaterThan(0);
  // Occlusions exist: at least the left border where x − d < 0.
  expect(nonoccCount).toBeLessThan(W * H);
  expect(nonoccCount).toBeGreaterThan(0.3 * W * H);
  expect(all.every((v) => v === 1)).toBe(true);
  // Every value a pixel shows in either view is an integer 0..255.
  for (const v of L) if (!(Number.isInteger(v) && v >= 0 && v <= 255)) throw new Error(`${label}: left sample ${v}`);
  for (const v of R) if (!(Number.isInteger(v) && v >= 0 && v <= 255)) throw new Error(`${label}: right sample ${v}`);
}

describe('generateSynthetic: exact ground truth', () => {
  test.each(CASES.map((c) => [`${c.width}x${c.height} ndisp ${c.ndisp} seed ${c.seed}`, c] as const))('%s', (label, c) => {
    checkGroundTruth(generateSynthetic(c), label);
  });

  test('a large scene (1500x1000, 150 labels) generates with valid ground truth', () => {
    const res = generateSynthetic({ width: 1500, height: 1000, ndisp: 150, seed: 11 });
    const s = res.scene;
    expect([s.left.width, s.left.height, s.ndisp]).toEqual([1500, 1000, 150]);
    let lo = Infinity;
    let hi = -Infinity;
    for (const d of s.groundTruth!) { lo = Math.min(lo, d); hi = Math.max(hi, d); }
    expect(lo).toBeGreaterThanOrEqual(0);
    expect(hi).toBeLessThanOrEqual(149);
    // The objects reach the near part of the range, so the scene uses most of the labels.
    expect(hi).toBeGreaterThan(100);
  });
});
