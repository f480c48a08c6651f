import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CODE_CACHE_VARIABLE, codeCacheDir, enableCodeCache, entryName, type ModuleApi } from '../app/codeCache';

/*
 * The launcher's code cache (app/codeCache.ts). Each case runs fresh
 * processes (the cache is per process and hooks the module loader), on the
 * built code in dist/, over a small tree of modules written here that uses
 * what Node's loader hands a CommonJS module. A module must behave the same
 * with the cache off, when its entry is written, and when it is read, and a
 * changed module or a corrupt entry must only cost the time.
 */

const root = path.join(__dirname, '..');
const built = path.join(root, 'dist', 'app', 'codeCache.js');
let tmp: string;
beforeAll(() => {
  if (!fs.existsSync(built)) throw new Error('dist/ is missing: run npm run build (npm ci does it through the prepare script)');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-code-cache-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A module tree in `dir`: main.js requires lib.js and reports what its CommonJS surroundings look like, and the stats. */
function writeTree(dir: string, libValue = 41): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'lib.js'), `#!/usr/bin/env node
'use strict';
exports.value = ${libValue};
exports.strict = (function () { return this === undefined; })();
exports.thisIsExports = this === exports;
exports.where = [path(__filename), path(__dirname)];
function path(p) { return require('path').basename(p); }
exports.fails = () => { throw new Error('from lib'); };
`);
  fs.writeFileSync(path.join(dir, 'main.js'), `
const lib = require('./lib');
const again = require('./lib.js');
let line = null;
try { lib.fails(); } catch (e) { line = /lib\\.js:(\\d+)/.exec(e.stack)[1]; }
module.exports = {
  value: lib.value + 1, same: lib === again, strict: lib.strict, thisIsExports: lib.thisIsExports, where: lib.where, line,
  resolved: require('path').basename(require.resolve('./lib')), cached: require.resolve('./lib') in require.cache,
  paths: Array.isArray(require.resolve.paths('x')), mainIsSet: require.main === process.mainModule,
};
`);
}

