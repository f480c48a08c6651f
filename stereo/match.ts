import type { Raster } from '../data/raster';
import { buildStereoEnergy, defaultTau, mirroredSwappedEnergy, stackEnergies, wtaFromMatcher, wtaInit, type StereoEnergy, type StereoEnergyOptions } from '../costs';
import { computeEnergy, isMetricSmoothness, volumeOf, type EnergyBreakdown, type MrfEnergy } from '../data/energy';
import { InputError, optionError } from '../data/errors';
import { alphaExpansion, type CycleReport, type ExpansionResult, type ExpansionResume, type MoveProgress } from '../expansion/alphaExpansion';
import { warmUpGpuClocks, type ClockWarmupReport } from '../graphcut/gpuClockWarmup';
import type { MoveSolver } from '../expansion/moveSolver';
import { mayUseWebGpu, runsOnWebGpu } from '../graphcut/backends';
import { createMoveSolver, type BackendOptions } from './backends';
import type { GpuDeviceSettings } from '../expansion/gpuMoveSettings';
import { leftRightCheck, mirrorRows } from './leftRightCheck';
import { refineSubpixel } from './subpixel';
import { checkMatchMemory, defaultMemoryLimit, estimateMatchMemory } from './memoryPlan';
import { halfSize, levelShapes, pyramidLevels, refineLevel, type LevelReport, type LevelShape } from './coarseToFine';
import type { StripRunner } from './levelStrips';
import { stripPool, stripThreads, type StripPool } from './stripRunner';
import { matchArguments } from './matchOptions';
import { chooseStart, type WarmStart, type WarmStartRecord } from './warmStart';
import { BackendName, COSTS_MODES, DEFAULT_PARAMS, MAX_VOLUME_ENTRIES, MatchParams } from './params';

export interface MatchOptions extends Partial<MatchParams> {
  /** Number of labels: disparities minDisp..minDisp + ndisp − 1. */
  ndisp: number;
  /** Disparity of label 0 (option --min-disp). Default 0. */
  minDisp?: number;
  /** A given initial disparity map instead of WTA / zero. */
  initialLabels?: Uint16Array;
  backend?: BackendName;
  /** Solve every cut also with the CPU solver and fail on any difference. */
  verify?: boolean;
  /** Progress callback, once per α-expansion move. */
  onMove?: (info: MoveProgress) => void;
  /**
   * Called (and awaited) after every cycle with its report, the labeling so
   * far of the pair's left view (a map of the pair's size), and what a run
   * resumed from this cycle needs (`resume`; absent for the finest level of
   * a coarse-to-fine run, which cannot be resumed): checkpoints.
   */
  onCycle?: (report: CycleReport, labels: Uint16Array, state?: MatchResume) => void | Promise<void>;
  /**
   * Continue a run of the same pair and parameters from the state an
   * onCycle gave: the cycles after state.cycle run as they would have had
   * the run not stopped (same energies), at one level; `initialLabels` is
   * then not used.
   */
  resume?: MatchResume;
  /** Told each phase as it ends (live progress: the backend is known after the solver setup, the cycles as each ends). */
  onEvent?: (event: MatchEvent) => void;
  /**
   * The threads that run a pyramid's finer levels (stripPool(n), stereo/
   * stripRunner.ts), kept by the caller across matches: a thread runs its
   * first strips several times slower than later ones, so matches that
   * share a pool run their finer levels faster. The caller closes it.
   * Default: a pool of one thread per core, started and closed by the match.
   */
  stripPool?: StripPool;
  /** Bytes of host memory the match may use: a pair whose estimate (stereo/memoryPlan.ts) passes it is refused before the costs. Default 85 % of the machine's. */
  maxMemory?: number;
  /** Where `initialLabels` came from, recorded in the result (a file and its integer scale). */
  initSource?: { file: string; scale: number };
  /**
   * Device settings of the GPU backends: K (iterationsPerRound), B
   * (bfsPasses) and whether compiled programs are kept for the next run of
   * the same shape (keepPlans); defaults are the measured best. The other
   * schedule knobs are internal (expansion/gpuMoveSettings.ts, gpuMoveFlags).
   */
  gpu?: GpuDeviceSettings;
  /**
   * With the device moves (backend gpu or auto), queue spin work on the GPU
   * before the costs so that an idle GPU's clock is raised when the moves
   * start (graphcut/gpuClockWarmup.ts). Default: on when the host computes
   * the costs and the WTA (the spin runs while it does), off when they are
   * left to the device, which would wait behind the spin (warmUpForBackend).
   */
  warmUpClocks?: boolean;
  /** A frame of a sequence: start from the previous frame's labels (and device flows) unless that start's energy is the higher (stereo/warmStart.ts); at one level. */
  warmStart?: WarmStart;
}

