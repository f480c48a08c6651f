import { mirrorSamples, type Raster } from '../data/raster';
import { optionError } from '../data/errors';
import { toIntensity8, type IntensityImage } from './intensity';

/**
 * Smoothness weights w_pq of the 4-connected grid, with the static cue of
 * Boykov, Veksler and Zabih: a pair of neighbours whose intensities are
 * similar (max over channels |I_p − I_q| < cueThreshold, on the 8-bit scale
 * of intensity.ts) is probably inside one surface, so a disparity jump there
 * costs cueFactor times more. Weights come from the left image, the view the
 * disparity map belongs to.
 *
 * Integer costs: λ may be fractional (the paper uses 4.0, 2.0, 3.0, 10.0 and
 * the user may type 2.5), but every term of the energy must be an integer.
 * Both the data costs and the weights are therefore multiplied by one integer
 * cost scale s:  D' = s·D,  w' = round(λ·factor·s). Multiplying the whole
 * energy by s changes no minimiser, and with s = 10^k for the number of
 * decimals k of λ and λ·factor the weights are exact. costScale() picks s;
 * buildStereoEnergy (energyTerms.ts) applies it to both terms in one place.
 */
export interface SmoothnessOptions {
  /** λ ≥ 0 (option --lambda). */
  lambda: number;
  /** Static-cue threshold ≥ 0 on the 8-bit scale (option --cue-threshold). Default 5; 0 disables the cue. */
  cueThreshold?: number;
  /** Static-cue factor ≥ 1 (option --cue-factor). Default 2; 1 disables the cue. */
  cueFactor?: number;
  /** Integer cost scale; default costScale(lambda, cueFactor). */
  scale?: number;
  /** Integer multiplier of every weight: the cost kind's λ unit (costOptions.ts smoothnessUnit num). Default 1. */
  unit?: number;
}

export interface SmoothnessWeights {
  /** wH[y·W + x] couples (x,y)–(x+1,y); last column 0. */
  wH: Int32Array;
  /** wV[y·W + x] couples (x,y)–(x,y+1); last row 0. */
  wV: Int32Array;
  /** The cost scale the weights carry; data costs must be computed with the same scale. */
  scale: number;
}

export const DEFAULT_CUE_THRESHOLD = 5;
export const DEFAULT_CUE_FACTOR = 2;
/** At most 3 decimals in λ and λ·factor: keeps scaled costs far from int32 / f32 limits. */
const MAX_SCALE_DECIMALS = 3;

function isIntegral(v: number): boolean {
  return Math.abs(v - Math.round(v)) <= 1e-9 * Math.max(1, Math.abs(v));
}

function validateLambda(lambda: number): void {
  if (typeof lambda !== 'number' || !Number.isFinite(lambda) || lambda < 0) {
    throw optionError(typeof lambda === 'number' ? 'range' : 'type', 'smoothness weights', 'lambda', lambda, 'a finite number ≥ 0');
  }
}

function validateCueFactor(cueFactor: number): void {
  if (typeof cueFactor !== 'number' || !Number.isFinite(cueFactor) || cueFactor < 1) {
    throw optionError(typeof cueFactor === 'number' ? 'range' : 'type', 'smoothness weights', 'cueFactor', cueFactor, 'a finite number ≥ 1');
  }
}

/**
 * The smallest power of ten s ≤ 1000 for which λ·s and λ·factor·s are both
 * integers (1 when they already are). More decimals than three is an error
 * naming the option responsible.
 */
export function costScale(lambda: number, cueFactor = DEFAULT_CUE_FACTOR): number {
  validateLambda(lambda);
  validateCueFactor(cueFactor);
  for (let k = 0, s = 1; k <= MAX_SCALE_DECIMALS; k++, s *= 10) {
    if (isIntegral(lambda * s) && isIntegral(lambda * cueFactor * s)) return s;
  }
  if (![1, 10, 100, 1000].some((s) => isIntegral(lambda * s))) {
    throw optionError('range', 'smoothness weights', 'lambda', lambda, `a number of at most ${MAX_SCALE_DECIMALS} decimals`);
  }
  throw optionError('range', 'smoothness weights', 'cueFactor', cueFactor, `a factor whose product with λ ${lambda} has at most ${MAX_SCALE_DECIMALS} decimals`);
}

/**
 * The two values an edge weight takes, from the options (validated): `cued`
 * when every channel of the edge's two pixels differs by less than `limit`
 * (⌈threshold⌉, at most 256: samples are integers), else `plain`; and the
 * cost scale both carry.
 */
