import { mirrorRaster, mirrorSamples, type Raster } from '../data/raster';
import { optionError } from '../data/errors';
import { volumeOnThreads } from './parallelCosts';
import { forwardGradients, type CostImage } from '../data/costImage';
import { isIntegral8, toIntensity8, validateRaster, type IntensityImage } from './intensity';
import { resolveDataCostOptions, type CostKind, type DataCostOptions, type ResolvedDataCostOptions } from './costOptions';
import { censusGrey, censusTransform, censusWords } from './census';
import { censusVolumeRows, hammingBand, hammingRun, sadRun, sgradRun, ssdRun } from './costRuns';

/**
 * A matcher's 8-bit samples when its maker can derive them from another
 * matcher's (DataCostMatcher.mirroredSwapped): their shape now, the samples
 * and the census grey images on first use, so that a run whose costs the
 * device computes from the grey images never makes the samples.
 */
export interface DerivedSamples {
  width: number;
  height: number;
  channels: number;
  /** Each image's samples, made when first read (a strip's weights read one image's alone). */
  samples: { left(): IntensityImage; right(): IntensityImage };
  greys(): { left: CostImage; right: CostImage };
}

/** A value, or what makes it on first use. */
type Deferred<T> = T | (() => T);

/**
 * A left/right pair prepared for cost evaluation (integer samples and, for
 * sad+sgrad, gradients), so that slices for many disparities can be computed
 * without converting the images again.
 */
export class DataCostMatcher {
  readonly width: number;
  readonly height: number;
  readonly channels: number;
  /** Whether both images hold 8-bit samples as they are (isIntegral8); false for a matcher of a mirrored pair. */
  readonly integral8: boolean = false;
  readonly options: ResolvedDataCostOptions;
  /** Each image's samples, or what makes them on first use (8-bit pairs, derived samples): one image's may be all a caller reads. */
  private intensities: { left: Deferred<IntensityImage>; right: Deferred<IntensityImage> };
  /** Gradients of the samples (sad+sgrad), made on first use. */
  private gradients?: { gxL: Int32Array; gyL: Int32Array; gxR: Int32Array; gyR: Int32Array };
  /** The census grey images, made on first use (derived ones from the matcher they come from). */
  private greys?: { left: CostImage; right: CostImage } | (() => { left: CostImage; right: CostImage });
  /**
   * Census codes (kind 'census'), censusWords per pixel, made on first use:
   * a run whose costs the device computes (from the grey images, expansion/
   * gpu/costs/censusKernel.ts) never needs them on the host.
   */
  private codes?: { left: Int32Array; right: Int32Array; y0: number; y1: number; mirrored?: boolean };
  private readonly words: number;

  /** The pair as given (worker threads build their own matcher from it); made on first use for a matcher made from samples. */
  private pair: { left: Raster; right: Raster } | (() => { left: Raster; right: Raster });

  get left(): Raster {
    if (typeof this.pair === 'function') this.pair = this.pair();
    return this.pair.left;
  }

  get right(): Raster {
    if (typeof this.pair === 'function') this.pair = this.pair();
    return this.pair.right;
  }

  /** The 8-bit-scale samples the costs are computed from (a GPU backend computes costs from the same). */
  get leftIntensity(): IntensityImage {
    const im = this.intensities.left;
    return typeof im === 'function' ? (this.intensities.left = im()) : im;
  }

  get rightIntensity(): IntensityImage {
    const im = this.intensities.right;
    return typeof im === 'function' ? (this.intensities.right = im()) : im;
  }

  /**
   * `derived`: the pair's samples derived from another matcher's
   * (mirroredSwapped); `left` is then a function that makes the rasters if
   * a worker thread needs them.
   */
  constructor(left: Raster | (() => { left: Raster; right: Raster }), right: Raster | null, options: DataCostOptions = {}, derived?: DerivedSamples) {
    if (typeof left === 'function') {
      if (!derived) throw new Error('DataCostMatcher: a deferred pair needs its samples');
      this.pair = left;
      this.intensities = { left: derived.samples.left, right: derived.samples.right };
      this.greys = derived.greys;
      this.width = derived.width;
      this.height = derived.height;
      this.channels = derived.channels;
    } else {
      const r = right!;
      this.pair = { left, right: r };
      validateRaster(left, 'left image');
      validateRaster(r, 'right image');
      if (left.width !== r.width || left.height !== r.height || left.channels !== r.channels) {
        throw new Error(
          `left image is ${left.width}×${left.height}×${left.channels} but right image is ${r.width}×${r.height}×${r.channels}; ` +
            'a stereo pair must have the same size and channel count',
        );
      }
      // One raster for both (a strip whose costs come from census codes carries one crop) is converted once.
      this.intensities = {
        left: () => toIntensity8(left, 'left image'),
        right: () => (r === left ? this.leftIntensity : toIntensity8(r, 'right image')),
      };
      // An 8-bit pair converts to itself and cannot fail: converted when first needed (a device may never need it: PairSource).
      // Any other is converted now, so that a conversion's failure is the constructor's, left image first.
      this.integral8 = isIntegral8(left) && isIntegral8(r);
      if (!this.integral8) void [this.leftIntensity, this.rightIntensity];
      this.width = left.width;
      this.height = left.height;
      this.channels = left.channels;
    }
    this.options = resolveDataCostOptions(options, this.channels);
    this.words = this.options.kind === 'census' ? censusWords(this.options.censusWindow) : 0;
  }

