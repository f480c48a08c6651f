/** Tests are TypeScript, compiled on the fly by ts-jest (type checks stay on: `npm run build` checks the sources). */
// Runs on WebGPU (the browser tests) would remember their pipelines in the user's cache folder (graphcut/gpujs/pipelineStore.ts): tests keep none unless they name a file.
process.env.STEREOCUT_PIPELINE_CACHE ??= 'off';
// Likewise the launcher's code cache (stereo/codeCache.ts), for tests that start `stereocut` processes.
process.env.STEREOCUT_CODE_CACHE ??= 'off';
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: { ...require('./tsconfig.json').compilerOptions, noUnusedLocals: false }, diagnostics: { warnOnly: false } }] },
  testTimeout: 120000,
  // Both cores of a two-core machine (jest's default leaves one idle there): the test files are independent and mostly single-threaded.
  maxWorkers: 2,
};
