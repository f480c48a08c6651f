import { Input } from '../runtime/gpujs/gpuJs';
import { noteDeviceActive } from '../runtime/clockWarmup';
import { compiledExecutor, type BufferLike, type ReadResults } from '../runtime/gpujs/residentCalls';
import { liveExecutor, type FusedExecutor } from '../runtime/gpujs/onePassCalls';
import { readChanged, readTally, type CallLog, type GpuMoveCounters, type MoveTally } from './callLog';
import { planKey, type Plan } from './deviceProgram';
import { DeviceFlows } from './flowStores';
import type { ResolvedGpuMoveOptions } from './moveSettings';
import type { PlanCache } from './planCache';
import type { RoundSchedule, StartKind } from './roundSchedule';
import type { DeviceReadouts } from './readouts';
import type { CycleEnd, CycleHooks, MoveResult } from '../../expansion/moveSolver';

/**
 * Most device memory the resident moves' flows may take (8·W·H bytes per
 * label, plus a few in flight): 2 GiB, which covers every Middlebury scene
 * (Adirondack at quarter size: 0.2 GB) but not a 3000×2000 pair with 300
 * labels (14 GB), whose moves keep their flows on the host.
 */
export const RESIDENT_FLOWS_MAX_BYTES = 2 ** 31;

/** A move that resident calls cannot run (its plan has no compiled one-pass executor): the move at `index` and later ones run through gpu.js's call. */
class ResidentUnavailable extends Error {
  constructor(readonly index: number, reason: string) { super(`resident moves off: ${reason}`); }
}

/** A resident call submitted and not yet looked at. */
interface ResidentFlight {
  index: number;
  alpha: number;
  plan: Plan;
  ex: FusedExecutor;
  kind: StartKind;
  resuming: boolean;
  borrowed: boolean;
  /** where the call leaves its move's final flows */
  flowsOut: BufferLike;
  /** where the call leaves the labels after its move (its input labels when the move did not converge) */
  labelsOut: BufferLike;
  results: Promise<ReadResults>;
  tCall: number;
  submitMs: number;
  lookAhead: boolean;
  compiled: boolean;
}

/** What the resident moves share with their solver: its options, grid, round schedule, plans and call log, and its host buffers for a plan's first call. */
export interface ResidentSource {
  o: ResolvedGpuMoveOptions;
  W: number;
  H: number;
  /** labels of the energy (every α is below it) */
  L: number;
  schedule: RoundSchedule;
  plans: PlanCache;
  log: CallLog;
  /** the labels as f32, [W, H] (a host argument of every call) */
  labelsF: Float32Array;
  /** zero flows on the host, [W, H, 2]: the flows argument a plan compiles with */
  hostZeroFlows: Float32Array;
  /** the solver's device readouts: a cycle's energy and label counts from the labels on the device */
  readouts: DeviceReadouts;
  /** flows an earlier solver of the same shape left (flowCarry.ts), else fresh ones */
  flows?: DeviceFlows;
}

/**
 * Resident moves (the option resident, WebGPU only): a cycle's moves with
 * the flows of every label kept on the device (DeviceFlows) and the next
 * move submitted while the device still runs the last one. The labels are
 * those of one-by-one moves either way: a look-ahead call is kept only
 * when the move before it converged and the driver still names it.
 */
export class ResidentMoves {
  private readonly o: ResolvedGpuMoveOptions;
  private readonly W: number;
  private readonly H: number;
  private readonly schedule: RoundSchedule;
  private readonly plans: PlanCache;
  private readonly log: CallLog;
  private readonly labelsF: Float32Array;
  private readonly hostZeroFlows: Float32Array;
  private readonly flows: DeviceFlows;
  /** Whether the flows went to the next solver (releaseFlows): destroy leaves them. */
  private released = false;
  private readonly readouts: DeviceReadouts;
  private readonly L: number;
  /** Every label as f32 on the device, from which a call's α is copied (a queue write per call costs the host more than a copy). */
  private alphaValues?: BufferLike;
  /** Why resident moves were turned off for the rest of the solver's life, if they were (see ResidentUnavailable). */
  off?: string;

  constructor(s: ResidentSource) {
    ({ o: this.o, W: this.W, H: this.H, L: this.L, schedule: this.schedule, plans: this.plans, log: this.log, labelsF: this.labelsF, hostZeroFlows: this.hostZeroFlows, readouts: this.readouts } = s);
    this.flows = s.flows ?? new DeviceFlows(8 * s.W * s.H);
  }

