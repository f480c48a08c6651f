/**
 * A code cache for the command line's modules: V8's bytecode of each module,
 * kept on disk between processes, so that a fresh `stereocut` process
 * neither parses its modules nor compiles the functions an earlier process
 * ran. A fresh process runs almost all of its JavaScript once (loading,
 * kernel tracing, plan compiles, the first run's calls), so first calls,
 * each parsing and compiling its function, are a good part of its time.
 *
 * Node 22.1 and later do this themselves (module.enableCompileCache), and
 * are asked to. On older Node, CommonJS modules are compiled here as Node's
 * loader compiles them (the same wrapper, `require` and arguments), through
 * vm.Script with the cached data of an earlier process; a module whose
 * cache is missing or that V8 refuses (another Node or V8 flags) is
 * compiled as usual, and its cache is written when the process exits, so
 * it holds the functions this process compiled.
 *
 * Only the launcher (bin/stereocut.js) enables it; the library never does.
 * The folder: STEREOCUT_CODE_CACHE names it (`off` keeps none), else
 * $XDG_CACHE_HOME/stereocut/code-<node version>-<arch> (~/.cache when
 * unset); it is made (and checked writable) when the cache is enabled, and a
 * folder that cannot be (a file in the way, read-only, procfs) turns the
 * cache off for the process. An entry's name is the SHA-256 of the module's
 * path and contents, so an edited or replaced module never meets an old
 * entry (V8 checks only the source's length against its cached data, so a
 * weaker key, such as a CRC32 that an edit can be made to keep, would run
 * the old bytecode); a missing, unreadable or corrupt entry changes nothing
 * but the time. The folder keeps at most MAX_ENTRIES entries, the oldest
 * removed first.
 */
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vm from 'vm';
import { makeFolder } from '../data/folders';

/** The variable naming the folder (or `off`). */
export const CODE_CACHE_VARIABLE = 'STEREOCUT_CODE_CACHE';
/** Entries kept; beyond it, the oldest (by modification time) are removed when new ones are written. */
export const MAX_ENTRIES = 2000;

/** The folder of the cache, or null when `off`. */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string | null {
  const named = env[CODE_CACHE_VARIABLE];
  if (named === 'off') return null;
  if (named) return path.resolve(named);
  const base = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'stereocut', `code-${process.version}-${process.arch}`);
}

/** What this process's cache did (the own form only): modules compiled from cached data, and modules compiled afresh (no entry, or refused). */
export const codeCacheStats = { hits: 0, misses: 0, rejected: 0, written: 0 };

/** The parts of Node's `module` this uses (a parameter, so that tests can give their own). */
export interface ModuleApi {
  enableCompileCache?: (dir: string) => unknown;
  wrap(source: string): string;
  prototype: { _compile(content: string, filename: string): unknown };
  _resolveFilename(request: string, parent: unknown, isMain: boolean, options?: unknown): string;
  _resolveLookupPaths?(request: string, parent: unknown): string[] | null;
  _extensions: unknown;
  _cache: unknown;
}

interface CommonJsModule {
  exports: unknown;
  require(id: string): unknown;
}

let enabled = false;

/**
 * Compiles modules loaded from now on with the cache in `dir` (see above).
 * Returns which form is on: 'node' (Node's own), 'own', or 'off' (no
 * folder, or enabled before). Never throws: a cache that cannot be set up
 * is simply not used.
 */
