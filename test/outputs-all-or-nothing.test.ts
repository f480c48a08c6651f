import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { spawnSync } from 'child_process';
import { main } from '../app/cli';
import { generateSyntheticScene } from '../data/synthetic';
import { writePng } from '../data/imageIO';
import { writeFilesAtomic } from '../data/atomicWrite';
import { tune, TUNE_FILES } from '../app/tune/tune';
import { LOCK_NAME } from '../app/tune/folderLock';
import { readTrialLog } from '../app/tune/records';

/**
 * Writes that fail or race (issue 40, item 5): a command's outputs are all
 * written or none; a failed write names its file; a process killed while
 * writing leaves a hidden temporary file that the next write of that file
 * removes; two tunes on one folder do not both run the trials.
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-all-or-nothing-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
afterEach(() => jest.restoreAllMocks());
const f = (...names: string[]): string => path.join(tmp, ...names);

async function cli(args: string[]): Promise<{ code: number; err: string[] }> {
  const err: string[] = [];
  const code = await main(args, { out: () => undefined, err: (l) => err.push(l) });
  return { code, err };
}

// Node's fs module itself (an `import * as` binding is a wrapper whose members cannot be replaced): the writers read through to it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nodeFs = require('fs') as typeof fs;
// The project's writers call openSync(path, flags, mode) and writeSync(fd, bytes, offset, length): the stand-ins below take those.
type OpenFn = (p: fs.PathLike, flags: string, mode?: number) => number;
type WriteFn = (fd: number, buf: Uint8Array, off: number, len: number) => number;

/** A pid that no process has now: a child that has ended. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid!;

/** A write that fails with ENOSPC for files whose temporary name contains `part`, after writing half of the bytes (a disk that fills up). */
function fullDiskFor(part: string): void {
  const open = fs.openSync as unknown as OpenFn;
  const failing = new Set<number>();
  jest.spyOn(nodeFs, 'openSync').mockImplementation(((p: fs.PathLike, flags: string, mode?: number) => {
    const fd = open(p, flags, mode);
    if (String(p).includes(part)) failing.add(fd);
    return fd;
  }) as unknown as typeof fs.openSync);
  const write = fs.writeSync as unknown as WriteFn;
  jest.spyOn(nodeFs, 'writeSync').mockImplementation(((fd: number, buf: Uint8Array, off: number, len: number) => {
    if (!failing.has(fd)) return write(fd, buf, off, len);
    if (len > 1) return write(fd, buf, off, Math.floor(len / 2));
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  }) as unknown as typeof fs.writeSync);
}

const scene = generateSyntheticScene({ width: 32, height: 24, ndisp: 6, seed: 8 });
beforeAll(async () => {
  await writePng(f('L.png'), scene.left);
  await writePng(f('R.png'), scene.right);
  fs.mkdirSync(f('full'));
});

describe('one command, all of its outputs or none', () => {
  it('match -o ok.png --pfm full/x.pfm: the PFM cannot be written, so ok.png is not either', async () => {
    fullDiskFor('x.pfm.tmp');
    const r = await cli(['match', f('L.png'), f('R.png'), '--ndisp', '6', '--backend', 'bk', '--cycles', '1', '-q', '-o', f('ok.png'), '--pfm', f('full', 'x.pfm')]);
    expect(r.code).toBe(1);
    expect(r.err).toEqual([expect.stringMatching(/^stereocut: cannot write .*full\/x\.pfm: ENOSPC/)]);
    expect(fs.existsSync(f('ok.png'))).toBe(false);
    expect(fs.readdirSync(f('full'))).toEqual([]);
    expect(fs.readdirSync(tmp).filter((n) => n.startsWith('.'))).toEqual([]);
  });
  it('writeFilesAtomic keeps every old file when a later one fails, and replaces all when none does', () => {
    fs.writeFileSync(f('a.txt'), 'old a');
    fs.writeFileSync(f('b.txt'), 'old b');
    fullDiskFor('b.txt.tmp');
    expect(() => writeFilesAtomic([{ file: f('a.txt'), bytes: 'new a' }, { file: f('b.txt'), bytes: 'new b' }])).toThrow(/^cannot write .*b\.txt: ENOSPC/);
    expect([fs.readFileSync(f('a.txt'), 'utf8'), fs.readFileSync(f('b.txt'), 'utf8')]).toEqual(['old a', 'old b']);
    jest.restoreAllMocks();
    writeFilesAtomic([{ file: f('a.txt'), bytes: 'new a' }, { file: f('b.txt'), bytes: 'new b' }]);
    expect([fs.readFileSync(f('a.txt'), 'utf8'), fs.readFileSync(f('b.txt'), 'utf8')]).toEqual(['new a', 'new b']);
  });
});