/** Where a run stood after a cycle (MatchOptions.onCycle, resume): every view's labels stacked (the left–right check's right view after the left one), the cycles run, the labels whose next move changes nothing. */
export interface MatchResume extends ExpansionResume {
  labels: Uint16Array;
}

/** The phases of a match as they end, in this order ('cycle' once per cycle; 'leftRightCheck' when the check of the two views' maps ends). */
export type MatchEvent =
  | { kind: 'start'; width: number; height: number; ndisp: number; minDisp: number; params: MatchParams & { tau: number }; init: InitRecord; backend: BackendName }
  | { kind: 'costs'; ms: number }
  | { kind: 'solver'; backend: string; device: string; ms: number; fallbacks: string[] }
  | { kind: 'init'; ms: number }
  | { kind: 'initialEnergy'; energy: EnergyBreakdown }
  | { kind: 'cycle'; report: CycleReport; of: number | 'converge' }
  | { kind: 'leftRightCheck'; ms: number; inconsistent: number; filled: boolean }
  | { kind: 'level'; level: number; of: number; shape: LevelShape; shapes: LevelShape[] }
  | { kind: 'levelDone'; report: LevelReport };

/** What the initial labeling was: a method, or a given map (and the file and scale it was read from, when the caller says). */
export type InitRecord = { kind: 'wta'; window: number } | { kind: 'zero' } | { kind: 'given'; file?: string; scale?: number };

export interface PhaseTimes {
  /** The energy: data costs (unless left to the device) and smoothness weights; the clock warm-up's queueing included. */
  costsMs: number;
  /** Creating the move solver (device programs, uploads of the energy). */
  setupMs: number;
  /** The initial labeling (on the device when the solver offers it). */
  initMs: number;
  buildMs: number;
  flowMs: number;
  expansionMs: number;
  totalMs: number;
  /**
   * The left–right check (lrCheck): the views' maps compared and the
   * inconsistent pixels filled. The right view is matched with the left
   * one, as one energy: its costs and moves are in costsMs and expansionMs.
   */
  checkMs?: number;
  /** Sub-pixel refinement (subpixel). */
  subpixelMs?: number;
}

/** What match() returns: the expansion's report (energies per cycle, cuts, backend) plus the disparity and how it was made. */
export interface MatchResult extends Omit<ExpansionResult, 'labels'> {
  width: number;
  height: number;
  ndisp: number;
  /** Disparity of label 0: disparity = minDisp + label. */
  minDisp: number;
  /** Disparity per pixel (minDisp + label), row-major; INVALID_DISPARITY where the left–right check left a pixel unfilled. */
  disparity: Uint16Array;
  /** Every parameter with the value that ran (τ filled in from the cost kind's default when not given). */
  params: MatchParams & { tau: number };
  /** The initial labeling that ran (params.init says only wta or zero). */
  init: InitRecord;
  /** Pixels the left–right check marked (lrCheck). */
  inconsistentPixels?: number;
  /** 1 where the left–right check marked the pixel (lrCheck), row-major; the confidence map reads it. */
  inconsistent?: Uint8Array;
  /** Refined disparity in pixels (subpixel), +inf where invalid; PFM outputs and evaluation use it. */
  subpixel?: Float32Array;
  /** The integer factor every cost carries (fractional λ made exact); energies are in these units. */
  costScale: number;
  times: PhaseTimes;
  /** Why the run left the backend asked for ('auto' without a GPU, a lost device, an energy beyond f32), in order. */
  fallbacks: string[];
  /** The clock warm-up queued before the costs (backends gpu and auto; see MatchOptions.warmUpClocks). */
  clockWarmup?: ClockWarmupReport;
  /**
   * Coarse to fine (params.levels > 1): the levels' shapes, coarsest first,
   * and each finer level's account. The result's energies, cycles and
   * cuts are then those of the finest level, whose energy is banded
   * (stereo/coarseToFine.ts); the coarsest level's are in `coarsest`.
   */
  /** With MatchOptions.warmStart: how the frame started, and every view's final labels for the next frame. */
  warmStart?: WarmStartRecord;
  pyramid?: { shapes: LevelShape[]; coarsest: Pick<MatchResult, 'initialEnergy' | 'finalEnergy' | 'cuts' | 'times' | 'backend'>; levels: LevelReport[] };
}

const DEVICE_SETTINGS: ReadonlyArray<keyof GpuDeviceSettings> = ['iterationsPerRound', 'bfsPasses', 'keepPlans'];

