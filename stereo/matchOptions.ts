import { describeRule, expectedOf, numberAccepted, paramProblem, PARAM_KEYS, PARAM_SCHEMA, type NumberRule, type ParamSpec } from './paramSchema';
import { ProgramStore } from '../gpu/move/keptPrograms';
import { FlowCarry } from '../gpu/move/flowCarry';
import { GPU_MOVE_SETTINGS } from '../gpu/move/moveSettings';
import { deviceFlagsProblem } from '../gpu/runtime/deviceFlags';
import { channelWeight, costScale, DEFAULT_CENSUS_WINDOW, maxRawCost, smoothnessUnit, type CensusWindow, type CostKind } from '../costs';
import { readImage } from '../data/imageIO';
import { sharedSamples, type Raster } from '../data/raster';
import { closestName } from './didYouMean';
import { optionError, shownValue } from '../data/errors';
import { BACKENDS, DEFAULT_PARAMS, type MatchParams } from './params';

/**
 * match()'s options checked as a JavaScript caller gave them, before any
 * work: each error names the option as the library spells it (`ndisp`,
 * `censusWindow`), shows the value as given ('60', a string) and says what
 * is accepted. A value of the wrong type is a TypeError, one of the right
 * type outside the accepted values a RangeError, and an unknown key a
 * TypeError with the closest known name ("did you mean censusWindow?").
 * The errors carry `option`, `value` and `expected` (optionError.ts), so
 * that the command line reports them under its own flag and the value as
 * typed.
 */

/** A check of one option's value. */
type Check = (value: unknown, fail: (kind: 'type' | 'range', expected: string) => never) => void;

const number = (rule: NumberRule, expected = describeRule(rule)): Check => (v, fail) => {
  if (typeof v !== 'number') fail('type', expected);
  if (!numberAccepted(v as number, rule)) fail('range', expected);
};
const oneOf = (choices: readonly string[]): Check => (v, fail) => {
  const expected = `one of ${choices.map((c) => `'${c}'`).join(', ')}`;
  if (typeof v !== 'string') fail('type', expected);
  if (!choices.includes(v as string)) fail('range', expected);
};
const flag: Check = (v, fail) => { if (typeof v !== 'boolean') fail('type', 'true or false'); };
const callback: Check = (v, fail) => { if (typeof v !== 'function') fail('type', 'a function'); };

/** A parameter's check, from its entry in the schema (paramSchema.ts). */
const paramCheck = (spec: ParamSpec): Check => (v, fail) => {
  const problem = paramProblem(spec, v);
  if (problem) fail(problem, expectedOf(spec));
};
const PARAM_CHECKS = Object.fromEntries(PARAM_KEYS.map((k) => [k, paramCheck(PARAM_SCHEMA[k])])) as Record<keyof MatchParams, Check>;

const INT32_MAX = 2 ** 31 - 1;

/**
 * λ and the cue factor together: at most 3 decimals in λ and in λ·factor
 * (costs/smoothness.ts costScale), and weights λ·factor·scale·unit that fit
 * the 32-bit smoothness weights (the unit is the cost kind's λ scale,
 * costs/costOptions.ts smoothnessUnit). The error names λ when it was
 * given, else the cue factor; each alone was checked before.
 */
function checkWeights(all: Record<string, unknown>, where: string): void {
  const lambda = typeof all.lambda === 'number' ? all.lambda : DEFAULT_PARAMS.lambda;
  const factor = typeof all.cueFactor === 'number' ? all.cueFactor : DEFAULT_PARAMS.cueFactor;
  const unit = smoothnessUnit((all.cost as CostKind | undefined) ?? DEFAULT_PARAMS.cost).num;
  const option = all.lambda !== undefined ? 'lambda' : 'cueFactor';
  const other = option === 'lambda' ? `cue factor ${factor}` : `λ ${lambda}`;
  const most = (scale: number): string => {
    const m = INT32_MAX / ((option === 'lambda' ? factor : lambda) * scale * unit);
    return `a number in ${option === 'lambda' ? 0 : 1}..${Math.floor(m)} (with this cost and ${other} the smoothness weights must fit 32 bits)`;
  };
  const fail = (expected: string): never => { throw optionError('range', where, option, all[option], expected); };
  if (!(lambda * factor * unit <= INT32_MAX)) fail(most(1));
  let scale = 1;
  try {
    scale = costScale(lambda, factor);
  } catch {
    // λ alone with more decimals is λ's fault; else the product's, the cue factor's when it was given.
    let lambdaAlone = true;
    try { costScale(lambda, 1); } catch { lambdaAlone = false; }
    const culprit = !lambdaAlone || all.cueFactor === undefined ? 'lambda' : 'cueFactor';
    throw optionError('range', where, culprit, all[culprit] ?? lambda, culprit === 'lambda' && !lambdaAlone
      ? 'a number with at most 3 decimals'
      : `a number for which λ × the cue factor (λ ${lambda}, cue factor ${factor}) has at most 3 decimals`);
  }
  if (Math.round(lambda * factor * scale) * unit > INT32_MAX) fail(most(scale));
}

