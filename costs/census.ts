import type { Raster } from '../data/raster';
import { optionError } from '../data/errors';
import type { ScratchArrays } from '../data/scratchArrays';
import { intensityRow, validateRaster, type IntensityImage } from './intensity';

/**
 * The census transform (Zabih & Woodfill 1994) and its Hamming-distance cost.
 *
 * Grey: a colour sample is reduced to grey by the integer Rec. 601 luma
 * g = (299 R + 587 G + 114 B + 500) div 1000 on the 8-bit scale of
 * intensity.ts (a grey image is used as it is). Integer arithmetic, so the
 * codes do not depend on floating-point rounding.
 *
 * Code: for a window of w × h pixels (both odd) centred on p, one bit per
 * neighbour q ≠ p in row-major window order, set when g(q) < g(p). Pixels
 * outside the image read the nearest pixel inside (borders replicated). The
 * bits are packed 32 to a word, `words` words per pixel, least significant
 * bit first.
 *
 * Cost: the Hamming distance of the left code at (x, y) and the right code
 * at (x − d, y), counted by popcount. Only the order of grey values enters,
 * so any strictly increasing change of one image's brightness (gain and
 * offset) leaves every cost unchanged.
 */

export interface CensusWindow {
  width: number;
  height: number;
}

/** Largest window side: 31×31 = 960 bits per pixel is already far beyond what matching needs. */
export const MAX_CENSUS_SIDE = 31;
export const DEFAULT_CENSUS_WINDOW: CensusWindow = { width: 7, height: 7 };

/** Parses a census window written "WxH" or "N" (N×N; the command line's --census-window), odd sizes 1..31, at least 2 pixels. */
export function parseCensusWindow(text: string | number): CensusWindow {
  const s = String(text).trim();
  const m = /^(\d+)(?:\s*[x×X]\s*(\d+))?$/.exec(s);
  if (!m) throw optionError('range', 'parseCensusWindow', 'censusWindow', s, 'WxH or N with odd sizes, e.g. 7x7 or 9x7');
  const width = Number(m[1]);
  const height = m[2] === undefined ? width : Number(m[2]);
  try {
    return validateCensusWindow({ width, height });
  } catch (e) {
    throw optionError('range', 'parseCensusWindow', 'censusWindow', s, (e as { expected: string }).expected);
  }
}

export function validateCensusWindow(w: CensusWindow): CensusWindow {
  const ok = (v: number): boolean => Number.isInteger(v) && v >= 1 && v <= MAX_CENSUS_SIDE && v % 2 === 1;
  if (!w || !ok(w.width) || !ok(w.height)) {
    throw optionError('range', 'census', 'censusWindow', w, `{ width, height } with odd sides in 1..${MAX_CENSUS_SIDE}`);
  }
  if (w.width * w.height < 2) throw optionError('range', 'census', 'censusWindow', w, 'a window of at least 2 pixels (a 1×1 window compares nothing)');
  return { width: w.width, height: w.height };
}

/** Bits per code: every window pixel but the centre. */
export function censusBits(w: CensusWindow): number {
  return w.width * w.height - 1;
}

/** 32-bit words per pixel. */
export function censusWords(w: CensusWindow): number {
  return Math.ceil(censusBits(w) / 32);
}

/** Grey samples 0..255 of an 8-bit-scale image (the integer luma above for RGB). */
export function censusGrey(im: IntensityImage): Int32Array {
  const n = im.width * im.height;
  const g = new Int32Array(n);
  greyInto(im.data, im.channels, n, g, 0);
  return g;
}

/**
 * censusGrey(toIntensity8(r, name)) without the image of 8-bit samples,
 * which for a colour raster is three times the grey's size: converted a
 * row at a time, with the same samples and the same errors. In `arrays`
 * when given (valid until censusGreyOfRaster is called with them again).
 */
export function censusGreyOfRaster(r: Raster, name = 'image', arrays?: ScratchArrays): Int32Array {
  validateRaster(r, name);
  const { width: W, height: H, channels: C } = r;
  const g = arrays ? arrays.array('census grey', Int32Array, W * H) : new Int32Array(W * H);
  const row = arrays ? arrays.array('census grey row', Int32Array, W * C) : new Int32Array(W * C);
  for (let y = 0; y < H; y++) {
    intensityRow(r, y, row, name);
    greyInto(row, C, W, g, y * W);
  }
  return g;
}