/** match()'s device settings, refusing any other key (the schedule knobs are internal). */
function deviceSettings(gpu: GpuDeviceSettings | undefined): GpuDeviceSettings | undefined {
  for (const k of Object.keys(gpu ?? {})) {
    if (!(DEVICE_SETTINGS as readonly string[]).includes(k)) throw new InputError(`gpu: unknown device setting '${k}' (expected ${DEVICE_SETTINGS.join(', ')})`);
  }
  return gpu;
}

/** Validates a width-dependent label range (the costs check the rest). */
function checkNdisp(ndisp: number, width: number, minDisp = 0): void {
  if (!Number.isInteger(minDisp) || minDisp < 0) throw new Error(`--min-disp: must be an integer ≥ 0 (got ${String(minDisp)})`);
  if (minDisp > 0) {
    if (minDisp >= width) throw new Error(`--min-disp: ${minDisp} is not below the image width ${width}`);
    if (!Number.isInteger(ndisp) || ndisp <= 0 || minDisp + ndisp > width) {
      throw new Error(`--max-disp: the largest disparity ${minDisp + ndisp - 1} must be below the image width ${width}`);
    }
    return;
  }
  if (!Number.isInteger(ndisp) || ndisp <= 0 || ndisp >= width) {
    throw new Error(`--ndisp: must be an integer with 0 < ndisp < image width ${width} (got ${String(ndisp)})`);
  }
}

export function resolveParams(options: Partial<MatchParams>): MatchParams {
  const p: MatchParams = { ...DEFAULT_PARAMS };
  // Only parameter keys are taken: MatchOptions also carries ndisp, backend, callbacks.
  for (const [k, v] of Object.entries(options)) {
    if (v !== undefined && (k in DEFAULT_PARAMS || k === 'tau' || k === 'censusWindow')) (p as unknown as Record<string, unknown>)[k] = v;
  }
  if (!Number.isInteger(p.window) || p.window < 1 || p.window % 2 === 0) throw new InputError(`--window: must be an odd integer ≥ 1 (got ${p.window})`);
  if (p.init !== 'wta' && p.init !== 'zero') throw new Error(`--init: unknown value '${String(p.init)}' (expected wta, zero, or a disparity file)`);
  if (!['frequent', 'sequential', 'random'].includes(p.order)) throw new Error(`--order: unknown value '${String(p.order)}' (expected frequent, sequential, random)`);
  if (p.graph !== 'reversed' && p.graph !== 'classic') throw new Error(`--graph: unknown value '${String(p.graph)}' (expected reversed, classic)`);
  if (p.cycles !== 'converge' && (!Number.isInteger(p.cycles) || p.cycles < 0)) throw new Error(`--cycles: must be an integer ≥ 0 or "converge" (got ${String(p.cycles)})`);
  if (!Number.isInteger(p.seed)) throw new Error(`--seed: must be an integer (got ${String(p.seed)})`);
  if (typeof p.truncation !== 'number' || Number.isNaN(p.truncation)) throw new Error(`--truncation: must be an integer ≥ 0 (got ${String(p.truncation)})`);
  if (p.levelCycles !== 'converge' && (!Number.isInteger(p.levelCycles) || p.levelCycles < 0)) throw new InputError(`--level-cycles: must be an integer ≥ 0 or "converge" (got ${String(p.levelCycles)})`);
  if (p.levels !== 'auto' && (!Number.isInteger(p.levels) || p.levels < 1 || p.levels > 8)) throw new InputError(`--levels: must be an integer in 1..8 or "auto" (got ${String(p.levels)})`);
  if (!COSTS_MODES.includes(p.costs)) throw new Error(`--costs: unknown value '${String(p.costs)}' (expected ${COSTS_MODES.join(', ')})`);
  return p;
}

/** Whether the W·H·ndisp cost volumes of `views` views of a pair (2 with the left–right check: stacked, one volume) are beyond what is ever built (MAX_VOLUME_ENTRIES). */
export function volumeTooLarge(left: Raster, ndisp: number, views = 1): boolean {
  return left.width * left.height * ndisp * views > MAX_VOLUME_ENTRIES;
}

/**
 * Builds the energy of a pair (data costs and smoothness weights) with
 * resolved parameters. The cost volume is left out with --costs on-demand,
 * and with --costs auto when it is too large (with `views` views matched
 * together: their volumes are one) or `costsOnDevice` says the device
 * computes the costs (costsLeftToDevice).
 */
