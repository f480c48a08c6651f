import type { Raster } from '../data/raster';
import { volumeOnThreads } from './parallelCosts';
import { toIntensity8, type IntensityImage } from './intensity';
import { censusBits, censusTransform, censusWords, DEFAULT_CENSUS_WINDOW, popcount32, validateCensusWindow, type CensusWindow } from './census';

/**
 * Per-pixel matching costs D_p(d): left pixel (x,y) against right pixel
 * (x−d, y), on 8-bit-scale integer samples (see intensity.ts).
 *
 *   sad        Σ_c |L − R|
 *   ssd        Σ_c (L − R)²
 *   sad+sgrad  Σ_c |L − R| + |∂x L − ∂x R| + |∂y L − ∂y R|
 *   census     Hamming distance of the census codes of a w×h window
 *              (census.ts; grey from RGB, bit = neighbour < centre)
 *
 * Gradients are forward differences on each channel of each image,
 * ∂x I(x,y) = I(x+1,y) − I(x,y) and ∂y I(x,y) = I(x,y+1) − I(x,y), taken as 0
 * in the last column (∂x) and last row (∂y), where the next sample does not
 * exist. The right image's gradient is read at the matched pixel (x−d, y).
 *
 * Every raw cost is truncated, D = min(raw, τ), then multiplied by the
 * integer cost scale (see smoothness.ts, costScale): D = min(raw·s, round(τ·s)).
 * Truncation keeps occluded or mismatched pixels from dominating the energy.
 *
 * Disparity range: label l is disparity minDisp + l (options --min-disp,
 * --max-disp), so a pair whose disparities lie in M..N needs N − M + 1
 * labels instead of N + 1. Every routine here takes labels and adds minDisp.
 */
export type CostKind = 'sad' | 'ssd' | 'sad+sgrad' | 'census';

export const COST_KINDS: readonly CostKind[] = ['sad', 'ssd', 'sad+sgrad', 'census'];

/**
 * What a left pixel whose match x−d falls left of the right image gets.
 *  'clamp' the cost against the right image's column 0, as if that column
 *          extended to the left (the default).
 *  'tau'   the truncated maximum τ: "no evidence", the same for every
 *          invalid disparity of the pixel.
 * Measured on Middlebury tsukuba, venus, teddy and cones (bad pixels
 * |d − gt| > 1 over all known pixels, default truncations), 'clamp' was
 * never worse: with 9×9 WTA equal on tsukuba (its ground truth excludes an
 * 18-pixel border, wider than its 16 labels reach) and 0.6–0.8 points better
 * on the other three; after 4 cycles of α-expansion (BK, truncated linear
 * T = 2, the scene settings of stereo/sceneParams.ts) equal on tsukuba and
 * 0.45 / 2.1 / 2.0 points better on venus / teddy / cones, with
 * non-occluded pixels equal within 0.3 points. Why: near the left border
 * 'tau' charges the maximum to every disparity that reaches past column 0,
 * so the whole strip x < d is pushed to small disparities (and in WTA the
 * aggregation window spreads that bias inward), whereas the clamped
 * comparison against column 0 is usually below τ and leaves the smoothness
 * term free to carry the neighbours' disparity into the strip.
 */
export type BorderRule = 'tau' | 'clamp';

export interface DataCostOptions {
  /** Cost kind (option --cost). Default 'sad'. */
  kind?: CostKind;
  /** Truncation τ on the 8-bit scale (option --tau). Default defaultTau(kind, channels). */
  tau?: number;
  /** Integer cost scale s ≥ 1 multiplying every cost. Default 1. */
  scale?: number;
  /** Rule for x−d < 0. Default 'clamp'. */
  border?: BorderRule;
  /** Census window (option --census-window). Default 7×7. Used by kind 'census' only. */
  censusWindow?: CensusWindow;
  /** Disparity of label 0 (option --min-disp). Default 0. */
  minDisp?: number;
}

/**
 * Default truncations (the paper gives none). Per channel: 20 grey levels for
 * SAD, 20² for SSD so that both saturate at the same intensity error, and 40
 * for SAD+SGRAD, whose raw value adds two gradient differences of the same
 * order as the intensity difference at a mismatch. Multiplied by the channel
 * count since every kind sums over channels. Checked with 9×9 WTA on
 * tsukuba, venus, teddy and cones against half and double these values: the
 * defaults were best or within 0.6 points of the best on every scene, while
 * the alternatives each lost 1–3.5 points somewhere.
 */
