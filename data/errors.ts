/**
 * Errors that say whose fault they are, so a caller decides by type, never
 * by reading a message:
 *  - InputError: a caller's bad input (an option value, a file); the message
 *    names the option or file. Never a device failure: a fallback to another
 *    backend must not hide it.
 *  - VerificationError: --verify found a cut that differs from the CPU
 *    solver's, a wrong result; never papered over by a fallback either.
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