export function stereoEnergy(left: Raster, right: Raster, ndisp: number, p: MatchParams, costsOnDevice = false, minDisp = 0, views = 1): StereoEnergy {
  if (left.width !== right.width || left.height !== right.height) {
    throw new Error(`left image is ${left.width}×${left.height} but right image is ${right.width}×${right.height}`);
  }
  checkNdisp(ndisp, left.width, minDisp);
  return buildStereoEnergy(left, right, energyOptions(left, ndisp, p, costsOnDevice, minDisp, views));
}

/** The options of a view's energy when `views` views are matched together (the cost volume left out as stereoEnergy says, for all the views' volumes). */
function energyOptions(left: Raster, ndisp: number, p: MatchParams, costsOnDevice: boolean, minDisp: number, views: number): StereoEnergyOptions {
  const onDemand = p.costs === 'on-demand' || (p.costs === 'auto' && (costsOnDevice || volumeTooLarge(left, ndisp, views)));
  return {
    ndisp, minDisp, kind: p.cost, tau: p.tau, border: p.border, censusWindow: p.censusWindow, lambda: p.lambda,
    cueThreshold: p.cueThreshold, cueFactor: p.cueFactor, smoothness: p.smoothness, truncation: p.truncation, onDemand, pairOnDevice: costsOnDevice,
  };
}

/** True when the energy carries no cost volume (costs are computed per label when needed). */
export const costsOnDemand = (e: MrfEnergy): boolean => e.data.kind === 'images';

/**
 * Whether --costs auto leaves the data costs to the device: when the moves
 * run there (backend gpu, or auto with a WebGPU adapter) on a metric
 * smoothness term, and without --verify (which rebuilds every graph on the
 * host from the volume). The device moves and the device WTA then compute
 * each cost from the images when they need it, which is faster than
 * building, checking and uploading a volume (the host spends tenths of a
 * second a run on it, the device milliseconds). A host solver that takes over later (a fallback) builds
 * the volume then (BackendOptions.buildVolume).
 */
export async function costsLeftToDevice(p: MatchParams, ndisp: number, backend: BackendName, verify: boolean): Promise<boolean> {
  if (p.costs !== 'auto' || verify) return false;
  if (!(await runsOnWebGpu(backend))) return false;
  // Last: for a truncated quadratic term this walks all label triples.
  return isMetricSmoothness(p.smoothness, p.truncation, ndisp);
}

/**
 * The option of createMoveSolver that lets a host solver take over an
 * energy without a volume: the volume's builder, given only when leaving the
 * costs to the device was a choice (the volume fits). `views`: the views
 * the energy stacks (stackEnergies), whose matchers build the volume; the
 * energy alone when it is one view's.
 */
export function costOptions(energy: MrfEnergy, leftToDevice: boolean, views: readonly StereoEnergy[] = [energy as StereoEnergy]): Pick<BackendOptions, 'buildVolume'> {
  if (!costsOnDemand(energy) || !leftToDevice) return {};
  return {
    buildVolume: () => {
      if (!costsOnDemand(energy)) return;
      const volumes = views.map((v): StereoEnergy => ({ ...v, data: { kind: 'volume', costs: v.matcher.volume(v.labels) } }));
      energy.data = volumes.length === 1 ? volumes[0].data : stackEnergies(volumes).data;
    },
  };
}

/** Initial labeling on the host: WTA over a window, all zero, or a given map. */
export function initialLabeling(energy: StereoEnergy, p: MatchParams, given?: Uint16Array): Uint16Array {
  const n = energy.width * energy.height;
  if (given) {
    const m = energy.matcher.options.minDisp;
    if (given.length !== n) throw new Error(`--init: the initial disparity map has ${given.length} pixels, the images ${n}`);
    const labels = new Uint16Array(n);
    for (let i = 0; i < n; i++) {
      const l = given[i] - m;
      if (l < 0 || l >= energy.labels) throw new Error(`--init: disparity ${given[i]} at pixel ${i} is outside ${m}..${m + energy.labels - 1}`);
      labels[i] = l;
    }
    return labels;
  }
  if (p.init === 'zero') return new Uint16Array(n);
  if (costsOnDemand(energy)) return wtaFromMatcher(energy.matcher, energy.labels, p.window);
  return wtaInit(volumeOf(energy), energy.width, energy.height, energy.labels, p.window);
}

/** The initial labeling of a run: the solver's WTA where it offers one (on the device), else initialLabeling's. */
export async function startingLabels(energy: StereoEnergy, p: MatchParams, solver: MoveSolver, given?: Uint16Array): Promise<Uint16Array> {
  if (!given && p.init === 'wta' && solver.initialWta) {
    const labels = await solver.initialWta(p.window);
    if (labels) return labels;
  }
  return initialLabeling(energy, p, given);
}

/**
 * Disparity of a rectified pair by α-expansion: data costs, smoothness
 * weights, an initial labeling, then `cycles` cycles of expansion moves.
 */