  /** The per-label flows for the next solver of this shape, unless resident moves were turned off (their flows were given up then). */
  releaseFlows(): DeviceFlows | undefined {
    if (this.off !== undefined) return undefined;
    this.released = true;
    return this.flows;
  }

  private get counters(): GpuMoveCounters {
    return this.log.counters;
  }

  /** Frees the device flows and staging buffers (the solver is disposed; its plans may be kept for the next one). */
  destroy(): void {
    if (!this.released) this.flows.destroy();
    this.alphaValues = undefined;
  }

  /**
   * A cycle of resident moves. Each call takes its starting flows from a
   * device buffer (its α's last flows, the last converged move's, the
   * flows its move had reached, or zeros) and leaves its final flows in a
   * buffer of its own, and its labels in another: only the tally and the
   * changed count are read back per call. The cycle's labels stay on the
   * device (each call takes those the last converged move left, copied on
   * the device) and are read back once, when the cycle ends; the driver
   * needs only the changed counts in between. While a call runs, the next
   * moves that are not skipped (as far as the driver can tell yet; up to
   * the option lookAhead) are submitted too, each with the labels the call
   * before it will produce, copied on the device. Once the running call's results are in and
   * reported, the first look-ahead call is kept if the running move
   * converged and the driver still names the same next move; else every
   * look-ahead call is dropped (its device work is wasted, nothing else)
   * and the right call is submitted from the host's labels. With the
   * labels read back come their energy and label counts (CycleEnd),
   * computed from the labels on the device in one more call.
   *
   * Resolves to the index of the first move it did not run (the cycle's
   * length when it ran them all) and, when it ran them all and some move
   * converged, the cycle's end.
   */
  async runCycle(alphas: readonly number[], labels: Uint16Array, hooks: CycleHooks): Promise<{ from: number; end?: CycleEnd }> {
    const K = this.o.iterationsPerRound;
    // The next index at or after `from` whose move the driver does not skip; `report` reports the skipped ones (the answers are final then).
    const nextMove = (from: number, report: boolean): number => {
      for (let i = from; i < alphas.length; i++) {
        if (!hooks.skip(alphas[i])) return i;
        if (report) hooks.done(i, null);
      }
      return -1;
    };
    // The move in progress: calls that failed, rounds they ran, the rounds of its continuation, and its flows so far.
    let attempts = 0;
    let spent = 0;
    let resumeRounds = 0;
    let compiledCalls = 0;
    let carried: BufferLike | undefined;
    let moveMs = 0;
    let lastResultAt = performance.now();
    let cur: ResidentFlight | undefined;
    let index = nextMove(0, true);
    // The labels the cycle's converged moves have left so far, on the device (none yet: the host's labels).
    let current: BufferLike | undefined;
    // Look-ahead calls submitted after `cur`, in order, each taking the labels the one before it will leave.
    const aheads: ResidentFlight[] = [];
    const dropAheads = (): void => {
      for (const f of aheads) this.drop(f);
      aheads.length = 0;
    };
    try {
      if (index >= 0) cur = await this.submit(alphas, index, labels, undefined, undefined, 0, undefined);
      while (cur) {
        // Look ahead while `cur` runs: the next moves not skipped so far, up to lookAhead calls, as long as their plans are compiled (a compile would hold the host up).
        for (let last = aheads[aheads.length - 1] ?? cur; aheads.length < this.o.lookAhead;) {
          const guess = nextMove(last.index + 1, false);
          // A move of the same α as the call before it would start from flows that call has not left yet.
          if (guess < 0 || alphas[guess] === last.alpha) break;
          const ahead = await this.submit(alphas, guess, labels, last, undefined, 0, undefined);
          if (!ahead) break;
          aheads.push(ahead);
          last = ahead;
        }
        const results = await cur.results;
        const tBack = performance.now();
        noteDeviceActive();
        let T: MoveTally;
        let changed: number;
        let converged: boolean;
        try {
          T = readTally(results.views[0]);
          changed = readChanged(results.views[1]);
          converged = !T.gated && T.converged;
        } finally {
          results.release();
        }
        const waited = tBack - Math.max(cur.tCall, lastResultAt);
        this.log.called({
          rounds: cur.plan.rounds, bfs: cur.plan.bfs, resumed: cur.resuming, warm: cur.kind === 'warm', compiled: cur.compiled, failedChecks: T.failedChecks, converged,
          deviceMs: waited, submitMs: cur.submitMs, lookAhead: cur.lookAhead,
        });
        this.plans.release(cur.plan);
        if (cur.compiled) compiledCalls++;
        moveMs += tBack - lastResultAt;
        lastResultAt = tBack;
        if (converged) {
          const rounds = spent + T.failedChecks;
          const result: MoveResult = {
            changed, predictedEnergy: NaN, buildMs: 0, flowMs: moveMs, truncatedTerms: 0,
            stats: {
              gpuMoves: 1, rounds, iterations: rounds * K, redoneMoves: 0, resumedCalls: cur.resuming ? attempts : 0,
              warmMoves: cur.kind === 'warm' ? 1 : 0, borrowedMoves: cur.borrowed ? 1 : 0, compiledCalls,
            },
          };
          this.counters.moves++;
          if (cur.kind === 'warm') this.counters.warmMoves++;
          if (cur.borrowed) this.counters.borrowedMoves++;
          // The move's final flows start its α's next move, and borrowing moves; those it replaces are free again. So for its labels.
          this.flows.keep(cur.alpha, cur.flowsOut);
          if (current) this.flows.residency.give(current, this.labelBytes);
          current = cur.labelsOut;
          if (carried) this.flows.give(carried);
          carried = undefined;
          attempts = 0;
          spent = 0;
          resumeRounds = 0;
          compiledCalls = 0;
          moveMs = 0;
          this.schedule.movesDone([rounds], cur.kind);
          this.counters.hostMs += performance.now() - tBack;
          hooks.done(cur.index, result);
          const tNext = performance.now();
          index = nextMove(cur.index + 1, true);
          if (aheads.length > 0 && aheads[0].index === index) {
            // The next look-ahead call is the right one; those after it are checked in turn once it is read.
            cur = aheads.shift();
          } else {
            dropAheads();
            cur = index >= 0 ? await this.submit(alphas, index, labels, undefined, current, 0, undefined) : undefined;
          }
          this.counters.hostMs += performance.now() - tNext;
          continue;
        }
        // Not converged: the labels did not change; continue the move from the flows it reached (or double the BFS passes first).
        dropAheads();
        this.flows.residency.give(cur.labelsOut, this.labelBytes);
        attempts++;
        if (T.bfsShort) {
          this.counters.bfsShortfalls++;
          this.schedule.bfsFellShort();
        }
        spent += cur.plan.rounds;
        resumeRounds = this.schedule.continuation(spent, cur.plan.rounds, cur.kind);
        if ((spent + resumeRounds) * K > this.o.maxIterations) {
          throw new Error(`gpu expansion: move α=${cur.alpha} did not converge within ${spent * K} push-relabel iterations (maxIterations = ${this.o.maxIterations})`);
        }
        if (carried) this.flows.give(carried);
        carried = cur.flowsOut;
        cur = await this.submit(alphas, cur.index, labels, undefined, current, resumeRounds, { kind: cur.kind, borrowed: cur.borrowed, flows: carried });
        this.counters.hostMs += performance.now() - tBack;
      }
    } catch (e) {
      // Calls still in flight finish on the device; their staging buffers are left to the destroy.
      this.plans.releaseAll();
      if (!(e instanceof ResidentUnavailable)) throw e;
      // The moves that converged so far are in the device's labels; the rest of the cycle runs from the host's.
      if (current) await this.readLabels(current, labels);
      // The rest of the run moves one by one through gpu.js's call, from the move that could not be submitted (started afresh; the flows kept on the device are given up).
      this.off = e.message;
      return { from: e.index };
    }
    if (!current) return { from: alphas.length };
    // The labels' buffer is given back only once both calls that read it have settled.
    const residency = this.flows.residency;
    const [end, read] = await Promise.allSettled([this.readouts.cycleEnd(current, residency), residency.read(current, this.labelBytes, labels)]);
    residency.give(current, this.labelBytes);
    if (read.status === 'rejected') throw read.reason;
    if (end.status === 'rejected') throw end.reason;
    return { from: alphas.length, end: end.value ?? undefined };
  }

