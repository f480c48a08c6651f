/** Tests are TypeScript, compiled on the fly by ts-jest (type checks stay on: `npm run build` checks the sources). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: { ...require('./tsconfig.json').compilerOptions, noUnusedLocals: false }, diagnostics: { warnOnly: false } }] },
  testTimeout: 120000,
};