export async function match(leftImage: Raster | string, rightImage: Raster | string, options: MatchOptions): Promise<MatchResult> {
  const { left, right } = await matchArguments(leftImage, rightImage, options);
  const resolved = resolveParams(options);
  if (left.width === right.width && left.height === right.height && Number.isInteger(options.ndisp) && options.ndisp > 0) {
    const estimate = estimateMatchMemory(left.width, left.height, left.channels, options.ndisp, options.minDisp ?? 0, resolved, options.backend === 'gpu');
    checkMatchMemory(`match: the ${left.width}×${left.height} pair with ${options.ndisp} disparities`, estimate, options.maxMemory ?? defaultMemoryLimit(), 'maxMemory');
  }
  const r = await checkedMatch(left, right, options);
  if (!r.params.subpixel) return r;
  const t0 = performance.now();
  const p = r.params;
  const subpixel = refineSubpixel(left, right, r.disparity, r.minDisp, r.ndisp, { kind: p.cost, tau: p.tau, border: p.border, censusWindow: p.censusWindow }, p.window);
  const ms = performance.now() - t0;
  return { ...r, subpixel, times: { ...r.times, subpixelMs: ms, totalMs: r.times.totalMs + ms } };
}

/**
 * The integer disparity of the left view, with the left–right check when
 * asked for. The check's right view (the mirrored, swapped pair: its
 * left-view disparity, mirrored back, is the right view's) is matched
 * together with the left one, as one energy of the two views stacked
 * (costs/energyTerms.ts stackEnergies): each move solves both views' cuts
 * for its label at once, so the device runs one move per label instead of
 * two. The views share the label order, the cycles and the reported
 * energies (their sum); each view's map is that of its own energy.
 */
async function checkedMatch(left: Raster, right: Raster, options: MatchOptions): Promise<MatchResult> {
  const checked = resolveParams(options).lrCheck;
  const { result: r, others } = await matchPyramid(left, right, checked ? 2 : 1, options);
  if (!checked) return r;
  const t0 = performance.now();
  const dispRight = mirrorRows(others[0], r.width, r.height);
  const check = leftRightCheck(r.disparity, dispRight, r.width, r.height, r.params.lrFill);
  const checkMs = performance.now() - t0;
  options.onEvent?.({ kind: 'leftRightCheck', ms: checkMs, inconsistent: check.invalid, filled: r.params.lrFill });
  return { ...r, disparity: check.disparity, inconsistentPixels: check.invalid, inconsistent: check.marked, times: { ...r.times, totalMs: r.times.totalMs + checkMs, checkMs } };
}

/**
 * matchViews at the pyramid's coarsest level, then each finer level refined
 * within bands (stereo/coarseToFine.ts); matchViews itself when the pyramid
 * has one level. A given initial map keeps the pair at one level unless
 * the levels are given.
 */
async function matchPyramid(left: Raster, right: Raster, views: 1 | 2, options: MatchOptions): Promise<{ result: MatchResult; others: Uint16Array[] }> {
  const t0 = performance.now();
  const resolved = resolveParams(options);
  const given = options.initialLabels !== undefined || options.resume !== undefined || options.warmStart !== undefined;
  const levels = given && resolved.levels === 'auto' ? 1 : pyramidLevels(left.width, left.height, resolved.levels);
  if (levels === 1) return matchViews(left, right, views, options);
  if (given) throw optionError('range', 'match', 'levels', resolved.levels, "1 or 'auto' with initialLabels, resume or warmStart (a given initial map is matched at one level)");
  const minDisp = options.minDisp ?? 0;
  checkNdisp(options.ndisp, left.width, minDisp);
  const shapes = levelShapes(left.width, left.height, minDisp, minDisp + options.ndisp - 1, levels);
  const coarsest = shapes[levels - 1];
  if (coarsest.width < 16 || coarsest.height < 16 || coarsest.maxDisp >= coarsest.width || coarsest.maxDisp === coarsest.minDisp) {
    throw optionError('range', 'match', 'levels', resolved.levels, `fewer levels: ${levels} leave a ${coarsest.width}×${coarsest.height} pair with disparities ${coarsest.minDisp}..${coarsest.maxDisp} at the coarsest (at least 16×16 pixels, 2 disparities below the width)`);
  }
  const emit = options.onEvent ?? (() => undefined);
  emit(startEvent(left, options, resolved));
  const pairs = [{ left, right }];
  for (let k = 1; k < levels; k++) pairs.push({ left: halfSize(pairs[k - 1].left), right: halfSize(pairs[k - 1].right) });
  // The finer levels' threads start now and load while the coarsest level runs.
  const own = options.stripPool ? undefined : stripPool(stripThreads(left.width * left.height));
  try {
    return await matchLevels(pairs, views, options, resolved, shapes, (options.stripPool ?? own!).run, t0);
  } finally {
    await own?.close();
  }
}