export function defaultTau(kind: CostKind, channels: number, censusWindow: CensusWindow = DEFAULT_CENSUS_WINDOW): number {
  if (kind === 'census') return defaultCensusTau(censusWindow);
  const perChannel = kind === 'sad' ? 20 : kind === 'ssd' ? 400 : 40;
  return perChannel * channels;
}

/**
 * Census truncation: 13/24 of the code's bits (26 of the 48 bits of 7×7),
 * so that windows of every size saturate at the same fraction of differing
 * comparisons; 26 for 7×7 is the value `stereocut tune` chose on the ten
 * shared scenes (NOTES-issue25.md). Census costs do not depend on the
 * channel count.
 */
export function defaultCensusTau(w: CensusWindow): number {
  return Math.round((censusBits(w) * 13) / 24);
}

/** Largest raw (untruncated) cost of a kind: gradients span −255..255, so their differences reach 510. */
export function maxRawCost(kind: CostKind, channels: number, censusWindow: CensusWindow = DEFAULT_CENSUS_WINDOW): number {
  if (kind === 'census') return censusBits(censusWindow);
  const perChannel = kind === 'sad' ? 255 : kind === 'ssd' ? 255 * 255 : 255 + 510 + 510;
  return perChannel * channels;
}

export interface ResolvedDataCostOptions {
  kind: CostKind;
  tau: number;
  scale: number;
  border: BorderRule;
  /** round(τ·scale): the largest cost any pixel gets. */
  maxCost: number;
  censusWindow: CensusWindow;
  minDisp: number;
}

const INT32_MAX = 2 ** 31 - 1;

/** Validates options and fills in the defaults; errors name the command-line option. */
export function resolveDataCostOptions(options: DataCostOptions, channels: number): ResolvedDataCostOptions {
  const kind = options.kind ?? 'sad';
  if (!COST_KINDS.includes(kind)) {
    throw new Error(`--cost: unknown cost kind '${String(kind)}' (expected ${COST_KINDS.join(', ')})`);
  }
  const censusWindow = validateCensusWindow(options.censusWindow ?? DEFAULT_CENSUS_WINDOW);
  const minDisp = options.minDisp ?? 0;
  if (!Number.isInteger(minDisp) || minDisp < 0) throw new Error(`--min-disp: must be an integer ≥ 0 (got ${String(minDisp)})`);
  const tau = options.tau ?? defaultTau(kind, channels, censusWindow);
  if (typeof tau !== 'number' || !Number.isFinite(tau) || tau < 0) {
    throw new Error(`--tau: truncation must be a finite number ≥ 0 (got ${String(tau)})`);
  }
  const scale = options.scale ?? 1;
  if (!Number.isInteger(scale) || scale < 1) throw new Error(`cost scale must be an integer ≥ 1 (got ${String(scale)})`);
  const border = options.border ?? 'clamp';
  if (border !== 'tau' && border !== 'clamp') {
    throw new Error(`--border: unknown rule '${String(border)}' (expected clamp, tau)`);
  }
  const maxCost = Math.round(tau * scale);
  if (maxCost > INT32_MAX) throw new Error(`--tau: τ·scale = ${tau}·${scale} does not fit a 32-bit cost`);
  // The kernels clamp with int32 arithmetic, so every raw·scale must fit too.
  if (maxRawCost(kind, channels, censusWindow) * scale > INT32_MAX) {
    throw new Error(`cost scale ${scale} is too large: ${kind} costs times the scale would not fit 32 bits`);
  }
  return { kind, tau, scale, border, maxCost, censusWindow, minDisp };
}

/** Forward differences of every channel: [∂x, ∂y], 0 in the last column / row. */
export function forwardGradients(im: IntensityImage): [Int32Array, Int32Array] {
  const { width: W, height: H, channels: C, data } = im;
  const gx = new Int32Array(data.length);
  const gy = new Int32Array(data.length);
  const rowLen = W * C;
  for (let y = 0; y < H; y++) {
    const row = y * rowLen;
    for (let i = row; i < row + rowLen - C; i++) gx[i] = data[i + C] - data[i];
    if (y + 1 < H) for (let i = row; i < row + rowLen; i++) gy[i] = data[i + rowLen] - data[i];
  }
  return [gx, gy];
}

/**
 * A left/right pair prepared for cost evaluation (integer samples and, for
 * sad+sgrad, gradients), so that slices for many disparities can be computed
 * without converting the images again.
 */
