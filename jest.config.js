/**
 * Tests are TypeScript, transpiled file by file by ts-jest (isolatedModules: no type checks here, which would
 * type-check every file again in each jest worker); test/typecheck.test.ts type-checks the tests and the sources
 * together with `tsc -p test/tsconfig.json`, and `npm run build` the sources with the build's own options.
 */
const os = require('os');
const path = require('path');
// Runs on WebGPU (the browser tests) would remember their pipelines in the user's cache folder (gpu/runtime/gpujs/pipelineStore.ts): tests keep none unless they name a file.
process.env.STEREOCUT_PIPELINE_CACHE ??= 'off';
// Likewise the launcher's code cache (app/codeCache.ts), for tests that start `stereocut` processes.
process.env.STEREOCUT_CODE_CACHE ??= 'off';
// Worker threads and `stereocut` processes started from the sources transpile them (data/sourceLoader.ts): each keeps
// the JavaScript it made here for the next, which then loads no compiler.
process.env.STEREOCUT_TS_CACHE ??= path.join(os.tmpdir(), `stereocut-ts-${typeof process.getuid === 'function' ? process.getuid() : 'user'}`);
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: { ...require('./tsconfig.json').compilerOptions, noUnusedLocals: false, isolatedModules: true } }] },
  testTimeout: 120000,
  // Both cores of a two-core machine (jest's default leaves one idle there): the test files are independent and mostly single-threaded.
  maxWorkers: 2,
  // Until jest has timed the files (a fresh clone), the longest start first, so that none runs alone at the end.
  testSequencer: '<rootDir>/test/support/longFilesFirst.js',
  // A worker is replaced (killed at once, between two test files) once its heap holds more than this. Without a bound a
  // worker's heap grows to 0.7–1 GB over its ~35 files, and Node's own tear-down of a heap that size at a worker's exit
  // (unmapping it page by page) outlasts the 500 ms jest waits after its last file: jest then kills the worker and warns
  // "A worker process has failed to exit gracefully". Nothing keeps the worker alive (no handle, timer or thread is left
  // when jest asks it to stop, and it reaches its 'exit' event within milliseconds); its exit is only slow.
  workerIdleMemoryLimit: '300MB',
};
