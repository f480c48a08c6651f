import { spawnSync } from 'child_process';
import * as path from 'path';
import { InputError } from '../data/errors';
import { movableBuffers } from '../data/poolTask';
import { TS_REQUIRE_HOOK } from '../data/sourceLoader';
import { ThreadLost, ThreadPool } from '../data/threadPool';
import type { PoolTestTask } from './support/poolTestThread';

/*
 * The project's thread pool (data/threadPool.ts), its threads loading the
 * TypeScript sources through the require hook: a task's own failure comes
 * back as the error the work threw (class and message), a lost thread as
 * ThreadLost, and a module that does not load ends the pool instead of
 * leaving its tasks waiting.
 */

const MODULE = path.join(__dirname, 'support', 'poolTestThread');

test('values come back (arrays given to move are moved, not copied); a task\'s own failure is the error it threw, class and message', async () => {
  const pool = new ThreadPool(MODULE, { threads: 2, start: 'now' });
  try {
    const values = Float32Array.from([1, 2.5, -3]);
    const run = (t: PoolTestTask): Promise<Float32Array> => pool.run<Float32Array>(t);
    expect(Array.from(await run({ kind: 'double', values }))).toEqual([2, 5, -6]);
    const moved = values.slice();
    expect(Array.from(await pool.run<Float32Array>({ kind: 'double', values: moved }, [moved.buffer]))).toEqual([2, 5, -6]);
    expect(moved.length).toBe(0);
    const input = await run({ kind: 'inputError', message: 'scene folder x: no left image' }).catch((e: unknown) => e);
    expect(input).toBeInstanceOf(InputError);
    expect((input as Error).message).toBe('scene folder x: no left image');
    const other = await run({ kind: 'error', message: 'something else' }).catch((e: unknown) => e);
    expect([other instanceof InputError, other instanceof ThreadLost, (other as Error).message]).toEqual([false, false, 'something else']);
    // The pool goes on after its tasks' failures.
    expect(Array.from(await run({ kind: 'double', values }))).toEqual([2, 5, -6]);
  } finally {
    await pool.close();
  }
});

test('a thread that exits loses its task (ThreadLost, with the code) and is replaced', async () => {
  const pool = new ThreadPool(MODULE, { threads: 1, start: 'asNeeded', keepIdle: true });
  try {
    const lost = await pool.run({ kind: 'exit', code: 3 }).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(ThreadLost);
    expect((lost as ThreadLost).why).toBe('exited with code 3');
    expect(Array.from(await pool.run<Float32Array>({ kind: 'double', values: Float32Array.of(4) }))).toEqual([8]);
  } finally {
    await pool.close();
  }
});

test('a module that does not load ends the pool: every task is lost, none waits', async () => {
  for (const start of ['now', 'asNeeded'] as const) {
    const pool = new ThreadPool(path.join(__dirname, 'support', 'no-such-module'), { threads: 2, start });
    try {
      const outcomes = await Promise.all([0, 1, 2].map(() => pool.run({ kind: 'double', values: Float32Array.of(1) }).then(() => 'value', (e: unknown) => e instanceof ThreadLost)));
      expect([start, outcomes]).toEqual([start, [true, true, true]]);
    } finally {
      await pool.close();
    }
  }
});

test('after close(), tasks are lost as closed', async () => {
  const pool = new ThreadPool(MODULE, { threads: 1, start: 'now' });
  await pool.close();
  expect(pool.closed).toBe(true);
  await expect(pool.run({ kind: 'double', values: Float32Array.of(1) })).rejects.toThrow(new ThreadLost('closed'));
});

test('only whole buffers are moved, each once (a view of part of one shares it, Node\'s pooled buffers among others)', () => {
  const whole = new Float32Array(4);
  const part = new Float32Array(new ArrayBuffer(64), 16, 4);
  const pooled = Buffer.from('small');
  expect(movableBuffers([whole, whole, undefined, part, pooled, new Uint8Array(whole.buffer)])).toEqual([whole.buffer]);
});

test('a handler that moves arrays back readies its thread when it is made, before any task: the thread\'s first detached buffer is its own', () => {
  // V8 reports the first detach of a thread's buffer (it throws away the typed-array code compiled until then): with a
  // handler that moves arrays, that report comes when the handler is made; with one that moves none, never.
  const script = [
    `const { poolTask } = require(${JSON.stringify(path.join(__dirname, '..', 'data', 'poolTask'))});`,
    "poolTask((j) => j); console.log('copies made');",
    "poolTask((j) => j, (v) => [v]); console.log('moves made');",
  ].join('\n');
  const r = spawnSync(process.execPath, ['--trace-protector-invalidation', '--require', TS_REQUIRE_HOOK, '-e', script], { encoding: 'utf8' });
  expect(r.status).toBe(0);
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  expect(lines).toEqual(['copies made', 'Invalidating protector cell ArrayBufferDetaching', 'moves made']);
});
