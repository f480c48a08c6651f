import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as os from 'os';
import * as path from 'path';

/**
 * ts-jest only transpiles (jest.config.js): the type check of the tests, their
 * support files and the sources they import is this one `tsc` run over
 * test/tsconfig.json (the build's options, unused locals allowed in tests).
 * It is incremental: tsc keeps what it learnt in a build-info file in the
 * temporary folder (one per checkout), and the next run checks again only the
 * files that changed and those that depend on them; the diagnostics of the
 * others are kept in that file and reported again.
 */
test('tsc -p test/tsconfig.json: the tests and the sources type-check', () => {
  const root = path.resolve(__dirname, '..');
  const user = typeof process.getuid === 'function' ? process.getuid() : 'user';
  const checkout = createHash('sha256').update(root).digest('hex').slice(0, 16);
  const buildInfo = path.join(os.tmpdir(), `stereocut-tsc-${user}-${checkout}.tsbuildinfo`);
  const r = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join('test', 'tsconfig.json'), '--pretty', 'false', '--incremental', '--tsBuildInfoFile', buildInfo], { cwd: root, encoding: 'utf8' });
  expect(r.error).toBeUndefined();
  expect(r.stdout + r.stderr).toBe('');
  expect(r.status).toBe(0);
}, 300_000);
