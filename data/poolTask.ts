/**
 * The thread's side of a ThreadPool (threadPool.ts): a pool's module
 * exports, as its default, a handler made by poolTask.
 */
import { types } from 'util';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { InputError } from './errors';

/**
 * What a task answers: its value, or its own failure (the thread itself is
 * fine) as the message and whether it was its input's (an InputError), so
 * that the caller throws the error the work would have thrown there: the
 * same class and message.
 */
export type TaskOutcome<T> = { value: T } | { error: string; input: boolean };

/**
 * The buffers of `arrays` that can be moved rather than copied: each once,
 * and only one that its view covers whole (a view of part of a buffer shares
 * it, with Node's pooled small buffers among others, which cannot be moved).
 */
export function movableBuffers(arrays: Iterable<ArrayBufferView | undefined>): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const a of arrays) {
    // Not by instanceof: an array made in another realm (a vm context, jest's) has another ArrayBuffer.
    if (a && types.isArrayBuffer(a.buffer) && a.byteOffset === 0 && a.byteLength === a.buffer.byteLength) buffers.add(a.buffer);
  }
  return [...buffers];
}

/**
 * Readies this thread to move buffers: detaches one of its own. Until a
 * thread's first buffer is detached (moved to another thread), V8 compiles
 * its typed-array code on the promise that none ever is, and the first move
 * throws all of that code away, to be compiled again in the middle of the
 * work (a strip thread's first move comes at the end of a matcher's first
 * match, so its second ran cold). Detaching one buffer before any work
 * keeps the code that is compiled. Harmless to call again.
 */
function readyToMoveBuffers(): void {
  const buffer = new ArrayBuffer(1);
  structuredClone(buffer, { transfer: [buffer] });
}

/**
 * A pool's handler: runs `work` on the task and answers its outcome.
 * `arraysOf` names the arrays of a value that are moved to the calling
 * thread rather than copied (they are the caller's alone from then on).
 */
export function poolTask<J, T>(work: (job: J) => Promise<T> | T, arraysOf?: (value: T) => Iterable<ArrayBufferView | undefined>): (job: J) => Promise<unknown> {
  if (arraysOf) readyToMoveBuffers();
  return async (job) => {
    let value: T;
    try {
      value = await work(job);
    } catch (e) {
      const outcome: TaskOutcome<T> = { error: e instanceof Error ? e.message : String(e), input: e instanceof InputError };
      return outcome;
    }
    const outcome: TaskOutcome<T> = { value };
    const buffers = arraysOf ? movableBuffers(arraysOf(value)) : [];
    return buffers.length === 0 ? outcome : move({ [transferableSymbol]: buffers, [valueSymbol]: outcome });
  };
}
