/**
 * Errors of a library option's value (match(), evaluate()): a TypeError or
 * RangeError whose message names the option as the library spells it and
 * shows the value as given, carrying the parts so that the command line can
 * say the same under its flag, with the value as typed. No imports: the
 * command line loads it at start.
 */

/** What an option error tells besides its message. */
export interface OptionErrorFields {
  /** The option as the library spells it. */
  option: string;
  value: unknown;
  /** What is accepted, in words ("an integer > 0"). */
  expected: string;
}

export type OptionError = (TypeError | RangeError) & OptionErrorFields;

/** The fields of an option error, or undefined for any other error. */
export function optionErrorOf(err: unknown): OptionErrorFields | undefined {
  if (!(err instanceof TypeError || err instanceof RangeError)) return undefined;
  const e = err as Partial<OptionErrorFields>;
  return typeof e.option === 'string' && typeof e.expected === 'string' ? (e as OptionErrorFields) : undefined;
}

/** A value as a caller gave it: '60' (a string), 1e+308, NaN, [1, 2, 3], { width: 99 }, a function. */
export function shownValue(v: unknown): string {
  if (typeof v === 'string') return `'${v.length > 40 ? `${v.slice(0, 40)}…` : v}' (a string)`;
  if (typeof v === 'function') return 'a function';
  if (v === null || typeof v !== 'object') return String(v);
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name} of ${(v as unknown as ArrayLike<unknown>).length} values`;
  if (Array.isArray(v)) return v.length > 6 ? `an array of ${v.length} values` : `[${v.map((x) => (typeof x === 'string' ? `'${x}'` : String(x))).join(', ')}]`;
  const keys = Object.keys(v);
  return keys.length ? `an object with keys ${keys.slice(0, 6).join(', ')}` : 'an empty object';
}

export function optionError(kind: 'type' | 'range', where: string, option: string, value: unknown, expected: string): OptionError {
  const message = `${where}: ${option}: got ${shownValue(value)}, expected ${expected}`;
  const err = kind === 'type' ? new TypeError(message) : new RangeError(message);
  return Object.assign(err, { option, value, expected });
}
