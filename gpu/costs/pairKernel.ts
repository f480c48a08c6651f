/**
 * The grey images and smoothness weights of an energy made on the device
 * from its pair (data/energy.ts PairSource), so that the host neither
 * converts the images nor computes the weights before the device moves
 * (otherwise the largest part of the host's work before the first move).
 *
 * One kernel, output [W, H, 4] over the energy's bands (the pair, or the
 * pair mirrored and swapped, each bandHeight rows):
 *   plane 0  the grey of the band's left image   (costs/census.ts censusGrey)
 *   plane 1  the grey of the band's right image
 *   plane 2  wH, plane 3 wV of the band's left image (costs/smoothness.ts:
 *            `cued` where every channel differs by less than `limit`, else
 *            `plain`; 0 on the last column, and on each band's last row)
 * Planes 0–1 are what the census kernel reads (censusKernel.ts G) and
 * planes 2–3 the weights literal as the plans bind it (wH, then wV).
 *
 * Exactness: samples are integers 0..255; a packed colour pixel, a
 * grey's numerator and a weight are integers below 2^24 (exactTermBounds),
 * all exact in f32, and unpacking scales by powers of two, which is exact.
 * The grey divides numerator + ½ by 1000, which is never within 0.0005 of
 * an integer, so floor gives the host's integer quotient even with WGSL's
 * division error (2.5 ULP). test/gpu-pair-kernel.test.ts checks every
 * value against the host's on gpu.js's CPU backend, and the browser test
 * on WebGPU.
 */
import { isSharedArray } from '../../data/sharedStage';
import { Input, WebGPUBufferResult } from '../runtime/gpujs/gpuJs';
import type { GPU, IGPUKernelSettings, IKernelRunShortcut } from 'gpu.js';
import type { PairSource } from '../../data/energy';

/** Whether `pair` fits the kernel for a W×H energy in bands of `bandHeight` rows (one band per view, 1 or 3 channels, both images W×bandHeight). */
export function pairFits(pair: PairSource, W: number, H: number, bandHeight: number): boolean {
  const { left, right, views } = pair;
  return views.length >= 1 && views.length * bandHeight === H && [left, right].every((r) => r.width === W && r.height === bandHeight && r.channels === left.channels)
    && (left.channels === 1 || left.channels === 3);
}

/**
 * Kernel source for a W-wide pair of `channels` channels in bands of
 * `band` rows, `views` per band; arguments: L and R, [W, band] (one value
 * a pixel: pairArguments), and T = [plain, cued, limit].
 */
export function pairPlanesSource(W: number, band: number, channels: number, views: ReadonlyArray<'pair' | 'mirrored'>): string {
  const f = (v: number): string => v.toFixed(1);
  // Pixel (col, row) of the image `from` names (1: R, else L) into `into`0.. `into`C−1: statements, not a conditional
  // expression, whose WGSL select would read both images (test/gpu-kernels-in-bounds.test.ts refuses such reads). A
  // colour pixel is unpacked (pairArguments); scaling by a power of two is exact in f32.
  const read = (into: string, from: string, col: string, row: string): string => {
    const load = `let ${into}v = 0.0;
    if (${from} === 1.0) { ${into}v = R[${row}][${col}]; } else { ${into}v = L[${row}][${col}]; }`;
    if (channels === 1) return `${load}
    const ${into}0 = ${into}v;`;
    return `${load}
    const ${into}2 = Math.floor(${into}v * 0.0000152587890625);
    const ${into}rg = ${into}v - ${into}2 * 65536.0;
    const ${into}1 = Math.floor(${into}rg * 0.00390625);
    const ${into}0 = ${into}rg - ${into}1 * 256.0;`;
  };
  const mirroredBands = views.map((v, i) => (v === 'mirrored' ? `if (view === ${f(i)}) { mirrored = 1.0; }` : '')).join('\n    ');
  const grey = channels === 1 ? 'return s0;' : 'return Math.floor((299.0 * s0 + 587.0 * s1 + 114.0 * s2 + 500.5) / 1000.0);';
  const channelTests = Array.from({ length: channels }, (_, c) => `if (Math.abs(p${c} - q${c}) >= T[2]) { cued = 0.0; }`).join('\n    ');
  return `function (L, R, T) {
    const x = this.thread.x;
    const yy = this.thread.y;
    const z = this.thread.z;
    const view = Math.floor(yy / ${f(band)});
    const y = yy - view * ${f(band)};
    let mirrored = 0.0;
    ${mirroredBands}
    if (z < 2.0) {
      // The band's left image is L (R mirrored), its right image R (L mirrored).
      let fromR = mirrored;
      if (z === 1.0) { fromR = 1.0 - mirrored; }
      let cx = x;
      if (mirrored === 1.0) { cx = ${f(W - 1)} - x; }
      ${read('s', 'fromR', 'cx', 'y')}
      ${grey}
    }
    let qx = x;
    let qy = y;
    if (z === 2.0) {
      if (x >= ${f(W - 1)}) { return 0.0; }
      qx = x + 1.0;
    } else {
      if (y >= ${f(band - 1)}) { return 0.0; }
      qy = y + 1.0;
    }
    let px = x;
    if (mirrored === 1.0) {
      px = ${f(W - 1)} - x;
      qx = ${f(W - 1)} - qx;
    }
    ${read('p', 'mirrored', 'px', 'y')}
    ${read('q', 'mirrored', 'qx', 'qy')}
    let cued = 1.0;
    ${channelTests}
    if (cued === 1.0) { return T[1]; }
    return T[0];
  }`;
}

