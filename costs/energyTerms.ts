import type { Raster } from '../data/raster';
import { optionError } from '../data/errors';
import type { CostImage, DataTerm, MrfEnergy, PairSource, SmoothnessKind } from '../data/energy';
import { DataCostMatcher, validateNdisp } from './dataCost';
import { channelWeight, smoothnessUnit, type DataCostOptions } from './costOptions';
import { censusWords } from './census';
import { computeSmoothnessWeights, costScale, DEFAULT_CUE_FACTOR, mirroredWeights, packCues, weightsOfCues, weightTerms, type SmoothnessOptions } from './smoothness';
import { toIntensity8, type IntensityImage } from './intensity';
import type { ScratchArrays } from '../data/scratchArrays';

export interface StereoEnergyOptions extends Omit<DataCostOptions, 'scale'> {
  /** Disparities 0..ndisp−1 (option --ndisp). */
  ndisp: number;
  /** λ (option --lambda). */
  lambda: number;
  cueThreshold?: number;
  /** 1 disables the static cue (the paper's Tsukuba and Venus settings). */
  cueFactor?: number;
  /** V of the energy. */
  smoothness: SmoothnessKind;
  /** Truncation T of V, in disparity units (ignored for Potts; option --truncation). */
  truncation: number;
  /**
   * Leave the W·H·L cost volume out (an 'images' data term): costs are
   * computed per label when needed, from `matcher` (slices on the CPU, or on
   * a GPU from the same intensities and spec). For pairs whose volume would
   * not fit in memory, or whose costs the device computes faster.
   */
  onDemand?: boolean;
  /**
   * The solver runs on a device that can make the grey images and the
   * smoothness weights from the pair itself (an 'images' data term only):
   * an 8-bit pair is then given as the energy's pairSource, and the host
   * makes the weights and the census images only if something reads them.
   */
  pairOnDevice?: boolean;
}

/**
 * The energy plus the cost scale its data and smoothness terms both carry
 * (a grey pair's SAD-family data costs carry it times channelWeight, 3),
 * and the matcher that computes any label's costs on the host (whichever
 * data term the energy holds).
 */
export type StereoEnergy = MrfEnergy & { scale: number; matcher: DataCostMatcher };

/**
 * Data costs and smoothness weights of a stereo pair as one MrfEnergy. The
 * one place where the integer cost scale (smoothness.ts) is chosen and applied
 * to both terms, so they can never disagree about it.
 */
export function buildStereoEnergy(left: Raster, right: Raster, options: StereoEnergyOptions): StereoEnergy {
  return energyOfPair((matcherOptions) => new DataCostMatcher(left, right, matcherOptions), left.channels, options, undefined, (matcher) => (matcher.integral8 ? { left, right, views: ['pair'] } : undefined));
}

/**
 * The energy of view `view` of a pair (0: the pair, as buildStereoEnergy
 * builds it; 1: the pair mirrored and swapped, as mirroredSwappedEnergy
 * does) with the given weights, so that nothing is computed for its
 * weights: its matcher converts no sample until a cost reads one.
 */
export function viewEnergy(left: Raster, right: Raster, options: StereoEnergyOptions, view: 0 | 1, weights: GivenWeights): StereoEnergy {
  const matcher = view === 0 ? (o: DataCostOptions) => new DataCostMatcher(left, right, o) : (o: DataCostOptions) => new DataCostMatcher(left, right, o).mirroredSwapped(o);
  return energyOfPair(matcher, left.channels, options, undefined, undefined, weights);
}

/**
 * Smoothness weights made elsewhere for the pair an energy is built from
 * (a pyramid level's, made once for all its strips: stereo/levelTerms.ts),
 * used as they are instead of the pair's own (viewEnergy): W × H entries each, equal to
 * those the pair's images give (stereoWeights).
 */
export interface GivenWeights {
  wH: Int32Array;
  wV: Int32Array;
}