  /** The gradients of the samples (sad+sgrad's costs), made on first use. */
  private gradientsOf(): { gxL: Int32Array; gyL: Int32Array; gxR: Int32Array; gyR: Int32Array } {
    if (!this.gradients) {
      const [gxL, gyL] = forwardGradients(this.leftIntensity);
      const [gxR, gyR] = forwardGradients(this.rightIntensity);
      this.gradients = { gxL, gyL, gxR, gyR };
    }
    return this.gradients;
  }

  /** The census codes of both images (kind 'census'; empty otherwise), computed once on the first call. */
  censusCodes(): { left: Int32Array; right: Int32Array; words: number } {
    const { left, right } = this.hostCodes();
    return { left, right, words: this.words };
  }

  /**
   * Census codes made elsewhere for this pair (a pyramid level's, made once
   * for all its strips), used from now on instead of its own: `left` and
   * `right` hold every row, censusWords per pixel, and any codes whose
   * Hamming distances are this pair's: a mirrored pair may take the pair's
   * codes with each row reversed (data/raster.ts mirrorSamples), which are
   * not its own codes (its window offsets mirror too, permuting the bits)
   * but, one permutation applying to both codes, give every distance the same.
   * `mirrored`: this matcher's pair is the given codes' pair mirrored and
   * swapped (mirroredSwapped), and its banded costs (pixelCosts) read them
   * at the mirrored pixels instead of a mirrored copy; anything else makes
   * that copy once.
   */
  useCensusCodes(left: Int32Array, right: Int32Array, mirrored = false): void {
    const n = this.width * this.height * this.words;
    if (this.options.kind !== 'census') throw new Error(`census codes given to a matcher of ${this.options.kind} costs`);
    if (left.length !== n || right.length !== n) throw new Error(`census codes of ${left.length} and ${right.length} words for a ${this.width}×${this.height} pair of ${this.words} words a pixel (${n})`);
    this.codes = { left, right, y0: 0, y1: this.height, mirrored };
  }

  /**
   * The host codes, holding at least rows y0 .. y1 − 1 (every row by default):
   * a worker thread that builds some rows of the volume transforms only
   * those (its rows at the same y in both images).
   */
  private hostCodes(y0 = 0, y1 = this.height): { left: Int32Array; right: Int32Array } {
    const given = this.codes;
    if (given?.mirrored) {
      // This pair's codes: the given pair's, swapped, rows reversed (useCensusCodes).
      const { width: W, height: H, words } = this;
      this.codes = { left: mirrorSamples(given.right, W, H, words), right: mirrorSamples(given.left, W, H, words), y0: 0, y1: H };
    }
    const have = this.codes;
    if (!have || y0 < have.y0 || y1 > have.y1) {
      const rows = { y0, y1 };
      this.codes = this.options.kind === 'census'
        ? { left: censusTransform(this.leftIntensity, this.options.censusWindow, rows).codes, right: censusTransform(this.rightIntensity, this.options.censusWindow, rows).codes, y0, y1 }
        : { left: new Int32Array(0), right: new Int32Array(0), y0: 0, y1: this.height };
    }
    return this.codes!;
  }

  /**
   * The matcher of the pair mirrored and swapped (mirror(right),
   * mirror(left): the right view of a left–right check), from this one's
   * samples, rows reversed: the same samples converting the mirrored
   * rasters would give, without converting them again, made only if the
   * host computes costs from them; likewise its census grey images, this
   * one's rows reversed (a pixel's grey depends on that pixel alone). The
   * rasters themselves are made only if a worker thread asks for them.
   * `options`: this matcher's as given (energyTerms.ts
   * mirroredSwappedEnergy).
   */
  mirroredSwapped(options: DataCostOptions): DataCostMatcher {
    const pair = this.pair;
    const rasters = (): { left: Raster; right: Raster } => {
      const p = typeof pair === 'function' ? pair() : pair;
      return { left: mirrorRaster(p.right), right: mirrorRaster(p.left) };
    };
    const mirrored = <T extends IntensityImage | CostImage>(im: T): T => ({ ...im, data: mirrorSamples(im.data, im.width, im.height, im.channels) });
    return new DataCostMatcher(rasters, null, options, {
      width: this.width,
      height: this.height,
      channels: this.channels,
      samples: { left: () => mirrored(this.rightIntensity), right: () => mirrored(this.leftIntensity) },
      greys: () => {
        const g = this.censusGreyImages();
        return { left: mirrored(g.right), right: mirrored(g.left) };
      },
    });
  }

