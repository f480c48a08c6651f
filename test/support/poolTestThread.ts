/** A pool thread for test/data-thread-pool.test.ts: each task says what to do. */
import { InputError } from '../../data/errors';
import { poolTask } from '../../data/poolTask';

export type PoolTestTask =
  | { kind: 'double'; values: Float32Array }
  | { kind: 'inputError' | 'error'; message: string }
  | { kind: 'exit'; code: number };

export default poolTask(async (t: PoolTestTask): Promise<Float32Array> => {
  switch (t.kind) {
    case 'double':
      return t.values.map((v) => 2 * v);
    case 'inputError':
      throw new InputError(t.message);
    case 'error':
      throw new Error(t.message);
    case 'exit':
      process.exit(t.code);
  }
}, (values) => [values]);