/**
 * T of a level f times finer than the coarsest (f = 2, 4, …). T is in
 * disparities, which grow ×f: a quadratic term's T grows ×f² so that it
 * stands for the same jump. A linear term's grows ×3f: within a finer
 * level's bands the jumps the truncation is there for are already barred
 * (each pixel keeps a few labels around the coarse disparity), and there a
 * ramp across the band must stay cheaper than a step (chosen with each of
 * three ×2 scenes left out in turn; BENCHMARKS.md, "Large images").
 */
export function levelTruncation(p: Pick<MatchParams, 'smoothness' | 'truncation'>, f: number): number {
  if (p.smoothness === 'quadratic') return p.truncation * f * f;
  if (p.smoothness === 'linear') return p.truncation * 3 * f;
  return p.truncation;
}

/** matchPyramid's levels, coarsest first, the finer levels' strips run by `run`. */
async function matchLevels(pairs: Array<{ left: Raster; right: Raster }>, views: 1 | 2, options: MatchOptions, resolved: MatchParams, shapes: LevelShape[], run: StripRunner, t0: number): Promise<{ result: MatchResult; others: Uint16Array[] }> {
  const { left } = pairs[0];
  const levels = shapes.length;
  const coarsest = shapes[levels - 1];
  const minDisp = options.minDisp ?? 0;
  const emit = options.onEvent ?? (() => undefined);
  emit({ kind: 'level', level: levels - 1, of: levels, shape: coarsest, shapes });
  const coarse = await matchViews(pairs[levels - 1].left, pairs[levels - 1].right, views, {
    ...options, ndisp: coarsest.maxDisp - coarsest.minDisp + 1, minDisp: coarsest.minDisp, levels: 1, onCycle: undefined,
    onEvent: (e) => { if (e.kind !== 'start') emit(e); },
    onMove: options.onMove ? (m) => options.onMove!({ ...m, level: levels - 1, levels }) : undefined,
  });
  const params = coarse.result.params;
  let maps = [coarse.result.disparity, ...coarse.others];
  let size = { width: coarsest.width, height: coarsest.height };
  const reports: LevelReport[] = [];
  let last: Omit<ExpansionResult, 'labels'> | undefined;
  // Every level has the coarsest's λ and cue, so the same cost scale.
  const costScale = coarse.result.costScale;
  for (let k = levels - 2; k >= 0; k--) {
    const shape = shapes[k];
    emit({ kind: 'level', level: k, of: levels, shape, shapes });
    const ndisp = shape.maxDisp - shape.minDisp + 1;
    const onDemand = { ...resolved, costs: 'on-demand' as const, truncation: levelTruncation(resolved, 2 ** (levels - 1 - k)) };
    checkNdisp(ndisp, shape.width, shape.minDisp);
    const energy = energyOptions(pairs[k].left, ndisp, onDemand, false, shape.minDisp, 1);
    const done = await refineLevel(k, shape, pairs[k], energy, views, { maps, ...size }, {
      params, run,
      onMove: options.onMove ? (m) => options.onMove!({ ...m, levels }) : undefined,
      onLevel: (report) => emit({ kind: 'levelDone', report }),
    });
    if (k === 0 && options.onCycle) for (const c of done.result.cycles) await options.onCycle(c, done.maps[0].map((d) => d - minDisp));
    maps = done.maps;
    size = { width: shape.width, height: shape.height };
    reports.push(done.report);
    last = done.result;
  }
  const report = last!;
  const levelMs = reports.reduce((s, r) => s + r.costsMs + r.expansionMs, 0);
  const ct = coarse.result.times;
  const totalMs = performance.now() - t0;
  return {
    result: {
      ...report,
      width: left.width,
      height: left.height,
      ndisp: options.ndisp,
      minDisp,
      disparity: maps[0],
      params,
      init: coarse.result.init,
      costScale,
      times: {
        costsMs: ct.costsMs + reports.reduce((s, r) => s + r.costsMs, 0), setupMs: ct.setupMs, initMs: ct.initMs,
        buildMs: ct.buildMs + report.cycles.reduce((s, c) => s + c.buildMs, 0), flowMs: ct.flowMs + report.cycles.reduce((s, c) => s + c.flowMs, 0),
        expansionMs: ct.expansionMs + reports.reduce((s, r) => s + r.expansionMs, 0), totalMs: Math.max(totalMs, ct.totalMs + levelMs),
      },
      // The finer levels' moves run on the host (BK on the pixels whose band holds α), whatever ran the coarsest.
      backend: coarse.result.backend === report.backend ? report.backend : `${coarse.result.backend} + ${report.backend}`,
      device: coarse.result.device === report.device ? report.device : `${coarse.result.device}; finer levels: ${report.device}`,
      fallbacks: coarse.result.fallbacks,
      ...(coarse.result.clockWarmup ? { clockWarmup: coarse.result.clockWarmup } : {}),
      pyramid: {
        shapes: shapes.slice().reverse(),
        coarsest: { initialEnergy: coarse.result.initialEnergy, finalEnergy: coarse.result.finalEnergy, cuts: coarse.result.cuts, times: ct, backend: coarse.result.backend },
        levels: reports,
      },
    },
    others: maps.slice(1),
  };
}

