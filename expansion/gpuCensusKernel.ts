/**
 * The census codes of a pair computed on the device, once per pair, from
 * the two integer grey images (costs/census.ts censusGrey: the documented
 * integer luma), so that only the grey images are uploaded.
 *
 * The kernel writes the layout the cost kernels read (gpuCostKernels.ts):
 *   IM [W·C, H, 6]  plane 0 the left codes, plane 1 the right codes, as
 *                   C 16-bit halves per pixel, least significant first;
 *                   planes 2..5 zero (census reads no gradients)
 * with C = 2·censusWords(window). Half c holds code bits 16c .. 16c+15, and
 * bit k is the k-th neighbour q ≠ p of the window in row-major order, set
 * when g(q) < g(p), borders replicated: bit for bit the host's codes
 * (costs/census.ts censusTransform), which test/gpu-census-codes.test.ts
 * checks on gpu.js's CPU backend.
 *
 * Exactness: greys are integers 0..255 and a half is a sum of distinct
 * powers 2^0..2^15, so every value is an integer below 2^16, exact in f32.
 */
import type { CostImage } from '../data/costImage';
import { censusWords, type CensusWindow } from '../costs/census';

/** Samples per pixel of the code planes: two 16-bit halves per 32-bit word. */
export function censusHalves(window: CensusWindow): number {
  return 2 * censusWords(window);
}

/**
 * Kernel source over output [W·C, H, 6] with input G [W, H, 2] (left grey
 * plane 0, right grey plane 1). Every read is at clamped coordinates inside
 * G (the replicated border), so the kernel needs no bounds checks.
 */
export function censusCodesSource(W: number, H: number, window: CensusWindow): string {
  const C = censusHalves(window);
  const rx = (window.width - 1) >> 1;
  const ry = (window.height - 1) >> 1;
  const f = (v: number): string => v.toFixed(1);
  // The window is walked in row-major order with a running bit index k; only the 16 bits of half c add their weight.
  return `function (G) {
    const z = this.thread.z;
    if (z > 1.0) { return 0.0; }
    const xc = this.thread.x;
    const y = this.thread.y;
    const x = Math.floor(xc / ${f(C)});
    const c = xc - x * ${f(C)};
    const lo = c * 16.0;
    const centre = G[z][y][x];
    let v = 0.0;
    let k = 0.0;
    let weight = 1.0;
    let yy = y - ${f(ry)};
    for (let i = 0; i < ${window.height}; i++) {
      let yr = yy;
      if (yr < 0.0) { yr = 0.0; }
      if (yr > ${f(H - 1)}) { yr = ${f(H - 1)}; }
      let xx = x - ${f(rx)};
      for (let j = 0; j < ${window.width}; j++) {
        if (xx !== x || yy !== y) {
          if (k >= lo && k < lo + 16.0) {
            let xr = xx;
            if (xr < 0.0) { xr = 0.0; }
            if (xr > ${f(W - 1)}) { xr = ${f(W - 1)}; }
            if (G[z][yr][xr] < centre) { v = v + weight; }
            weight = weight * 2.0;
          }
          k = k + 1.0;
        }
        xx = xx + 1.0;
      }
      yy = yy + 1.0;
    }
    return v;
  }`;
}

/** The grey planes G [W, H, 2] the kernel reads: left then right, as f32 (exact: integers 0..255). */
export function greyPlanes(left: CostImage, right: CostImage): Float32Array {
  const n = left.width * left.height;
  if (left.channels !== 1 || right.channels !== 1 || right.width !== left.width || right.height !== left.height || left.data.length < n || right.data.length < n) {
    throw new Error(`gpu census: expected two grey images of one size, got ${left.width}×${left.height}×${left.channels} and ${right.width}×${right.height}×${right.channels}`);
  }
  const g = new Float32Array(2 * n);
  g.set(left.data.subarray(0, n), 0);
  g.set(right.data.subarray(0, n), n);
  return g;
}
