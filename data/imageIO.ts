/// <reference path="./vendor.d.ts" />
import * as fs from 'fs';
import type { NdArray } from 'ndarray';
import { ownSamples, type Raster, type SampleArrays } from './raster';
import { parsePnm, encodePnm } from './pnm';
import { parsePfm, encodePfm } from './pfm';
import { decodePng } from './pngDecode';
import { encodePng } from './pngEncode';
import { writeFileAtomic } from './atomicWrite';

/**
 * Image files in and out.
 *
 * Reading dispatches on the first bytes, never on the file extension:
 *   PNG (\x89PNG) by pngDecode.ts, JPEG (FF D8 FF) through get-pixels, P5/P6
 *   and Pf/PF by our own parsers. Alpha is dropped. get-pixels is loaded only
 *   when a JPEG is read: it pulls in an HTTP client and more, which every
 *   process that reads PNGs or PNMs would otherwise load for nothing.
 * Channel rule: a PNG whose IHDR colour type is grey (0) or grey+alpha (4), or
 *   a palette PNG (3) whose palette entries are all grey, and every PGM/Pf file,
 *   give 1 channel; everything else gives 3 (an RGB file that happens to hold
 *   R=G=B stays RGB: the file's declared type decides, not its content).
 * Bit depth: 16-bit PNGs come back with their exact values and maxval 65535
 *   (16-bit disparity maps need the precision). 8-bit and smaller PNGs (1/2/4-bit
 *   grey samples scaled to 0..255) and JPEGs come back with maxval 255; PGM/PPM
 *   keep their maxval (up to 65535), PFM the scale its samples lie in (1 for
 *   0–1, 255 for 0–255, …: data/pfm.ts).
 * Writing: PNGs through pngEncode.ts (grey or RGB, 8 or 16 bits), PGM/PPM and PFM
 *   by their modules; every file is written atomically.
 */

export type ImageFormat = 'png' | 'jpeg' | 'pnm' | 'pfm';

export function detectFormat(bytes: Uint8Array): ImageFormat | undefined {
  if (bytes.length >= 8 && bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47 &&
      bytes[4] === 0x0d && bytes[5] === 0x0a && bytes[6] === 0x1a && bytes[7] === 0x0a) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.length >= 2 && bytes[0] === 0x50) {
    if (bytes[1] === 0x66 || bytes[1] === 0x46) return 'pfm';
    if (bytes[1] >= 0x31 && bytes[1] <= 0x37) return 'pnm'; // P1..P7: parsePnm names the unsupported ones
  }
  return undefined;
}

/** A JPEG must end with the EOI marker (FF D9), allowing trailing padding; without it the file is cut short. */
function checkJpegComplete(bytes: Uint8Array, name: string): void {
  let end = bytes.length;
  while (end > 2 && (bytes[end - 1] === 0x00 || bytes[end - 1] === 0x0a || bytes[end - 1] === 0x0d || bytes[end - 1] === 0x20)) end--;
  if (end < 4 || bytes[end - 2] !== 0xff || bytes[end - 1] !== 0xd9) {
    throw new Error(`${name}: truncated JPEG (no end-of-image marker)`);
  }
}

/** Decode a JPEG through get-pixels: an RGBA ndarray of shape [width, height, 4]. */
function decodeJpeg(bytes: Uint8Array, name: string): Promise<NdArray<Uint8Array>> {
  const mime = 'image/jpeg';
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Loaded here, on the first JPEG, not when this module is (see the module comment).
  const getPixels = require('get-pixels') as typeof import('get-pixels');
  return new Promise((resolve, reject) => {
    try {
      getPixels(buf, mime, (err, pixels) => {
        if (err) reject(new Error(`${name}: cannot decode ${mime}: ${err.message.split('\n')[0]}`));
        else resolve(pixels);
      });
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      reject(new Error(`${name}: cannot decode ${mime}: ${msg.split('\n')[0]}`));
    }
  });
}

/** Copy channels 0..channels-1 of an RGBA ndarray of shape [width, height, 4] into a Raster. */
function rasterFromRgba(px: NdArray<Uint8Array>, channels: number, name: string, samples: SampleArrays): Raster {
  if (px.shape.length !== 3 || px.shape[2] < 3) throw new Error(`${name}: decoder returned an unexpected pixel layout [${px.shape.join(',')}]`);
  const [width, height] = px.shape;
  const [sx, sy, sc] = px.stride;
  const src = px.data;
  const data = samples(width * height * channels);
  let o = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const base = px.offset + x * sx + y * sy;
      for (let c = 0; c < channels; c++) data[o++] = src[base + c * sc];
    }
  }
  return { width, height, channels, data, maxval: 255 };
}