export class DataCostMatcher {
  readonly width: number;
  readonly height: number;
  readonly channels: number;
  readonly options: ResolvedDataCostOptions;
  /** The 8-bit-scale samples the costs are computed from (a GPU backend computes costs from the same). */
  readonly leftIntensity: IntensityImage;
  readonly rightIntensity: IntensityImage;
  private readonly L: Int32Array;
  private readonly R: Int32Array;
  private readonly gxL: Int32Array;
  private readonly gyL: Int32Array;
  private readonly gxR: Int32Array;
  private readonly gyR: Int32Array;
  /** Census codes (kind 'census'), censusWords per pixel. */
  private readonly cL: Int32Array;
  private readonly cR: Int32Array;
  private readonly words: number;

  /** The pair as given (worker threads build their own matcher from it). */
  readonly left: Raster;
  readonly right: Raster;

  constructor(left: Raster, right: Raster, options: DataCostOptions = {}) {
    this.left = left;
    this.right = right;
    const li = toIntensity8(left, 'left image');
    const ri = toIntensity8(right, 'right image');
    if (li.width !== ri.width || li.height !== ri.height || li.channels !== ri.channels) {
      throw new Error(
        `left image is ${li.width}×${li.height}×${li.channels} but right image is ${ri.width}×${ri.height}×${ri.channels}; ` +
          'a stereo pair must have the same size and channel count',
      );
    }
    this.width = li.width;
    this.height = li.height;
    this.channels = li.channels;
    this.options = resolveDataCostOptions(options, li.channels);
    this.leftIntensity = li;
    this.rightIntensity = ri;
    this.L = li.data;
    this.R = ri.data;
    if (this.options.kind === 'sad+sgrad') {
      [this.gxL, this.gyL] = forwardGradients(li);
      [this.gxR, this.gyR] = forwardGradients(ri);
    } else {
      this.gxL = this.gyL = this.gxR = this.gyR = new Int32Array(0);
    }
    if (this.options.kind === 'census') {
      this.words = censusWords(this.options.censusWindow);
      this.cL = censusTransform(li, this.options.censusWindow).codes;
      this.cR = censusTransform(ri, this.options.censusWindow).codes;
    } else {
      this.words = 0;
      this.cL = this.cR = new Int32Array(0);
    }
  }

  /** The census codes of both images (kind 'census'; empty otherwise), for a device that computes costs from them. */
  censusCodes(): { left: Int32Array; right: Int32Array; words: number } {
    return { left: this.cL, right: this.cR, words: this.words };
  }

  /**
   * Costs of row y at label l (disparity d = minDisp + l), written to
   * out[offset + x·stride]. The one per-pixel routine behind both the volume
   * (stride = labels) and the slice (stride = 1).
   */
  costRow(y: number, l: number, out: Int32Array, offset: number, stride: number): void {
    const d = l + this.options.minDisp;
    const W = this.width;
    const C = this.channels;
    const { kind, scale, maxCost, border } = this.options;
    const rowBase = y * W * C;
    // Pixels x < d have no match inside the right image.
    const firstValid = d < W ? d : W;
    if (border === 'tau') {
      for (let x = 0; x < firstValid; x++) out[offset + x * stride] = maxCost;
    } else if (firstValid > 0) {
      // Clamp: every one of them is compared with column 0 (right step 0).
      if (kind === 'census') this.censusRun(y * W, y * W, 0, firstValid, scale, maxCost, out, offset, stride);
      else this.run(kind, rowBase, rowBase, 0, firstValid, scale, maxCost, out, offset, stride);
    }
    const n = W - firstValid;
    if (n > 0) {
      if (kind === 'census') {
        const p = y * W + firstValid;
        this.censusRun(p, p - d, 1, n, scale, maxCost, out, offset + firstValid * stride, stride);
        return;
      }
      const il = rowBase + firstValid * C;
      this.run(kind, il, il - d * C, C, n, scale, maxCost, out, offset + firstValid * stride, stride);
    }
  }

  /**
   * The census volume pixel by pixel, all labels of a pixel in one run, so
   * the writes are contiguous rather than strided by L. The same values as
   * costRow.
   */
  private censusVolumeRows(vol: Int32Array, L: number, y0: number, y1: number): void {
    const W = this.width;
    const K = this.words;
    const cL = this.cL;
    const cR = this.cR;
    const { scale, maxCost: cap, border, minDisp } = this.options;
    for (let y = y0; y < y1; y++) {
      const rowPix = y * W;
      for (let x = 0; x < W; x++) {
        const p = rowPix + x;
        let o = p * L;
        const a = p * K;
        for (let l = 0; l < L; l++, o++) {
          let xr = x - minDisp - l;
          if (xr < 0) {
            if (border === 'tau') { vol[o] = cap; continue; }
            xr = 0;
          }
          const b = (rowPix + xr) * K;
          let raw = popcount32(cL[a] ^ cR[b]);
          for (let w = 1; w < K; w++) raw += popcount32(cL[a + w] ^ cR[b + w]);
          vol[o] = imin(raw * scale, cap);
        }
      }
    }
  }

