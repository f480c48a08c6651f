import { inflateSync } from 'zlib';
import { ownSamples, type Raster, type SampleArrays } from './raster';
import { crc32 } from './pngEncode';

/**
 * The project's PNG decoder: every colour type and bit depth of PNG 1.2,
 * Adam7 interlacing, all five row filters, on Node's zlib alone.
 *
 * Output (the Raster contract of data/imageIO.ts):
 * - Alpha is dropped and so are ancillary chunks (tRNS, gAMA, ...): samples
 *   come back as stored, never composited or gamma-corrected.
 * - Grey (colour type 0), grey+alpha (4) and palette images whose PLTE entries
 *   are all grey give 1 channel; RGB (2), RGBA (6) and colour palettes give 3.
 *   The declared type decides, not the content.
 * - 16-bit samples are exact, maxval 65535. 8-bit and smaller give maxval 255:
 *   1/2/4-bit grey is scaled by 255 / (2^depth - 1), which is an integer (255,
 *   85, 17), so the result equals pngjs's round(v * 255 / (2^depth - 1));
 *   palette indices are looked up, never scaled.
 * Every malformed file is a one-line Error starting with the file name. Chunk
 * CRCs are checked on the critical chunks (IHDR, PLTE, IDAT, IEND), the ones
 * the pixels depend on; ancillary chunks are skipped unread.
 */

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Samples per pixel of each colour type, and the bit depths PNG allows for it. */
const COLOUR_TYPES: Record<number, { samples: number; depths: number[] }> = {
  0: { samples: 1, depths: [1, 2, 4, 8, 16] },
  2: { samples: 3, depths: [8, 16] },
  3: { samples: 1, depths: [1, 2, 4, 8] },
  4: { samples: 2, depths: [8, 16] },
  6: { samples: 4, depths: [8, 16] },
};

/** Adam7 passes as [x0, y0, dx, dy]; a non-interlaced image is the single pass [0, 0, 1, 1]. */
const ADAM7: readonly (readonly [number, number, number, number])[] = [
  [0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2],
];
const SINGLE_PASS: typeof ADAM7 = [[0, 0, 1, 1]];

/** Largest output buffer handed to zlib at once: larger images inflate into several, and a header claiming a huge image costs no more than this before its data runs out. */
const MAX_INFLATE_CHUNK = 1 << 26;

interface PngHeader {
  width: number;
  height: number;
  bitDepth: number;
  colourType: number;
  interlaced: boolean;
}

interface PngChunks extends PngHeader {
  /** PLTE as RGB triples (colour type 3 only; empty otherwise). */
  palette: Uint8Array;
  /** Byte ranges [start, end) of the IDAT chunk bodies, in file order. */
  idat: [number, number][];
}

