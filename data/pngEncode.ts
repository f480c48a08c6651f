import { promisify } from 'util';
import * as zlib from 'zlib';
import type { Raster } from './raster';

/**
 * The project's PNG encoder: grey (colour type 0) or RGB (2) rasters at 8 or
 * 16 bits per sample, non-interlaced. Single-channel maps (disparities, masks)
 * are written grey, as Middlebury's own files are.
 *
 * Row filters: images with at most 256 distinct pixel values (integer
 * disparity maps, masks, their colour-mapped versions) go unfiltered, since
 * filtering turns the colours that repeat between rows into residuals that
 * do not (a colour-mapped teddy disparity: 35 KB unfiltered, 49 KB with the
 * best per-row filters). Every other row takes the filter whose residuals,
 * read as signed bytes, have the smallest sum of magnitudes (the heuristic
 * the PNG specification suggests), which suits photographs, and is
 * deflated at a lower level (PHOTO_DEFLATE_LEVEL). Filters and levels change
 * only the bytes in the file, never the decoded samples. The deflate runs on
 * Node's thread pool, so images written one after another compress at once.
 */

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** The table-driven CRC-32 of PNG and zlib, for Node versions without zlib.crc32 (before 20.15). */
export function crc32ByTable(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** zlib's own CRC-32 where Node has it: native code, which a fresh process runs at full speed from its first byte. */
const nativeCrc32 = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;

/** CRC-32 of bytes[start, end), as PNG chunks carry it. */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  return nativeCrc32 ? nativeCrc32(bytes.subarray(start, end)) >>> 0 : crc32ByTable(bytes, start, end);
}

/** Palette-like images (see the module comment) have at most this many distinct pixel values. */
const FEW_VALUES = 256;

/**
 * The image as an unfiltered PNG data stream: per row a filter byte (0, None)
 * and the row's samples as bytes (rounded, clamped to 0..2^bitDepth-1, NaN →
 * 0; 16-bit big-endian). One more row of zeros goes in front, the filters'
 * "row above" of the first row; the stream proper starts after it. Rows are
 * `n + 1` bytes apart, n = width × bytes per pixel; row y's samples start at
 * (y + 1)(n + 1) + 1.
 */
function unfilteredStream(r: Raster, bitDepth: 8 | 16, n: number): Uint8Array {
  const rows = rowBuffer((r.height + 1) * (n + 1), n + 1);
  if (bitDepth === 8) samplesToBytes8(r.data, rows, r.height, r.width * r.channels);
  else samplesToBytes16(r.data, rows, r.height, r.width * r.channels);
  return rows;
}

/**
 * The previous image's row buffer, lent to the next image that fits in it: a
 * fresh buffer's memory is paid for page by page (a fault each) when first
 * written, and a caller writing several images in a row (a scene's outputs)
 * then pays it once. An image holds the buffer until its deflate (on a
 * thread of the pool) has read it: while `spareLent`, the next image gets a
 * buffer of its own, so no two images ever share one. Held weakly: the
 * encoder keeps nothing alive that a collection wants back.
 */
let spareRows: WeakRef<Uint8Array> | undefined;
let spareLent = false;

/**
 * `size` bytes of row buffer whose first `zeroRow` bytes (the zero row) are 0;
 * every other byte is left to the caller to write (samples and filter bytes).
 */
function rowBuffer(size: number, zeroRow: number): Uint8Array {
  const spare = spareLent ? undefined : spareRows?.deref();
  if (spare !== undefined && spare.length >= size) {
    spareLent = true;
    const rows = spare.subarray(0, size);
    rows.fill(0, 0, zeroRow);
    return rows;
  }
  const rows = new Uint8Array(size);
  if (!spareLent) {
    spareRows = new WeakRef(rows);
    spareLent = true;
  }
  return rows;
}

/** The deflate has read `rows`: if they are the spare buffer, it may be lent again. */
function rowsDone(rows: Uint8Array): void {
  if (rows.buffer === spareRows?.deref()?.buffer) spareLent = false;
}

