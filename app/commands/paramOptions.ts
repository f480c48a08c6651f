import type { Argv } from 'yargs';
import { COST_KINDS, MAX_CENSUS_SIDE, parseCensusWindow } from '../../costs';
import { LABEL_ORDERS } from '../../expansion/labelOrder';
import { BACKENDS, DEFAULT_PARAMS as D, type MatchParams } from '../../stereo/params';
import { checkNumber, NUMBER_RULES, valueError } from './optionValues';

/**
 * The energy and solver options shared by match, run, demo, export-mrf and
 * tune. No defaults here: an option left out is undefined, so per-scene
 * parameters (run) and DEFAULT_PARAMS can fill it, and the command line
 * always wins. `scope` 'energy' gives only the options that shape the energy
 * and its initial labeling (export-mrf solves nothing).
 */
export function withParamOptions<T>(y: Argv<T>, scope: 'energy' | 'all' = 'all') {
  const energy = withEnergyOptions(y);
  return scope === 'energy' ? energy : withSolverOptions(energy);
}

function withEnergyOptions<T>(y: Argv<T>) {
  return y
    .option('cost', { choices: COST_KINDS as unknown as string[], describe: 'data cost: census (Hamming distance of census codes), SAD, SSD or SAD + gradient differences (default census)' })
    .option('census-window', { type: 'string', describe: 'census window WxH, odd sizes (default 7x7)' })
    .option('tau', { type: 'number', describe: 'data cost truncation τ: differing census bits, or the 8-bit scale summed over channels (default per cost kind)' })
    .option('border', { choices: ['tau', 'clamp'], describe: 'cost where x−d < 0: τ (no evidence) or the clamped column (default clamp)' })
    .option('lambda', { type: 'number', describe: `smoothness weight λ, one scale for every cost: census bits, else 1/26 of the kind's default colour τ (default ${D.lambda})` })
    .option('smoothness', { choices: ['linear', 'quadratic', 'potts'], describe: 'smoothness V: truncated linear, truncated quadratic or Potts (default linear)' })
    .option('truncation', { alias: 'T', type: 'number', describe: `smoothness truncation T in disparities (default ${D.truncation})` })
    .option('cue-threshold', { type: 'number', describe: `static cue: neighbours closer than this in intensity (max over channels)… (default ${D.cueThreshold})` })
    .option('cue-factor', { type: 'number', describe: `…get λ × this factor; 1 disables the cue (default ${D.cueFactor})` })
    .option('init', { type: 'string', describe: 'initial labeling: wta, zero, or a disparity file (default wta)' })
    .option('window', { type: 'number', describe: `WTA window size, odd (default ${D.window})` });
}

function withSolverOptions<T>(y: Argv<T>) {
  return y
    .option('order', { choices: LABEL_ORDERS as unknown as string[], describe: 'label order per cycle (default frequent)' })
    .option('graph', { choices: ['reversed', 'classic'], describe: 'binary graph construction (default reversed, Choi & Park §3.2)' })
    .option('cycles', { type: 'string', describe: `α-expansion cycles, or "converge" (default ${D.cycles})` })
    .option('seed', { type: 'number', describe: 'seed of the random label order (default 1)' })
    .option('skip-unchanged', { type: 'boolean', describe: 'skip moves that cannot lower the energy: nothing changed since the label was last expanded (default true; --no-skip-unchanged runs every move)' })
    .option('costs', { choices: ['auto', 'volume', 'on-demand'], describe: 'data costs as a W×H×L volume, or per label when needed (GPU only); auto: on demand beyond 2^28 costs (default auto)' })
    .option('lr-check', { type: 'boolean', describe: 'left–right consistency check: match the right view too and mark pixels whose views differ by more than 1 (default on; --no-lr-check: off)' })
    .option('subpixel', { type: 'boolean', describe: 'sub-pixel refinement: parabola through the window-summed costs at d−1, d, d+1, written to PFM outputs and scored (default off)' })
    .option('lr-fill', { type: 'boolean', describe: 'fill the pixels the check marks from the nearest consistent pixels of their row, the farther of the two (default true; --no-lr-fill leaves them invalid: 0 in PNG, inf in PFM)' })
    .option('levels', { type: 'string', describe: 'pyramid levels: match at 1/2^(N−1) of the size, then refine each finer level within bands around the coarser map; auto: as many as bring the coarsest to at most 0.5 megapixels (1 for benchmark-sized pairs) (default auto)' })
    .option('level-cycles', { type: 'string', describe: `α-expansion cycles at each finer pyramid level (--cycles is the coarsest's), or "converge" (default ${D.levelCycles})` })
    .option('backend', { choices: BACKENDS as unknown as string[], default: 'auto', describe: 'max-flow backend' })
    .option('progress', { type: 'boolean', default: false, describe: 'print a line per α-expansion move on stderr (cycle, move, pixels changed, seconds)' })
    .option('verify', { type: 'boolean', default: false, describe: 'solve every cut also with the CPU solver and fail on any difference' });
}