function isLetter(b: number): boolean {
  return (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
}

/** The IHDR fields, checked against the combinations PNG allows. */
function parseHeader(view: DataView, body: number, name: string): PngHeader {
  const header: PngHeader = {
    width: view.getUint32(body),
    height: view.getUint32(body + 4),
    bitDepth: view.getUint8(body + 8),
    colourType: view.getUint8(body + 9),
    interlaced: view.getUint8(body + 12) === 1,
  };
  const compression = view.getUint8(body + 10);
  const filterMethod = view.getUint8(body + 11);
  const interlace = view.getUint8(body + 12);
  const type = COLOUR_TYPES[header.colourType];
  if (type === undefined) throw new Error(`${name}: corrupt PNG (colour type ${header.colourType})`);
  if (!type.depths.includes(header.bitDepth)) {
    throw new Error(`${name}: corrupt PNG (colour type ${header.colourType} cannot have ${header.bitDepth}-bit samples)`);
  }
  if (compression !== 0) throw new Error(`${name}: corrupt PNG (compression method ${compression})`);
  if (filterMethod !== 0) throw new Error(`${name}: corrupt PNG (filter method ${filterMethod})`);
  if (interlace > 1) throw new Error(`${name}: corrupt PNG (interlace method ${interlace})`);
  if (header.width < 1 || header.height < 1) throw new Error(`${name}: PNG size ${header.width}x${header.height} is empty`);
  return header;
}

interface ChunkAt {
  type: string;
  /** Offset of the chunk's body in the file. */
  body: number;
  /** Length of the body. */
  length: number;
  /** Critical chunks (type's first letter upper case) matter to the pixels; ancillary ones are skipped. */
  critical: boolean;
}

/**
 * The chunk whose length field is at `pos`: it must fit in the file, its type
 * must be four letters (so messages stay printable), and a critical chunk's
 * CRC must match.
 */
function chunkAt(bytes: Uint8Array, view: DataView, pos: number, name: string): ChunkAt {
  if (pos + 12 > bytes.length) throw new Error(`${name}: truncated PNG (no IEND chunk)`);
  const length = view.getUint32(pos);
  for (let i = pos + 4; i < pos + 8; i++) {
    if (!isLetter(bytes[i])) throw new Error(`${name}: corrupt PNG (chunk type at byte ${pos + 4} is not four letters)`);
  }
  const type = String.fromCharCode(bytes[pos + 4], bytes[pos + 5], bytes[pos + 6], bytes[pos + 7]);
  if (pos + 12 + length > bytes.length) throw new Error(`${name}: truncated PNG (chunk ${type} runs past the end of the file)`);
  const body = pos + 8;
  const critical = (bytes[pos + 4] & 0x20) === 0;
  if (critical && crc32(bytes, pos + 4, body + length) !== view.getUint32(body + length)) {
    throw new Error(`${name}: corrupt PNG (CRC mismatch in chunk ${type})`);
  }
  return { type, body, length, critical };
}

/**
 * Walk the chunk list from IHDR to IEND. IEND must be reached, so a cut file
 * is reported as truncated rather than decoded partially.
 */
function readChunks(bytes: Uint8Array, name: string): PngChunks {
  for (let i = 0; i < SIGNATURE.length; i++) {
    if (bytes[i] !== SIGNATURE[i]) throw new Error(`${name}: not a PNG file (bad signature)`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const first = chunkAt(bytes, view, 8, name);
  if (first.type !== 'IHDR') throw new Error(`${name}: corrupt PNG (first chunk is not IHDR)`);
  if (first.length !== 13) throw new Error(`${name}: corrupt PNG (IHDR length ${first.length})`);
  const header = parseHeader(view, first.body, name);
  let palette = new Uint8Array(0);
  const idat: [number, number][] = [];
  for (let pos = first.body + first.length + 4; ;) {
    const { type, body, length, critical } = chunkAt(bytes, view, pos, name);
    if (type === 'IEND') break;
    if (type === 'IDAT') {
      idat.push([body, body + length]);
    } else if (type === 'PLTE') {
      if (length === 0 || length % 3 !== 0 || length > 768) throw new Error(`${name}: corrupt PNG (PLTE length ${length})`);
      palette = bytes.slice(body, body + length);
    } else if (critical) {
      throw new Error(`${name}: corrupt PNG (unexpected critical chunk ${type})`);
    }
    pos = body + length + 4;
  }
  if (idat.length === 0) throw new Error(`${name}: corrupt PNG (no IDAT chunk)`);
  if (header.colourType === 3 && palette.length === 0) throw new Error(`${name}: corrupt PNG (palette image without PLTE chunk)`);
  return { ...header, palette: header.colourType === 3 ? palette : new Uint8Array(0), idat };
}

/**
 * The zlib stream of all IDAT chunks, inflated into a buffer the decoder owns
 * (it unfilters in place). `expected` is the size the header implies; zlib
 * writes into one buffer of about that size instead of growing a list of small
 * ones and joining them.
 */
function inflateImageData(bytes: Uint8Array, idat: [number, number][], expected: number, name: string): Uint8Array {
  const stream = idat.length === 1
    ? bytes.subarray(idat[0][0], idat[0][1])
    : Buffer.concat(idat.map(([a, b]) => bytes.subarray(a, b)));
  let raw: Buffer;
  try {
    // One byte spare: a buffer filled exactly would make zlib allocate another chunk just to see the stream end.
    raw = inflateSync(stream, { chunkSize: Math.max(64, Math.min(expected + 1, MAX_INFLATE_CHUNK)) });
  } catch (err) {
    throw new Error(`${name}: corrupt PNG (image data does not inflate: ${(err as Error).message.split('\n')[0]})`);
  }
  // A plain Uint8Array view keeps the unfiltering loops on one array type.
  return new Uint8Array(raw.buffer, raw.byteOffset, raw.length);
}

/*
 * Row unfiltering, in place. `d` holds the inflated data; the current row's
 * bytes are d[cur .. cur+n), its filter byte at d[cur-1], and the previous row
 * of the same pass (already unfiltered) starts `stride` = n + 1 bytes earlier.
 * `bpp` is the filters' left distance: bytes per pixel, at least 1. On a
 * pass's first row the previous row is all zeros, which turns Up into None,
 * Average into "half the left byte" and Paeth into Sub; those variants have
 * their own loops so that no loop reads outside its pass. Stores into the
 * Uint8Array wrap modulo 256, as the filters require.
 */

function unfilterSub(d: Uint8Array, cur: number, n: number, bpp: number): void {
  for (let i = cur + bpp, end = cur + n; i < end; i++) d[i] = d[i] + d[i - bpp];
}

function unfilterUp(d: Uint8Array, cur: number, n: number, stride: number): void {
  for (let i = cur, end = cur + n; i < end; i++) d[i] = d[i] + d[i - stride];
}

function unfilterAverage(d: Uint8Array, cur: number, n: number, bpp: number, stride: number): void {
  const end = cur + n;
  const head = Math.min(cur + bpp, end);
  let i = cur;
  for (; i < head; i++) d[i] = d[i] + (d[i - stride] >> 1);
  for (; i < end; i++) d[i] = d[i] + ((d[i - bpp] + d[i - stride]) >> 1);
}

function unfilterAverageFirstRow(d: Uint8Array, cur: number, n: number, bpp: number): void {
  for (let i = cur + bpp, end = cur + n; i < end; i++) d[i] = d[i] + (d[i - bpp] >> 1);
}

function unfilterPaeth(d: Uint8Array, cur: number, n: number, bpp: number, stride: number): void {
  const end = cur + n;
  const head = Math.min(cur + bpp, end);
  let i = cur;
  for (; i < head; i++) d[i] = d[i] + d[i - stride]; // left and upper-left are 0: the predictor is the byte above
  for (; i < end; i++) {
    // pngEncode.ts's paethPredictor(a, b, c), inlined: a call per byte is what a fresh process pays for most
    // while this loop still runs in the interpreter.
    const a = d[i - bpp];
    const b = d[i - stride];
    const c = d[i - stride - bpp];
    let pa = b - c;
    let pb = a - c;
    let pc = pa + pb;
    pa = (pa ^ (pa >> 31)) - (pa >> 31);
    pb = (pb ^ (pb >> 31)) - (pb >> 31);
    pc = (pc ^ (pc >> 31)) - (pc >> 31);
    const notA = ((pb - pa) | (pc - pa)) >> 31;
    const cNotB = (pc - pb) >> 31;
    d[i] = d[i] + ((a & ~notA) | (((b & ~cNotB) | (c & cNotB)) & notA));
  }
}

/*
 * Sample placement: one unfiltered row into the raster. `o` is the output
 * index of the row's first pixel and `oStep` the distance between its pixels
 * (channels × the pass's column step).
 */

/** 8-bit samples: the first `keep` (1 or 3) of every `spp`. */
function place8(d: Uint8Array, src: number, pw: number, spp: number, keep: number, out: Float32Array, o: number, oStep: number): void {
  if (spp === keep && oStep === keep) {
    // Every sample kept, pixels adjacent: the typed-array copy converts natively, with no JIT warm-up in a fresh process.
    out.set(d.subarray(src, src + pw * spp), o);
  } else if (keep === 1) {
    for (let px = 0; px < pw; px++, src += spp, o += oStep) out[o] = d[src];
  } else {
    for (let px = 0; px < pw; px++, src += spp, o += oStep) {
      out[o] = d[src];
      out[o + 1] = d[src + 1];
      out[o + 2] = d[src + 2];
    }
  }
}

/** 16-bit big-endian samples: the first `keep` (1 or 3) of every `spp`. */
function place16(d: Uint8Array, src: number, pw: number, spp: number, keep: number, out: Float32Array, o: number, oStep: number): void {
  const step = 2 * spp;
  if (keep === 1) {
    for (let px = 0; px < pw; px++, src += step, o += oStep) out[o] = (d[src] << 8) | d[src + 1];
  } else {
    for (let px = 0; px < pw; px++, src += step, o += oStep) {
      out[o] = (d[src] << 8) | d[src + 1];
      out[o + 1] = (d[src + 2] << 8) | d[src + 3];
      out[o + 2] = (d[src + 4] << 8) | d[src + 5];
    }
  }
}

/** 1/2/4-bit samples (one per pixel, most significant bits first) into one byte each, times `scale`. */
function unpackLowDepth(d: Uint8Array, src: number, pw: number, depth: number, scale: number, into: Uint8Array): void {
  const mask = (1 << depth) - 1;
  for (let px = 0, bit = 0; px < pw; px++, bit += depth) into[px] = ((d[src + (bit >> 3)] >> (8 - depth - (bit & 7))) & mask) * scale;
}

/** Palette indices (one byte each) to the palette's R (grey palettes, 1 channel) or RGB. */
function placePalette(
  d: Uint8Array, src: number, pw: number, palette: Uint8Array, keep: number, out: Float32Array, o: number, oStep: number, name: string,
): void {
  const entries = palette.length / 3;
  for (let px = 0; px < pw; px++, o += oStep) {
    const index = d[src + px];
    if (index >= entries) throw new Error(`${name}: corrupt PNG (palette index ${index} outside the ${entries}-entry palette)`);
    out[o] = palette[3 * index];
    if (keep === 3) {
      out[o + 1] = palette[3 * index + 1];
      out[o + 2] = palette[3 * index + 2];
    }
  }
}

function isGreyPalette(palette: Uint8Array): boolean {
  for (let i = 0; i < palette.length; i += 3) {
    if (palette[i] !== palette[i + 1] || palette[i] !== palette[i + 2]) return false;
  }
  return true;
}

/** Decode a PNG file's bytes to a Raster (see the module comment); `name` is used in errors. */
export function decodePng(bytes: Uint8Array, name: string, samples: SampleArrays = ownSamples): Raster {
  const png = readChunks(bytes, name);
  const { width, height, bitDepth, colourType, palette } = png;
  const spp = COLOUR_TYPES[colourType].samples;
  const isPalette = colourType === 3;
  const channels = colourType === 0 || colourType === 4 || (isPalette && isGreyPalette(palette)) ? 1 : 3;
  const bitsPerPixel = spp * bitDepth;
  const bpp = Math.max(1, bitsPerPixel >> 3);
  const passes = png.interlaced ? ADAM7 : SINGLE_PASS;

  // Empty passes (an image narrower or shorter than the pass grid) have no bytes at all, not even filter bytes.
  let needed = 0;
  for (const [x0, y0, dx, dy] of passes) {
    const pw = Math.ceil((width - x0) / dx);
    const ph = Math.ceil((height - y0) / dy);
    if (pw > 0 && ph > 0) needed += ph * (1 + Math.ceil((pw * bitsPerPixel) / 8));
  }
  const d = inflateImageData(bytes, png.idat, needed, name);
  // Bytes after the last row are ignored, as pngjs ignores them.
  if (d.length < needed) throw new Error(`${name}: corrupt PNG (image data shorter than ${width}x${height} needs)`);

  const out = samples(width * height * channels);
  // Sub-byte rows are unpacked to one byte per pixel first: grey scaled to 0..255, palette indices as they are.
  const unpacked = new Uint8Array(bitDepth < 8 ? width : 0);
  const unpackScale = isPalette ? 1 : 255 / ((1 << bitDepth) - 1);
  let pos = 0;
  for (const [x0, y0, dx, dy] of passes) {
    const pw = Math.ceil((width - x0) / dx);
    const ph = Math.ceil((height - y0) / dy);
    if (pw <= 0 || ph <= 0) continue;
    const n = Math.ceil((pw * bitsPerPixel) / 8);
    const stride = n + 1;
    for (let py = 0; py < ph; py++, pos += stride) {
      const cur = pos + 1;
      const filter = d[pos];
      const first = py === 0;
      switch (filter) {
        case 0: break;
        case 1: unfilterSub(d, cur, n, bpp); break;
        case 2: if (!first) unfilterUp(d, cur, n, stride); break;
        case 3: if (first) unfilterAverageFirstRow(d, cur, n, bpp); else unfilterAverage(d, cur, n, bpp, stride); break;
        case 4: if (first) unfilterSub(d, cur, n, bpp); else unfilterPaeth(d, cur, n, bpp, stride); break;
        default: throw new Error(`${name}: corrupt PNG (row filter ${filter})`);
      }
      const o = ((y0 + py * dy) * width + x0) * channels;
      const oStep = dx * channels;
      if (bitDepth === 16) {
        place16(d, cur, pw, spp, channels, out, o, oStep);
      } else if (bitDepth === 8) {
        if (isPalette) placePalette(d, cur, pw, palette, channels, out, o, oStep, name);
        else place8(d, cur, pw, spp, channels, out, o, oStep);
      } else {
        unpackLowDepth(d, cur, pw, bitDepth, unpackScale, unpacked);
        if (isPalette) placePalette(unpacked, 0, pw, palette, channels, out, o, oStep, name);
        else place8(unpacked, 0, pw, 1, 1, out, o, oStep);
      }
    }
  }
  return { width, height, channels, data: out, maxval: bitDepth === 16 ? 65535 : 255 };
}
