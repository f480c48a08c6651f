import { COST_KINDS, MAX_CENSUS_SIDE, parseCensusWindow } from '../costs';
import { LABEL_ORDERS } from '../expansion/labelOrder';
import { optionError } from '../data/errors';
import { COSTS_MODES, DEFAULT_PARAMS as D, DEFAULT_PARAMS, type MatchParams } from './params';

/**
 * The parameters of a match (MatchParams), each defined once: its
 * command-line flag, its kind and accepted values, and its help. The
 * library's checks of match()'s options (matchOptions.ts), the reading of
 * a value's text (paramFromText), the command line's options and their
 * number rules (app/commands/paramOptions.ts, optionValues.ts) and a tune
 * study's values (tune/space.ts) are all made from this table, so a
 * parameter's name, range and words cannot drift apart. The
 * defaults are DEFAULT_PARAMS (params.ts). Errors name a parameter as the
 * caller spelled it: `lambda` to the library, `--lambda` on the command line.
 */

/** The accepted values of a number, as a rule. */
export interface NumberRule {
  integer?: boolean;
  /** Smallest value accepted (inclusive). */
  min?: number;
  /** Values must be greater than this. */
  above?: number;
  max?: number;
  odd?: boolean;
}

/** A rule in words, as every error about a number says it ("an odd integer ≥ 1", "a finite number ≥ 0"). */
export function describeRule(rule: NumberRule = {}): string {
  const noun = rule.integer ? `${rule.odd ? 'odd ' : ''}integer` : 'number';
  const article = /^[aeiou]/.test(noun) ? 'an' : 'a';
  if (rule.min !== undefined && rule.max !== undefined) return `${article} ${noun} in ${rule.min}..${rule.max}`;
  const bounds = [
    rule.min !== undefined ? `≥ ${rule.min}` : '',
    rule.above !== undefined ? `> ${rule.above}` : '',
    rule.max !== undefined ? `≤ ${rule.max}` : '',
  ].filter(Boolean).join(' and ');
  return `${article} ${rule.integer ? noun : `finite ${noun}`}${bounds ? ` ${bounds}` : ''}`;
}

/** Whether `v` is a finite number that `rule` accepts. */
export function numberAccepted(v: number, rule: NumberRule = {}): boolean {
  if (typeof v !== 'number' || !Number.isFinite(v)) return false;
  if (rule.integer && !Number.isInteger(v)) return false;
  if (rule.odd && Math.abs(v % 2) !== 1) return false;
  if (rule.min !== undefined && v < rule.min) return false;
  if (rule.above !== undefined && v <= rule.above) return false;
  if (rule.max !== undefined && v > rule.max) return false;
  return true;
}

/**
 * How a parameter's value is written: a number under a rule, one of some
 * choices, on/off, a cycle count ("converge" or an integer ≥ 0), a level
 * count ("auto" or 1..8), a census window (WxH on the command line,
 * { width, height } in the library).
 */
export type ParamKind = 'number' | 'choice' | 'flag' | 'cycles' | 'levels' | 'censusWindow';

export interface ParamSpec {
  /** The command line's long name (--flag). */
  flag: string;
  alias?: string;
  kind: ParamKind;
  rule?: NumberRule;
  choices?: readonly string[];
  /** The --help text. */
  help: string;
  /** 'energy': shapes the energy and its initial labeling (all export-mrf takes); 'solver': how it is minimised. */
  scope: 'energy' | 'solver';
}