export interface ParamArgs {
  cost?: string; tau?: number; border?: string; lambda?: number; smoothness?: string; truncation?: number;
  'cue-threshold'?: number; 'cue-factor'?: number; init?: string; window?: number; order?: string; graph?: string;
  cycles?: string; seed?: number; 'skip-unchanged'?: boolean; costs?: string;
  'census-window'?: string; 'lr-check'?: boolean; 'lr-fill'?: boolean; subpixel?: boolean; levels?: string; 'level-cycles'?: string;
}

/** A number option's value checked against its rule (optionValues.ts NUMBER_RULES), or undefined when not given. */
const checked = (name: string, v: number | undefined): number | undefined => (v === undefined ? undefined : checkNumber(name, v));

/** The same for an option that must be a finite number ≥ 0 unless NUMBER_RULES says more. */
const finiteNonNegative = (name: string, v: number | undefined): number | undefined =>
  (v === undefined ? undefined : checkNumber(name, v, String(v), NUMBER_RULES[name] ?? { min: 0 }));

/** --census-window's value (WxH or N), refused in the words of every option value. */
function censusWindowOf(typed: string): MatchParams['censusWindow'] {
  try {
    return parseCensusWindow(typed);
  } catch {
    throw valueError('--census-window', typed, `WxH or N with odd sides in 1..${MAX_CENSUS_SIDE}, not 1x1 (7x7, 9x7, 5)`);
  }
}

/** Command-line values → MatchParams overrides (undefined where not given), with option-named errors. */
export function paramsFromArgs(a: ParamArgs): { params: Partial<MatchParams>; initFile?: string } {
  const cyclesOf = (name: string, v: string | undefined): number | 'converge' | undefined => {
    if (v === undefined || v === 'converge') return v;
    const c = Number(v);
    if (!/^\d+$/.test(String(v)) || !Number.isInteger(c)) throw valueError(name, String(v), 'an integer ≥ 0 or converge');
    return c;
  };
  const cycles = cyclesOf('--cycles', a.cycles);
  const levelCycles = cyclesOf('--level-cycles', a['level-cycles']);
  let levels: number | 'auto' | undefined;
  if (a.levels !== undefined) {
    const l = Number(a.levels);
    if (a.levels === 'auto') levels = 'auto';
    else if (!/^\d+$/.test(String(a.levels)) || l < 1 || l > 8) throw valueError('--levels', String(a.levels), 'an integer in 1..8 or auto');
    else levels = l;
  }
  let init: MatchParams['init'] | undefined;
  let initFile: string | undefined;
  if (a.init === 'wta' || a.init === 'zero') init = a.init;
  else if (a.init !== undefined) initFile = a.init;
  const params: Partial<MatchParams> = {
    cost: a.cost as MatchParams['cost'] | undefined,
    tau: finiteNonNegative('tau', a.tau),
    border: a.border as MatchParams['border'] | undefined,
    lambda: finiteNonNegative('lambda', a.lambda),
    smoothness: a.smoothness as MatchParams['smoothness'] | undefined,
    truncation: checked('truncation', a.truncation),
    cueThreshold: finiteNonNegative('cue-threshold', a['cue-threshold']),
    cueFactor: checked('cue-factor', a['cue-factor']),
    init,
    window: checked('window', a.window),
    order: a.order as MatchParams['order'] | undefined,
    graph: a.graph as MatchParams['graph'] | undefined,
    cycles,
    seed: checked('seed', a.seed),
    skipUnchanged: a['skip-unchanged'],
    costs: a.costs as MatchParams['costs'] | undefined,
    censusWindow: a['census-window'] === undefined ? undefined : censusWindowOf(String(a['census-window'])),
    lrCheck: a['lr-check'],
    lrFill: a['lr-fill'],
    subpixel: a.subpixel,
    levels,
    levelCycles,
  };
  for (const k of Object.keys(params) as (keyof MatchParams)[]) if (params[k] === undefined) delete params[k];
  return { params, initFile };
}
