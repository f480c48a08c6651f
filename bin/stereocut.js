#!/usr/bin/env node
// Thin launcher: the command line lives in dist/stereo/cli.js (built by `npm run build`, run on install by `prepare`).
require('../dist/stereo/cli.js').main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => { process.stderr.write(`stereocut: ${err && err.message ? err.message : String(err)}\n`); process.exitCode = 1; },
);
