/** Tests are TypeScript, compiled on the fly by ts-jest (type checks stay on: `npm run build` checks the sources). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: { ...require('./tsconfig.json').compilerOptions, noUnusedLocals: false }, diagnostics: { warnOnly: false } }] },
  testTimeout: 120000,
  // Both cores of a two-core machine (jest's default leaves one idle there): the test files are independent and mostly single-threaded.
  maxWorkers: 2,
};