/** The smoothness options of a stereo energy's weights (what buildStereoEnergy computes them with). */
export function stereoSmoothnessOptions(options: StereoEnergyOptions): SmoothnessOptions & { scale: number } {
  const scale = costScale(options.lambda, options.cueFactor ?? DEFAULT_CUE_FACTOR);
  return { lambda: options.lambda, cueThreshold: options.cueThreshold, cueFactor: options.cueFactor, scale, unit: smoothnessUnit(options.kind ?? 'sad').num };
}

/**
 * The smoothness weights of a view of a pair: the left image's (view 0),
 * or those of the pair mirrored and swapped (view 1: the right image's,
 * rows reversed), as buildStereoEnergy and mirroredSwappedEnergy give them;
 * in `arrays` when given (valid until stereoWeights is called with them again).
 */
export function stereoWeights(image: Raster | IntensityImage, view: 0 | 1, options: StereoEnergyOptions, arrays?: ScratchArrays): GivenWeights {
  const n = image.width * image.height;
  const weights = (slot: string): GivenWeights | undefined => arrays && { wH: arrays.array(`${slot} wH`, Int32Array, n), wV: arrays.array(`${slot} wV`, Int32Array, n) };
  const samples = image.data instanceof Int32Array || !arrays ? image : toIntensity8(image as Raster, view === 0 ? 'left image' : 'right image', arrays.array('weights samples', Int32Array, image.data.length));
  const w = computeSmoothnessWeights(samples, stereoSmoothnessOptions(options), weights('weights'));
  return view === 0 ? { wH: w.wH, wV: w.wV } : mirroredWeights(w, image.width, image.height, weights('mirrored weights'));
}

/**
 * Rows y0 .. y1 − 1 of stereoWeights(image, view, options) as cues
 * (smoothness.ts packCues), into into[0 ..]; the image's weights made in
 * `arrays` when given.
 */
export function stereoCues(image: Raster | IntensityImage, view: 0 | 1, options: StereoEnergyOptions, y0: number, y1: number, into: Uint8Array, arrays?: ScratchArrays): void {
  const W = image.width;
  if (into.length !== (y1 - y0) * W) throw new Error(`stereo cues: rows ${y0}..${y1 - 1} of a ${W}-pixel-wide image into ${into.length}`);
  packCues(stereoWeights(image, view, options, arrays), weightTerms(stereoSmoothnessOptions(options)).cued, y0 * W, y1 * W, into, 0);
}

/** The weights of stereo cues (stereoCues) of a W×H block of rows: 0 on its last column (wH) and last row (wV); into `into` when given. */
export function weightsOfStereoCues(cues: Uint8Array, W: number, H: number, options: StereoEnergyOptions, into?: GivenWeights): GivenWeights {
  return weightsOfCues(cues, W, H, stereoSmoothnessOptions(options), into);
}

/**
 * The energy of the pair mirrored and swapped (mirror(right),
 * mirror(left): its left-view disparity, mirrored back, is the right view's
 * of the pair, the left–right check's second view) with the
 * options `view` was built with: its matcher from view's samples, rows
 * reversed (DataCostMatcher.mirroredSwapped), so nothing is converted
 * again; its smoothness weights are those of view's right image, rows
 * reversed (mirroredWeights), so no mirrored image is made for them.
 */
export function mirroredSwappedEnergy(view: StereoEnergy, options: StereoEnergyOptions): StereoEnergy {
  const source = view.pairSource;
  return energyOfPair((matcherOptions) => view.matcher.mirroredSwapped(matcherOptions), view.matcher.channels, options, () => view.matcher.rightIntensity, () => (source ? { left: source.left, right: source.right, views: ['mirrored'] } : undefined));
}

/** The pair of an energy and its views, as a PairSource takes them (its weights come from the energy's options). */
type PairOf = (matcher: DataCostMatcher) => Pick<PairSource, 'left' | 'right' | 'views'> | undefined;

/** Defines `keys` on `target` as getters of one computation, run when any of them is first read (then plain values). */
function lazily<T extends object>(target: T, keys: ReadonlyArray<keyof T & string>, compute: () => Partial<T>): T {
  let values: Partial<T> | undefined;
  for (const key of keys) {
    Object.defineProperty(target, key, {
      configurable: true,
      enumerable: true,
      get: () => (values ??= compute())[key],
    });
  }
  return target;
}

