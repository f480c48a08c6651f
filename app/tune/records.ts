import * as fs from 'fs';
import type { TrialRecord } from './trial';

/**
 * The trial log: one JSON object per line, appended and fsynced as each
 * trial finishes, so a killed run loses at most the trials still running.
 */
export class TrialLog {
  private fd: number;
  constructor(readonly file: string) {
    try {
      this.fd = fs.openSync(file, 'a', 0o644);
    } catch (err) {
      throw new Error(`cannot write ${file}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  /** Appends a record as one line; a failed write (a full disk) is taken back, so the log never ends in part of a line, and the error names the file. */
  append(r: TrialRecord): void {
    const buf = Buffer.from(JSON.stringify(r) + '\n', 'utf8');
    const size = fs.fstatSync(this.fd).size;
    try {
      let off = 0;
      while (off < buf.length) off += fs.writeSync(this.fd, buf, off, buf.length - off);
      fs.fsyncSync(this.fd);
    } catch (err) {
      try { fs.ftruncateSync(this.fd, size); } catch { /* the error below matters; a resume drops a partial line anyway */ }
      throw new Error(`cannot write ${this.file}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  close(): void {
    fs.closeSync(this.fd);
  }
}

/**
 * Reads a trial log. A kill can cut the last line short; such a tail (no
 * final newline, or unparsable) is dropped and the file is truncated to its
 * last complete line so later appends start on a fresh line. A bad line
 * anywhere else is an error naming the file and line.
 */
export function readTrialLog(file: string, repair: boolean): TrialRecord[] {
  if (!fs.existsSync(file)) return [];
  const text = fs.readFileSync(file, 'utf8');
  const end = text.lastIndexOf('\n') + 1;
  if (repair && end < Buffer.byteLength(text)) fs.truncateSync(file, Buffer.byteLength(text.slice(0, end)));
  const lines = text.slice(0, end).split('\n').filter((l) => l.trim() !== '');
  const out: TrialRecord[] = [];
  lines.forEach((l, i) => {
    let r: TrialRecord;
    try {
      r = JSON.parse(l) as TrialRecord;
    } catch {
      throw new Error(`${file}:${i + 1}: not a JSON trial record`);
    }
    if (typeof r.key !== 'string' || typeof r.objective !== 'number') throw new Error(`${file}:${i + 1}: not a trial record (no key or objective)`);
    out.push(r);
  });
  return out;
}
