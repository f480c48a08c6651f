import type { Raster } from '../data/raster';

/**
 * An image reduced to integer samples on the 8-bit scale 0..255, row-major,
 * channels interleaved: `data[(y·width + x)·channels + c]`.
 *
 * Every matching cost and static-cue test works on these samples, whatever
 * the bit depth of the file: a 16-bit image (maxval 65535) is brought down to
 * 8-bit scale so that SAD/SSD costs stay small integers whose size does not
 * depend on the file format, and one set of default truncations and cue
 * thresholds fits every input.
 */
export interface IntensityImage {
  width: number;
  height: number;
  /** 1 (grey) or 3 (RGB). */
  channels: number;
  /** Integer samples 0..255 (Int32Array so differences and squares need no conversion). */
  data: Int32Array;
}

/**
 * Checks that a raster is well formed; `name` says which input it is (a file
 * name or "left image") in the error.
 */
export function validateRaster(r: Raster, name: string): void {
  const { width: W, height: H, channels: C } = r;
  if (!Number.isInteger(W) || !Number.isInteger(H) || W <= 0 || H <= 0) {
    throw new Error(`${name}: bad size ${W}×${H}`);
  }
  if (C !== 1 && C !== 3) throw new Error(`${name}: ${C} channels, expected 1 (grey) or 3 (RGB)`);
  if (!(r.maxval > 0) || !Number.isFinite(r.maxval)) throw new Error(`${name}: maxval ${r.maxval} must be a positive number`);
  if (r.data.length !== W * H * C) {
    throw new Error(`${name}: ${r.data.length} samples, expected ${W * H * C} (${W}×${H}×${C})`);
  }
}

/**
 * Converts a raster to 8-bit-scale integers: round(value·255/maxval). A
 * sample that does not round into 0..255 (outside 0..maxval by half an
 * 8-bit step or more) is an error, as is a non-finite one: no sample is
 * clamped, which would change the pair without a word. Into `into` when
 * given (as many entries as the raster has samples).
 */
export function toIntensity8(r: Raster, name = 'image', into?: Int32Array): IntensityImage {
  validateRaster(r, name);
  const { width, height, channels, data } = r;
  if (into && into.length !== data.length) throw new Error(`toIntensity8: ${data.length} samples into ${into.length}`);
  const out = into ?? new Int32Array(data.length);
  const bad = samples8(data, out, 255 / r.maxval);
  if (bad >= 0) throw sampleError(r, bad, name);
  return { width, height, channels, data: out };
}

/**
 * Row y of toIntensity8(r), into `out` (width · channels samples): the same
 * samples and the same error, without the whole image's array (a band of
 * census codes converts its rows one at a time). `r` must be valid
 * (validateRaster).
 */
export function intensityRow(r: Raster, y: number, out: Int32Array, name = 'image'): void {
  const n = r.width * r.channels;
  if (out.length !== n) throw new Error(`intensityRow: a row of ${n} samples into ${out.length}`);
  const bad = samples8(r.data.subarray(y * n, (y + 1) * n), out, 255 / r.maxval);
  if (bad >= 0) throw sampleError(r, y * n + bad, name);
}

/** The error of a sample toIntensity8 refuses: sample index `i` of `r`. */
function sampleError(r: Raster, i: number, name: string): Error {
  const p = Math.floor(i / r.channels);
  const range = Number.isFinite(r.data[i]) ? `, outside 0..${r.maxval} (the image's maxval); samples are never clamped` : '';
  return new Error(`${name}: sample at (${p % r.width},${Math.floor(p / r.width)}) is ${r.data[i]}${range}`);
}

/**
 * The loop of toIntensity8: out[i] = round(src[i]·k); the index of the
 * first sample that is non-finite or does not round into 0..255, or −1. A function of the loop
 * alone, so that the code V8 optimizes while the loop runs (on-stack
 * replacement) has nothing after the loop that has never run: such code
 * is thrown away at the loop's end, and the next call would start slow
 * again.
 */
function samples8(src: ArrayLike<number>, out: Int32Array, k: number): number {
  const n = out.length;
  // Plain arithmetic instead of Number.isFinite / Math.round: it runs once
  // per sample, and those calls are not inlined in every embedding.
  for (let i = 0; i < n; i++) {
    const v = src[i];
    // NaN or ±Infinity.
    if (v - v !== 0) return i;
    const x = v * k;
    if (x < -0.5 || x >= 255.5) return i;
    // floor(x + 0.5) is Math.round for x ≥ 0; a sample in (−0.5, 0] rounds to 0.
    out[i] = x <= 0 ? 0 : (x + 0.5) | 0;
  }
  return -1;
}

/**
 * Whether toIntensity8 would return the raster's samples unchanged: maxval
 * 255 and every sample an integer in 0..255 (what an 8-bit file holds). A
 * device can then read the samples as they are (data/energy.ts PairSource).
 */
export function isIntegral8(r: Raster): boolean {
  if (r.maxval !== 255) return false;
  const d = r.data;
  // (v & 255) === v holds exactly for the integers 0..255 (NaN, fractions and anything outside fail).
  for (let i = 0; i < d.length; i++) if ((d[i] & 255) !== d[i]) return false;
  return true;
}
