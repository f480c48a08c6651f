import { Input } from '../runtime/gpujs/gpuJs';
import type { KernelOutput } from 'gpu.js';
import { callInPlace, recordAhead } from '../runtime/gpujs/onePassCalls';
import { noteDeviceActive } from '../runtime/clockWarmup';
import { readLabels } from './readouts';
import type { StartKind, RoundSchedule } from './roundSchedule';
import type { Plan, Planes } from './deviceProgram';
import { readChanged, readTally, type CallLog } from './callLog';
import type { ResolvedGpuMoveOptions } from './moveSettings';
import type { PlanCache } from './planCache';
import type { HostFlows } from './flowStores';
import type { MoveVerifier } from './moveVerifier';
import type { MoveResult } from '../../expansion/moveSolver';

/** What the host-driven moves share with their solver (gpuMoveSolver.ts): its options, grid, round schedule, plans, call log and flow layout. */
export interface HostMovesSource {
  o: ResolvedGpuMoveOptions;
  W: number;
  H: number;
  /** whether the solver runs on WebGPU (a call that came back marks the device active: gpu/runtime/clockWarmup.ts) */
  webgpu: boolean;
  schedule: RoundSchedule;
  plans: PlanCache;
  log: CallLog;
  /** the labels as f32, [W, H] (a host argument of every call) */
  labelsF: Float32Array;
  /** whether the plans take the starting flows of their move and return its final ones (resume or warmStart) */
  flowsInOut: boolean;
  /** whether each α's move starts from the flows its last move ended with */
  warmStart: boolean;
  verifier?: MoveVerifier;
}

/**
 * The host-driven move loop of the GPU moves: one gpu.js pipeline call per
 * move at a time, its labels, tally and flows read back before the next.
 * The resident loop (residentMoves.ts) is the other; the solver picks.
 */
export class HostMoves {
  /** The plan guessed for the next call during the last one (carried between the driver's calls of move()). */
  private guessedPlan?: Plan;

  constructor(private readonly s: HostMovesSource) {}

