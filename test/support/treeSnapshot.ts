import * as fs from 'fs';
import * as path from 'path';

/** Every entry under `dir`: a file's bytes (base64), a link's target, a folder; for checking that a command left files as they were. */
export function treeSnapshot(dir: string): Map<string, string> {
  const m = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isSymbolicLink()) m.set(p, `link → ${fs.readlinkSync(p)}`);
      else if (e.isDirectory()) { m.set(p, 'folder'); walk(p); } else m.set(p, fs.readFileSync(p).toString('base64'));
    }
  };
  walk(dir);
  return m;
}
