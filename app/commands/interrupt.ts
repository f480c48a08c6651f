/**
 * Ctrl-C (SIGINT) during a long command: the first one asks the command to
 * stop at the next point where what is finished can be kept (`requested`),
 * and says so on stderr; a second one exits at once (exit code 130, the
 * shell's code for SIGINT).
 */
export class StopRequest {
  requested = false;
  private readonly handler = (): void => {
    if (this.requested) process.exit(130);
    this.requested = true;
    this.onRequest();
  };

  constructor(private readonly onRequest: () => void) {}

  /** Listens for SIGINT until the returned function is called. */
  listen(): () => void {
    process.on('SIGINT', this.handler);
    return () => { process.off('SIGINT', this.handler); };
  }
}

/** Thrown where a command stops at a requested point. */
export class StoppedError extends Error {
  constructor() {
    super('stopped by SIGINT');
  }
}

/**
 * Lets pending signal handlers run: a match awaits only promises between its
 * moves, which never give the event loop a turn, so a SIGINT would wait for
 * the end of the whole run without this.
 */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