  /** n left pixels from pixel index pl against right pixels from pr advancing by prStep: Hamming distances of their codes. */
  private censusRun(pl: number, pr: number, prStep: number, n: number, scale: number, cap: number, out: Int32Array, o: number, stride: number): void {
    const K = this.words;
    const cL = this.cL;
    const cR = this.cR;
    if (K === 2) {
      for (let k = 0; k < n; k++, pl++, pr += prStep, o += stride) {
        const a = pl * 2;
        const b = pr * 2;
        const raw = popcount32(cL[a] ^ cR[b]) + popcount32(cL[a + 1] ^ cR[b + 1]);
        out[o] = imin(raw * scale, cap);
      }
      return;
    }
    for (let k = 0; k < n; k++, pl++, pr += prStep, o += stride) {
      let raw = 0;
      for (let w = 0, a = pl * K, b = pr * K; w < K; w++) raw += popcount32(cL[a + w] ^ cR[b + w]);
      out[o] = imin(raw * scale, cap);
    }
  }

  /** n consecutive left pixels from sample il against right samples from ir, advancing by irStep. */
  private run(
    kind: CostKind,
    il: number,
    ir: number,
    irStep: number,
    n: number,
    scale: number,
    cap: number,
    out: Int32Array,
    o: number,
    stride: number,
  ): void {
    if (kind === 'sad') sadRun(this.L, this.R, this.channels, il, ir, irStep, n, scale, cap, out, o, stride);
    else if (kind === 'ssd') ssdRun(this.L, this.R, this.channels, il, ir, irStep, n, scale, cap, out, o, stride);
    else sgradRun(this.L, this.R, this.gxL, this.gyL, this.gxR, this.gyR, this.channels, il, ir, irStep, n, scale, cap, out, o, stride);
  }

  /** D(·, l) for every pixel at label l (disparity minDisp + l), index y·W + x. */
  slice(d: number, out?: Int32Array): Int32Array {
    if (!Number.isInteger(d) || d < 0) throw new Error(`disparity must be an integer ≥ 0 (got ${d})`);
    const W = this.width;
    const H = this.height;
    const res = out ?? new Int32Array(W * H);
    if (res.length !== W * H) throw new Error(`cost slice buffer has ${res.length} entries, expected ${W * H} (${W}×${H})`);
    for (let y = 0; y < H; y++) this.costRow(y, d, res, y * W, 1);
    return res;
  }

  /**
   * The full volume for disparities 0..ndisp−1, index (y·W + x)·ndisp + d.
   * Large volumes are computed by row bands on worker threads
   * (costs/parallelCosts.ts), in shared memory.
   */
  volume(ndisp: number): Int32Array {
    validateNdisp(ndisp);
    const W = this.width;
    const H = this.height;
    const n = W * H * ndisp;
    let vol: Int32Array;
    try {
      const threaded = volumeOnThreads(this.left, this.right, this.options, W, H, ndisp);
      if (threaded) return threaded;
      vol = new Int32Array(n);
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      throw new Error(`--ndisp: a ${W}×${H}×${ndisp} cost volume (${n} entries) does not fit in memory; compute it slice by slice`);
    }
    this.volumeRows(vol, ndisp, 0, H);
    return vol;
  }

  /** Rows y0..y1 − 1 of the volume, written into `vol` (the whole volume's array). */
  volumeRows(vol: Int32Array, ndisp: number, y0: number, y1: number): void {
    const W = this.width;
    if (this.options.kind === 'census') {
      this.censusVolumeRows(vol, ndisp, y0, y1);
      return;
    }
    for (let y = y0; y < y1; y++) {
      const base = y * W * ndisp;
      for (let d = 0; d < ndisp; d++) this.costRow(y, d, vol, base + d, ndisp);
    }
  }
}

/*
 * Branch-free integer |v| and min(a, b) for int32 values: costs of real
 * images straddle zero and the truncation unpredictably, and mispredicted
 * branches (or calls through Math, which some embeddings do not inline)
 * were several times slower than the arithmetic itself.
 */
