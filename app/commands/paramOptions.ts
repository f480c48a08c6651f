import type { Argv, Options } from 'yargs';
import { BACKENDS, type MatchParams } from '../../stereo/params';
import { paramFromText, PARAM_KEYS, PARAM_SCHEMA, type ParamSpec } from '../../stereo/paramSchema';

/**
 * The energy and solver options shared by match, run, demo, export-mrf and
 * tune, made from the parameters' schema (stereo/paramSchema.ts): each
 * parameter's flag, alias, type or choices and help as defined there. No
 * defaults here: an option left out is undefined, so per-scene parameters
 * (run) and DEFAULT_PARAMS can fill it, and the command line always wins.
 * `scope` 'energy' gives only the options that shape the energy and its
 * initial labeling (export-mrf solves nothing).
 */
export function withParamOptions<T>(y: Argv<T>, scope: 'energy' | 'all' = 'all') {
  let out = y;
  for (const k of PARAM_KEYS) {
    const spec = PARAM_SCHEMA[k];
    if (scope === 'all' || spec.scope === 'energy') out = out.option(spec.flag, yargsOption(spec)) as Argv<T>;
  }
  if (scope === 'energy') return out;
  return out
    .option('backend', { choices: BACKENDS as unknown as string[], default: 'auto', describe: 'max-flow backend' })
    .option('progress', { type: 'boolean', default: false, describe: 'print a line per α-expansion move on stderr (cycle, move, pixels changed, seconds)' })
    .option('verify', { type: 'boolean', default: false, describe: 'solve every cut also with the CPU solver and fail on any difference' });
}

/** A parameter's yargs declaration: choices where the schema lists them (--init also takes a file), else its type; values the schema's kind parses (cycles, levels, windows) come as strings. */
function yargsOption(spec: ParamSpec): Options {
  const alias = spec.alias ? { alias: spec.alias } : {};
  const describe = spec.help;
  if (spec.kind === 'choice' && spec.flag !== 'init') return { ...alias, choices: spec.choices as string[], describe };
  if (spec.kind === 'number') return { ...alias, type: 'number', describe };
  if (spec.kind === 'flag') return { ...alias, type: 'boolean', describe };
  return { ...alias, type: 'string', describe };
}

/** The parameters' values as yargs gives them, by flag. */
export type ParamArgs = { [flag: string]: unknown };

/**
 * Command-line values → MatchParams overrides (only those given), each read
 * and checked by the parameters' schema (paramFromText); a refusal is the
 * library's option error, which the command line reports under the flag
 * with the value as typed (optionValues.ts commandLineMessage). A file
 * given to --init comes apart as initFile.
 */
export function paramsFromArgs(a: ParamArgs): { params: Partial<MatchParams>; initFile?: string } {
  const params: Record<string, unknown> = {};
  let initFile: string | undefined;
  for (const k of PARAM_KEYS) {
    const spec = PARAM_SCHEMA[k];
    const v = a[spec.flag];
    if (v === undefined) continue;
    if (k === 'init' && v !== 'wta' && v !== 'zero') initFile = String(v);
    else params[k] = paramFromText(k, v);
  }
  return { params: params as Partial<MatchParams>, initFile };
}