/*
 * Rounding in the two converters below is `(x + 0.5) | 0` for 0 < x < max,
 * which equals Math.round(x) (halves up) for every double there but
 * 0.5 − 2⁻⁵⁴, the one value whose x + 0.5 rounds up to 1: samples are
 * float32s, which never take it, and for every other x in range x + 0.5 is
 * either exact or below 1. Each converter is only its loop, so that the code
 * V8 optimizes while the loop runs serves every later image too.
 */

/** 8-bit samples into the rows (see unfilteredStream), `perRow` samples a row, and filter bytes 0. */
function samplesToBytes8(src: Float32Array, rows: Uint8Array, height: number, perRow: number): void {
  for (let y = 0, i = 0, o = perRow + 2; y < height; y++, o++) { // o: past the zero row and the filter byte
    rows[o - 1] = 0;
    for (const end = i + perRow; i < end; i++, o++) {
      const x = src[i];
      rows[o] = x >= 255 ? 255 : x > 0 ? (x + 0.5) | 0 : 0; // NaN fails both tests: 0
    }
  }
}

/** 16-bit big-endian samples into the rows (see unfilteredStream), `perRow` samples a row, and filter bytes 0. */
function samplesToBytes16(src: Float32Array, rows: Uint8Array, height: number, perRow: number): void {
  for (let y = 0, i = 0, o = 2 * perRow + 2; y < height; y++, o++) {
    rows[o - 1] = 0;
    for (const end = i + perRow; i < end; i++, o += 2) {
      const x = src[i];
      const v = x >= 65535 ? 65535 : x > 0 ? (x + 0.5) | 0 : 0;
      rows[o] = v >> 8;
      rows[o + 1] = v & 0xff;
    }
  }
}

/**
 * Whether the pixels (`bpp` bytes each) of the rows take at most FEW_VALUES
 * distinct values. One-byte pixels always do (FEW_VALUES is 256); 2-byte ones
 * (16-bit grey) are marked in a bit set, 3-byte ones (8-bit RGB: the
 * colour-mapped and error images) go into a small hash set, 6-byte ones
 * (16-bit RGB) into a Set.
 */
function hasFewValues(rows: Uint8Array, n: number, height: number, bpp: number): boolean {
  switch (bpp) {
    case 1: return true;
    case 2: return fewValues2(rows, n, height);
    case 3: return fewValues3(rows, n, height);
    default: return fewValuesWide(rows, n, height, bpp);
  }
}

/** hasFewValues for 2-byte pixels: one bit per value. */
function fewValues2(rows: Uint8Array, n: number, height: number): boolean {
  const seen = new Int32Array(1 << 11); // 2^16 bits
  let count = 0;
  for (let y = 0; y < height; y++) {
    for (let i = (y + 1) * (n + 1) + 1, end = i + n; i < end; i += 2) {
      const key = (rows[i] << 8) | rows[i + 1];
      const bit = 1 << (key & 31);
      if ((seen[key >> 5] & bit) === 0) {
        seen[key >> 5] |= bit;
        if (++count > FEW_VALUES) return false;
      }
    }
  }
  return true;
}

/** Slots of fewValues3's hash set, as a power of two over twice FEW_VALUES + 1, the most keys it holds: probes stay short. */
const SET_BITS = 10;

/**
 * hasFewValues for 3-byte pixels: each pixel is a 24-bit key in an
 * open-addressing set (−1 = empty slot; keys are never negative), which never
 * fills up, since it stops at FEW_VALUES + 1 keys. A small table rather than
 * a bit set over all 2^24 values, whose pages would each cost a fault when
 * first touched. A run of equal pixels is looked up once.
 */
function fewValues3(rows: Uint8Array, n: number, height: number): boolean {
  const mask = (1 << SET_BITS) - 1;
  const slots = new Int32Array(mask + 1).fill(-1);
  let count = 0;
  let last = -1;
  for (let y = 0; y < height; y++) {
    for (let i = (y + 1) * (n + 1) + 1, end = i + n; i < end; i += 3) {
      const key = (rows[i] << 16) | (rows[i + 1] << 8) | rows[i + 2];
      if (key === last) continue;
      last = key;
      for (let s = Math.imul(key, 0x9e3779b1) >>> (32 - SET_BITS); slots[s] !== key; s = (s + 1) & mask) {
        if (slots[s] === -1) {
          if (++count > FEW_VALUES) return false;
          slots[s] = key;
          break;
        }
      }
    }
  }
  return true;
}

