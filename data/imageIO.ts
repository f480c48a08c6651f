/// <reference path="./vendor.d.ts" />
import * as fs from 'fs';
import { inflateSync } from 'zlib';
import ndarray from 'ndarray';
import getPixels from 'get-pixels';
import savePixels from 'save-pixels';
import type { Raster } from './raster';
import { parsePnm, encodePnm } from './pnm';
import { parsePfm, encodePfm } from './pfm';
import { encodePng } from './pngEncode';
import { writeFileAtomic } from './atomicWrite';

/**
 * Image files in and out.
 *
 * Reading dispatches on the first bytes, never on the file extension:
 *   PNG (\x89PNG) and JPEG (FF D8 FF) through get-pixels; P5/P6 and Pf/PF by
 *   our own parsers. Alpha is dropped.
 * Channel rule: a PNG whose IHDR colour type is grey (0) or grey+alpha (4), or
 *   a palette PNG (3) whose palette entries are all grey, and every PGM/Pf file,
 *   give 1 channel; everything else gives 3 (an RGB file that happens to hold
 *   R=G=B stays RGB: the file's declared type decides, not its content).
 * Bit depth: 16-bit PNGs are decoded here (get-pixels would rescale their
 *   samples to 8 bits, losing precision that 16-bit disparity maps need) and
 *   come back with their exact values and maxval 65535. 8-bit and smaller PNGs
 *   (1/2/4-bit grey samples are scaled to 0..255 by the decoder) and JPEGs come
 *   back with maxval 255; PGM/PPM keep their maxval (up to 65535), PFM has 1.
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

interface PngInfo {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
  interlace: number;
  greyPalette: boolean;
  /** Byte ranges [start, end) of the IDAT chunk bodies, in file order. */
  idat: [number, number][];
}

/**
 * Walk the PNG chunk list: checks that every chunk fits in the file and that
 * IEND is reached (so a truncated file is reported as such rather than
 * decoded partially), and reads IHDR and PLTE for the channel rule.
 */
function inspectPng(bytes: Uint8Array, name: string): PngInfo {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 8;
  let info: PngInfo | undefined;
  let sawIdat = false;
  for (;;) {
    if (pos + 12 > bytes.length) throw new Error(`${name}: truncated PNG (no IEND chunk)`);
    const len = view.getUint32(pos);
    const type = String.fromCharCode(bytes[pos + 4], bytes[pos + 5], bytes[pos + 6], bytes[pos + 7]);
    if (pos + 12 + len > bytes.length) throw new Error(`${name}: truncated PNG (chunk ${type} runs past the end of the file)`);
    const body = pos + 8;
    if (info === undefined && type !== 'IHDR') throw new Error(`${name}: corrupt PNG (first chunk is not IHDR)`);
    if (type === 'IHDR') {
      if (len !== 13) throw new Error(`${name}: corrupt PNG (IHDR length ${len})`);
      info = {
        width: view.getUint32(body),
        height: view.getUint32(body + 4),
        bitDepth: bytes[body + 8],
        colorType: bytes[body + 9],
        interlace: bytes[body + 12],
        greyPalette: false,
        idat: [],
      };
    } else if (type === 'PLTE' && info) {
      let grey = len % 3 === 0 && len > 0;
      for (let i = 0; grey && i < len; i += 3) {
        grey = bytes[body + i] === bytes[body + i + 1] && bytes[body + i] === bytes[body + i + 2];
      }
      info.greyPalette = grey;
    } else if (type === 'IDAT' && info) {
      sawIdat = true;
      info.idat.push([body, body + len]);
    } else if (type === 'IEND') {
      break;
    }
    pos += 12 + len;
  }
  if (!info) throw new Error(`${name}: corrupt PNG (no IHDR)`);
  if (!sawIdat) throw new Error(`${name}: corrupt PNG (no IDAT chunk)`);
  if (info.width < 1 || info.height < 1) throw new Error(`${name}: PNG size ${info.width}x${info.height} is empty`);
  return info;
}

/** Adam7 passes as [x0, y0, dx, dy]; a non-interlaced image is the single pass [0, 0, 1, 1]. */
const ADAM7: [number, number, number, number][] = [
  [0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2],
];

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/**
 * Decode a 16-bit PNG (colour types 0, 2, 4, 6; interlaced or not) keeping
 * every sample exact. Alpha is dropped; grey and grey+alpha give 1 channel.
 */
