/**
 * An image or a single-channel float map, row-major, channels interleaved.
 * `data[(y·width + x)·channels + c]`. Sample values are kept exactly as read
 * (0..maxval for 8/16-bit files), never rescaled on the way in.
 */
export interface Raster {
  width: number;
  height: number;
  /** 1 (grey) or 3 (RGB). Readers drop alpha. */
  channels: number;
  data: Float32Array;
  /** 255 for 8-bit, 65535 for 16-bit PNM/PNG; for a PFM, the full scale its samples lie in (1, 255, 65535, or the largest sample: data/pfm.ts). */
  maxval: number;
}

/** Where a decoder puts an image's samples: an array of n of them (data/imageIO.ts decodeImage). */
export type SampleArrays = (n: number) => Float32Array;

/** Samples in the reading thread's own memory. */
export const ownSamples: SampleArrays = (n) => new Float32Array(n);

/**
 * Samples in shared memory: a stereo pair read for matching, which a
 * pool's threads then read as views, without the copy into the pool's
 * stage (data/sharedStage.ts isShared) a large pair would otherwise cost.
 */
export const sharedSamples: SampleArrays = (n) => new Float32Array(new SharedArrayBuffer(4 * n));

/** Samples of a W×H image with `channels` interleaved, rows reversed pixel by pixel (a pixel's channels keep their order). */
export function mirrorSamples<T extends Float32Array | Int32Array | Uint16Array>(data: T, width: number, height: number, channels: number, into?: T): T {
  if (into && (into.length !== data.length || into.buffer === data.buffer)) throw new Error(`mirrorSamples: ${data.length} samples mirrored into ${into.length}${into.buffer === data.buffer ? ' of the same memory' : ''}`);
  const out = into ?? new (data.constructor as new (n: number) => T)(data.length);
  if (channels === 1) {
    // A grey row reversed is its samples reversed: native.
    out.set(data);
    for (let y = 0; y < height; y++) out.subarray(y * width, (y + 1) * width).reverse();
    return out;
  }
  for (let y = 0; y < height; y++) {
    const row = y * width * channels;
    for (let x = 0, s = row, t = row + (width - 1) * channels; x < width; x++, s += channels, t -= channels) {
      for (let c = 0; c < channels; c++) out[t + c] = data[s + c];
    }
  }
  return out;
}

/** A raster with its rows reversed (the left–right check's mirrored pair). */
export function mirrorRaster(r: Raster): Raster {
  return { ...r, data: mirrorSamples(r.data, r.width, r.height, r.channels) };
}

/** The raster at half size (rounded up): each sample the rounded mean of its 2×2 block (the last row and column repeated where the size is odd); into `into` when given (a SharedStage array of the half size's samples). */
export function halfSize(r: Raster, into?: Float32Array): Raster {
  const { width: W, height: H, channels: C } = r;
  const w = Math.ceil(W / 2);
  const h = Math.ceil(H / 2);
  if (into && into.length !== w * h * C) throw new Error(`halfSize: ${into.length} samples given for a ${w}×${h}×${C} raster`);
  const data = into ?? new Float32Array(w * h * C);
  const src = r.data;
  const integral = r.maxval > 1;
  const rowLen = W * C;
  // Output columns that read two source columns; an odd width's last reads its column twice (as an odd height's last row does).
  const whole = W >> 1;
  for (let y = 0, o = 0; y < h; y++) {
    let i0 = 2 * y * rowLen;
    let i1 = Math.min(2 * y + 1, H - 1) * rowLen;
    for (let x = 0; x < whole; x++, i0 += C, i1 += C) {
      for (let c = 0; c < C; c++, o++, i0++, i1++) {
        const sum = src[i0] + src[i0 + C] + src[i1] + src[i1 + C];
        data[o] = integral ? Math.round(sum / 4) : sum / 4;
      }
    }
    if (whole < w) {
      for (let c = 0; c < C; c++, o++, i0++, i1++) {
        const sum = 2 * (src[i0] + src[i1]);
        data[o] = integral ? Math.round(sum / 4) : sum / 4;
      }
    }
  }
  return { width: w, height: h, channels: C, data, maxval: r.maxval };
}
