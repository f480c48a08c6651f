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
 * the PNG specification suggests), which suits photographs. Filters change
 * only the bytes in the file, never the decoded samples.
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
  const { width, height, channels } = r;
  const src = r.data;
  const stride = n + 1;
  const rows = new Uint8Array((height + 1) * stride);
  const samplesPerRow = width * channels;
  for (let y = 0; y < height; y++) {
    let o = (y + 1) * stride + 1;
    const end = (y + 1) * samplesPerRow;
    if (bitDepth === 8) {
      for (let i = y * samplesPerRow; i < end; i++, o++) {
        const x = src[i];
        rows[o] = x >= 255 ? 255 : x > 0 ? Math.round(x) : 0; // NaN fails both tests: 0
      }
    } else {
      for (let i = y * samplesPerRow; i < end; i++, o += 2) {
        const x = src[i];
        const v = x >= 65535 ? 65535 : x > 0 ? Math.round(x) : 0;
        rows[o] = v >> 8;
        rows[o + 1] = v & 0xff;
      }
    }
  }
  return rows;
}

/** Whether the pixels (`bpp` bytes each) of the rows take at most `limit` distinct values; runs are looked up once. */
function hasFewValues(rows: Uint8Array, n: number, height: number, bpp: number, limit: number): boolean {
  const seen = new Set<number>();
  let last = -1;
  for (let y = 0; y < height; y++) {
    for (let i = (y + 1) * (n + 1) + 1, end = i + n; i < end; i += bpp) {
      let key = 0; // at most 6 bytes: exact in a double
      for (let k = 0; k < bpp; k++) key = key * 256 + rows[i + k];
      if (key === last) continue;
      last = key;
      if (!seen.has(key)) {
        seen.add(key);
        if (seen.size > limit) return false;
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
 * The filter (0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth) whose residuals for the
 * row at `p` (n bytes, the row above at p − stride) have the smallest sum of
 * signed magnitudes; ties go to the lower number.
 */
function chooseFilter(rows: Uint8Array, p: number, n: number, bpp: number, stride: number): number {
  const q = p - stride;
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  const head = Math.min(bpp, n);
  for (let i = 0; i < head; i++) { // no left neighbour: a = c = 0
    const x = rows[p + i];
    const b = rows[q + i];
    s0 += signedMagnitude(x);
    s1 += signedMagnitude(x);
    s2 += signedMagnitude(x - b);
    s3 += signedMagnitude(x - (b >> 1));
    s4 += signedMagnitude(x - b);
  }
  for (let i = head; i < n; i++) {
    const x = rows[p + i];
    const a = rows[p + i - bpp];
    const b = rows[q + i];
    const c = rows[q + i - bpp];
    s0 += signedMagnitude(x);
    s1 += signedMagnitude(x - a);
    s2 += signedMagnitude(x - b);
    s3 += signedMagnitude(x - ((a + b) >> 1));
    s4 += signedMagnitude(x - paethPredictor(a, b, c));
  }
  let best = 0;
  let bestSum = s0;
  if (s1 < bestSum) { best = 1; bestSum = s1; }
  if (s2 < bestSum) { best = 2; bestSum = s2; }
  if (s3 < bestSum) { best = 3; bestSum = s3; }
  if (s4 < bestSum) best = 4;
  return best;
}

/**
 * Filter the row at `p` in place (row above at p − stride, still unfiltered).
 * Bytes go right to left, so each one's left neighbour is still the sample;
 * Uint8Array stores wrap modulo 256, as the filters require.
 */
function filterRowInPlace(filter: number, rows: Uint8Array, p: number, n: number, bpp: number, stride: number): void {
  const q = p - stride;
  const head = Math.min(bpp, n);
  let i = n - 1;
  switch (filter) {
    case 1:
      for (; i >= head; i--) rows[p + i] = rows[p + i] - rows[p + i - bpp];
      break;
    case 2:
      for (; i >= 0; i--) rows[p + i] = rows[p + i] - rows[q + i];
      break;
    case 3:
      for (; i >= head; i--) rows[p + i] = rows[p + i] - ((rows[p + i - bpp] + rows[q + i]) >> 1);
      for (; i >= 0; i--) rows[p + i] = rows[p + i] - (rows[q + i] >> 1);
      break;
    case 4:
      for (; i >= head; i--) rows[p + i] = rows[p + i] - paethPredictor(rows[p + i - bpp], rows[q + i], rows[q + i - bpp]);
      for (; i >= 0; i--) rows[p + i] = rows[p + i] - rows[q + i];
      break;
  }
}

/**
 * Give every row its chosen filter, in place. Rows go bottom to top, so the
 * row above each one is still unfiltered when the row is done.
 */
function filterRowsInPlace(rows: Uint8Array, n: number, height: number, bpp: number): void {
  const stride = n + 1;
  for (let y = height - 1; y >= 0; y--) {
    const p = (y + 1) * stride + 1;
    const filter = chooseFilter(rows, p, n, bpp, stride);
    rows[p - 1] = filter;
    filterRowInPlace(filter, rows, p, n, bpp, stride);
  }
}

/** The compressed image data (see the module comment for the choice of filters). */
function compressImage(rows: Uint8Array, n: number, height: number, bpp: number): Buffer {
  if (!hasFewValues(rows, n, height, bpp, FEW_VALUES)) filterRowsInPlace(rows, n, height, bpp);
  return zlib.deflateSync(rows.subarray(n + 1)); // past the zero row
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
 */
export function encodePng(r: Raster, bitDepth: 8 | 16 = 8): Uint8Array {
  if (r.channels !== 1 && r.channels !== 3) throw new Error(`encodePng: channels must be 1 or 3, got ${r.channels}`);
  if (bitDepth !== 8 && bitDepth !== 16) throw new Error(`encodePng: bit depth must be 8 or 16, got ${bitDepth}`);
  const { width, height, channels } = r;
  if (r.data.length !== width * height * channels) {
    throw new Error(`encodePng: data length ${r.data.length} != ${width}x${height}x${channels}`);
  }
  const bpp = channels * (bitDepth / 8);
  const n = width * bpp;
  const idat = compressImage(unfilteredStream(r, bitDepth, n), n, height, bpp);
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