/** The kernel for a W×H energy with `pair` (pairFits); `pipeline`: its output stays on the device (WebGPU). */
export function createPairKernel(gpu: GPU, W: number, H: number, pair: PairSource, pipeline: boolean): IKernelRunShortcut {
  const band = H / pair.views.length;
  const settings = { output: [W, H, 4], precision: 'single', pipeline } as IGPUKernelSettings;
  return gpu.createKernel(pairPlanesSource(W, band, pair.left.channels, pair.views), settings);
}

/**
 * The kernel's arguments for `pair`: each image one value a pixel, [W, H]
 * (a grey image's samples as they lie; a colour pixel packed as
 * r + 256·g + 65536·b, below 2^24 and so exact in f32: a third of the
 * upload), and the weight terms.
 */
export function pairArguments(pair: PairSource): [Input, Input, Input] {
  const image = (r: PairSource['left']): Input => new Input(imageValues(r) as unknown as number[], [r.width, r.height]);
  return [image(pair.left), image(pair.right), weightTerms(pair)];
}

/** A WebGPU device as PairUpload uses it. */
interface UploadDevice {
  createBuffer(d: { size: number; usage: number }): { destroy(): void };
  queue: { writeBuffer(b: unknown, o: number, d: ArrayBufferView): void };
}

const STORAGE = 0x80;
const COPY_DST = 0x8;

/**
 * The pair kernel's images kept in device buffers of its own and
 * rewritten for each pair of the same size (a sequence's frames), handed
 * to the kernel as gpu.js's buffer results. Called with Inputs, gpu.js
 * copies each image into a fresh array before it uploads it, and a colour
 * image is packed into another: four arrays of the image's size a pair,
 * which only feed the garbage collector. Here the packing goes into one
 * array kept for the next pair, and the queue copies straight from it
 * (writeBuffer copies at the call; WebGPU runs queue writes and submits in
 * order, so a kernel call already submitted still reads the pair it was
 * given). `context`: the gpu.js WebGPU context of the kernel's results.
 */
export class PairUpload {
  private readonly device: UploadDevice;
  private readonly buffers: Array<{ destroy(): void }>;
  private readonly handles: [object, object];
  private packed?: Float32Array;

  constructor(context: { device: unknown }, width: number, height: number) {
    this.device = context.device as UploadDevice;
    this.buffers = [0, 1].map(() => this.device.createBuffer({ size: 4 * width * height, usage: STORAGE | COPY_DST }));
    const handle = (buffer: object): object => new WebGPUBufferResult({ buffer, output: [width, height], context, kernel: null });
    this.handles = [handle(this.buffers[0]), handle(this.buffers[1])];
  }

  /** The kernel's arguments for `pair` (of this upload's size: the program's), its images written to the device now. */
  arguments(pair: PairSource): [object, object, Input] {
    [pair.left, pair.right].forEach((r, i) => this.device.queue.writeBuffer(this.buffers[i], 0, imageValues(r, r.channels === 1 ? undefined : (this.packed ??= new Float32Array(r.width * r.height)))));
    return [this.handles[0], this.handles[1], weightTerms(pair)];
  }

  destroy(): void {
    for (const b of this.buffers) b.destroy();
  }
}

/** An image as the kernel reads it: a grey image's samples (copied out of shared memory, which a WebGPU queue need not take), or a colour image packed (into `into` when given). */
function imageValues(r: PairSource['left'], into?: Float32Array): Float32Array {
  if (r.channels !== 1) return packRgb(r.data, into ?? new Float32Array(r.width * r.height));
  return isSharedArray(r.data) ? r.data.slice() : r.data;
}

function weightTerms(pair: PairSource): Input {
  return new Input(Float32Array.of(pair.plain, pair.cued, pair.limit) as unknown as number[], [3]);
}

/** Interleaved 8-bit RGB samples, one value a pixel: r + 256·g + 65536·b. */
function packRgb(d: Float32Array, out: Float32Array): Float32Array {
  for (let i = 0, j = 0; i < out.length; i++, j += 3) out[i] = d[j] + 256 * d[j + 1] + 65536 * d[j + 2];
  return out;
}