/** Every key match() takes, with its check (undefined values are left to the defaults): the parameters from their schema, then the run's options. */
const CHECKS = {
  ...PARAM_CHECKS,
  ndisp: number({ integer: true, above: 0 }),
  minDisp: number({ integer: true, min: 0 }),
  initialLabels: (v, fail) => { if (!(v instanceof Uint16Array)) fail('type', 'a Uint16Array of disparities, one per pixel'); },
  backend: oneOf(BACKENDS),
  verify: flag,
  onMove: callback,
  onCycle: callback,
  onEvent: callback,
  initSource: (v, fail) => {
    const s = v as { file?: unknown; scale?: unknown } | null;
    if (!s || typeof s !== 'object' || (s.file !== undefined && typeof s.file !== 'string') || (s.scale !== undefined && typeof s.scale !== 'number')) fail('type', '{ file?: string, scale?: number }');
  },
  gpu: (v, fail) => {
    const expected = '{ iterationsPerRound?: integer ≥ 1, bfsPasses?: integer ≥ 1, keepPlans?: boolean, or another GpuMoveSettings knob }';
    if (!v || typeof v !== 'object' || Array.isArray(v)) fail('type', expected);
    for (const [k, x] of Object.entries(v as object)) {
      const count = k === 'iterationsPerRound' || k === 'bfsPasses';
      // The schedule knobs' values are checked by the solver that takes them (gpu/move/gpuMoveSolver.ts).
      if (!(GPU_MOVE_SETTINGS as readonly string[]).includes(k)) fail('type', `${expected}; '${k}' is none of them`);
      if (k === 'device') {
        // The device flags, checked once here; createGpuContext checks them again for its other callers, with the same rules.
        const problem = deviceFlagsProblem(x);
        if (problem) fail(problem.kind, `gpu.device.${problem.key}: ${problem.expected}`);
        continue;
      }
      if (!count && k !== 'keepPlans') continue;
      if (x === undefined) continue;
      if (count ? typeof x !== 'number' : typeof x !== 'boolean') fail('type', expected);
      if (count && !(Number.isInteger(x) && x >= 1)) fail('range', expected);
    }
  },
  warmUpClocks: flag,
  resume: (v, fail) => {
    const r = v as { labels?: unknown; cycle?: unknown; unchanged?: unknown } | null;
    const state = !!r && typeof r === 'object' && !Array.isArray(r) && r.labels instanceof Uint16Array && Number.isInteger(r.cycle) && (r.cycle as number) >= 0
      && Array.isArray(r.unchanged) && r.unchanged.every((a) => Number.isInteger(a));
    if (!state) fail('type', "a checkpoint's resume state { labels, cycle, unchanged } (readResume, app/checkpoint.ts; MatchOptions.onCycle)");
  },
  maxMemory: number({ above: 0 }, 'a number of bytes > 0'),
  warmStart: (v, fail) => {
    const expected = "{ labels?: Uint16Array, cycles?: integer ≥ 1 | 'converge', flows?: FlowCarry, shift?: [dx, dy], previousLeft?: Raster } (stereo/warmStart.ts; SequenceMatcher gives it)";
    if (!v || typeof v !== 'object' || Array.isArray(v) || ArrayBuffer.isView(v)) fail('type', expected);
    for (const [k, x] of Object.entries(v as object)) {
      if (x === undefined) continue;
      const ok = k === 'labels' ? x instanceof Uint16Array
        : k === 'cycles' ? x === 'converge' || (Number.isInteger(x) && (x as number) >= 1)
          : k === 'flows' ? x instanceof FlowCarry
            : k === 'shift' ? Array.isArray(x) && x.length === 2 && x.every((d) => Number.isInteger(d))
              : k === 'previousLeft' ? isRasterLike(x) : false;
      if (!ok) fail('type', `${expected}; '${k}' is not one of them as given`);
    }
  },
  programs: (v, fail) => {
    if (!(v instanceof ProgramStore)) fail('type', 'a ProgramStore (new ProgramStore(); a Matcher holds its own)');
  },
  stripPool: (v, fail) => {
    const p = v as { run?: unknown; close?: unknown } | null;
    if (!p || typeof p !== 'object' || typeof p.run !== 'function' || typeof p.close !== 'function') fail('type', 'a pool from stripPool(threads)');
  },
} satisfies Record<string, Check>;

/** The keys match() takes. */
export type MatchOptionKey = keyof typeof CHECKS;
export const MATCH_OPTION_KEYS = Object.keys(CHECKS) as MatchOptionKey[];

/**
 * Checks match()'s options as given (see the top of this file): every key
 * known, every value of its type and range. checkMatchRange then checks
 * what depends on the images' size.
 */