  /** Bytes of a labeling on the device ([W, H] f32). */
  private get labelBytes(): number {
    return 4 * this.W * this.H;
  }

  /** The labels on the device into the host's (f32 → uint16 is exact for labels); the buffer is free again. */
  private async readLabels(current: BufferLike, labels: Uint16Array): Promise<void> {
    await this.flows.residency.read(current, this.labelBytes, labels);
    this.flows.residency.give(current, this.labelBytes);
  }

  /**
   * Submits the resident call of the move at `index`: from the labels on
   * the device `from` (the cycle's so far), else from the host's labels,
   * or (`after`, a look-ahead) from the labels `after` will leave,
   * assuming it converges; a fresh move's flows are its α's, else the
   * last converged move's (borrowFlows), else zeros; a continuation
   * (`resumeRounds` > 0) gives its kind and flows. A look-ahead whose plan
   * is not compiled yet is not submitted (undefined).
   */
  private async submit(
    alphas: readonly number[], index: number, labels: Uint16Array, after: ResidentFlight | undefined, from: BufferLike | undefined,
    resumeRounds: number, resume: { kind: StartKind; borrowed: boolean; flows: BufferLike } | undefined,
  ): Promise<ResidentFlight | undefined> {
    const alpha = alphas[index];
    const tCall = performance.now();
    const stored = this.flows.of(alpha);
    const kind: StartKind = resume ? resume.kind : stored ? 'warm' : 'cold';
    const lastFlows = after ? after.flowsOut : this.flows.last;
    const borrowedFlows = !resume && !stored && this.o.borrowFlows ? lastFlows : undefined;
    const rounds = resume ? resumeRounds : this.schedule.rounds(kind);
    let plan: Plan | undefined;
    let ex: FusedExecutor | null;
    let compiled = false;
    if (after) {
      // Only a plan that is cached and compiled: neither a compile nor an eviction for a call that may be dropped.
      plan = this.plans.peek(rounds, this.schedule.bfs, false);
      ex = plan ? liveExecutor(plan.pipe) : null;
      if (!plan || !ex) return undefined;
    } else {
      plan = this.plans.get(rounds, this.schedule.bfs, false);
      // The host's labels are uploaded only when the device has none of the cycle's yet (else they only shape a compile).
      if (!from) this.labelsF.set(labels);
      compiled = plan.calls === 0;
      ex = await compiledExecutor(plan.pipe, [
        new Input(this.labelsF as unknown as number[], [this.W, this.H]),
        // α only shapes the compile: a call copies it on the device (alphaValues).
        new Input(Float32Array.of(alpha) as unknown as number[], [1]),
        new Input(this.hostZeroFlows as unknown as number[], [this.W, this.H, 2]),
      ]);
      if (!ex) throw new ResidentUnavailable(index, `gpu.js ran plan ${planKey(rounds, this.schedule.bfs, false)} on its generic executor (${String((plan.pipe as { pipeline?: { fallbackReason?: unknown } }).pipeline?.fallbackReason ?? 'no reason given')})`);
    }
    const residency = this.flows.open(ex);
    const alphaValues = (this.alphaValues ??= residency.holding(Float32Array.from({ length: this.L }, (_, a) => a)));
    plan.calls++;
    const flowsOut = this.flows.take();
    const flowsIn = resume ? resume.flows : stored ?? borrowedFlows ?? this.flows.zeros;
    const labelsIn = after ? after.labelsOut : from;
    const labelsOut = residency.take(this.labelBytes);
    const results: Promise<ReadResults> = residency.submit(ex, {
      hostArgs: labelsIn ? [] : [[0, this.labelsF]],
      deviceArgs: [...(labelsIn ? [[0, labelsIn] as const] : []), [1, alphaValues, 4 * alpha], [2, flowsIn]],
      keep: [[3, flowsOut], [0, labelsOut]],
      read: [1, 2],
    });
    // A dropped call's results are never looked at; its staging buffer is freed once it is back.
    this.plans.hold(plan);
    return {
      index, alpha, plan, ex, kind, resuming: resume !== undefined, borrowed: resume ? resume.borrowed : borrowedFlows !== undefined,
      flowsOut, labelsOut, results, tCall, submitMs: performance.now() - tCall, lookAhead: after !== undefined, compiled,
    };
  }

  /** Drops a look-ahead call: its flows buffer is free again (later writes to it are ordered after the call), its staging once it is back. */
  private drop(f: ResidentFlight): void {
    this.counters.droppedCalls++;
    this.plans.release(f.plan);
    this.flows.give(f.flowsOut);
    this.flows.residency.give(f.labelsOut, this.labelBytes);
    void f.results.then((r) => r.release(), () => undefined);
  }
}