/** Every parameter, in the order --help lists them. */
export const PARAM_SCHEMA: { readonly [K in keyof MatchParams]-?: ParamSpec } = {
  cost: { flag: 'cost', kind: 'choice', choices: COST_KINDS, scope: 'energy', help: 'data cost: census (Hamming distance of census codes), SAD, SSD or SAD + gradient differences (default census)' },
  censusWindow: { flag: 'census-window', kind: 'censusWindow', scope: 'energy', help: 'census window WxH, odd sizes (default 7x7)' },
  tau: { flag: 'tau', kind: 'number', rule: { min: 0 }, scope: 'energy', help: 'data cost truncation τ: differing census bits, or the 8-bit scale summed over channels (default per cost kind)' },
  border: { flag: 'border', kind: 'choice', choices: ['tau', 'clamp'], scope: 'energy', help: 'cost where x−d < 0: τ (no evidence) or the clamped column (default clamp)' },
  lambda: { flag: 'lambda', kind: 'number', rule: { min: 0 }, scope: 'energy', help: `smoothness weight λ, one scale for every cost: census bits, else 1/26 of the kind's default colour τ (default ${D.lambda})` },
  smoothness: { flag: 'smoothness', kind: 'choice', choices: ['linear', 'quadratic', 'potts'], scope: 'energy', help: 'smoothness V: truncated linear, truncated quadratic or Potts (default linear)' },
  // At most a uint32, as SMRF1 stores it (an unbounded T is 'no truncation' long before).
  truncation: { flag: 'truncation', alias: 'T', kind: 'number', rule: { integer: true, min: 0, max: 0xffffffff }, scope: 'energy', help: `smoothness truncation T in disparities (default ${D.truncation})` },
  cueThreshold: { flag: 'cue-threshold', kind: 'number', rule: { min: 0 }, scope: 'energy', help: `static cue: neighbours closer than this in intensity (max over channels)… (default ${D.cueThreshold})` },
  cueFactor: { flag: 'cue-factor', kind: 'number', rule: { min: 1 }, scope: 'energy', help: `…get λ × this factor; 1 disables the cue (default ${D.cueFactor})` },
  // The command line also takes a disparity file here (paramsFromArgs gives it apart).
  init: { flag: 'init', kind: 'choice', choices: ['wta', 'zero'], scope: 'energy', help: 'initial labeling: wta, zero, or a disparity file (default wta)' },
  window: { flag: 'window', kind: 'number', rule: { integer: true, min: 1, odd: true }, scope: 'energy', help: `WTA window size, odd (default ${D.window})` },
  order: { flag: 'order', kind: 'choice', choices: LABEL_ORDERS, scope: 'solver', help: 'label order per cycle (default frequent)' },
  graph: { flag: 'graph', kind: 'choice', choices: ['reversed', 'classic'], scope: 'solver', help: 'binary graph construction (default reversed, Choi & Park §3.2)' },
  cycles: { flag: 'cycles', kind: 'cycles', scope: 'solver', help: `α-expansion cycles, or "converge" (default ${D.cycles})` },
  seed: { flag: 'seed', kind: 'number', rule: { integer: true }, scope: 'solver', help: 'seed of the random label order (default 1)' },
  skipUnchanged: { flag: 'skip-unchanged', kind: 'flag', scope: 'solver', help: 'skip moves that cannot lower the energy: nothing changed since the label was last expanded (default true; --no-skip-unchanged runs every move)' },
  costs: { flag: 'costs', kind: 'choice', choices: COSTS_MODES, scope: 'solver', help: 'data costs as a W×H×L volume, or per label when needed (GPU only); auto: on demand beyond 2^28 costs (default auto)' },
  lrCheck: { flag: 'lr-check', kind: 'flag', scope: 'solver', help: 'left–right consistency check: match the right view too and mark pixels whose views differ by more than 1 (default on; --no-lr-check: off)' },
  subpixel: { flag: 'subpixel', kind: 'flag', scope: 'solver', help: 'sub-pixel refinement: parabola through the window-summed costs at d−1, d, d+1, written to PFM outputs and scored (default off)' },
  lrFill: { flag: 'lr-fill', kind: 'flag', scope: 'solver', help: 'fill the pixels the check marks from the nearest consistent pixels of their row, the farther of the two (default true; --no-lr-fill leaves them invalid: 0 in PNG, inf in PFM)' },
  lrMedian: { flag: 'lr-median', kind: 'flag', scope: 'solver', help: 'after the row fill, each marked pixel takes the median of 5 × 5 filled disparities within 12 px (× the pyramid level\'s scale), weighted by colour likeness and distance (default true; --no-lr-median keeps the row fill)' },
  levels: { flag: 'levels', kind: 'levels', scope: 'solver', help: 'pyramid levels: match at 1/2^(N−1) of the size, then refine each finer level within bands around the coarser map; auto: as many as bring the coarsest to at most 0.5 megapixels (1 for benchmark-sized pairs) (default auto)' },
  levelCycles: { flag: 'level-cycles', kind: 'cycles', scope: 'solver', help: `α-expansion cycles at each finer pyramid level (--cycles is the coarsest's), or "converge" (default ${D.levelCycles})` },
};

/** The parameters' keys in PARAM_SCHEMA's order. */
export const PARAM_KEYS = Object.keys(PARAM_SCHEMA) as (keyof MatchParams)[];

/** What a census window must be, in the library's words. */
export const CENSUS_WINDOW_EXPECTED = `{ width, height } with odd sides in 1..${MAX_CENSUS_SIDE}, not 1×1 (parseCensusWindow('7x7') gives one)`;
/** The same on the command line. */
export const CENSUS_WINDOW_TYPED = `WxH or N with odd sides in 1..${MAX_CENSUS_SIDE}, not 1x1 (7x7, 9x7, 5)`;