describe('temporary files of killed processes', () => {
  it('are removed by the next write of their file; those of live processes and of other files stay', () => {
    const dead = `.c.txt.tmp-${deadPid()}-0123456789ab`;
    const live = `.c.txt.tmp-1-0123456789ab`;
    const other = `.d.txt.tmp-${deadPid()}-0123456789ab`;
    for (const n of [dead, live, other]) fs.writeFileSync(f(n), 'left by a write');
    writeFilesAtomic([{ file: f('c.txt'), bytes: 'c' }]);
    expect(fs.existsSync(f(dead))).toBe(false);
    expect(fs.existsSync(f(live))).toBe(true);
    expect(fs.existsSync(f(other))).toBe(true);
    expect(fs.readFileSync(f('c.txt'), 'utf8')).toBe('c');
  });
});

describe('tune on one folder', () => {
  const scenes = ['synthetic:seed=2,width=32,height=24,ndisp=6'];
  const o = { scenes, params: ['lambda=6,18'], backend: 'bk' as const, workers: 1, baseline: false };

  it('two at once: one runs, the other is refused in one line naming the folder and the owner; each trial is logged once', async () => {
    const out = f('tune-twice');
    const runs = await Promise.allSettled([tune({ ...o, out, resume: true }), tune({ ...o, out, resume: true })]);
    const refused = runs.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused).toHaveLength(1);
    expect(String(refused[0].reason.message)).toMatch(new RegExp(`^--out: .*tune-twice is in use by another tune \\(pid ${process.pid} on `));
    expect(readTrialLog(path.join(out, TUNE_FILES.jsonl), false)).toHaveLength(2);
    expect(fs.existsSync(path.join(out, LOCK_NAME))).toBe(false);
  });
  it('a lock whose owner has died is taken over', async () => {
    const out = f('tune-dead-owner');
    fs.mkdirSync(out);
    fs.writeFileSync(path.join(out, LOCK_NAME), JSON.stringify({ pid: deadPid(), host: os.hostname(), since: '2026-01-01T00:00:00Z' }));
    const r = await tune({ ...o, out });
    expect(r.ran).toBe(2);
    expect(fs.existsSync(path.join(out, LOCK_NAME))).toBe(false);
  });
  it('a full disk: the error names trials.jsonl, and the log keeps no part of a line', async () => {
    const out = f('tune-full');
    fs.mkdirSync(out);
    const open = fs.openSync as unknown as OpenFn;
    let logFd = -1;
    jest.spyOn(nodeFs, 'openSync').mockImplementation(((p: fs.PathLike, flags: string, mode?: number) => {
      const fd = open(p, flags, mode);
      if (String(p).endsWith(TUNE_FILES.jsonl)) logFd = fd;
      return fd;
    }) as unknown as typeof fs.openSync);
    const write = fs.writeSync as unknown as WriteFn;
    let writes = 0;
    jest.spyOn(nodeFs, 'writeSync').mockImplementation(((fd: number, buf: Uint8Array, off: number, len: number) => {
      // The first trial's line goes in; the second's half, then the disk is full.
      if (fd !== logFd || ++writes <= 1) return write(fd, buf, off, len);
      if (writes === 2) return write(fd, buf, off, Math.floor(len / 2));
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    }) as unknown as typeof fs.writeSync);
    await expect(tune({ ...o, out })).rejects.toThrow(/cannot write .*tune-full\/trials\.jsonl: ENOSPC/);
    jest.restoreAllMocks();
    const text = fs.readFileSync(path.join(out, TUNE_FILES.jsonl), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(text.split('\n').filter(Boolean)).toHaveLength(1);
    expect(fs.existsSync(path.join(out, LOCK_NAME))).toBe(false);
  });
});
