import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { randomBytes } from 'crypto';
import { processAlive } from '../../data/atomicWrite';

/** The lock file of a tune folder: its owner's pid, host and start, made with O_EXCL. */
export const LOCK_NAME = '.stereocut-tune.lock';

interface Owner { pid: number; host: string; since: string }

function readOwner(file: string): Owner | undefined {
  try {
    const o = JSON.parse(fs.readFileSync(file, 'utf8')) as Owner;
    return Number.isInteger(o.pid) && typeof o.host === 'string' ? o : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One tune at a time on a folder: the lock is a file made with O_EXCL
 * holding its owner's pid and host, removed when the owner ends (at exit
 * too). An owner on this host whose process no longer runs holds nothing:
 * its lock is taken over. Any other owner (alive, on another host, or a
 * lock being written this instant) refuses the second run in one line.
 */
export class FolderLock {
  private released = false;
  private readonly onExit = (): void => this.release();

  private constructor(readonly file: string) {
    process.once('exit', this.onExit);
  }

  /** Takes the lock of `dir` (which exists) or throws, naming `option` and the owner. */
  static acquire(dir: string, option: string): FolderLock {
    const file = path.join(dir, LOCK_NAME);
    const me: Owner = { pid: process.pid, host: os.hostname(), since: new Date().toISOString() };
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        fs.writeFileSync(file, JSON.stringify(me) + '\n', { flag: 'wx', mode: 0o644 });
        return new FolderLock(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`${option}: cannot make the lock ${file}: ${(err as Error).message}`);
      }
      const owner = readOwner(file);
      if (!owner || owner.host !== me.host || processAlive(owner.pid)) {
        const who = owner ? `pid ${owner.pid} on ${owner.host}, since ${owner.since}` : 'its lock is being written';
        throw new Error(`${option}: ${dir} is in use by another tune (${who}); wait for it to end, or remove ${file} if no tune runs there`);
      }
      // The owner is dead: its lock is moved aside, and removed only if it is still that owner's (not a lock taken meanwhile).
      const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
      try {
        fs.renameSync(file, aside);
      } catch {
        continue;
      }
      const moved = readOwner(aside);
      if (moved && moved.pid === owner.pid && moved.since === owner.since) fs.rmSync(aside, { force: true });
      else {
        try { fs.linkSync(aside, file); } catch { /* taken again meanwhile: that owner holds it */ }
        fs.rmSync(aside, { force: true });
      }
    }
    throw new Error(`${option}: ${dir}: could not take the lock ${file} (other runs keep taking it)`);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    process.off('exit', this.onExit);
    fs.rmSync(this.file, { force: true });
  }
}
