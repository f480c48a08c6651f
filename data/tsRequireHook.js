/**
 * Makes `require('x.ts')` work in the process or thread that loads this file
 * (data/sourceLoader.ts): `node --require data/tsRequireHook.js`, a worker
 * thread's `execArgv`, or a plain require. It is JavaScript because it runs
 * before any TypeScript can; compiled code (dist/) never loads it.
 *
 * Each .ts file is transpiled alone with the TypeScript compiler of the
 * devDependencies (type checking stays with `tsc`). Transpiling costs a fresh
 * process or thread seconds (loading the compiler, then a program per file);
 * with STEREOCUT_TS_CACHE naming a folder (tests set it), each file's output
 * is kept there under the SHA-256 of the compiler's version, the options, the
 * file's path and its contents, and the compiler is loaded only when a file
 * misses. Entries are written to a temporary name and renamed, so processes
 * sharing the folder never read half an entry; an entry that cannot be read
 * or written changes nothing but the time.
 */
'use strict';
const Module = require('module');

if (!Module._extensions['.ts']) {
  const fs = require('fs');
  const path = require('path');
  const crypto = require('crypto');
  const tsPath = require.resolve('typescript');
  let ts;
  const compiler = () => (ts ??= require(tsPath));
  const options = { module: 1 /* CommonJS */, target: 9 /* ES2022 */, esModuleInterop: true, sourceMap: false };
  const cacheDir = process.env.STEREOCUT_TS_CACHE || null;
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
}