/** The starting labels of the views stacked: a given map for the first view, the WTA (on the device when the solver offers it) or zeros elsewhere. */
async function startingLabelsOfViews(views: StereoEnergy[], p: MatchParams, solver: MoveSolver, given?: Uint16Array): Promise<Uint16Array> {
  if (views.length === 1) return startingLabels(views[0], p, solver, given);
  const n = views[0].width * views[0].height;
  const device = p.init === 'wta' && solver.initialWta ? await solver.initialWta(p.window) : undefined;
  const labels = new Uint16Array(n * views.length);
  views.forEach((v, i) => labels.set(i === 0 && given ? initialLabeling(v, p, given) : device ? device.subarray(i * n, (i + 1) * n) : initialLabeling(v, p), i * n));
  return labels;
}

/** The 'start' event of a match of `left` (the full pair's, also for coarse to fine): the parameters that run (τ filled in) and the initial labeling. */
function startEvent(left: Raster, options: MatchOptions, resolved: MatchParams): Extract<MatchEvent, { kind: 'start' }> {
  const params = { ...resolved, tau: resolved.tau ?? defaultTau(resolved.cost, left.channels, resolved.censusWindow) };
  const init: InitRecord = options.initialLabels || options.resume ? { kind: 'given', ...options.initSource }
    : params.init === 'wta' ? { kind: 'wta', window: params.window } : { kind: 'zero' };
  return { kind: 'start', width: left.width, height: left.height, ndisp: options.ndisp, minDisp: options.minDisp ?? 0, params, init, backend: options.backend ?? 'auto' };
}

/**
 * match() of the pair (views 1), or of the pair and its mirrored, swapped
 * pair (views 2: the left–right check's right view) stacked as one energy;
 * the pair's result and the other view's disparities.
 */