function decodePng16(bytes: Uint8Array, info: PngInfo, name: string): Raster {
  const spp = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[info.colorType];
  if (spp === undefined) throw new Error(`${name}: corrupt PNG (colour type ${info.colorType} cannot have 16-bit samples)`);
  if (info.interlace > 1) throw new Error(`${name}: corrupt PNG (interlace method ${info.interlace})`);
  const { width, height } = info;
  let raw: Buffer;
  try {
    raw = inflateSync(Buffer.concat(info.idat.map(([a, b]) => bytes.subarray(a, b))));
  } catch (err) {
    throw new Error(`${name}: cannot decode image/png: ${(err as Error).message.split('\n')[0]}`);
  }
  const channels = spp <= 2 ? 1 : 3;
  const data = new Float32Array(width * height * channels);
  const bpp = 2 * spp; // bytes per pixel, the filters' left distance
  const passes = info.interlace === 1 ? ADAM7 : [[0, 0, 1, 1] as [number, number, number, number]];
  let pos = 0;
  for (const [x0, y0, dx, dy] of passes) {
    const pw = Math.ceil((width - x0) / dx);
    const ph = Math.ceil((height - y0) / dy);
    if (pw <= 0 || ph <= 0) continue; // empty passes have no bytes at all, not even filter bytes
    const rowBytes = pw * bpp;
    let prev = new Uint8Array(rowBytes);
    for (let py = 0; py < ph; py++) {
      if (pos + 1 + rowBytes > raw.length) throw new Error(`${name}: corrupt PNG (image data shorter than ${width}x${height} needs)`);
      const filter = raw[pos];
      const cur = new Uint8Array(raw.subarray(pos + 1, pos + 1 + rowBytes));
      pos += 1 + rowBytes;
      for (let i = 0; i < rowBytes; i++) {
        const a = i >= bpp ? cur[i - bpp] : 0;
        const b = prev[i];
        const c = i >= bpp ? prev[i - bpp] : 0;
        switch (filter) {
          case 0: break;
          case 1: cur[i] = (cur[i] + a) & 0xff; break;
          case 2: cur[i] = (cur[i] + b) & 0xff; break;
          case 3: cur[i] = (cur[i] + ((a + b) >> 1)) & 0xff; break;
          case 4: cur[i] = (cur[i] + paeth(a, b, c)) & 0xff; break;
          default: throw new Error(`${name}: corrupt PNG (row filter ${filter})`);
        }
      }
      const y = y0 + py * dy;
      for (let px = 0; px < pw; px++) {
        const o = (y * width + x0 + px * dx) * channels;
        for (let ch = 0; ch < channels; ch++) data[o + ch] = (cur[px * bpp + 2 * ch] << 8) | cur[px * bpp + 2 * ch + 1];
      }
      prev = cur;
    }
  }
  return { width, height, channels, data, maxval: 65535 };
}

/** A JPEG must end with the EOI marker (FF D9), allowing trailing padding; without it the file is cut short. */
function checkJpegComplete(bytes: Uint8Array, name: string): void {
  let end = bytes.length;
  while (end > 2 && (bytes[end - 1] === 0x00 || bytes[end - 1] === 0x0a || bytes[end - 1] === 0x0d || bytes[end - 1] === 0x20)) end--;
  if (end < 4 || bytes[end - 2] !== 0xff || bytes[end - 1] !== 0xd9) {
    throw new Error(`${name}: truncated JPEG (no end-of-image marker)`);
  }
}

function decodeWithGetPixels(bytes: Uint8Array, mime: string, name: string): Promise<ndarray.NdArray<Uint8Array>> {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
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
function rasterFromRgba(px: ndarray.NdArray<Uint8Array>, channels: number, name: string): Raster {
  if (px.shape.length !== 3 || px.shape[2] < 3) throw new Error(`${name}: decoder returned an unexpected pixel layout [${px.shape.join(',')}]`);
  const [width, height] = px.shape;
  const [sx, sy, sc] = px.stride;
  const src = px.data;
  const data = new Float32Array(width * height * channels);
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

/** Decode image bytes (see the module comment for formats and channel rule); `name` is used in errors. */
export async function decodeImage(bytes: Uint8Array, name: string): Promise<Raster> {
  const format = detectFormat(bytes);
  switch (format) {
    case 'pnm':
      return parsePnm(bytes, name);
    case 'pfm':
      return parsePfm(bytes, name);
    case 'png': {
      const info = inspectPng(bytes, name);
      if (info.bitDepth === 16) return decodePng16(bytes, info, name);
      const grey = info.colorType === 0 || info.colorType === 4 || (info.colorType === 3 && info.greyPalette);
      const px = await decodeWithGetPixels(bytes, 'image/png', name);
      if (px.shape[0] !== info.width || px.shape[1] !== info.height) {
        throw new Error(`${name}: decoded PNG size ${px.shape[0]}x${px.shape[1]} differs from its header ${info.width}x${info.height}`);
      }
      return rasterFromRgba(px, grey ? 1 : 3, name);
    }
    case 'jpeg': {
      checkJpegComplete(bytes, name);
      const px = await decodeWithGetPixels(bytes, 'image/jpeg', name);
      return rasterFromRgba(px, 3, name);
    }
    default:
      throw new Error(`${name}: unknown image format (expected PNG, JPEG, binary PGM/PPM or PFM)`);
  }
}

/** Read an image or float map from disk. Errors are one line and name the file. */
export async function readImage(filePath: string): Promise<Raster> {
  return decodeImage(readFileBytes(filePath), filePath);
}

/** Bytes of an 8-bit PNG: 3 channels through save-pixels, 1 channel as a grey PNG (see pngEncode.ts for why). */
export async function encodePngBytes(raster: Raster): Promise<Uint8Array> {
  const { width, height, channels } = raster;
  if (channels === 1) return encodePng(raster, 8);
  if (channels !== 3) throw new Error(`writePng: channels must be 1 or 3, got ${channels}`);
  if (raster.data.length !== width * height * 3) throw new Error(`writePng: data length ${raster.data.length} != ${width}x${height}x3`);
  const bytes = new Uint8Array(width * height * 3);
  for (let i = 0; i < bytes.length; i++) {
    const v = raster.data[i];
    bytes[i] = Number.isNaN(v) ? 0 : Math.min(255, Math.max(0, Math.round(v)));
  }
  // save-pixels wants shape [width, height, channels].
  const arr = ndarray(bytes, [width, height, 3], [3, 3 * width, 1]);
  const stream = savePixels(arr, 'png');
  const parts: Buffer[] = [];
  return new Promise((resolve, reject) => {
    stream.on('data', (d: Buffer | string) => parts.push(typeof d === 'string' ? Buffer.from(d, 'binary') : Buffer.from(d)));
    stream.on('end', () => resolve(Buffer.concat(parts)));
    stream.on('error', (e: Error) => reject(e));
  });
}

/**
 * Write a 1- or 3-channel raster as an 8-bit PNG; values are rounded and
 * clamped to 0..255. The file appears complete or not at all.
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
