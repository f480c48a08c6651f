/**
 * The census codes of a pair computed on the device, once per pair, from
 * the two integer grey images (costs/census.ts censusGrey: the documented
 * integer luma), so that only the grey images are uploaded.
 *
 * The kernel writes the layout the cost kernels read (costKernels.ts):
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
import { Input } from '../runtime/gpujs/gpuJs';
import type { GPU, IGPUKernelSettings, IKernelRunShortcut } from 'gpu.js';
import { imageRows, type CostImage } from '../../data/costImage';
import { censusTransform, censusWords, type CensusWindow } from '../../costs/census';

/** Samples per pixel of the code planes: two 16-bit halves per 32-bit word. */
export function censusHalves(window: CensusWindow): number {
  return 2 * censusWords(window);
}

/**
 * Kernel source over output [W·C, H, 6] with input G [W, H, 2] (left grey
 * plane 0, right grey plane 1). Every read is at clamped coordinates inside
 * G (the replicated border), so the kernel needs no bounds checks. Rows
 * are clamped to the pixel's band of `bandHeight` rows (MrfEnergy.bandHeight:
 * each band is an image of its own; H, one band, by default).
 */
export function censusCodesSource(W: number, H: number, window: CensusWindow, bandHeight = H): string {
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
    const b0 = Math.floor(y / ${f(bandHeight)}) * ${f(bandHeight)};
    let v = 0.0;
    let k = 0.0;
    let weight = 1.0;
    let yy = y - ${f(ry)};
    for (let i = 0; i < ${window.height}; i++) {
      let yr = yy;
      if (yr < b0) { yr = b0; }
      if (yr > b0 + ${f(bandHeight - 1)}) { yr = b0 + ${f(bandHeight - 1)}; }
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

/** The code planes from the host's codes (costs/census.ts): where the device cannot take a literal from a kernel's output. */
export function hostCensusPlanes(left: CostImage, right: CostImage, window: CensusWindow, bandHeight = left.height): Float32Array {
  const n = left.width * left.height;
  const C = censusHalves(window);
  const planes = new Float32Array(6 * n * C);
  for (const [plane, im] of [[0, left], [1, right]] as const) {
    // Band by band, each an image of its own (its rows contiguous in im and in the codes).
    for (let y0 = 0; y0 < im.height; y0 += bandHeight) {
      const codes = censusTransform(imageRows(im, y0, bandHeight), window).codes;
      const o = plane * n * C + y0 * im.width * C;
      for (let i = 0; i < codes.length; i++) {
        planes[o + 2 * i] = codes[i] & 0xffff;
        planes[o + 2 * i + 1] = codes[i] >>> 16;
      }
    }
  }
  return planes;
}

/** The kernel for a W×H pair and `window`, [W·C, H, 6]; `pipeline`: its output stays on the device (WebGPU). */
export function createCensusKernel(gpu: GPU, W: number, H: number, window: CensusWindow, pipeline: boolean, bandHeight = H): IKernelRunShortcut {
  // The settings of the program's other kernels (gpu/move/deviceProgram.ts kernelSettings), without an import cycle.
  const settings = { output: [W * censusHalves(window), H, 6], precision: 'single', pipeline } as IGPUKernelSettings;
  return gpu.createKernel(censusCodesSource(W, H, window, bandHeight), settings);
}

/** On a synchronous backend (gpu.js's CPU ones): the kernel's planes read back as one array in IM order. */
export function censusPlanesOnBackend(gpu: GPU, left: CostImage, right: CostImage, window: CensusWindow, bandHeight = left.height): Float32Array {
  const W = left.width;
  const H = left.height;
  const WC = W * censusHalves(window);
  const k = createCensusKernel(gpu, W, H, window, false, bandHeight);
  try {
    const out = k(new Input(greyPlanes(left, right) as unknown as number[], [W, H, 2])) as unknown as ArrayLike<ArrayLike<ArrayLike<number>>>;
    const planes = new Float32Array(6 * H * WC);
    // Planes 2..5 are zero by construction; only the two code planes are copied.
    for (let z = 0; z < 2; z++) for (let y = 0; y < H; y++) planes.set(out[z][y] as Float32Array, (z * H + y) * WC);
    return planes;
  } finally {
    k.destroy();
  }
}

/** A kernel output kept on the device (gpu.js's WebGPUBufferResult, as far as this reads it). */
export interface DeviceResult { buffer: object; context: { device: unknown }; delete(): void }

