import { spawnSync } from 'child_process';
import * as path from 'path';

/**
 * ts-jest only transpiles (jest.config.js): the type check of the tests, their
 * support files and the sources they import is this one `tsc` run over
 * test/tsconfig.json (the build's options, unused locals allowed in tests).
 */
test('tsc -p test/tsconfig.json: the tests and the sources type-check', () => {
  const root = path.resolve(__dirname, '..');
  const r = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join('test', 'tsconfig.json'), '--pretty', 'false'], { cwd: root, encoding: 'utf8' });
  expect(r.error).toBeUndefined();
  expect(r.stdout + r.stderr).toBe('');
  expect(r.status).toBe(0);
}, 300_000);