export function weightTerms(options: SmoothnessOptions): { plain: number; cued: number; limit: number; scale: number } {
  const { lambda } = options;
  const cueThreshold = options.cueThreshold ?? DEFAULT_CUE_THRESHOLD;
  const cueFactor = options.cueFactor ?? DEFAULT_CUE_FACTOR;
  validateLambda(lambda);
  if (typeof cueThreshold !== 'number' || !Number.isFinite(cueThreshold) || cueThreshold < 0) {
    throw optionError(typeof cueThreshold === 'number' ? 'range' : 'type', 'smoothness weights', 'cueThreshold', cueThreshold, 'a finite number ≥ 0');
  }
  validateCueFactor(cueFactor);
  const scale = options.scale ?? costScale(lambda, cueFactor);
  if (!Number.isInteger(scale) || scale < 1) throw new Error(`cost scale must be an integer ≥ 1 (got ${String(scale)})`);
  const unit = options.unit ?? 1;
  if (!Number.isInteger(unit) || unit < 1) throw new Error(`smoothness unit must be an integer ≥ 1 (got ${String(unit)})`);
  const plain = Math.round(lambda * scale) * unit;
  const cued = Math.round(lambda * cueFactor * scale) * unit;
  if (cued > 2 ** 31 - 1) throw optionError('range', 'smoothness weights', 'lambda', lambda, `a λ whose product with the cue factor ${cueFactor} and the cost scale ${scale} fits a 32-bit weight`);
  return { plain, cued, limit: cueLimit(cueThreshold), scale };
}

export function computeSmoothnessWeights(left: Raster | IntensityImage, options: SmoothnessOptions, into?: { wH: Int32Array; wV: Int32Array }): SmoothnessWeights {
  const { plain, cued, limit, scale } = weightTerms(options);
  // The matcher's 8-bit samples when given them (buildStereoEnergy), else the raster's, converted.
  const im = left.data instanceof Int32Array ? (left as IntensityImage) : toIntensity8(left as Raster, 'left image');
  const { width: W, height: H, channels: C, data: I } = im;
  if (into && (into.wH.length !== W * H || into.wV.length !== W * H)) throw new Error(`smoothness weights: ${into.wH.length} and ${into.wV.length} edges given for a ${W}×${H} image`);
  const wH = into?.wH ?? new Int32Array(W * H);
  const wV = into?.wV ?? new Int32Array(W * H);
  // The loops leave the last column of wH and the last row of wV as they are: 0 in fresh arrays, made 0 in given ones.
  if (into) zeroBorderEdges(wH, wV, W, H);
  // An edge is cued when the largest channel difference of its two pixels is below the threshold. The samples are
  // grey or RGB (toIntensity8 refuses any other channel count), each with a loop of its own: this runs once per edge of
  // every pair, twice per pair with the left–right check.
  if (C === 1) greyWeights(I, W, H, limit, cued, plain, wH, wV);
  else rgbWeights(I, W, H, limit, cued, plain, wH, wV);
  return { wH, wV, scale };
}

/**
 * Weights as cues, one byte a pixel: bit 0 set where the pixel's edge to
 * the right weighs `cued`, bit 1 where its edge below does. Every weight
 * is `plain`, `cued` or (last column of wH, last row of wV) 0, so the
 * cues and weightTerms give the weights back (weightsOfCues) in a quarter
 * of their memory: what a pyramid level keeps for its strips
 * (stereo/levelTerms.ts). Pixels from .. to − 1 of w, into into[at ..].
 */
export function packCues(w: { wH: Int32Array; wV: Int32Array }, cued: number, from: number, to: number, into: Uint8Array, at: number): void {
  const { wH, wV } = w;
  for (let p = from, o = at; p < to; p++, o++) into[o] = (wH[p] === cued ? 1 : 0) | (wV[p] === cued ? 2 : 0);
}

/** The weights of the cues (packCues) of a W×H block of rows, for the weights' options: 0 on its last column (wH) and last row (wV); into `into` when given. */
export function weightsOfCues(cues: Uint8Array, W: number, H: number, options: SmoothnessOptions, into?: { wH: Int32Array; wV: Int32Array }): { wH: Int32Array; wV: Int32Array } {
  const { plain, cued } = weightTerms(options);
  const n = W * H;
  if (cues.length !== n || (into && (into.wH.length !== n || into.wV.length !== n))) throw new Error(`smoothness weights: ${cues.length} cues for a ${W}×${H} block${into ? ` into ${into.wH.length} and ${into.wV.length} edges` : ''}`);
  const wH = into?.wH ?? new Int32Array(n);
  const wV = into?.wV ?? new Int32Array(n);
  for (let p = 0; p < n; p++) {
    const c = cues[p];
    wH[p] = c & 1 ? cued : plain;
    wV[p] = c & 2 ? cued : plain;
  }
  zeroBorderEdges(wH, wV, W, H);
  return { wH, wV };
}

