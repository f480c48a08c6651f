/**
 * pngjs and fast-png behind the shape of data/pngDecode.ts and
 * data/pngEncode.ts: a PNG's bytes to a Raster (float samples, alpha
 * dropped, 1 channel for grey and grey palettes, 3 otherwise; 1/2/4-bit grey
 * scaled to 0..255; 16-bit exact) and a Raster to 8- or 16-bit grey or RGB
 * (samples rounded and clamped, NaN → 0). For bench/pngCodecs.ts.
 */
import type { Raster } from '../data/raster';

/** fast-png is an ES module; Node 20.19+ loads it with require(). Only the two calls used here are typed. */
interface FastPng {
  decode(data: Uint8Array): { width: number; height: number; data: Uint8Array | Uint16Array; depth: number; channels: number; palette?: number[][] };
  encode(png: { width: number; height: number; data: Uint8Array | Uint16Array; depth: 8 | 16; channels: number }): Uint8Array;
}

/* Each library is loaded on its adapter's first call, so that a process using one adapter loads only its library. */
let fastPngModule: FastPng | undefined;
const fastPng = (): FastPng => (fastPngModule ??= require('fast-png') as FastPng);
let pngjsModule: typeof import('pngjs') | undefined;
const pngjs = (): typeof import('pngjs') => (pngjsModule ??= require('pngjs') as typeof import('pngjs'));

/** IHDR's colour type and depth, and whether a palette (if any) is all grey: the Raster's channel count. */
export function pngKind(bytes: Uint8Array): { colourType: number; depth: number; channels: number } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const colourType = b[25];
  const depth = b[24];
  let channels = colourType === 0 || colourType === 4 ? 1 : 3;
  if (colourType === 3) {
    for (let pos = 8; pos + 8 <= b.length; pos += 12 + b.readUInt32BE(pos)) {
      if (b.toString('latin1', pos + 4, pos + 8) !== 'PLTE') continue;
      const len = b.readUInt32BE(pos);
      let grey = true;
      for (let i = pos + 8; i < pos + 8 + len; i += 3) if (b[i] !== b[i + 1] || b[i] !== b[i + 2]) grey = false;
      channels = grey ? 1 : 3;
      break;
    }
  }
  return { colourType, depth, channels };
}

/** pngjs's own call: RGBA, 8-bit samples in a Buffer or 16-bit ones in a Uint16Array. */
export function pngjsRead(bytes: Uint8Array, depth = bytes[24]): import('pngjs').PNG {
  return pngjs().PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { skipRescale: depth === 16 });
}

export function pngjsDecode(bytes: Uint8Array): Raster {
  const { depth, channels } = pngKind(bytes);
  const png = pngjsRead(bytes, depth);
  const src = png.data as unknown as ArrayLike<number>; // RGBA: a Buffer, or a Uint16Array at 16 bits
  const n = png.width * png.height;
  const data = new Float32Array(n * channels);
  for (let p = 0, o = 0; p < n; p++) for (let c = 0; c < channels; c++) data[o++] = src[4 * p + c];
  return { width: png.width, height: png.height, channels, data, maxval: depth === 16 ? 65535 : 255 };
}

/** fast-png's own call: the samples as stored (palette indices, 1/2/4-bit rows packed). */
export function fastPngRead(bytes: Uint8Array): ReturnType<FastPng['decode']> {
  return fastPng().decode(bytes);
}

export function fastPngDecode(bytes: Uint8Array): Raster {
  const { colourType, channels } = pngKind(bytes);
  const png = fastPngRead(bytes);
  const { width, height, depth, palette } = png;
  const spp = png.channels;
  const data = new Float32Array(width * height * channels);
  const src = png.data;
  if (depth >= 8) {
    for (let p = 0, o = 0, i = 0; p < width * height; p++, i += spp) {
      if (palette) {
        const e = palette[src[i]];
        for (let c = 0; c < channels; c++) data[o++] = e[c];
      } else {
        for (let c = 0; c < channels; c++) data[o++] = src[i + c];
      }
    }
  } else {
    // Packed rows of 1/2/4-bit samples (grey or palette indices), each row starting on a byte.
    const rowBytes = Math.ceil((width * depth) / 8);
    const mask = (1 << depth) - 1;
    const scale = colourType === 3 ? 1 : 255 / mask;
    for (let y = 0, o = 0; y < height; y++) {
      for (let x = 0, bit = 0; x < width; x++, bit += depth) {
        const v = ((src[y * rowBytes + (bit >> 3)] >> (8 - depth - (bit & 7))) & mask) * scale;
        if (palette) {
          const e = palette[v];
          for (let c = 0; c < channels; c++) data[o++] = e[c];
        } else {
          data[o++] = v;
        }
      }
    }
  }
  return { width, height, channels, data, maxval: depth === 16 ? 65535 : 255 };
}

/** The Raster's samples rounded and clamped as encodePng does, in an 8- or 16-bit array. */
function samples(r: Raster, depth: 8 | 16): Uint8Array | Uint16Array {
  const top = depth === 8 ? 255 : 65535;
  const out = depth === 8 ? new Uint8Array(r.data.length) : new Uint16Array(r.data.length);
  for (let i = 0; i < out.length; i++) {
    const x = r.data[i];
    out[i] = x >= top ? top : x > 0 ? Math.round(x) : 0;
  }
  return out;
}

export function pngjsEncode(r: Raster, depth: 8 | 16): Uint8Array {
  const s = samples(r, depth);
  const colorType = r.channels === 1 ? 0 : 2;
  // 16-bit input is read as native-endian uint16 from the buffer's start (pngjs's bitpacker): a buffer of its own.
  const data = Buffer.from(s.buffer, 0, s.byteLength);
  return pngjs().PNG.sync.write({ width: r.width, height: r.height, data } as import('pngjs').PNG, { colorType, inputColorType: colorType, inputHasAlpha: false, bitDepth: depth });
}

export function fastPngEncode(r: Raster, depth: 8 | 16): Uint8Array {
  return fastPng().encode({ width: r.width, height: r.height, data: samples(r, depth), depth, channels: r.channels });
}

