import * as fs from 'fs';
import * as path from 'path';
import { randomBytes } from 'crypto';

/** A file to write and its whole content. */
export interface FileContent {
  file: string;
  bytes: Uint8Array | string;
}

/** The hidden temporary names of this module: `.NAME.tmp-<pid>-<12 hex digits>` beside NAME. */
const TEMP_NAME = /^\.(.+)\.tmp-(\d+)-[0-9a-f]{12}$/;

/** Whether a process with this id runs on this machine (EPERM: it does, as another user). */
export function processAlive(pid: number): boolean {
  if (!(pid > 0)) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the temporary files of `target` that a process killed while
 * writing it left behind (their process no longer runs); those of live
 * processes, this one's included, are theirs and stay.
 */
export function removeStaleTemps(target: string): void {
  const dir = path.dirname(target);
  const base = path.basename(target);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const m = TEMP_NAME.exec(n);
    if (!m || m[1] !== base || Number(m[2]) === process.pid || processAlive(Number(m[2]))) continue;
    try { fs.unlinkSync(path.join(dir, n)); } catch { /* another process removed it first */ }
  }
}

/** The bytes written, flushed and closed under a fresh temporary name beside `target`; the name is returned. */
function writeTemp(target: string, bytes: Uint8Array | string): string {
  const tmp = path.join(path.dirname(target), `.${path.basename(target)}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
  let fd: number | undefined;
  try {
    fd = fs.openSync(tmp, 'wx', 0o644);
    const buf = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    let off = 0;
    while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    return tmp;
  } catch (err) {
    if (fd !== undefined) {
      try { fs.closeSync(fd); } catch { /* already failing; the original error matters */ }
    }
    try { fs.unlinkSync(tmp); } catch { /* the temp file may never have been created */ }
    throw targetError(target, tmp, err);
  }
}

/** The error of a write, naming the target (the temporary name means nothing to the user). */
function targetError(target: string, tmp: string, err: unknown): Error {
  const msg = (err instanceof Error ? err.message : String(err)).split(tmp).join(target);
  return new Error(`cannot write ${target}: ${msg}`);
}

/**
 * Writes several files as one: every file's bytes go to a temporary name in
 * its own folder (same file system, so the final rename is atomic) and are
 * flushed to disk; only when all are written are they renamed over their
 * targets. A failure before that (a full disk, a folder that cannot be
 * written) removes every temporary file and leaves every target as it was;
 * the error names the target that failed. Temporary files of these targets
 * left by killed processes are removed first.
 */
export function writeFilesAtomic(files: FileContent[]): void {
  const staged: { file: string; tmp: string }[] = [];
  try {
    for (const f of files) {
      removeStaleTemps(f.file);
      staged.push({ file: f.file, tmp: writeTemp(f.file, f.bytes) });
    }
  } catch (err) {
    for (const s of staged) {
      try { fs.unlinkSync(s.tmp); } catch { /* gone already */ }
    }
    throw err;
  }
  for (const [k, s] of staged.entries()) {
    try {
      fs.renameSync(s.tmp, s.file);
    } catch (err) {
      for (const rest of staged.slice(k)) {
        try { fs.unlinkSync(rest.tmp); } catch { /* gone already */ }
      }
      throw targetError(s.file, s.tmp, err);
    }
  }
}

/**
 * Write `bytes` to `filePath` so that the file either keeps its old content or
 * holds the complete new content, never a partial write (writeFilesAtomic of
 * one file). On any failure the error names the target path.
 */
export function writeFileAtomic(filePath: string, bytes: Uint8Array | string): void {
  writeFilesAtomic([{ file: filePath, bytes }]);
}
