/**
 * Errors that say whose fault they are, so a caller decides by type, never
 * by reading a message:
 *  - InputError: a caller's bad input (an option value, a file); the message
 *    names the option or file. Never a device failure: a fallback to another
 *    backend must not hide it.
 *  - VerificationError: --verify found a cut that differs from the CPU
 *    solver's, a wrong result; never papered over by a fallback either.
 *  - an option error (optionError): a library option's value refused, a
 *    TypeError (wrong type) or RangeError (outside the accepted values)
 *    whose message names the option as the library spells it and shows the
 *    value as given; it carries the parts, so that the command line says the
 *    same under its flag with the value as typed.
 */
export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputError';
  }
}

export class VerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VerificationError';
  }
}

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