async function matchViews(left: Raster, right: Raster, views: 1 | 2, options: MatchOptions): Promise<{ result: MatchResult; others: Uint16Array[] }> {
  const t0 = performance.now();
  const resolved = resolveParams(options);
  const backend = options.backend ?? 'auto';
  const verify = options.verify ?? false;
  const emit = options.onEvent ?? (() => undefined);
  const minDisp = options.minDisp ?? 0;
  const start = startEvent(left, options, resolved);
  const { params, init } = start;
  emit(start);
  const leftToDevice = await costsLeftToDevice(params, options.ndisp, backend, verify);
  const clockWarmup = await warmUpForBackend(backend, options.warmUpClocks, leftToDevice);
  // The energy is built from the parameters as given (τ undefined = the matcher's default); `params` records the value that ran.
  // The check's right view (the mirrored, swapped pair) from the left view's samples, rows reversed: nothing converted twice.
  const first = stereoEnergy(left, right, options.ndisp, resolved, leftToDevice, minDisp, views);
  const energies = views === 1 ? [first] : [first, mirroredSwappedEnergy(first, energyOptions(left, options.ndisp, resolved, leftToDevice, minDisp, views))];
  const energy: MrfEnergy = energies.length === 1 ? energies[0] : stackEnergies(energies);
  const n = left.width * left.height;
  const t1 = performance.now();
  emit({ kind: 'costs', ms: t1 - t0 });
  const fallbacks: string[] = [];
  const volumeFits = !volumeTooLarge(left, options.ndisp, views);
  const solver = await createMoveSolver(energy, {
    backend, graph: params.graph, verify, gpu: deviceSettings(options.gpu), onFallback: (reason) => fallbacks.push(reason), flows: options.warmStart?.flows,
    ...costOptions(energy, leftToDevice && volumeFits, energies),
  });
  let result: ExpansionResult;
  let warmRecord: Omit<WarmStartRecord, 'labels'> | undefined;
  let t2 = NaN;
  let t3 = NaN;
  try {
    t2 = performance.now();
    emit({ kind: 'solver', backend: solver.backend, device: solver.device, ms: t2 - t1, fallbacks: fallbacks.slice() });
    const resume = options.resume;
    if (resume && resume.labels.length !== n * views) throw new Error(`resume: ${resume.labels.length} labels, the run's ${views} view(s) of ${left.width}×${left.height} have ${n * views}`);
    const fresh = (): Promise<Uint16Array> => startingLabelsOfViews(energies, params, solver, options.initialLabels);
    const chosen = resume ? undefined : await chooseStart(options.warmStart, { width: left.width, height: left.height, views }, fresh, (l) => solver.energyOf?.(l) ?? Promise.resolve(computeEnergy(energy, l)));
    const initial = resume ? resume.labels : chosen!.initial;
    if (chosen && options.warmStart) warmRecord = { ...chosen.record, cycles: chosen.record.start === 'warm' ? options.warmStart.cycles ?? params.cycles : params.cycles };
    t3 = performance.now();
    emit({ kind: 'init', ms: t3 - t2 });
    const onCycle = options.onCycle;
    result = await alphaExpansion(energy, initial, solver, {
      order: params.order, cycles: warmRecord?.cycles ?? params.cycles, seed: params.seed, skipUnchanged: params.skipUnchanged, onMove: options.onMove,
      resume: resume ? { cycle: resume.cycle, unchanged: resume.unchanged } : undefined,
      onStart: (e) => emit({ kind: 'initialEnergy', energy: e }),
      onCycle: async (report, labels, unchanged) => {
        emit({ kind: 'cycle', report, of: warmRecord?.cycles ?? params.cycles });
        await onCycle?.(report, labels.length === n ? labels : labels.subarray(0, n), { cycle: report.cycle, unchanged, labels });
      },
    });
  } finally {
    solver.dispose?.();
  }
  const t4 = performance.now();
  const buildMs = result.cycles.reduce((s, c) => s + c.buildMs, 0);
  const flowMs = result.cycles.reduce((s, c) => s + c.flowMs, 0);
  const { labels, ...report } = result;
  const viewLabels = energies.map((_, i) => labels.subarray(i * n, (i + 1) * n));
  return {
    result: {
      ...report,
      width: left.width,
      height: left.height,
      ndisp: energy.labels,
      minDisp,
      disparity: labelsToDisparity(viewLabels[0].slice(), minDisp),
      params,
      init,
      costScale: energies[0].scale,
      times: { costsMs: t1 - t0, setupMs: t2 - t1, initMs: t3 - t2, buildMs, flowMs, expansionMs: t4 - t3, totalMs: t4 - t0 },
      fallbacks,
      ...(clockWarmup ? { clockWarmup } : {}),
      ...(warmRecord ? { warmStart: { ...warmRecord, labels } } : {}),
    },
    others: viewLabels.slice(1).map((l) => labelsToDisparity(l.slice(), minDisp)),
  };
}

/**
 * The clock warm-up of a run whose moves may go to the device (backends gpu
 * and auto; validated later by createMoveSolver), queued before the host
 * computes the costs; undefined for the CPU backends or when turned off.
 * By default (`enabled` undefined) it is skipped, and says why, when the
 * costs are left to the device (`costsOnDevice`): the spin was meant to run
 * while the host computes the costs and the WTA, and the device's WTA would
 * wait behind it instead.
 */
export async function warmUpForBackend(backend: BackendName, enabled: boolean | undefined, costsOnDevice = false): Promise<ClockWarmupReport | undefined> {
  if (enabled !== undefined && typeof enabled !== 'boolean') throw new Error(`warmUpClocks: expected true or false, got ${String(enabled)}`);
  if (enabled === false || !mayUseWebGpu(backend)) return undefined;
  if (enabled === undefined && costsOnDevice) return { dispatches: 0, skipped: 'the costs and the WTA are left to the device, which would wait behind it' };
  return warmUpGpuClocks();
}

/** Disparities minDisp + label (the labels themselves when minDisp is 0). */
export function labelsToDisparity(labels: Uint16Array, minDisp: number): Uint16Array {
  if (minDisp === 0) return labels;
  const out = new Uint16Array(labels.length);
  for (let i = 0; i < labels.length; i++) out[i] = labels[i] + minDisp;
  return out;
}

/** The disparity in pixels a result stands for: the sub-pixel map where refined, else the integer one (what PFM outputs and scores use). */
export function disparityInPixels(r: Pick<MatchResult, 'disparity' | 'subpixel'>): ArrayLike<number> {
  return r.subpixel ?? r.disparity;
}
