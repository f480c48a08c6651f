import { encodePngBytes, writePng, writePfm } from '../data/imageIO';
import { encodePfm } from '../data/pfm';
import type { Raster } from '../data/raster';
import { INVALID_DISPARITY } from '../stereo/leftRightCheck';

/**
 * Scale for a disparity PNG of disparities 0..ndisp−1 (Middlebury's own
 * convention of storing disparity × scale as grey): up to 255 disparities,
 * the largest multiple of 1/100 that keeps ndisp−1 within 255, so the range
 * fills an 8-bit PNG (to within ndisp/100 grey levels) for any label count
 * (16 labels: × 17); past 255 disparities, the largest integer (at most 256)
 * that keeps it within 65535 in a 16-bit PNG (pngBits).
 */
export function autoPngScale(ndisp: number): number {
  const top = Math.max(1, ndisp - 1);
  // Hundredths by integer arithmetic: the scale × top never exceeds 255.
  return top <= 255 ? Math.floor(25500 / top) / 100 : Math.max(1, Math.min(256, Math.floor(65535 / top)));
}

/** Bits per sample of the disparity PNG of disparities up to maxDisp at `scale`: 8 when the largest level fits 255, else 16; 0 when it passes 65535 too. */
export function pngBits(maxDisp: number, scale: number): 8 | 16 | 0 {
  const top = Math.round(maxDisp * scale);
  return top <= 255 ? 8 : top <= 65535 ? 16 : 0;
}

/** Writes disparity × scale as a grey PNG (atomically): 8-bit where every level fits 255, else 16-bit; an invalid pixel (INVALID_DISPARITY) is 0, Middlebury's "unknown". */
export async function writeDisparityPng(path: string, disparity: ArrayLike<number>, width: number, height: number, scale: number): Promise<void> {
  await writePng(path, disparityRaster(disparity, width, height, scale));
}

/** The raster of writeDisparityPng: disparity × scale as grey levels, INVALID_DISPARITY as 0; 16-bit (maxval 65535) when a level passes 255; throws when one would pass 65535. */
export function disparityRaster(disparity: ArrayLike<number>, width: number, height: number, scale: number): Raster {
  if (!(scale > 0) || !Number.isFinite(scale)) throw new Error(`--png-scale: must be a positive number (got ${scale})`);
  const data = new Float32Array(width * height);
  let max = 0;
  for (let i = 0; i < data.length; i++) {
    const d = disparity[i];
    const v = d === INVALID_DISPARITY ? 0 : d * scale;
    if (v > max) max = v;
    data[i] = v;
  }
  if (Math.round(max) > 65535) throw new Error(`--png-scale: ${scale} maps the largest disparity to ${Math.round(max)}, beyond 65535 in a 16-bit PNG`);
  return { width, height, channels: 1, data, maxval: Math.round(max) > 255 ? 65535 : 255 };
}

/** The bytes writeDisparityPng writes (for outputs written together: data/atomicWrite.ts writeFilesAtomic). */
export async function disparityPngBytes(disparity: ArrayLike<number>, width: number, height: number, scale: number): Promise<Uint8Array> {
  return encodePngBytes(disparityRaster(disparity, width, height, scale));
}

/** The bytes writeDisparityPfm writes. */
export function disparityPfmBytes(disparity: ArrayLike<number>, width: number, height: number): Uint8Array {
  return encodePfm(width, height, pfmValues(disparity), 1);
}

/** Writes the disparity in pixels as a little-endian PFM (atomically); an invalid pixel is inf, as Middlebury's PFMs have it. */
export function writeDisparityPfm(path: string, disparity: ArrayLike<number>, width: number, height: number): void {
  writePfm(path, width, height, pfmValues(disparity));
}

/**
 * The disparities as float32s with INVALID_DISPARITY replaced by +Infinity.
 * Typed arrays and arrays are converted by the Float32Array constructor, which
 * rounds each value to float32 as a store does, and their invalid pixels are
 * found with indexOf (both native loops, as fast in a fresh process as later).
 */
function pfmValues(disparity: ArrayLike<number>): Float32Array {
  if ((ArrayBuffer.isView(disparity) && !(disparity instanceof DataView)) || Array.isArray(disparity)) {
    const src = disparity as Uint16Array | Float32Array | number[];
    const data = new Float32Array(src);
    for (let i = src.indexOf(INVALID_DISPARITY); i !== -1; i = src.indexOf(INVALID_DISPARITY, i + 1)) data[i] = Infinity;
    return data;
  }
  const data = new Float32Array(disparity.length);
  for (let i = 0; i < data.length; i++) {
    const d = disparity[i];
    data[i] = d === INVALID_DISPARITY ? Infinity : d;
  }
  return data;
}