  /** The integer grey images the census codes are computed from (costs/census.ts censusGrey), for a device that computes the codes itself; made once. */
  censusGreyImages(): { left: CostImage; right: CostImage } {
    if (typeof this.greys === 'function') this.greys = this.greys();
    if (!this.greys) {
      const grey = (im: IntensityImage): CostImage => ({ width: im.width, height: im.height, channels: 1, data: censusGrey(im) });
      this.greys = { left: grey(this.leftIntensity), right: grey(this.rightIntensity) };
    }
    return this.greys;
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
   * Costs of pixel (x, y) at labels l0 .. l0 + n − 1, written to out[o ..
   * o + n − 1]: the values costRow gives that pixel, computed for that
   * pixel alone (a banded energy needs a few labels per pixel, never a row
   * at every label).
   */
  pixelCosts(x: number, y: number, l0: number, n: number, out: Int32Array, o: number): void {
    const W = this.width;
    const C = this.channels;
    const { kind, scale, maxCost, border, minDisp } = this.options;
    const p = y * W + x;
    if (kind === 'census') {
      // Labels l0 .. l0 + inside − 1 match inside the right image, one column further left each; the others (x < d) its border.
      const inside = Math.max(0, Math.min(n, x - (l0 + minDisp) + 1));
      const given = this.codes;
      // Given codes read at the mirrored pixels (useCensusCodes): this left pixel is their right image's at W − 1 − x, this
      // right image's column x − d their left image's at W − 1 − x + d (one column further right each label), its column 0
      // their last.
      const mirrored = given?.mirrored === true;
      const codes = mirrored ? given! : this.hostCodes();
      const cL = mirrored ? codes.right : codes.left;
      const cR = mirrored ? codes.left : codes.right;
      const pl = mirrored ? y * W + W - 1 - x : p;
      const step = mirrored ? 1 : -1;
      hammingBand(cL, cR, this.words, pl, pl + step * (l0 + minDisp), step, inside, scale, maxCost, out, o);
      if (border === 'tau') out.fill(maxCost, o + inside, o + n);
      else hammingBand(cL, cR, this.words, pl, mirrored ? y * W + W - 1 : y * W, 0, n - inside, scale, maxCost, out, o + inside);
      return;
    }
    for (let k = 0; k < n; k++) {
      const d = l0 + k + minDisp;
      // No match inside the right image: τ, or (clamp) the right image's column 0.
      if (x < d && border === 'tau') { out[o + k] = maxCost; continue; }
      const xr = x < d ? 0 : x - d;
      this.run(kind, p * C, (y * W + xr) * C, 0, 1, scale, maxCost, out, o + k, 1);
    }
  }

  /** n left pixels from pixel index pl against right pixels from pr advancing by prStep: Hamming distances of their codes. */
  private censusRun(pl: number, pr: number, prStep: number, n: number, scale: number, cap: number, out: Int32Array, o: number, stride: number): void {
    const { left, right } = this.hostCodes();
    hammingRun(left, right, this.words, pl, pr, prStep, n, scale, cap, out, o, stride);
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
    const L = this.leftIntensity.data;
    const R = this.rightIntensity.data;
    if (kind === 'sad') sadRun(L, R, this.channels, il, ir, irStep, n, scale, cap, out, o, stride);
    else if (kind === 'ssd') ssdRun(L, R, this.channels, il, ir, irStep, n, scale, cap, out, o, stride);
    else {
      const { gxL, gyL, gxR, gyR } = this.gradientsOf();
      sgradRun(L, R, gxL, gyL, gxR, gyR, this.channels, il, ir, irStep, n, scale, cap, out, o, stride);
    }
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
      throw optionError('range', 'data costs', 'ndisp', ndisp, `a count whose ${W}×${H}×ndisp cost volume fits in memory (${n} entries do not; compute it slice by slice)`);
    }
    this.volumeRows(vol, ndisp, 0, H);
    return vol;
  }

  /** Rows y0..y1 − 1 of the volume, written into `vol` (the whole volume's array). */
  volumeRows(vol: Int32Array, ndisp: number, y0: number, y1: number): void {
    const W = this.width;
    if (this.options.kind === 'census') {
      const { left, right } = this.hostCodes(y0, y1);
      censusVolumeRows(vol, ndisp, y0, y1, W, this.words, left, right, this.options);
      return;
    }
    for (let y = y0; y < y1; y++) {
      const base = y * W * ndisp;
      for (let d = 0; d < ndisp; d++) this.costRow(y, d, vol, base + d, ndisp);
    }
  }
}

/** Labels are stored as uint16 (SMRF labelings, WTA output). */
export const MAX_LABELS = 65536;

export function validateNdisp(ndisp: number): void {
  if (!Number.isInteger(ndisp) || ndisp < 1 || ndisp > MAX_LABELS) {
    throw optionError('range', 'data costs', 'ndisp', ndisp, `an integer in 1..${MAX_LABELS}`);
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
