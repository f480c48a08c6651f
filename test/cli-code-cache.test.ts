import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CODE_CACHE_VARIABLE, codeCacheDir, enableCodeCache, type ModuleApi } from '../stereo/codeCache';

/*
 * The launcher's code cache (stereo/codeCache.ts). Each case runs fresh
 * processes (the cache is per process and hooks the module loader), on the
 * built code in dist/, over a small tree of modules written here that uses
 * what Node's loader hands a CommonJS module. A module must behave the same
 * with the cache off, when its entry is written, and when it is read, and a
 * changed module or a corrupt entry must only cost the time.
 */

const root = path.join(__dirname, '..');
const built = path.join(root, 'dist', 'stereo', 'codeCache.js');
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
  // In this process the own form is not installed: the fake takes the call.
  expect(enableCodeCache('/some/cache', fake)).toBe('node');
  expect(asked).toEqual(['/some/cache']);
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