export function readFileBytes(filePath: string): Uint8Array {
  try {
    return fs.readFileSync(filePath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Error(`${filePath}: file not found`);
    if (code === 'EISDIR') throw new Error(`${filePath}: is a folder, not a file`);
    throw new Error(`${filePath}: cannot read (${err instanceof Error ? err.message : String(err)})`);
  }
}

/** Decode image bytes (see the module comment for formats and channel rule), the samples into `samples`' array; `name` is used in errors. */
export async function decodeImage(bytes: Uint8Array, name: string, samples: SampleArrays = ownSamples): Promise<Raster> {
  const format = detectFormat(bytes);
  switch (format) {
    case 'pnm':
      return parsePnm(bytes, name, samples);
    case 'pfm':
      return parsePfm(bytes, name, samples);
    case 'png':
      return decodePng(bytes, name, samples);
    case 'jpeg': {
      checkJpegComplete(bytes, name);
      const px = await decodeJpeg(bytes, name);
      return rasterFromRgba(px, 3, name, samples);
    }
    default:
      throw new Error(`${name}: unknown image format (expected PNG, JPEG, binary PGM/PPM or PFM)`);
  }
}

/** Read an image or float map from disk, its samples into `samples`' array (a pair for matching: sharedSamples). Errors are one line and name the file. */
export async function readImage(filePath: string, samples: SampleArrays = ownSamples): Promise<Raster> {
  return decodeImage(readFileBytes(filePath), filePath, samples);
}

/** Bytes of a grey (1 channel) or RGB (3 channels) PNG, 16-bit when the maxval passes 255, else 8-bit; values rounded and clamped to the depth's range, NaN → 0. */
export async function encodePngBytes(raster: Raster): Promise<Uint8Array> {
  return encodePng(raster, raster.maxval > 255 ? 16 : 8);
}

/**
 * Write a 1- or 3-channel raster as a PNG: 16-bit when its maxval passes
 * 255 (values rounded and clamped to 0..65535), else 8-bit (0..255). The
 * file appears complete or not at all. The raster is
 * read before the promise is returned (encodePng), so a caller may fill it
 * with the next image and start that write while this one compresses.
 */
export async function writePng(filePath: string, raster: Raster): Promise<void> {
  let bytes: Uint8Array;
  try {
    bytes = await encodePngBytes(raster);
  } catch (err) {
    throw new Error(`cannot write ${filePath}: ${err instanceof Error ? err.message : String(err)}`);
  }
  writeFileAtomic(filePath, bytes);
}

/** Write a single-channel float map as little-endian PFM (inf/NaN kept). */
export function writePfm(filePath: string, width: number, height: number, data: Float32Array): void {
  let bytes: Uint8Array;
  try {
    bytes = encodePfm(width, height, data, 1);
  } catch (err) {
    throw new Error(`cannot write ${filePath}: ${err instanceof Error ? err.message : String(err)}`);
  }
  writeFileAtomic(filePath, bytes);
}

/** Write a raster as binary PGM/PPM (maxval from the raster: > 255 gives 16-bit samples). */
export function writePnm(filePath: string, raster: Raster): void {
  let bytes: Uint8Array;
  try {
    bytes = encodePnm(raster);
  } catch (err) {
    throw new Error(`cannot write ${filePath}: ${err instanceof Error ? err.message : String(err)}`);
  }
  writeFileAtomic(filePath, bytes);
}

/** A disparity map in pixels, row-major; +Infinity = unknown. */
export interface DisparityMap {
  width: number;
  height: number;
  data: Float32Array;
}

/**
 * Convert an integer image holding a Middlebury-style disparity file into
 * pixels: first channel, value / scale, with 0 = unknown (→ +Infinity).
 */
export function disparityFromRaster(r: Raster, scale: number, name: string): DisparityMap {
  if (!(scale > 0) || !Number.isFinite(scale)) throw new Error(`${name}: disparity scale must be a positive number, got ${scale}`);
  const n = r.width * r.height;
  const data = new Float32Array(n);
  const c = r.channels;
  for (let i = 0; i < n; i++) {
    const v = r.data[i * c];
    data[i] = v === 0 ? Infinity : v / scale;
  }
  return { width: r.width, height: r.height, data };
}

/**
 * Read a disparity file: PFM values are pixels already (inf = unknown, `scale`
 * not applied); integer images give gray / scale with 0 = unknown.
 */
export async function readDisparityFile(filePath: string, scale = 1): Promise<DisparityMap> {
  const bytes = readFileBytes(filePath);
  const r = await decodeImage(bytes, filePath);
  if (detectFormat(bytes) === 'pfm') {
    const n = r.width * r.height;
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = r.data[i * r.channels];
    return { width: r.width, height: r.height, data };
  }
  return disparityFromRaster(r, scale, filePath);
}