/** The most pyramid levels a match takes (levels). */
export const MAX_LEVELS = 8;

/**
 * A parameter's value from its text (a command-line value, as yargs gives
 * it: numbers and flags already typed): a cycle count or 'converge', a
 * level count (1..8) or 'auto', a census window "WxH" or "N", a number
 * its rule accepts; choices and flags as they are (resolveParams checks them). A text that is none of these is
 * an option error naming the parameter, with what the text may be, which
 * the command line reports under its flag.
 */
export function paramFromText(key: keyof MatchParams, v: unknown): unknown {
  const spec = PARAM_SCHEMA[key];
  const text = String(v);
  const refused = (expected: string): Error => optionError('range', 'match', key, text, expected);
  switch (spec.kind) {
    case 'number':
      // yargs has typed it (a text that is no number is NaN, which no rule accepts).
      if (!numberAccepted(v as number, spec.rule)) throw refused(describeRule(spec.rule));
      return v;
    case 'cycles':
    case 'levels': {
      // Its word, or digits whose number the kind accepts (paramProblem: the bounds are the library's).
      const word = spec.kind === 'cycles' ? 'converge' : 'auto';
      if (text === word) return text;
      const n = /^\d+$/.test(text) ? Number(text) : NaN;
      if (paramProblem(spec, n)) throw refused(spec.kind === 'cycles' ? 'an integer ≥ 0 or converge' : `an integer in 1..${MAX_LEVELS} or auto`);
      return n;
    }
    case 'censusWindow':
      try {
        return parseCensusWindow(text);
      } catch {
        throw refused(CENSUS_WINDOW_TYPED);
      }
    default:
      return v;
  }
}

/** What a value of `spec`'s kind must be, in words (the library's errors). */
export function expectedOf(spec: ParamSpec): string {
  switch (spec.kind) {
    case 'number': return describeRule(spec.rule);
    case 'choice': return `one of ${spec.choices!.map((c) => `'${c}'`).join(', ')}`;
    case 'flag': return 'true or false';
    case 'cycles': return "an integer ≥ 0 or 'converge'";
    case 'levels': return `an integer in 1..${MAX_LEVELS} or 'auto'`;
    case 'censusWindow': return CENSUS_WINDOW_EXPECTED;
  }
}

/** Why `v` is not a value of `spec` ('type': the wrong type; 'range': the right type, not accepted), or null when it is. */
export function paramProblem(spec: ParamSpec, v: unknown): 'type' | 'range' | null {
  switch (spec.kind) {
    case 'number':
      if (typeof v !== 'number') return 'type';
      return numberAccepted(v, spec.rule) ? null : 'range';
    case 'choice':
      if (typeof v !== 'string') return 'type';
      return spec.choices!.includes(v) ? null : 'range';
    case 'flag':
      return typeof v === 'boolean' ? null : 'type';
    case 'cycles':
      if (v === 'converge') return null;
      if (typeof v !== 'number') return 'type';
      return Number.isInteger(v) && v >= 0 ? null : 'range';
    case 'levels':
      if (v === 'auto') return null;
      if (typeof v !== 'number') return 'type';
      return Number.isInteger(v) && v >= 1 && v <= MAX_LEVELS ? null : 'range';
    case 'censusWindow': {
      if (!v || typeof v !== 'object') return 'type';
      const w = v as { width?: unknown; height?: unknown };
      const side = (s: unknown): boolean => typeof s === 'number' && Number.isInteger(s) && s >= 1 && s <= MAX_CENSUS_SIDE && s % 2 === 1;
      return side(w.width) && side(w.height) && (w.width as number) * (w.height as number) >= 2 ? null : 'range';
    }
  }
}

/**
 * The parameters of a match: the defaults, then the parameter keys of
 * `options` (it may hold others: ndisp, backend, callbacks), each checked
 * against its schema entry; an error names the parameter as the library
 * spells it (`window`), which the command line turns into its flag.
 */
export function resolveParams(options: Partial<MatchParams>): MatchParams {
  const p: MatchParams = { ...DEFAULT_PARAMS };
  for (const [k, v] of Object.entries(options)) {
    if (v === undefined || !(k in PARAM_SCHEMA)) continue;
    const spec = PARAM_SCHEMA[k as keyof MatchParams];
    const problem = paramProblem(spec, v);
    if (problem) throw optionError(problem, 'match', k, v, expectedOf(spec));
    (p as unknown as Record<string, unknown>)[k] = v;
  }
  return p;
}
