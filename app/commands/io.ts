/* Kept apart from the commands' helpers so that the command line can start without loading image codecs. */

/** Where command output goes; tests capture it. */
export interface Io {
  /** Results and the live account of a run (stdout). */
  out: (line: string) => void;
  /** Errors and notices (stderr). */
  err: (line: string) => void;
  /** Redraws one transient status line in place (a progress bar); absent where stderr is not a terminal. */
  status?: (line: string) => void;
}

// A shown status line is erased before any other line, so that it never mixes with them.
let statusShown = false;
const clearStatus = (): void => {
  if (statusShown) process.stderr.write('\r\x1b[2K');
  statusShown = false;
};

export const processIo: Io = {
  out: (l) => { clearStatus(); process.stdout.write(l + '\n'); },
  err: (l) => { clearStatus(); process.stderr.write(l + '\n'); },
  ...(process.stderr.isTTY ? {
    status: (l: string) => {
      const width = Math.max(20, (process.stderr.columns || 80) - 1);
      process.stderr.write(`\r\x1b[2K${l.slice(0, width)}`);
      statusShown = l !== '';
    },
  } : {}),
};