/**
 * The energy of the matcher `makeMatcher` makes for the options of the
 * data term, for a pair of `channels` channels (see buildStereoEnergy);
 * its weights from the matcher's left samples, or, with `mirrorOf`, from
 * the samples it gives (the unmirrored image of the matcher's left), rows
 * reversed.
 */
function energyOfPair(makeMatcher: (o: DataCostOptions) => DataCostMatcher, channels: number, options: StereoEnergyOptions, mirrorOf?: () => IntensityImage, pairOf?: PairOf, given?: GivenWeights): StereoEnergy {
  validateNdisp(options.ndisp);
  const { truncation, smoothness } = options;
  if (smoothness !== 'linear' && smoothness !== 'quadratic' && smoothness !== 'potts') {
    throw optionError('range', 'stereo energy', 'smoothness', smoothness, "'linear', 'quadratic' or 'potts'");
  }
  if (!Number.isInteger(truncation) || truncation < 0) {
    throw optionError('range', 'stereo energy', 'truncation', truncation, 'an integer ≥ 0');
  }
  // λ on one scale for every cost kind (costOptions.ts smoothnessUnit): the data term carries den, the smoothness weights num.
  const smoothnessOptions = stereoSmoothnessOptions(options);
  const { scale } = smoothnessOptions;
  const unit = smoothnessUnit(options.kind ?? 'sad');
  // Grey and colour pairs on one scale (costOptions.ts channelWeight): the data term carries the weight, the smoothness term does not.
  const matcher = makeMatcher({
    kind: options.kind,
    tau: options.tau,
    border: options.border,
    censusWindow: options.censusWindow,
    minDisp: options.minDisp,
    ...(options.threads ? { threads: options.threads } : {}),
    scale: scale * unit.den * channelWeight(options.kind ?? 'sad', channels),
  });
  const pair = options.pairOnDevice && options.onDemand ? pairOf?.(matcher) : undefined;
  const terms = pair && weightTerms(smoothnessOptions);
  const pairSource: PairSource | undefined = pair && terms && { ...pair, plain: terms.plain, cued: terms.cued, limit: terms.limit };
  // Census grey images only when read: a device reads them, but a banded energy (stereo/coarseToFine.ts) replaces the term unread.
  const data: DataTerm = options.onDemand ? imagesTerm(matcher, true) : { kind: 'volume', costs: matcher.volume(options.ndisp) };
  const weights = (): GivenWeights => (mirrorOf ? stereoWeights(mirrorOf(), 1, options) : stereoWeights(matcher.leftIntensity, 0, options));
  const energy = {
    width: matcher.width,
    height: matcher.height,
    labels: options.ndisp,
    data,
    smoothness,
    truncation,
    scale,
    matcher,
    ...(pairSource ? { pairSource } : given ? checkedWeights(given, matcher) : weights()),
  } as StereoEnergy;
  // With the pair on the device, the host makes the weights only if they are read.
  return pairSource ? lazily(energy, ['wH', 'wV'], weights) : energy;
}

/** Given weights, if they are the matcher's size. */
function checkedWeights(w: GivenWeights, m: DataCostMatcher): GivenWeights {
  const n = m.width * m.height;
  if (w.wH.length !== n || w.wV.length !== n) throw new Error(`stereo energy: weights of ${w.wH.length} and ${w.wV.length} edges given for a ${m.width}×${m.height} pair`);
  return { wH: w.wH, wV: w.wV };
}

/**
 * The 'images' data term of a matcher: what the device cost kernels read
 * (their spec is the matcher's resolved options). For census costs the
 * images are the pair's integer grey images (census.ts censusGrey), from
 * which the device computes the codes once (gpu/costs/censusKernel.ts),
 * and `channels` is the 16-bit halves per pixel of those codes, two per
 * 32-bit word; for the other kinds, the 8-bit intensities and their channels.
 * `lazy`: census grey images made when first read.
 */