function iabs(v: number): number {
  const m = v >> 31;
  return (v ^ m) - m;
}

function imin(a: number, b: number): number {
  const t = a - b;
  return b + (t & (t >> 31));
}

/*
 * Run kernels: n left pixels starting at sample index il, matched with right
 * pixels starting at ir and advancing irStep samples per pixel (C for a
 * normal run, 0 for the clamped border). Written as free functions over
 * typed arrays, with RGB unrolled, so the JIT keeps them tight: no
 * allocation, no per-pixel branching on the kind.
 */

function sadRun(
  L: Int32Array, R: Int32Array, C: number, il: number, ir: number, irStep: number, n: number,
  scale: number, cap: number, out: Int32Array, o: number, stride: number,
): void {
  for (let k = 0; k < n; k++, il += C, ir += irStep, o += stride) {
    let raw: number;
    if (C === 3) {
      const a = L[il] - R[ir];
      const b = L[il + 1] - R[ir + 1];
      const c = L[il + 2] - R[ir + 2];
      raw = iabs(a) + iabs(b) + iabs(c);
    } else {
      const a = L[il] - R[ir];
      raw = iabs(a);
    }
    out[o] = imin(raw * scale, cap);
  }
}

function ssdRun(
  L: Int32Array, R: Int32Array, C: number, il: number, ir: number, irStep: number, n: number,
  scale: number, cap: number, out: Int32Array, o: number, stride: number,
): void {
  for (let k = 0; k < n; k++, il += C, ir += irStep, o += stride) {
    let raw: number;
    if (C === 3) {
      const a = L[il] - R[ir];
      const b = L[il + 1] - R[ir + 1];
      const c = L[il + 2] - R[ir + 2];
      raw = a * a + b * b + c * c;
    } else {
      const a = L[il] - R[ir];
      raw = a * a;
    }
    out[o] = imin(raw * scale, cap);
  }
}

function sgradRun(
  L: Int32Array, R: Int32Array, gxL: Int32Array, gyL: Int32Array, gxR: Int32Array, gyR: Int32Array,
  C: number, il: number, ir: number, irStep: number, n: number,
  scale: number, cap: number, out: Int32Array, o: number, stride: number,
): void {
  for (let k = 0; k < n; k++, il += C, ir += irStep, o += stride) {
    let raw = 0;
    if (C === 3) {
      const a0 = L[il] - R[ir];
      const a1 = L[il + 1] - R[ir + 1];
      const a2 = L[il + 2] - R[ir + 2];
      const x0 = gxL[il] - gxR[ir];
      const x1 = gxL[il + 1] - gxR[ir + 1];
      const x2 = gxL[il + 2] - gxR[ir + 2];
      const y0 = gyL[il] - gyR[ir];
      const y1 = gyL[il + 1] - gyR[ir + 1];
      const y2 = gyL[il + 2] - gyR[ir + 2];
      raw =
        iabs(a0) + iabs(a1) + iabs(a2) +
        iabs(x0) + iabs(x1) + iabs(x2) +
        iabs(y0) + iabs(y1) + iabs(y2);
    } else {
      const a = L[il] - R[ir];
      const gx = gxL[il] - gxR[ir];
      const gy = gyL[il] - gyR[ir];
      raw = iabs(a) + iabs(gx) + iabs(gy);
    }
    out[o] = imin(raw * scale, cap);
  }
}

/** Labels are stored as uint16 (SMRF labelings, WTA output). */
export const MAX_LABELS = 65536;

export function validateNdisp(ndisp: number): void {
  if (!Number.isInteger(ndisp) || ndisp < 1 || ndisp > MAX_LABELS) {
    throw new Error(`--ndisp: number of disparities must be an integer in 1..${MAX_LABELS} (got ${ndisp})`);
  }
}

/** The cost volume D, index (y·W + x)·ndisp + d, for disparities 0..ndisp−1. */
export function computeDataCostVolume(left: Raster, right: Raster, ndisp: number, options: DataCostOptions = {}): Int32Array {
  validateNdisp(ndisp);
  return new DataCostMatcher(left, right, options).volume(ndisp);
}

/**
 * One disparity's costs, index y·W + x (equal to layer d of the volume). For
 * many slices of one pair, build a DataCostMatcher once and call slice().
 */
export function computeDataCostSlice(
  left: Raster,
  right: Raster,
  d: number,
  options: DataCostOptions = {},
  out?: Int32Array,
): Int32Array {
  return new DataCostMatcher(left, right, options).slice(d, out);
}
