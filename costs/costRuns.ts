import { popcount32 } from './census';
import type { ResolvedDataCostOptions } from './costOptions';

/**
 * The per-pixel arithmetic of the data costs (DataCostMatcher, dataCost.ts):
 * runs of pixels of one row against the right image, for each cost kind,
 * and the census volume a pixel at a time. The matcher decides which
 * pixels and labels; these only compute.
 */

/*
 * Branch-free integer |v| and min(a, b) for int32 values: costs of real
 * images straddle zero and the truncation unpredictably, and mispredicted
 * branches (or calls through Math, which some embeddings do not inline)
 * were several times slower than the arithmetic itself.
 */
function iabs(v: number): number {
  const m = v >> 31;
  return (v ^ m) - m;
}

function imin(a: number, b: number): number {
  const t = a - b;
  return b + (t & (t >> 31));
}

/*
 * Run kernels: n left pixels starting at sample index il, matched with right
 * pixels starting at ir and advancing irStep samples per pixel (C for a
 * normal run, 0 for the clamped border). Written as free functions over
 * typed arrays, with RGB unrolled, so the JIT keeps them tight: no
 * allocation, no per-pixel branching on the kind.
 */

export function sadRun(
  L: Int32Array, R: Int32Array, C: number, il: number, ir: number, irStep: number, n: number,
  scale: number, cap: number, out: Int32Array, o: number, stride: number,
): void {
  for (let k = 0; k < n; k++, il += C, ir += irStep, o += stride) {
    let raw: number;
    if (C === 3) {
      const a = L[il] - R[ir];
      const b = L[il + 1] - R[ir + 1];
      const c = L[il + 2] - R[ir + 2];
      raw = iabs(a) + iabs(b) + iabs(c);
    } else {
      const a = L[il] - R[ir];
      raw = iabs(a);
    }
    out[o] = imin(raw * scale, cap);
  }
}

export function ssdRun(
  L: Int32Array, R: Int32Array, C: number, il: number, ir: number, irStep: number, n: number,
  scale: number, cap: number, out: Int32Array, o: number, stride: number,
): void {
  for (let k = 0; k < n; k++, il += C, ir += irStep, o += stride) {
    let raw: number;
    if (C === 3) {
      const a = L[il] - R[ir];
      const b = L[il + 1] - R[ir + 1];
      const c = L[il + 2] - R[ir + 2];
      raw = a * a + b * b + c * c;
    } else {
      const a = L[il] - R[ir];
      raw = a * a;
    }
    out[o] = imin(raw * scale, cap);
  }
}

export function sgradRun(
  L: Int32Array, R: Int32Array, gxL: Int32Array, gyL: Int32Array, gxR: Int32Array, gyR: Int32Array,
  C: number, il: number, ir: number, irStep: number, n: number,
  scale: number, cap: number, out: Int32Array, o: number, stride: number,
): void {
  for (let k = 0; k < n; k++, il += C, ir += irStep, o += stride) {
    let raw = 0;
    if (C === 3) {
      const a0 = L[il] - R[ir];
      const a1 = L[il + 1] - R[ir + 1];
      const a2 = L[il + 2] - R[ir + 2];
      const x0 = gxL[il] - gxR[ir];
      const x1 = gxL[il + 1] - gxR[ir + 1];
      const x2 = gxL[il + 2] - gxR[ir + 2];
      const y0 = gyL[il] - gyR[ir];
      const y1 = gyL[il + 1] - gyR[ir + 1];
      const y2 = gyL[il + 2] - gyR[ir + 2];
      raw =
        iabs(a0) + iabs(a1) + iabs(a2) +
        iabs(x0) + iabs(x1) + iabs(x2) +
        iabs(y0) + iabs(y1) + iabs(y2);
    } else {
      const a = L[il] - R[ir];
      const gx = gxL[il] - gxR[ir];
      const gy = gyL[il] - gyR[ir];
      raw = iabs(a) + iabs(gx) + iabs(gy);
    }
    out[o] = imin(raw * scale, cap);
  }
}