/** The grey of n pixels of 8-bit-scale samples (`C` channels) into out[at ..]. */
function greyInto(data: Int32Array, C: number, n: number, out: Int32Array, at: number): void {
  if (C === 1) {
    out.set(data.subarray(0, n), at);
    return;
  }
  for (let i = 0, j = 0; i < n; i++, j += 3) out[at + i] = ((299 * data[j] + 587 * data[j + 1] + 114 * data[j + 2] + 500) / 1000) | 0;
}

/** Census codes of an image: codes[(y·W + x)·words + k], see the module comment. */
export interface CensusCodes {
  width: number;
  height: number;
  window: CensusWindow;
  words: number;
  codes: Int32Array;
}

/**
 * The codes of every pixel, or of rows y0 .. y1 − 1 only (`rows`; the other
 * rows stay 0): a worker thread that builds part of the volume needs the
 * codes of its own rows alone.
 */
export function censusTransform(im: IntensityImage, window: CensusWindow, rows?: { y0: number; y1: number }): CensusCodes {
  validateCensusWindow(window);
  const W = im.width;
  const H = im.height;
  const words = censusWords(window);
  const codes = new Int32Array(W * H * words);
  const y0 = rows ? Math.max(0, rows.y0) : 0;
  const y1 = rows ? Math.min(H, rows.y1) : H;
  if (y0 < y1) censusRowsInto(censusGrey(im), W, H, window, y0, y1, codes, y0 * W * words);
  return { width: W, height: H, window: { ...window }, words, codes };
}

/**
 * The codes of rows y0 .. y1 − 1 of a W×H grey image (censusGrey's
 * samples), written to `into` from index `at` on (row y0's first word),
 * row after row: what censusTransform holds for those rows. A band of a
 * level's terms (stereo/levelTerms.ts) writes its rows straight into the
 * level's shared array, its working rows in `arrays` when given.
 */
export function censusRowsInto(g: Int32Array, W: number, H: number, window: CensusWindow, y0: number, y1: number, into: Int32Array, at: number, arrays?: ScratchArrays): void {
  const words = censusWords(window);
  const rx = (window.width - 1) >> 1;
  const ry = (window.height - 1) >> 1;
  // The grey rows y0 − ry .. y1 + ry, padded by rx columns and clamped rows: borders replicated, no test in the loops.
  const PW = W + 2 * rx;
  const PH = y1 - y0 + 2 * ry;
  const padded = arrays ? arrays.array('census padded', Int32Array, PW * PH) : new Int32Array(PW * PH);
  for (let py = 0; py < PH; py++) {
    const yy = Math.min(H - 1, Math.max(0, y0 - ry + py)) * W;
    const o = py * PW;
    for (let px = 0; px < PW; px++) padded[o + px] = g[yy + Math.min(W - 1, Math.max(0, px - rx))];
  }
  // Word by word and row by row: each window offset is one pass over a row, its bit set where the neighbour is below
  // the centre ((q − c) >>> 31 is 1 exactly when q < c; greys are 0..255), in the row-major bit order of the module comment.
  const offsets: number[] = [];
  for (let dy = -ry; dy <= ry; dy++) for (let dx = -rx; dx <= rx; dx++) if (dx !== 0 || dy !== 0) offsets.push(dy * PW + dx);
  const acc = arrays ? arrays.array('census row', Int32Array, W) : new Int32Array(W);
  for (let y = y0; y < y1; y++) {
    const centre = (y - y0 + ry) * PW + rx;
    for (let w = 0; w < words; w++) {
      acc.fill(0);
      const last = Math.min(offsets.length, 32 * (w + 1));
      for (let k = 32 * w; k < last; k++) {
        const q = centre + offsets[k];
        const bit = k & 31;
        for (let x = 0; x < W; x++) acc[x] |= ((padded[q + x] - padded[centre + x]) >>> 31) << bit;
      }
      for (let x = 0, o = at + (y - y0) * W * words + w; x < W; x++, o += words) into[o] = acc[x];
    }
  }
}

/** Number of set bits of a 32-bit integer. */
export function popcount32(v: number): number {
  v = v - ((v >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
}
