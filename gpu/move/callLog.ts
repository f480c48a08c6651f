/**
 * What the device moves report: counters summed over a solver's life, and
 * one record per pipeline call (gpuBench saves them with each run: the
 * fixed cost of a call and the cost of a round, full or gated, are fitted
 * from them). The host-driven and the resident move loops fill both.
 */
import { initialBfs } from './moveSettings';

/** Counters for reports: what the device did, summed over the solver's life. */
export interface GpuMoveCounters {
  pipelineCalls: number;
  moves: number;
  redoneMoves: number;
  /** calls that continued a move from its read-back flows (resume) */
  resumedCalls: number;
  /** moves that started from the stored flows of their α's previous move (warmStart) */
  warmMoves: number;
  /** moves without stored flows of their own α that started from the last converged move's flows (borrowFlows) */
  borrowedMoves: number;
  /** failed checks whose BFS had not reached its fixed point (each doubled the BFS passes) */
  bfsShortfalls: number;
  plans: number;
  rounds: number;
  iterations: number;
  bfsPasses: number;
  /** calls after which the next plan was guessed (it was compiled), and calls whose plan was the guess */
  guessedCalls: number;
  guessHits: number;
  /** guesses whose passes were recorded ahead (WebGPU) */
  recordedAhead: number;
  /** resident moves submitted before the previous call's results were read, and those of them dropped (the previous move had not converged, or the next move changed) */
  lookAheadCalls: number;
  droppedCalls: number;
  /** auxiliary pipelines (device WTA, energy) this solver compiled; one taken from a kept program is not counted */
  auxPipelines: number;
  deviceMs: number;
  hostMs: number;
}

/** One pipeline call, for time models. */
export interface GpuCallRecord {
  /** rounds and BFS passes per global relabel of the plan */
  rounds: number;
  bfs: number;
  /** whether it continued a move from its read-back flows */
  resumed: boolean;
  /** whether its move started from stored flows (warmStart) */
  warm: boolean;
  /** whether it compiled its plan (the first call of a plan shape not in the cache) */
  compiled: boolean;
  /** failed convergence checks of its first move (rounds that ran in full, with the first check of a fresh move) */
  failedChecks: number;
  converged: boolean;
  /**
   * from the call to its results on the host; for a call submitted before
   * the previous call's results (resident moves), from those results on,
   * so that the calls' times add up to the time spent waiting on them
   */
  deviceMs: number;
  /** whether it was submitted before the previous call's results were read (resident moves; dropped ones are not recorded) */
  lookAhead: boolean;
  /**
   * from the call until the host had recorded and submitted the plan's
   * passes (argument copies and uploads, one compute pass encoded per
   * kernel call): the GPU does not start before. Taken at the first
   * setImmediate after the call, which runs once the microtasks that
   * encode the plan are done (a call that compiles its plan ends sooner;
   * one that ran whole within those microtasks, as a synchronous CPU
   * executor may, counts entirely).
   */
  submitMs: number;
}

/** A move's tally as the device leaves it ([4], reductionKernels.ts tallySource), read by name. */
export interface MoveTally {
  /** a move before this one in the call failed to converge, so this one was gated and left the labels alone */
  gated: boolean;
  /** convergence checks of this move that failed in the call (each call's first check precedes its rounds) */
  failedChecks: number;
  /** the latest check of this move passed */
  converged: boolean;
  /** a round's check of this move found the BFS short of its fixed point */
  bfsShort: boolean;
}

export function readTally(T: ArrayLike<number>): MoveTally {
  return { gated: T[0] > 0, failedChecks: T[1], converged: T[2] === 0, bfsShort: T[3] > 0 };
}

/** The pixels a call's move changed: the sum of its per-region counts, as read back (flat, or planes of rows). */
export function readChanged(counts: unknown): number {
  if (typeof counts === 'number') return counts;
  const a = counts as ArrayLike<unknown>;
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += readChanged(a[i]);
  return sum;
}

/**
 * The accounting of pipeline calls, one for both move loops (host-driven
 * and resident): each call's record, the call counters, and the work its
 * plan did.
 */
export class CallLog {
  readonly counters: GpuMoveCounters = {
    pipelineCalls: 0, moves: 0, redoneMoves: 0, resumedCalls: 0, warmMoves: 0, borrowedMoves: 0, bfsShortfalls: 0, plans: 0, rounds: 0, iterations: 0,
    bfsPasses: 0, guessedCalls: 0, guessHits: 0, recordedAhead: 0, lookAheadCalls: 0, droppedCalls: 0, auxPipelines: 0, deviceMs: 0, hostMs: 0,
  };
  /** Every pipeline call so far, in order. */
  readonly calls: GpuCallRecord[] = [];

  constructor(private readonly work: { iterationsPerRound: number; finalBfsFactor: number; initialBfsPasses: number }) {}

  /**
   * A call's results are on the host: its record, and the work of its
   * move: the plan's rounds, their checks (one more) and their global
   * relabels (the first one initialBfsPasses long at most, the last one
   * finalBfsFactor times longer).
   */
  called(record: GpuCallRecord): void {
    const c = this.counters;
    c.pipelineCalls++;
    if (record.resumed) c.resumedCalls++;
    if (record.lookAhead) c.lookAheadCalls++;
    c.deviceMs += record.deviceMs;
    this.calls.push(record);
    c.rounds += record.rounds + 1;
    c.iterations += record.rounds * this.work.iterationsPerRound;
    c.bfsPasses += (record.rounds - 1 + this.work.finalBfsFactor) * record.bfs + initialBfs(record.bfs, this.work.initialBfsPasses);
  }
}