export function enableCodeCache(dir: string | null = codeCacheDir(), moduleApi: ModuleApi = require('module') as ModuleApi): 'node' | 'own' | 'off' {
  if (!dir || enabled) return 'off';
  enabled = true;
  try {
    makeFolder(dir);
    fs.accessSync(dir, fs.constants.W_OK);
  } catch {
    return 'off';
  }
  if (typeof moduleApi.enableCompileCache === 'function') {
    try {
      moduleApi.enableCompileCache(dir);
      return 'node';
    } catch {
      return 'off';
    }
  }
  const compile = moduleApi.prototype._compile;
  const fresh: Array<{ script: vm.Script; file: string }> = [];
  moduleApi.prototype._compile = function (this: CommonJsModule, content: string, filename: string): unknown {
    // A module with a dynamic import() needs the loader's own compile (its import hook), as does one of no file.
    if (!path.isAbsolute(filename) || content.includes('import(')) return compile.call(this, content, filename);
    const file = path.join(dir, entryName(filename, content));
    let cachedData: Buffer | undefined;
    try {
      cachedData = fs.readFileSync(file);
    } catch {
      cachedData = undefined;
    }
    // Node's loader drops a leading #! line the same way (it keeps the line count).
    const source = content.startsWith('#!') ? `//${content.slice(2)}` : content;
    const script = new vm.Script(moduleApi.wrap(source), { filename, cachedData });
    if (cachedData && !script.cachedDataRejected) codeCacheStats.hits++;
    else {
      if (cachedData) codeCacheStats.rejected++;
      else codeCacheStats.misses++;
      fresh.push({ script, file });
    }
    const fn = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return fn.call(this.exports, this.exports, requireOf(this, moduleApi), this, filename, path.dirname(filename));
  };
  // The entries are written last, so that they hold every function the process compiled.
  process.once('exit', () => writeEntries(dir, fresh));
  return 'own';
}

/** An entry's file name: the SHA-256 of the module's path and contents (a NUL byte cannot occur in a path, so no two pairs give one input). */
export function entryName(filename: string, content: string): string {
  return createHash('sha256').update(filename).update('\0').update(content).digest('hex');
}

/** The `require` Node's loader gives a module (lib/internal/modules/helpers.js, makeRequireFunction). */
function requireOf(mod: CommonJsModule, moduleApi: ModuleApi): NodeJS.Require {
  const require = ((id: string) => mod.require(id)) as NodeJS.Require;
  const resolve = ((request: string, options?: unknown) => moduleApi._resolveFilename(request, mod, false, options)) as NodeJS.RequireResolve;
  resolve.paths = (request: string) => moduleApi._resolveLookupPaths?.(request, mod) ?? null;
  require.resolve = resolve;
  require.main = process.mainModule;
  require.extensions = moduleApi._extensions as NodeJS.Require['extensions'];
  require.cache = moduleApi._cache as NodeJS.Require['cache'];
  return require;
}

/** Writes the entries of `fresh` (each whole or not at all), then trims the folder to MAX_ENTRIES. Failures are ignored: the cache only saves time. */
function writeEntries(dir: string, fresh: Array<{ script: vm.Script; file: string }>): void {
  if (fresh.length === 0) return;
  try {
    makeFolder(dir);
  } catch {
    return;
  }
  for (const { script, file } of fresh) {
    const tmp = `${file}.tmp-${process.pid}`;
    try {
      fs.writeFileSync(tmp, script.createCachedData());
      fs.renameSync(tmp, file);
      codeCacheStats.written++;
    } catch {
      try { fs.unlinkSync(tmp); } catch { /* never made */ }
    }
  }
  trim(dir);
}

/** Removes the oldest entries beyond MAX_ENTRIES. */
function trim(dir: string): void {
  try {
    const names = fs.readdirSync(dir);
    if (names.length <= MAX_ENTRIES) return;
    const aged = names.map((n) => {
      try {
        return { n, t: fs.statSync(path.join(dir, n)).mtimeMs };
      } catch {
        return { n, t: 0 };
      }
    }).sort((a, b) => a.t - b.t);
    for (const { n } of aged.slice(0, names.length - MAX_ENTRIES)) {
      try { fs.unlinkSync(path.join(dir, n)); } catch { /* gone already */ }
    }
  } catch {
    /* an unreadable folder: nothing to trim */
  }
}