/** The weights of edges that leave a W×H block, 0: the last column's of wH and the last row's of wV. */
function zeroBorderEdges(wH: Int32Array, wV: Int32Array, W: number, H: number): void {
  for (let p = W - 1; p < W * H; p += W) wH[p] = 0;
  wV.fill(0, (H - 1) * W);
}

/**
 * The weights of an image's rows reversed, from the image's own: an edge
 * is cued by its two pixels alone, so the reversed image's horizontal edge
 * (x, x + 1) is the image's (W − 2 − x, W − 1 − x), and its vertical edge
 * at x the image's at W − 1 − x; the last column of wH stays 0. Native
 * reversals and copies, no pass over the pixels in JavaScript. Into
 * `into` when given (other arrays than w's).
 */
export function mirroredWeights(w: { wH: Int32Array; wV: Int32Array }, W: number, H: number, into?: { wH: Int32Array; wV: Int32Array }): { wH: Int32Array; wV: Int32Array } {
  const wV = mirrorSamples(w.wV, W, H, 1, into?.wV);
  const wH = mirrorSamples(w.wH, W, H, 1, into?.wH);
  // Reversed, a row holds the image's last-column 0 first: moved one place left, 0 last.
  for (let y = 0; y < H; y++) {
    const row = y * W;
    wH.copyWithin(row, row + 1, row + W);
    wH[row + W - 1] = 0;
  }
  return { wH, wV };
}

/*
 * The two loops below are branch-free: whether an edge is cued depends on the
 * image, and on photographs it is about as often true as false, so a branch
 * per edge would mispredict about half the time. With |d| the absolute
 * channel difference and t = ⌈threshold⌉
 * (samples are integers, so |d| < threshold ⇔ |d| − t < 0), an edge is cued
 * when the sign bit of every channel's |d| − t is set; `(… >> 31)` makes that
 * bit a mask of all ones or none, which picks `cued` or `plain`. The last
 * column of wH and the last row of wV are left as allocated (0).
 */

/** The threshold as the integer t of the loops: ⌈threshold⌉, at most 256 (every 8-bit difference is below it then). */
function cueLimit(cueThreshold: number): number {
  return Math.min(256, Math.ceil(cueThreshold));
}

/** The grey weights: an edge is cued when its samples differ by less than the threshold. */
function greyWeights(I: Int32Array, W: number, H: number, t: number, cued: number, plain: number, wH: Int32Array, wV: Int32Array): void {
  const delta = cued - plain;
  for (let y = 0; y < H; y++) {
    const row = y * W;
    for (let p = row; p < row + W - 1; p++) {
      let d = I[p] - I[p + 1];
      d = (d ^ (d >> 31)) - (d >> 31);
      wH[p] = plain + (delta & ((d - t) >> 31));
    }
    if (y + 1 < H) {
      for (let p = row; p < row + W; p++) {
        let d = I[p] - I[p + W];
        d = (d ^ (d >> 31)) - (d >> 31);
        wV[p] = plain + (delta & ((d - t) >> 31));
      }
    }
  }
}

/** The RGB weights: an edge is cued when each of its three channel differences is below the threshold. */
function rgbWeights(I: Int32Array, W: number, H: number, t: number, cued: number, plain: number, wH: Int32Array, wV: Int32Array): void {
  const delta = cued - plain;
  const down = 3 * W;
  for (let y = 0; y < H; y++) {
    const row = y * W;
    for (let p = row, i = 3 * row; p < row + W - 1; p++, i += 3) {
      let dr = I[i] - I[i + 3];
      let dg = I[i + 1] - I[i + 4];
      let db = I[i + 2] - I[i + 5];
      dr = (dr ^ (dr >> 31)) - (dr >> 31);
      dg = (dg ^ (dg >> 31)) - (dg >> 31);
      db = (db ^ (db >> 31)) - (db >> 31);
      wH[p] = plain + (delta & (((dr - t) & (dg - t) & (db - t)) >> 31));
    }
    if (y + 1 < H) {
      for (let p = row, i = 3 * row; p < row + W; p++, i += 3) {
        let dr = I[i] - I[i + down];
        let dg = I[i + 1] - I[i + down + 1];
        let db = I[i + 2] - I[i + down + 2];
        dr = (dr ^ (dr >> 31)) - (dr >> 31);
        dg = (dg ^ (dg >> 31)) - (dg >> 31);
        db = (db ^ (db >> 31)) - (db >> 31);
        wV[p] = plain + (delta & (((dr - t) & (dg - t) & (db - t)) >> 31));
      }
    }
  }
}