  /**
   * The optimal expansion of `alpha` from `labels` (in place): calls until the move converges, each continuing (resume) or redoing the last.
   * `hostFlows`: the solver's flows on the host (flowStores.ts).
   */
  async move(alpha: number, labels: Uint16Array, hostFlows: HostFlows): Promise<MoveResult> {
    const K = this.s.o.iterationsPerRound;
    // Calls that failed so far, rounds they ran, the rounds of a continuation (when its flows were kept), and their time.
    let attempts = 0;
    let spent = 0;
    let resumeRounds = 0;
    let unfinishedMs = 0;
    let compiledCalls = 0;
    // The plan guessed, during the previous call, for this one.
    let guessed: Plan | undefined = this.guessedPlan;
    const stored = this.s.warmStart ? hostFlows.of(alpha) : undefined;
    const kind: StartKind = stored ? 'warm' : 'cold';
    // A cold move may start from the flows of the last move that converged (another α's), when borrowFlows is on.
    const borrowed = !stored && this.s.o.borrowFlows && this.s.warmStart ? hostFlows.last : undefined;
    for (;;) {
      const resuming = resumeRounds > 0;
      const t0 = performance.now();
      const plan = this.s.plans.get(resuming ? resumeRounds : this.s.schedule.rounds(kind), this.s.schedule.bfs, this.s.verifier !== undefined);
      const compiled = plan.calls++ === 0;
      if (compiled) compiledCalls++;
      if (guessed) {
        this.s.log.counters.guessedCalls++;
        if (guessed === plan) this.s.log.counters.guessHits++;
      }
      this.s.labelsF.set(labels); // Uint16 → f32 is exact; set() converts natively, far faster than a JS loop
      const before = this.s.verifier ? labels.slice() : undefined;
      const args: Input[] = [
        new Input(this.s.labelsF as unknown as number[], [this.s.W, this.s.H]),
        new Input(Float32Array.of(alpha) as unknown as number[], [1]),
      ];
      if (this.s.flowsInOut) {
        const start = resuming ? hostFlows.carried : stored ?? borrowed ?? hostFlows.zeros;
        args.push(new Input(start as unknown as number[], [this.s.W, this.s.H, 2]));
      }
      const tCall = performance.now();
      let tSubmitted = NaN;
      const pending = callInPlace(plan.pipe, args);
      // A call that compiles its plan has not submitted by then; guessing would only delay it.
      const guess = compiled ? undefined : this.guessNextPlan(kind);
      guessed = guess;
      setImmediate(() => {
        tSubmitted = performance.now();
        if (guess && this.s.o.recordAhead && recordAhead(guess.pipe)) this.s.log.counters.recordedAhead++;
      });
      const out = (await pending) as unknown[];
      const tBack = performance.now();
      if (this.s.webgpu) noteDeviceActive();
      const T = readTally(out[1] as ArrayLike<number>);
      const changed = readChanged(out[2]);
      const converged = T.converged && !T.gated;
      // Labels change only in a converged call (the cut is applied only when the final check passed).
      readLabels(out[0] as ArrayLike<ArrayLike<number>>, labels, this.s.W, this.s.H);
      // The move's final flows follow the labels and its tally and changed count (flowsInOut), then --verify's state and capacities.
      const flowsOut = (this.s.flowsInOut ? out[3] : undefined) as KernelOutput;
      this.s.log.called({
        rounds: plan.rounds, bfs: plan.bfs, resumed: resuming, warm: kind === 'warm', compiled, failedChecks: T.failedChecks, converged,
        deviceMs: tBack - tCall, submitMs: Number.isNaN(tSubmitted) ? tBack - tCall : tSubmitted - tCall, lookAhead: false,
      });
      if (converged) {
        // Rounds of the earlier calls of the move, and the checks that failed in this one.
        const rounds = spent + T.failedChecks;
        const result: MoveResult = {
          changed, predictedEnergy: NaN, buildMs: 0, flowMs: 0, truncatedTerms: 0,
          stats: {
            gpuMoves: 1, rounds, iterations: rounds * K,
            redoneMoves: attempts > 0 && !resuming ? 1 : 0, resumedCalls: resuming ? attempts : 0,
            warmMoves: kind === 'warm' ? 1 : 0,
            borrowedMoves: borrowed !== undefined ? 1 : 0, compiledCalls,
          },
        };
        if (this.s.verifier) {
          const at = this.s.flowsInOut ? 4 : 3;
          result.predictedEnergy = this.s.verifier.verifyCut(alpha, before!, out[at] as Planes, out[at + 1] as Planes);
          result.stats.verifiedCuts = 1;
        }
        if (this.s.warmStart) {
          // The converged move's flows start this α's next move.
          hostFlows.keep(alpha, flowsOut);
          if (kind === 'warm') this.s.log.counters.warmMoves++;
        }
        this.s.log.counters.moves++;
        if (borrowed !== undefined) this.s.log.counters.borrowedMoves++;
        // The move's time: this call (with the checks and flows above) and the calls before it that did not converge.
        const elapsed = performance.now() - t0;
        result.flowMs = elapsed + unfinishedMs;
        this.s.log.counters.hostMs += elapsed - (tBack - tCall);
        this.s.schedule.movesDone([rounds], kind);
        this.guessedPlan = guessed;
        return result;
      }
      const elapsed = performance.now() - t0;
      this.s.log.counters.hostMs += elapsed - (tBack - tCall);
      // A call that did not converge is charged to the move, which the next converging call finishes.
      unfinishedMs += elapsed;
      attempts++;
      if (T.bfsShort) {
        // The global relabel restarts from scratch each round: without more passes it never reaches its fixed point.
        this.s.log.counters.bfsShortfalls++;
        this.s.schedule.bfsFellShort();
      }
      if (this.s.o.resume && this.s.flowsInOut) {
        // Continue from the flows the device had reached (the labels did not change, so neither did the graph).
        spent += plan.rounds;
        resumeRounds = this.s.schedule.continuation(spent, plan.rounds, kind);
        hostFlows.carry(flowsOut);
      } else {
        this.s.log.counters.redoneMoves++;
        spent = 0;
        resumeRounds = 0;
        // A BFS shortfall says nothing about the flow (the test of the excess needs exact heights): only the passes double then.
        if (!T.bfsShort) this.s.schedule.doubleRounds(kind);
      }
      const ran = resumeRounds > 0 ? spent : plan.rounds;
      if ((resumeRounds > 0 ? spent + resumeRounds : this.s.schedule.rounds(kind)) * K > this.s.o.maxIterations) {
        throw new Error(`gpu expansion: move α=${alpha} did not converge within ${ran * K} push-relabel iterations (maxIterations = ${this.s.o.maxIterations})`);
      }
    }
  }

  /**
   * The compiled plan the next call is expected to use, if any: that of a
   * fresh move starting like this one (cold or warm), with the rounds and
   * BFS passes as they are. Most calls converge, the next α usually starts
   * as the last did (cold in the first cycle, warm after), and the rounds
   * adapt in steps; a wrong guess costs only recording on the host while
   * it would wait. Never compiles, and leaves the cache's order alone.
   */
  private guessNextPlan(kind: StartKind): Plan | undefined {
    return this.s.plans.peek(this.s.schedule.rounds(kind), this.s.o.bfsPasses, this.s.verifier !== undefined);
  }
}