/** hasFewValues for wider pixels: each one's bytes as a number (at most 6 bytes: exact in a double) in a Set; a run of equal pixels is looked up once. */
function fewValuesWide(rows: Uint8Array, n: number, height: number, bpp: number): boolean {
  const seen = new Set<number>();
  let last = -1;
  for (let y = 0; y < height; y++) {
    for (let i = (y + 1) * (n + 1) + 1, end = i + n; i < end; i += bpp) {
      let key = 0;
      for (let k = 0; k < bpp; k++) key = key * 256 + rows[i + k];
      if (key === last) continue;
      last = key;
      if (!seen.has(key)) {
        seen.add(key);
        if (seen.size > FEW_VALUES) return false;
      }
    }
  }
  return true;
}

/**
 * Paeth's predictor from the left (a), upper (b) and upper-left (c) bytes: the
 * one of the three nearest to a + b − c, ties to a, then b. Branch-free (the
 * distances' signs become masks), since on image data the branches of the
 * textbook form mispredict about as often as they are right.
 */
export function paethPredictor(a: number, b: number, c: number): number {
  let pa = b - c; // p − a before the absolute value, p = a + b − c
  let pb = a - c; // p − b
  let pc = pa + pb; // p − c
  pa = (pa ^ (pa >> 31)) - (pa >> 31);
  pb = (pb ^ (pb >> 31)) - (pb >> 31);
  pc = (pc ^ (pc >> 31)) - (pc >> 31);
  const notA = ((pb - pa) | (pc - pa)) >> 31; // all ones when pa > pb or pa > pc
  const cNotB = (pc - pb) >> 31; // all ones when pb > pc
  return (a & ~notA) | (((b & ~cNotB) | (c & cNotB)) & notA);
}

/** Magnitude of a residual read as a signed byte (branch-free: residual signs are unpredictable). */
function signedMagnitude(residual: number): number {
  const s = (residual << 24) >> 24;
  return (s ^ (s >> 31)) - (s >> 31);
}

/**
 * Gives the row at `p` (n bytes, the row above at p − stride) the filter
 * (0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth) whose residuals, read as signed
 * bytes, have the smallest sum of magnitudes; ties go to the lower number. One
 * pass over the row computes the four filters' residuals into `scratch` (4n
 * bytes: Sub, Up, Average, Paeth; Uint8Array stores wrap modulo 256, as the
 * filters require) and sums the magnitudes; the chosen residuals are then
 * copied over the row. Every residual is taken from unfiltered bytes: the row
 * itself is written only after the pass, and the row above is still
 * unfiltered because rows are done bottom to top.
 */
function filterRow(rows: Uint8Array, p: number, n: number, bpp: number, stride: number, scratch: Uint8Array): void {
  const q = p - stride;
  const up = n;
  const avg = 2 * n;
  const pae = 3 * n;
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  for (let i = 0; i < n; i++) {
    const x = rows[p + i];
    const a = i >= bpp ? rows[p + i - bpp] : 0; // the first pixel has no left neighbours: a = c = 0
    const b = rows[q + i];
    const c = i >= bpp ? rows[q + i - bpp] : 0;
    const rSub = x - a;
    const rUp = x - b;
    const rAvg = x - ((a + b) >> 1);
    const rPaeth = x - paethPredictor(a, b, c);
    scratch[i] = rSub;
    scratch[up + i] = rUp;
    scratch[avg + i] = rAvg;
    scratch[pae + i] = rPaeth;
    s0 += signedMagnitude(x);
    s1 += signedMagnitude(rSub);
    s2 += signedMagnitude(rUp);
    s3 += signedMagnitude(rAvg);
    s4 += signedMagnitude(rPaeth);
  }
  let best = 0;
  let bestSum = s0;
  if (s1 < bestSum) { best = 1; bestSum = s1; }
  if (s2 < bestSum) { best = 2; bestSum = s2; }
  if (s3 < bestSum) { best = 3; bestSum = s3; }
  if (s4 < bestSum) best = 4;
  rows[p - 1] = best;
  if (best !== 0) rows.set(scratch.subarray((best - 1) * n, best * n), p);
}

