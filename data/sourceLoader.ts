/**
 * Running worker threads and child processes from TypeScript sources.
 *
 * Compiled code (dist/) starts workers from their .js files. Under ts-jest,
 * or in a checkout that was never built, only the .ts files exist, and a
 * worker thread does not inherit jest's transform; these snippets register a
 * minimal require hook that transpiles .ts files with the TypeScript compiler
 * already in devDependencies (type checking stays with `tsc`).
 */

/** The variable naming a folder where the hook below keeps the JavaScript it made (tests set it; unset, nothing is kept). */
export const TS_CACHE_VARIABLE = 'STEREOCUT_TS_CACHE';

/**
 * JavaScript that makes `require('x.ts')` work in the process or thread it
 * runs in. The compiler is named by absolute path: eval'd code resolves
 * modules from the current folder, which need not be the project.
 *
 * Transpiling the sources costs a fresh process or thread seconds (loading
 * the compiler, then a program per file); with STEREOCUT_TS_CACHE naming a
 * folder, each file's output is kept there under the SHA-256 of the
 * compiler's version, the options, the file's path and its contents, and
 * the compiler is loaded only when a file misses. Entries are written to a
 * temporary name and renamed, so processes sharing the folder never read
 * half an entry; an entry that cannot be read or written changes nothing
 * but the time.
 */
export function tsRequireHook(): string {
  const tsPath = require.resolve('typescript');
  return `
(() => {
  const Module = require('module');
  if (Module._extensions['.ts']) return;
  const fs = require('fs');
  const path = require('path');
  const crypto = require('crypto');
  const tsPath = ${JSON.stringify(tsPath)};
  let ts;
  const compiler = () => (ts ??= require(tsPath));
  const options = { module: 1 /* CommonJS */, target: 9 /* ES2022 */, esModuleInterop: true, sourceMap: false };
  const cacheDir = process.env[${JSON.stringify(TS_CACHE_VARIABLE)}] || null;
  let version = null;
  const compilerVersion = () => (version ??= JSON.parse(fs.readFileSync(path.join(path.dirname(tsPath), '..', 'package.json'), 'utf8')).version);
  Module._extensions['.ts'] = (module, filename) => {
    const source = fs.readFileSync(filename, 'utf8');
    let entry = null;
    if (cacheDir) {
      const key = crypto.createHash('sha256').update(JSON.stringify([compilerVersion(), options, filename, source])).digest('hex');
      entry = path.join(cacheDir, key + '.js');
      let kept = null;
      try { kept = fs.readFileSync(entry, 'utf8'); } catch (e) { if (e.code !== 'ENOENT') entry = null; }
      if (kept !== null) return module._compile(kept, filename);
    }
    const out = compiler().transpileModule(source, { fileName: filename, compilerOptions: options }).outputText;
    if (entry) {
      try {
        fs.mkdirSync(cacheDir, { recursive: true });
        const tmp = entry + '.' + process.pid + '.' + Math.random().toString(36).slice(2) + '.tmp';
        fs.writeFileSync(tmp, out);
        fs.renameSync(tmp, entry);
      } catch { /* kept nowhere: the next process transpiles again */ }
    }
    module._compile(out, filename);
  };
})();
`;
}

/** Whether this module itself runs from a .ts file (ts-jest or the hook above) rather than from dist/. */
export function runningFromSource(): boolean {
  return __filename.endsWith('.ts');
}

/**
 * Worker source for a module path without extension: the compiled .js when
 * this code is compiled, else a bootstrap that loads the .ts through the hook.
 */
export function workerEntry(modulePathNoExt: string): { code: string; eval: boolean } {
  if (!runningFromSource()) return { code: `${modulePathNoExt}.js`, eval: false };
  return { code: `${tsRequireHook()}\nrequire(${JSON.stringify(`${modulePathNoExt}.ts`)});`, eval: true };
}