export function imagesTerm(matcher: DataCostMatcher, lazy = false): DataTerm {
  if (matcher.options.kind === 'census') {
    const spec = { ...matcher.options, channels: 2 * censusWords(matcher.options.censusWindow) };
    if (lazy) return lazily({ kind: 'images', spec } as unknown as Extract<DataTerm, { kind: 'images' }>, ['left', 'right'], () => matcher.censusGreyImages());
    const { left, right } = matcher.censusGreyImages();
    return { kind: 'images', left, right, spec };
  }
  return { kind: 'images', left: matcher.leftIntensity, right: matcher.rightIntensity, spec: { ...matcher.options, channels: matcher.channels } };
}

/**
 * Energies of one size and one setting (the views of a pair, each built by
 * buildStereoEnergy) as one energy of the views stacked top to bottom, in
 * bands of one view's height (MrfEnergy.bandHeight). No edge joins two
 * views: a view's last row has wV = 0. The data term stacks as the views'
 * do: volumes (pixel-major, so one after the other), or images with the
 * same cost spec. Minimising it minimises each view's energy, and an
 * α-expansion move of it is each view's move for that α at once: a max-flow
 * of disconnected graphs is theirs side by side. So the device solves both
 * views of a left–right check in one move per label instead of two.
 */
export function stackEnergies(views: readonly StereoEnergy[]): MrfEnergy & { scale: number } {
  const first = views[0];
  if (!first) throw new Error('stackEnergies: no view');
  const { width: W, height: H, labels: L } = first;
  for (const v of views) {
    if (v.width !== W || v.height !== H || v.labels !== L || v.scale !== first.scale || v.smoothness !== first.smoothness || v.truncation !== first.truncation || v.data.kind !== first.data.kind || (v.bandHeight ?? v.height) !== H) {
      throw new Error(`stackEnergies: views of different shapes or settings (${v.width}×${v.height}×${v.labels} and ${W}×${H}×${L})`);
    }
  }
  const concat = (parts: Int32Array[]): Int32Array => {
    const out = new Int32Array(parts.reduce((s, p) => s + p.length, 0));
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  };
  // The views' pair, when every view reads the same one (the check's two views do): the stack's bands are their views, and what the views make lazily the stack does too.
  const source = first.pairSource;
  const pairSource: PairSource | undefined = source && views.every((v) => v.pairSource && v.pairSource.left === source.left && v.pairSource.right === source.right
    && v.pairSource.plain === source.plain && v.pairSource.cued === source.cued && v.pairSource.limit === source.limit)
    ? { ...source, views: views.flatMap((v) => v.pairSource!.views) } : undefined;
  let data: DataTerm;
  if (first.data.kind === 'volume') {
    data = { kind: 'volume', costs: concat(views.map((v) => (v.data as Extract<DataTerm, { kind: 'volume' }>).costs)) };
  } else {
    const terms = views.map((v) => v.data as Extract<DataTerm, { kind: 'images' }>);
    const spec = terms[0].spec;
    if (terms.some((t) => JSON.stringify(t.spec) !== JSON.stringify(spec))) throw new Error('stackEnergies: views with different cost settings');
    const stack = (images: Array<{ width: number; height: number; channels: number; data: Int32Array }>) => ({ width: W, height: H * views.length, channels: images[0].channels, data: concat(images.map((im) => im.data)) });
    const images = (): { left: CostImage; right: CostImage } => ({ left: stack(terms.map((t) => t.left)), right: stack(terms.map((t) => t.right)) });
    data = pairSource ? lazily({ kind: 'images', spec } as unknown as Extract<DataTerm, { kind: 'images' }>, ['left', 'right'], images) : { kind: 'images', ...images(), spec };
  }
  const weights = (): { wH: Int32Array; wV: Int32Array } => ({ wH: concat(views.map((v) => v.wH)), wV: concat(views.map((v) => v.wV)) });
  const energy = {
    width: W,
    height: H * views.length,
    labels: L,
    data,
    smoothness: first.smoothness,
    truncation: first.truncation,
    bandHeight: H,
    scale: first.scale,
    ...(pairSource ? { pairSource } : weights()),
  } as MrfEnergy & { scale: number };
  return pairSource ? lazily(energy, ['wH', 'wV'], weights) : energy;
}
