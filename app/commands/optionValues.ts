/**
 * The one place that says what a number option accepts and how a refused
 * value is reported: one line naming the option, the value as typed and what
 * is accepted ("--lambda: got 'abc', expected a number ≥ 0"). Every option
 * declared `type: 'number'` is checked to be a finite number; those named in
 * NUMBER_RULES also against their rule. Options with `choices` are reported
 * the same way (choiceError rewrites yargs' own message), and so are the
 * library's option errors (commandLineMessage: its name, `censusWindow`,
 * becomes the flag, `--census-window`, and its value the value as typed).
 */
import { optionErrorOf } from '../../data/errors';
import { describeRule, numberAccepted, PARAM_KEYS, PARAM_SCHEMA, type NumberRule } from '../../stereo/paramSchema';

/** Rules of the number options, by long name (an option not listed takes any finite number): the parameters' from their schema, then the other options'. */
export const NUMBER_RULES: Record<string, NumberRule> = {
  ...Object.fromEntries(PARAM_KEYS.filter((k) => PARAM_SCHEMA[k].kind === 'number').map((k) => [PARAM_SCHEMA[k].flag, PARAM_SCHEMA[k].rule ?? {}])),
  ndisp: { integer: true, above: 0 },
  'scene-seed': { integer: true, min: 0, max: 0xffffffff },
  'png-scale': { above: 0 },
  'init-scale': { above: 0 },
  'disp-scale': { above: 0 },
  'gt-scale': { above: 0 },
  focal: { above: 0 },
  baseline: { above: 0 },
  threshold: { min: 0 },
  width: { integer: true, min: 32, max: 4096 },
  height: { integer: true, min: 16, max: 4096 },
  random: { integer: true, min: 1 },
  'search-seed': { integer: true },
  workers: { integer: true, min: 1 },
  concurrency: { integer: true, min: 1 },
  'lock-seconds': { min: 1 },
  index: { integer: true, min: 0 },
  repeat: { integer: true, min: 1 },
  cycles: { integer: true, min: 0 },
  k: { integer: true, min: 1 },
  'baseline-k': { integer: true, min: 1 },
};

export const valueError = (option: string, typed: string, expected: string): Error =>
  new Error(`${option}: got '${typed}', expected ${expected}`);

/**
 * The values given for an option on the command line, as typed, in order
 * (--name v, --name=v, -a v, -av for one-letter aliases, and the values
 * after an array option).
 */
export function typedValues(argv: string[], names: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i];
    for (const n of names) {
      const flag = flagOf(n);
      if (tok === flag) {
        for (let j = i + 1; j < argv.length && !/^--?[A-Za-z]/.test(argv[j]); j++) out.push(argv[j]);
      } else if (tok.startsWith(`${flag}=`)) {
        out.push(tok.slice(flag.length + 1));
      }
    }
  }
  return out;
}

const flagOf = (n: string): string => (n.length === 1 ? `-${n}` : `--${n}`);

/** The flag of option `long` as the command line `argv` spells it: "--scale" when the user typed the old spelling of --png-scale, else "--png-scale". */
export function spelledFlag(long: string, argv: string[], aliases: Record<string, string[]>): string {
  for (const n of [long, ...(aliases[long] ?? [])]) {
    const flag = flagOf(n);
    if (argv.some((t) => t === flag || t.startsWith(`${flag}=`))) return flag;
  }
  return `--${long}`;
}

/**
 * Checks every number option the parser produced (`numberKeys`: the long
 * names yargs coerced to numbers; `aliases`: their other spellings) against
 * NUMBER_RULES, reporting the value as typed.
 */
export function checkNumberOptions(args: Record<string, unknown>, numberKeys: string[], aliases: Record<string, string[]>, argv: string[]): void {
  for (const key of numberKeys) {
    const value = args[key];
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    const typed = typedValues(argv, [key, ...(aliases[key] ?? [])]);
    values.forEach((v, i) => {
      if ((typeof v === 'number' || v === null) && !numberAccepted(v ?? NaN, NUMBER_RULES[key])) {
        throw valueError(spelledFlag(key, argv, aliases), typed[i] ?? String(v), describeRule(NUMBER_RULES[key]));
      }
    });
  }
}

/**
 * yargs' "Invalid values: Argument: cost, Given: "ncc", Choices: "sad", …"
 * as one line in the vocabulary of valueError; other messages unchanged.
 */
export function choiceError(message: string): string {
  const m = /Argument: ([^,]+), Given: (.*?), Choices: (.*)$/s.exec(message);
  if (!m) return message;
  const unquote = (s: string): string => s.trim().replace(/^"/, '').replace(/"$/, '');
  const choices = m[3].split(/",\s*"/).map(unquote).join(', ');
  return valueError(`--${m[1].trim()}`, unquote(m[2]), `one of ${choices}`).message;
}

/** The long flag of a library option: censusWindow → census-window; initialLabels is --init's. */
export function flagOfOption(option: string): string {
  return option === 'initialLabels' ? 'init' : option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** The aliases that are old long spellings (--scale, --out), not one-letter flags. */
const longAliases = (aliases: Record<string, string[]>): Record<string, string[]> =>
  Object.fromEntries(Object.entries(aliases).map(([k, names]) => [k, names.filter((n) => n.length > 1)]));

/**
 * An error of the command line `argv` (`aliases`: the other spellings of
 * each option) as it prints it: a library option error whose flag the user
 * typed is reported under that flag with the value as typed ("--lambda:
 * got '1e308', expected …"); a message that starts with an option's long
 * flag names it by the old spelling where the user typed that (--scale for
 * --png-scale; a one-letter alias such as -o is not an old spelling, and
 * the message keeps --output); any other error as it is.
 */
export function commandLineMessage(err: unknown, argv: string[], aliases: Record<string, string[]>): string {
  const o = optionErrorOf(err);
  if (o) {
    const long = flagOfOption(o.option);
    const typed = typedValues(argv, [long, ...(aliases[long] ?? [])]);
    if (typed.length > 0) return valueError(spelledFlag(long, argv, aliases), typed[typed.length - 1], o.expected).message;
  }
  const message = err instanceof Error ? err.message : String(err);
  const flag = /^--([a-z][a-z0-9-]*):/.exec(message);
  return flag ? `${spelledFlag(flag[1], argv, longAliases(aliases))}${message.slice(flag[0].length - 1)}` : message;
}
