#!/usr/bin/env node
// Thin launcher: the command line lives in dist/app/cli.js (built by `npm run build`, run on install by `prepare`).
// It exits explicitly once stdout and stderr are flushed: the WebGPU runtime (Dawn) keeps
// native handles open after the work is done, which would otherwise hold the process alive.
// Modules are compiled with V8's code cache from earlier processes (dist/app/codeCache.js): enabled before anything else loads.
require('../dist/app/codeCache.js').enableCodeCache();
const finish = (code) => {
  process.exitCode = code;
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
};
require('../dist/app/cli.js').main(process.argv.slice(2)).then(finish, (err) => {
  process.stderr.write(`stereocut: ${err && err.message ? err.message : String(err)}\n`);
  finish(1);
});
