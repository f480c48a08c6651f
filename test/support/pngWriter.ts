import { deflateSync } from 'zlib';

/**
 * A test-only PNG writer, independent of data/pngEncode.ts and data/pngDecode.ts
 * (its own CRC, packing, filters and interlacing, written from the PNG
 * specification), so that decoding what it writes checks the decoder against
 * the specification rather than against the project's encoder. It writes every
 * colour type and allowed bit depth, palettes, Adam7 interlacing and any row
 * filter, and can write the malformed variants the error tests need.
 */

export type ColourType = 0 | 2 | 3 | 4 | 6;

/** Samples per pixel of each colour type. */
export const SAMPLES_PER_PIXEL: Record<ColourType, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** The bit depths PNG allows for each colour type. */
export const ALLOWED_DEPTHS: Record<ColourType, number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

export interface PngSpec {
  width: number;
  height: number;
  colourType: ColourType;
  bitDepth: number;
  /** Interleaved samples, row-major, SAMPLES_PER_PIXEL[colourType] per pixel (palette indices for colour type 3). */
  samples: ArrayLike<number>;
  /** RGB triples (colour type 3). */
  palette?: ArrayLike<number>;
  interlaced?: boolean;
  /** The filter (0..4) of each stored row, in stream order (pass by pass when interlaced); default: all 0. */
  filterOf?: (rowIndex: number) => number;
  /** Split the compressed data over this many IDAT chunks (default 1). */
  idatChunks?: number;
  /** Extra chunks placed after IHDR (and PLTE), before the image data. */
  extraChunks?: { type: string; body: Uint8Array }[];
  /** Replace the filter byte of stored row `row` with `value` (malformed files). */
  filterByte?: { row: number; value: number };
  /** Drop this many bytes from the end of the uncompressed stream before compressing it (malformed files). */
  dropImageBytes?: number;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

export function testCrc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function pngChunk(type: string, body: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(body.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(testCrc32(Buffer.concat([head.subarray(4), body])), 0);
  return Buffer.concat([head, body, crc]);
}

/** The textbook Paeth predictor, as the specification writes it. */
export function textbookPaeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  if (pb <= pc) return b;
  return c;
}

/** Adam7 passes as [x0, y0, dx, dy]. */
export const ADAM7_PASSES: [number, number, number, number][] = [
  [0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2],
];

/** One stored row of the given pixels (x positions of row y), samples packed most significant bits first. */
function packRow(spec: PngSpec, xs: number[], y: number): number[] {
  const spp = SAMPLES_PER_PIXEL[spec.colourType];
  const out: number[] = [];
  if (spec.bitDepth >= 8) {
    for (const x of xs) {
      for (let c = 0; c < spp; c++) {
        const v = spec.samples[(y * spec.width + x) * spp + c];
        if (spec.bitDepth === 16) out.push(v >> 8, v & 0xff); else out.push(v);
      }
    }
    return out;
  }
  let acc = 0;
  let bits = 0;
  for (const x of xs) {
    acc = (acc << spec.bitDepth) | spec.samples[y * spec.width + x];
    bits += spec.bitDepth;
    if (bits === 8) { out.push(acc); acc = 0; bits = 0; }
  }
  if (bits > 0) out.push(acc << (8 - bits)); // the last byte's unused low bits are zero
  return out;
}

/** The uncompressed image data: per stored row a filter byte and the filtered bytes. */
export function imageDataStream(spec: PngSpec): number[] {
  const bitsPerPixel = SAMPLES_PER_PIXEL[spec.colourType] * spec.bitDepth;
  const bpp = Math.max(1, bitsPerPixel / 8);
  const passes = spec.interlaced ? ADAM7_PASSES : [[0, 0, 1, 1]];
  const stream: number[] = [];
  let rowIndex = 0;
  for (const [x0, y0, dx, dy] of passes) {
    const xs: number[] = [];
    for (let x = x0; x < spec.width; x += dx) xs.push(x);
    if (xs.length === 0 || y0 >= spec.height) continue; // an empty pass stores nothing, not even filter bytes
    let prior: number[] | undefined;
    for (let y = y0; y < spec.height; y += dy) {
      const raw = packRow(spec, xs, y);
      const up = prior ?? raw.map(() => 0);
      const filter = spec.filterOf ? spec.filterOf(rowIndex) : 0;
      const filtered = raw.map((x, i) => {
        const a = i >= bpp ? raw[i - bpp] : 0;
        const b = up[i];
        const c = i >= bpp ? up[i - bpp] : 0;
        const predictor = [0, a, b, Math.floor((a + b) / 2), textbookPaeth(a, b, c)][filter];
        return (x - predictor + 256) % 256;
      });
      const filterByte = spec.filterByte && spec.filterByte.row === rowIndex ? spec.filterByte.value : filter;
      stream.push(filterByte, ...filtered);
      prior = raw;
      rowIndex++;
    }
  }
  return stream;
}

export function writeTestPng(spec: PngSpec): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(spec.width, 0);
  ihdr.writeUInt32BE(spec.height, 4);
  ihdr[8] = spec.bitDepth;
  ihdr[9] = spec.colourType;
  ihdr[12] = spec.interlaced ? 1 : 0;
  let stream = imageDataStream(spec);
  if (spec.dropImageBytes) stream = stream.slice(0, stream.length - spec.dropImageBytes);
  const z = deflateSync(Buffer.from(stream));
  const parts = Math.max(1, spec.idatChunks ?? 1);
  const idat: Buffer[] = [];
  for (let k = 0; k < parts; k++) {
    idat.push(pngChunk('IDAT', z.subarray(Math.floor((k * z.length) / parts), Math.floor(((k + 1) * z.length) / parts))));
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    ...(spec.palette ? [pngChunk('PLTE', Uint8Array.from(spec.palette))] : []),
    ...(spec.extraChunks ?? []).map((c) => pngChunk(c.type, c.body)),
    ...idat,
    pngChunk('IEND', new Uint8Array(0)),
  ]);
}