/**
 * One left pixel pl against n right pixels from pr advancing by prStep (−1:
 * the labels of a band, one disparity more each; 0: the clamped border):
 * Hamming distances of their codes, as hammingRun gives them.
 */
export function hammingBand(cL: Int32Array, cR: Int32Array, K: number, pl: number, pr: number, prStep: number, n: number, scale: number, cap: number, out: Int32Array, o: number): void {
  const a = pl * K;
  if (K === 2) {
    const l0 = cL[a];
    const l1 = cL[a + 1];
    for (let k = 0; k < n; k++, pr += prStep) {
      const b = pr * 2;
      out[o + k] = imin((popcount32(l0 ^ cR[b]) + popcount32(l1 ^ cR[b + 1])) * scale, cap);
    }
    return;
  }
  for (let k = 0; k < n; k++, pr += prStep) {
    let raw = 0;
    for (let w = 0, b = pr * K; w < K; w++) raw += popcount32(cL[a + w] ^ cR[b + w]);
    out[o + k] = imin(raw * scale, cap);
  }
}

/** n left pixels from pixel index pl against right pixels from pr advancing by prStep: Hamming distances of their codes. */
export function hammingRun(cL: Int32Array, cR: Int32Array, K: number, pl: number, pr: number, prStep: number, n: number, scale: number, cap: number, out: Int32Array, o: number, stride: number): void {
  if (K === 2) {
    for (let k = 0; k < n; k++, pl++, pr += prStep, o += stride) {
      const a = pl * 2;
      const b = pr * 2;
      const raw = popcount32(cL[a] ^ cR[b]) + popcount32(cL[a + 1] ^ cR[b + 1]);
      out[o] = imin(raw * scale, cap);
    }
    return;
  }
  for (let k = 0; k < n; k++, pl++, pr += prStep, o += stride) {
    let raw = 0;
    for (let w = 0, a = pl * K, b = pr * K; w < K; w++) raw += popcount32(cL[a + w] ^ cR[b + w]);
    out[o] = imin(raw * scale, cap);
  }
}

/**
 * The census volume pixel by pixel, all labels of a pixel in one run, so
 * the writes are contiguous rather than strided by L. The same values as
 * DataCostMatcher.costRow. cL, cR: the codes of rows y0 .. y1 − 1 at least,
 * K words a pixel.
 */
export function censusVolumeRows(vol: Int32Array, L: number, y0: number, y1: number, W: number, K: number, cL: Int32Array, cR: Int32Array, options: ResolvedDataCostOptions): void {
  const { scale, maxCost: cap, border, minDisp } = options;
  for (let y = y0; y < y1; y++) {
    const rowPix = y * W;
    for (let x = 0; x < W; x++) {
      const p = rowPix + x;
      let o = p * L;
      const a = p * K;
      // Labels 0 .. valid − 1 match inside the right image (x − minDisp − l ≥ 0); the rest all get the border cost.
      const valid = Math.max(0, Math.min(L, x - minDisp + 1));
      let b = (p - minDisp) * K;
      if (K === 2) {
        const a0 = cL[a];
        const a1 = cL[a + 1];
        for (let l = 0; l < valid; l++, o++, b -= 2) vol[o] = imin((popcount32(a0 ^ cR[b]) + popcount32(a1 ^ cR[b + 1])) * scale, cap);
      } else {
        for (let l = 0; l < valid; l++, o++, b -= K) {
          let raw = 0;
          for (let w = 0; w < K; w++) raw += popcount32(cL[a + w] ^ cR[b + w]);
          vol[o] = imin(raw * scale, cap);
        }
      }
      if (valid === L) continue;
      let rest = cap;
      if (border === 'clamp') {
        // Against the right image's column 0, the same for every remaining label.
        let raw = 0;
        for (let w = 0, b0 = rowPix * K; w < K; w++) raw += popcount32(cL[a + w] ^ cR[b0 + w]);
        rest = imin(raw * scale, cap);
      }
      vol.fill(rest, o, p * L + L);
    }
  }
}
