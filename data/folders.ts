import * as fs from 'fs';
import * as path from 'path';

/**
 * Makes a folder and its missing parents, one level at a time, and throws
 * when it cannot (a file in the way, a read-only or virtual file system).
 * Not `fs.mkdirSync(dir, { recursive: true })`: Node 20's recursive mkdir
 * never returns under procfs (`/proc/cc`, `$HOME=/proc`), where making a
 * folder fails with ENOENT although its parent exists; here that ENOENT is
 * the error.
 */
export function makeFolder(dir: string): void {
  const missing: string[] = [];
  let d = path.resolve(dir);
  for (;;) {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (stat) {
      if (!stat.isDirectory()) throw new Error(`${d} is not a folder (for ${dir})`);
      break;
    }
    missing.push(d);
    const parent = path.dirname(d);
    // The root always exists; a path whose root does not is an error of its own.
    if (parent === d) throw new Error(`${d} does not exist (for ${dir})`);
    d = parent;
  }
  for (const m of missing.reverse()) {
    try {
      fs.mkdirSync(m);
    } catch (err) {
      // Made meanwhile by another process: fine if it is a folder.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !fs.statSync(m).isDirectory()) throw err;
    }
  }
}