/** Byte offset of the first chunk of this type (its length field), or -1. */
export function findChunk(png: Uint8Array, type: string): number {
  const buf = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  for (let pos = 8; pos + 12 <= buf.length; pos += 12 + buf.readUInt32BE(pos)) {
    if (buf.toString('latin1', pos + 4, pos + 8) === type) return pos;
  }
  return -1;
}

/**
 * The raster a decoder must return for this spec, by the rules of
 * data/imageIO.ts: alpha dropped; grey, grey+alpha and all-grey palettes give
 * 1 channel; 1/2/4-bit grey scaled as pngjs scales it, floor(v·255/max + 0.5).
 */
export function expectedRaster(spec: PngSpec): { channels: number; maxval: number; data: number[] } {
  const { width, height, colourType, bitDepth, samples } = spec;
  const spp = SAMPLES_PER_PIXEL[colourType];
  const palette = spec.palette ?? [];
  let greyPalette = true;
  for (let i = 0; i < palette.length; i += 3) greyPalette &&= palette[i] === palette[i + 1] && palette[i] === palette[i + 2];
  const channels = colourType === 0 || colourType === 4 || (colourType === 3 && greyPalette) ? 1 : 3;
  const data: number[] = [];
  const top = 2 ** bitDepth - 1;
  for (let p = 0; p < width * height; p++) {
    if (colourType === 3) {
      const index = samples[p];
      for (let c = 0; c < channels; c++) data.push(palette[3 * index + c]);
    } else {
      for (let c = 0; c < channels; c++) {
        const v = samples[p * spp + c];
        data.push(bitDepth < 8 ? Math.floor((v * 255) / top + 0.5) : v);
      }
    }
  }
  return { channels, maxval: bitDepth === 16 ? 65535 : 255, data };
}