/** Give every row its chosen filter, in place, bottom to top (see filterRow). */
function filterRowsInPlace(rows: Uint8Array, n: number, height: number, bpp: number): void {
  const stride = n + 1;
  const scratch = new Uint8Array(4 * n);
  for (let y = height - 1; y >= 0; y--) filterRow(rows, (y + 1) * stride + 1, n, bpp, stride, scratch);
}

/** zlib's deflate on a thread of the pool: the main thread goes on (the next image's samples, a scene's other outputs) meanwhile. */
const deflateOnPool = promisify(zlib.deflate);

/**
 * zlib level of filtered (photographic) images: their residuals are mostly
 * noise to deflate's matcher, so the default level 6 spends several times
 * level 2's time for files only a few per cent smaller. Palette-like images
 * keep the default, which finds their long repeats.
 */
export const PHOTO_DEFLATE_LEVEL = 2;

/** The compressed image data (see the module comment for the choice of filters); the rows are handed back once read. */
async function compressImage(rows: Uint8Array, n: number, height: number, bpp: number): Promise<Buffer> {
  try {
    const photo = !hasFewValues(rows, n, height, bpp);
    if (photo) filterRowsInPlace(rows, n, height, bpp);
    const stream = rows.subarray(n + 1); // past the zero row
    // One output chunk as large as any result (zlib's deflateBound: the input, 5 bytes per 16 KB, 13 more and the
    // 6-byte wrapper): the whole deflate is then one task on the pool. With zlib's 16 KB chunks it would wait for the
    // main thread between chunks, which is busy with the next image. (A result that did not fit would take a second
    // chunk: slower, the same bytes.)
    const chunkSize = Math.max(64, stream.length + 5 * Math.ceil(stream.length / 16384) + 64);
    return await deflateOnPool(stream, { chunkSize, ...(photo ? { level: PHOTO_DEFLATE_LEVEL } : {}) });
  } finally {
    rowsDone(rows);
  }
}

/** Append a chunk (length, type, body, CRC of type and body) to `out` at `pos`; returns the position after it. */
function putChunk(out: Buffer, pos: number, type: string, body: Uint8Array): number {
  out.writeUInt32BE(body.length, pos);
  out.write(type, pos + 4, 'ascii');
  out.set(body, pos + 8);
  out.writeUInt32BE(crc32(out, pos + 4, pos + 8 + body.length), pos + 8 + body.length);
  return pos + 12 + body.length;
}

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * Encode as a non-interlaced PNG, colour type 0 (grey) for 1 channel or 2 (RGB)
 * for 3. Samples are rounded and clamped to 0..2^bitDepth-1 (NaN → 0).
 * Every sample of `r` is read before the promise is returned (only the
 * deflate runs later, on a copy): the caller may reuse the raster at once.
 */
export async function encodePng(r: Raster, bitDepth: 8 | 16 = 8): Promise<Uint8Array> {
  if (r.channels !== 1 && r.channels !== 3) throw new Error(`encodePng: channels must be 1 or 3, got ${r.channels}`);
  if (bitDepth !== 8 && bitDepth !== 16) throw new Error(`encodePng: bit depth must be 8 or 16, got ${bitDepth}`);
  const { width, height, channels } = r;
  if (r.data.length !== width * height * channels) {
    throw new Error(`encodePng: data length ${r.data.length} != ${width}x${height}x${channels}`);
  }
  const bpp = channels * (bitDepth / 8);
  const n = width * bpp;
  const idat = await compressImage(unfilteredStream(r, bitDepth, n), n, height, bpp);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = bitDepth;
  ihdr[9] = channels === 1 ? 0 : 2;
  ihdr[10] = 0; // deflate
  ihdr[11] = 0; // adaptive filtering
  ihdr[12] = 0; // no interlace
  const out = Buffer.allocUnsafe(SIGNATURE.length + 3 * 12 + ihdr.length + idat.length);
  out.set(SIGNATURE, 0);
  let pos = putChunk(out, SIGNATURE.length, 'IHDR', ihdr);
  pos = putChunk(out, pos, 'IDAT', idat);
  putChunk(out, pos, 'IEND', new Uint8Array(0));
  return out;
}
