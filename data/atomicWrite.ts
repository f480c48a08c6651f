import * as fs from 'fs';
import * as path from 'path';
import { randomBytes } from 'crypto';

/**
 * Write `bytes` to `filePath` so that the file either keeps its old content or
 * holds the complete new content, never a partial write: the bytes go to a
 * temporary name in the same folder (same file system, so the final rename is
 * atomic), are flushed to disk, and only then renamed over the target.
 * On any failure the temporary file is removed and the error is rethrown with
 * the target path in its message.
 */
export function writeFileAtomic(filePath: string, bytes: Uint8Array | string): void {
  const dir = path.dirname(filePath);
  const base = path.basename(filePath);
  const tmp = path.join(dir, `.${base}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
  let fd: number | undefined;
  try {
    fd = fs.openSync(tmp, 'wx', 0o644);
    const buf = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    let off = 0;
    while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, filePath);
  } catch (err) {
    if (fd !== undefined) {
      try { fs.closeSync(fd); } catch { /* already failing; the original error matters */ }
    }
    try { fs.unlinkSync(tmp); } catch { /* the temp file may never have been created */ }
    // The temporary name means nothing to the user: the message names the target only.
    const msg = (err instanceof Error ? err.message : String(err)).split(tmp).join(filePath);
    throw new Error(`cannot write ${filePath}: ${msg}`);
  }
}