/** Runs main.js of `dir` in a fresh process with the cache in `cacheDir` (null: off); returns its report and the cache's stats. */
function run(dir: string, cacheDir: string | null): { out: Record<string, unknown>; form: string; stats: Record<string, number> } {
  const script = `
    const c = require(${JSON.stringify(built)});
    const form = c.enableCodeCache(${JSON.stringify(cacheDir)});
    const out = require(${JSON.stringify(path.join(dir, 'main.js'))});
    process.on('exit', () => process.stdout.write(JSON.stringify({ out, form, stats: c.codeCacheStats })));
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { out: Record<string, unknown>; form: string; stats: Record<string, number> };
}

const expected = {
  value: 42, same: true, strict: true, thisIsExports: true, line: '8',
  resolved: 'lib.js', cached: true, paths: true, mainIsSet: true,
};

test('a module behaves the same with the cache off, while its entry is written, and when it is read', () => {
  const dir = path.join(tmp, 'tree');
  writeTree(dir);
  const cache = path.join(tmp, 'cache-a');
  const off = run(dir, null);
  const want = { ...expected, where: ['lib.js', 'tree'] };
  expect(off.out).toEqual(want);
  expect(off.form).toBe('off');
  const first = run(dir, cache);
  expect(first.out).toEqual(want);
  expect(first.form).toBe('own');
  // The two modules of the tree, and the driver's own: nothing read yet, all written at exit.
  expect(first.stats.hits).toBe(0);
  expect(first.stats.written).toBe(first.stats.misses);
  expect(first.stats.misses).toBeGreaterThanOrEqual(2);
  const second = run(dir, cache);
  expect(second.out).toEqual(want);
  expect([second.stats.hits, second.stats.misses, second.stats.rejected, second.stats.written]).toEqual([first.stats.misses, 0, 0, 0]);
});

test('an edited module gets an entry of its own (never an old one); a corrupt entry is refused, replaced, and costs nothing else', () => {
  const dir = path.join(tmp, 'edited');
  writeTree(dir);
  const cache = path.join(tmp, 'cache-b');
  run(dir, cache);
  const before = new Set(fs.readdirSync(cache));
  // The same length, other contents: only the checksum of the contents tells them apart.
  writeTree(dir, 51);
  const edited = run(dir, cache);
  expect(edited.out.value).toBe(52);
  expect(edited.stats.misses).toBe(1);
  const added = fs.readdirSync(cache).filter((n) => !before.has(n));
  expect(added.length).toBe(1);
  // Corrupt every entry: each is refused, the modules run as written, and the entries are rewritten.
  for (const n of fs.readdirSync(cache)) fs.writeFileSync(path.join(cache, n), Buffer.alloc(64, 7));
  const corrupt = run(dir, cache);
  expect(corrupt.out.value).toBe(52);
  expect(corrupt.stats.hits).toBe(0);
  expect(corrupt.stats.rejected).toBeGreaterThanOrEqual(2);
  expect(corrupt.stats.written).toBe(corrupt.stats.rejected + corrupt.stats.misses);
  expect(run(dir, cache).stats.rejected).toBe(0);
});

test('a folder that cannot be made: the modules run, nothing is written', () => {
  const dir = path.join(tmp, 'unwritable');
  writeTree(dir);
  const blocker = path.join(tmp, 'a-file');
  fs.writeFileSync(blocker, 'not a folder');
  const r = run(dir, path.join(blocker, 'cache'));
  expect(r.out.value).toBe(42);
  expect(r.stats.written).toBe(0);
});

test('the folder: STEREOCUT_CODE_CACHE names it or turns it off, else per Node version under the user cache folder', () => {
  expect(codeCacheDir({ [CODE_CACHE_VARIABLE]: 'off' })).toBeNull();
  expect(codeCacheDir({ [CODE_CACHE_VARIABLE]: 'some/where' })).toBe(path.resolve('some/where'));
  expect(codeCacheDir({ XDG_CACHE_HOME: '/x/cache' })).toBe(path.join('/x/cache', 'stereocut', `code-${process.version}-${process.arch}`));
  expect(codeCacheDir({})).toBe(path.join(os.homedir(), '.cache', 'stereocut', `code-${process.version}-${process.arch}`));
});

test("where Node has its own compile cache (22.1 on), that one is asked for, with the folder", () => {
  const asked: string[] = [];
  const fake = { enableCompileCache: (d: string) => { asked.push(d); } } as unknown as ModuleApi;
  // In this process the own form is not installed: the fake takes the call, once the folder is made.
  const dir = path.join(tmp, 'node-own', 'cache');
  expect(enableCodeCache(dir, fake)).toBe('node');
  expect(asked).toEqual([dir]);
  expect(fs.statSync(dir).isDirectory()).toBe(true);
  // Once per process.
  expect(enableCodeCache('/other', fake)).toBe('off');
});

test('the launcher with the cache: the same output with the entries written and then read, as with it off', () => {
  const cache = path.join(tmp, 'cache-cli');
  const bin = path.join(root, 'bin', 'stereocut.js');
  const demo = (cacheDir: string, out: string) => spawnSync(process.execPath, [bin, 'demo', '--backend', 'bk', '--width', '40', '--height', '32', '--out-dir', path.join(tmp, out), '--json'], { encoding: 'utf8', env: { ...process.env, [CODE_CACHE_VARIABLE]: cacheDir } });
  const off = demo('off', 'demo-off');
  const a = demo(cache, 'demo-a');
  const b = demo(cache, 'demo-b');
  for (const r of [off, a, b]) expect(r.status).toBe(0);
  const energy = (s: string) => (JSON.parse(s) as { finalEnergy: unknown }).finalEnergy;
  expect(energy(a.stdout)).toEqual(energy(off.stdout));
  expect(energy(b.stdout)).toEqual(energy(off.stdout));
  expect(fs.readdirSync(cache).length).toBeGreaterThan(50);
});

/** CRC-32 (IEEE, as zlib's), written out: the key the cache must not rely on. */
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * `text` with the characters of its run of 16 backquotes changed (to
 * backquote or a..o, low 4 bits only) so that its CRC-32 equals `target`:
 * for inputs of one length CRC-32 is affine over GF(2), so the 64 free bits
 * are solved for by Gaussian elimination.
 */
function forgeCrc(text: string, target: number): string {
  const at = text.indexOf('`'.repeat(16));
  if (at < 0) throw new Error('no run of 16 backquotes to forge in');
  const base = Buffer.from(text, 'latin1');
  const c0 = crc32(base);
  const basis: Array<{ v: number; combo: bigint } | undefined> = new Array(32);
  for (let i = 0; i < 64; i++) {
    const b = Buffer.from(base);
    b[at + (i >> 2)] ^= 1 << (i & 3);
    let v = (crc32(b) ^ c0) >>> 0;
    let combo = 1n << BigInt(i);
    for (let bit = 31; bit >= 0 && v !== 0; bit--) {
      if (!((v >>> bit) & 1)) continue;
      const row = basis[bit];
      if (!row) { basis[bit] = { v, combo }; break; }
      v = (v ^ row.v) >>> 0;
      combo ^= row.combo;
    }
  }
  let t = (target ^ c0) >>> 0;
  let flips = 0n;
  for (let bit = 31; bit >= 0; bit--) {
    if (!((t >>> bit) & 1)) continue;
    const row = basis[bit];
    if (!row) throw new Error('the free bits do not span CRC-32');
    t = (t ^ row.v) >>> 0;
    flips ^= row.combo;
  }
  const out = Buffer.from(base);
  for (let i = 0; i < 64; i++) if ((flips >> BigInt(i)) & 1n) out[at + (i >> 2)] ^= 1 << (i & 3);
  return out.toString('latin1');
}