export function checkMatchOptions(options: unknown, where = 'match'): void {
  if (!options || typeof options !== 'object' || Array.isArray(options)) {
    throw optionError('type', where, 'options', options, 'an object such as { ndisp: 64 }');
  }
  const all = options as Record<string, unknown>;
  for (const key of Object.keys(all)) {
    if (key in CHECKS) continue;
    const near = closestName(key, MATCH_OPTION_KEYS);
    const err = new TypeError(`${where}: unknown option '${key}'${near ? `; did you mean ${near}?` : ''} (options: ${MATCH_OPTION_KEYS.join(', ')})`);
    throw Object.assign(err, { option: key, value: all[key], expected: near ? `the option ${near}` : 'a known option' });
  }
  if (all.ndisp === undefined) throw optionError('type', where, 'ndisp', undefined, 'the number of disparities, an integer > 0, e.g. { ndisp: 64 }');
  for (const key of MATCH_OPTION_KEYS) {
    const v = all[key];
    if (v === undefined) continue;
    CHECKS[key](v, (kind, expected) => { throw optionError(kind, where, key, v, expected); });
  }
  checkWeights(all, where);
  // Refused before the costs are computed; with 'auto' the same limit is found when the backend is placed (stereo/backends.ts).
  if (all.costs === 'on-demand' && all.backend === 'bk') {
    throw optionError('range', where, 'costs', all.costs, "'auto' or 'volume' with backend 'bk' (only the device backends compute costs per label)");
  }
}

/**
 * The data costs' scale against 32 bits, once the channel count is known:
 * every cost is min(raw, τ) × scale × the kind's λ unit den × the channel
 * weight (costs/energyTerms.ts), and must fit an int32, so a τ given too
 * large, or a λ whose decimals raise the scale too far for the kind's raw
 * costs, is refused by name here rather than by the costs' own check.
 */
function checkCostScale(all: Record<string, unknown>, channels: number, where: string): void {
  const lambda = typeof all.lambda === 'number' ? all.lambda : DEFAULT_PARAMS.lambda;
  const factor = typeof all.cueFactor === 'number' ? all.cueFactor : DEFAULT_PARAMS.cueFactor;
  const kind = (all.cost as CostKind | undefined) ?? DEFAULT_PARAMS.cost;
  const window = (all.censusWindow as CensusWindow | undefined) ?? DEFAULT_CENSUS_WINDOW;
  const scale = costScale(lambda, factor) * smoothnessUnit(kind).den * channelWeight(kind, channels);
  if (typeof all.tau === 'number' && Math.round(all.tau * scale) > INT32_MAX) {
    throw optionError('range', where, 'tau', all.tau, `a number in 0..${Math.floor(INT32_MAX / scale)} (costs times their scale ${scale} must fit 32 bits)`);
  }
  if (maxRawCost(kind, channels, window) * scale > INT32_MAX) {
    throw optionError('range', where, 'lambda', lambda, `a number with fewer decimals: its scale makes ${kind} costs (up to ${maxRawCost(kind, channels, window)}) × ${scale} too large for 32 bits`);
  }
}

/** The options checkMatchOptions accepted, against images `width` × `height` of `channels` channels: ndisp and minDisp within the width, initialLabels one per pixel, the costs' scale within 32 bits. */
export function checkMatchRange(options: { ndisp: number; minDisp?: number; initialLabels?: Uint16Array }, width: number, height: number, channels: number, where = 'match'): void {
  checkCostScale(options, channels, where);
  const { ndisp } = options;
  const minDisp = options.minDisp ?? 0;
  if (minDisp >= width) throw optionError('range', where, 'minDisp', minDisp, `an integer below the image width ${width}`);
  // Disparities up to width − 1 from minDisp > 0, up to width − 2 from 0 (as the command line's --ndisp < width).
  const most = minDisp > 0 ? width - minDisp : width - 1;
  if (ndisp > most) throw optionError('range', where, 'ndisp', ndisp, `an integer in 1..${most} (the largest disparity minDisp + ndisp − 1 must stay below the image width ${width})`);
  const labels = options.initialLabels;
  if (labels && labels.length !== width * height) throw optionError('range', where, 'initialLabels', labels, `${width * height} disparities, one per pixel of the ${width}×${height} images`);
}

/** Whether v has a raster's shape ({ width, height, channels, data }), as an image argument must. */
function isRasterLike(v: unknown): v is Raster {
  const r = v as Partial<Raster> | null;
  return !!r && typeof r === 'object' && typeof r.width === 'number' && typeof r.height === 'number' && typeof r.channels === 'number' && !!r.data;
}

/** An image given as a raster or as the path of an image file (PNG, JPEG, PPM/PGM, PFM); anything else is a clear TypeError. */
async function asRaster(image: Raster | string, which: 'left' | 'right'): Promise<Raster> {
  if (typeof image === 'string') return readImage(image, sharedSamples);
  if (!isRasterLike(image)) {
    throw new TypeError(`match: the ${which} image must be a file path or a raster { width, height, channels, data } (readImage gives one), got ${shownValue(image)}`);
  }
  return image;
}

/** match()'s images (read when given as paths), then the range against their size, for options that checkMatchOptions accepted. */
export async function matchArguments(
  leftImage: Raster | string, rightImage: Raster | string, options: { ndisp: number; minDisp?: number; initialLabels?: Uint16Array },
): Promise<{ left: Raster; right: Raster }> {
  const left = await asRaster(leftImage, 'left');
  const right = await asRaster(rightImage, 'right');
  checkMatchRange(options, left.width, left.height, left.channels);
  return { left, right };
}