test('a module edited to the same length and CRC-32 runs as edited: entries are keyed by SHA-256 of path and contents', () => {
  const dir = path.join(tmp, 'crc');
  fs.mkdirSync(dir, { recursive: true });
  const lib = path.join(dir, 'lib.js');
  const before = `exports.value = 41; // ${'`'.repeat(16)}\n`;
  const after = forgeCrc(`exports.value = 97; // ${'`'.repeat(16)}\n`, crc32(Buffer.from(before, 'latin1')));
  // The two sources collide under the old key (CRC-32 and length of the path and of the contents).
  expect(after.length).toBe(before.length);
  expect(crc32(Buffer.from(after, 'latin1'))).toBe(crc32(Buffer.from(before, 'latin1')));
  expect(after).not.toBe(before);
  expect(entryName(lib, after)).not.toBe(entryName(lib, before));
  expect(entryName(lib, before)).toMatch(/^[0-9a-f]{64}$/);
  fs.writeFileSync(path.join(dir, 'main.js'), "module.exports = { value: require('./lib').value + 1 };\n");
  const cache = path.join(tmp, 'cache-crc');
  fs.writeFileSync(lib, before, 'latin1');
  expect(run(dir, cache).out.value).toBe(42);
  expect(run(dir, cache).stats.hits).toBeGreaterThanOrEqual(2);
  fs.writeFileSync(lib, after, 'latin1');
  const edited = run(dir, cache);
  expect(edited.out.value).toBe(98);
  expect(edited.stats.misses).toBe(1);
});

const procfs = fs.existsSync('/proc/self/status') ? test : test.skip;

procfs('a cache folder that cannot be made (procfs, a file in the way) is skipped: every command ends, --version included', () => {
  const bin = path.join(root, 'bin', 'stereocut.js');
  const blocker = path.join(tmp, 'in-the-way');
  fs.writeFileSync(blocker, 'a file');
  const base = { ...process.env };
  delete base[CODE_CACHE_VARIABLE];
  delete base.XDG_CACHE_HOME;
  const envs: Record<string, NodeJS.ProcessEnv> = {
    'STEREOCUT_CODE_CACHE=/proc/cc': { ...base, [CODE_CACHE_VARIABLE]: '/proc/cc' },
    'XDG_CACHE_HOME=/proc/self': { ...base, XDG_CACHE_HOME: '/proc/self' },
    'HOME=/proc': { ...base, HOME: '/proc' },
    'a file in the way': { ...base, [CODE_CACHE_VARIABLE]: path.join(blocker, 'cache') },
  };
  for (const [name, env] of Object.entries(envs)) {
    for (const args of [['--version'], ['demo', '--backend', 'bk', '--width', '40', '--height', '32', '-q', '--out-dir', path.join(tmp, `demo-${Object.keys(envs).indexOf(name)}`)]]) {
      const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env, timeout: 30000 });
      expect({ name, args: args[0], status: r.status, signal: r.signal }).toEqual({ name, args: args[0], status: 0, signal: null });
    }
  }
  expect(fs.readFileSync(blocker, 'utf8')).toBe('a file');
  // An output folder there is refused before the work, in one line, rather than made (Node 20's recursive mkdir never returns on procfs).
  const out = spawnSync(process.execPath, [bin, 'demo', '--backend', 'bk', '--width', '40', '--height', '32', '--out-dir', '/proc/stereocut-out'], { encoding: 'utf8', env: { ...base, [CODE_CACHE_VARIABLE]: 'off' }, timeout: 30000 });
  expect({ status: out.status, stdout: out.stdout, stderr: out.stderr }).toEqual({
    status: 1, stdout: '', stderr: 'stereocut: --out-dir: cannot make folder /proc/stereocut-out (for /proc/stereocut-out): ENOENT\n',
  });
}, 240000);
