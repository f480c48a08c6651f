import * as os from 'os';
import type { GpuContext } from '../runtime/context';
import { onePassCalls } from '../runtime/gpujs/onePassCalls';
import { kernelFamiliesOf } from '../maxflow/kernelFamilies';
import { workgroupEntries } from '../runtime/gpujs/workgroupEntry';
import { bandHeightOf, computeEnergy, isMetricTable, type EnergyBreakdown, type MrfEnergy } from '../../data/energy';
import { imageCostSpec, type DataSourceKind, type ImageCostSpec } from '../costs/costKernels';
import { DeviceReadouts, exactTermBounds } from './readouts';
import type { ProgramStore } from './keptPrograms';
import { RoundSchedule } from './roundSchedule';
import { acquireProgram, programHostArrays, releaseProgram, type DeviceProgram } from './deviceProgram';
import { CallLog, type GpuCallRecord, type GpuMoveCounters } from './callLog';
import { resolveGpuMoveOptions, type GpuMoveOptions, type ResolvedGpuMoveOptions } from './moveSettings';
import { PlanCache } from './planCache';
import { HostFlows } from './flowStores';
import { gpuFlowShape, type FlowCarry } from './flowCarry';
import { MoveVerifier } from './moveVerifier';
import { ResidentMoves, RESIDENT_FLOWS_MAX_BYTES } from './residentMoves';
import { HostMoves } from './hostMoves';
import type { CycleEnd, CycleHooks, MoveResult, MoveSolver } from '../../expansion/moveSolver';

export { RESIDENT_FLOWS_MAX_BYTES } from './residentMoves';

/** What a GpuMoveSolver's owner keeps between its solvers (see the constructor). */
export interface SolverHeld {
  flows?: FlowCarry;
  programs?: ProgramStore;
}

/**
 * α-expansion moves on the device. The energy is uploaded once (data costs
 * as a volume, or the two images from which every kernel recomputes the
 * costs it needs; smoothness weights; the V table), and each move is one
 * chain of kernels inside one gpu.js pipeline call (a plan, planCache.ts):
 * the binary graph built from the labels (expansion/binaryStep.ts's construction,
 * either variant), rounds of K push-relabel iterations (a push family's
 * kernels: the block push or the sweeps) each followed by a global relabel
 * (B passes of a BFS family: block launches or scans)
 * and a convergence check reduced on the device, then the cut applied to
 * the labels. The only traffic per call is the labels in, the labels out
 * and a few numbers (and the move's flows, flowsInOut).
 *
 * Exactness: a move's cut is applied only when its final check passed (its
 * heights are the exact residual distances to the sink and no pixel with
 * excess can reach it: the flow is maximum and the finite-height pixels are
 * the canonical sink side). A move that did not converge leaves the labels
 * alone. With `resume` the call also returns the move's edge flows, and the
 * next call starts the move again from them (with the rounds that recent
 * moves suggest, continuationRounds): any flows give a valid preflow
 * (initStateSource), and the initial global relabel restores exact
 * heights. Otherwise the move is redone from scratch with twice the rounds.
 * Either way a check that failed because the BFS had not reached its fixed
 * point doubles the BFS passes for that move. Running more rounds after
 * convergence changes nothing (no pixel with excess has a finite height,
 * the BFS is at its fixed point), which is what makes a fixed, speculative
 * number of rounds safe; with the gate (default) those rounds are copies of
 * the state, so a plan may overshoot cheaply.
 *
 * Warm starts (warmStart): a converged move's edge flows are kept per α
 * (flowStores.ts), and α's next move starts from them instead of zero
 * flow (initStateSource). Any flows give a valid preflow of the new graph
 * once clamped, so this changes where push-relabel starts, never the cut it
 * ends with. A move whose α has no flows yet (the first cycle) starts from
 * the flows the last converged move ended with (borrowFlows), on the same
 * grounds.
 *
 * With resume or warmStart every plan takes the move's starting flows (all
 * zero for a cold start) and returns its final ones, so fresh, warm and
 * continued moves share one compiled plan per rounds and BFS passes, and a
 * call moves two [W, H] planes each way besides the labels.
 *
 * The rooms: the round schedule (roundSchedule.ts, pure), the device
 * program and its plans (deviceProgram.ts, planCache.ts; kept for the
 * next solver of the same shape, keptPrograms.ts), the flow stores
 * (flowStores.ts), the host-driven move loop (hostMoves.ts) and the
 * resident one (residentMoves.ts), the call log (callLog.ts), the
 * device WTA, energy and exactness bounds (readouts.ts) and --verify
 * (moveVerifier.ts). This class checks the options and is the
 * MoveSolver face of them all.
 */
export class GpuMoveSolver implements MoveSolver {
  readonly backend: string;
  readonly device: string;
  /** The calls' records and counters, for reports (callLog.ts). */
  private readonly log: CallLog;
  get counters(): GpuMoveCounters { return this.log.counters; }
  /** Every pipeline call so far, in order. */
  get calls(): readonly GpuCallRecord[] { return this.log.calls; }
  private readonly o: ResolvedGpuMoveOptions;
  private readonly W: number;
  private readonly H: number;
  private readonly n: number;
  private readonly program: DeviceProgram;
  /** the key the program is kept under after dispose (keepPlans), or null */
  private readonly programKey: string | null;
  private readonly carry?: FlowCarry;
  private readonly programs?: ProgramStore;
  /** Settles once the data literal holds this energy's values (WebGPU census: the codes the device computes); every call waits for it. */
  private readonly dataReady: Promise<void>;
  /** whether the program was taken from an earlier solver (kept plans) */
  readonly tookKeptPlans: boolean;
  private readonly plans: PlanCache;
  /** Whether the plans take the starting flows of their move and return its final ones (resume or warmStart). */
  private readonly flowsInOut: boolean;
  private hostFlows: HostFlows;
  /** The key of this solver's flows in a FlowCarry (flowCarry.ts). */
  private readonly flowShape: string;
  /** Whether the carried flows were looked for (at the first move: the carry may be dropped until then). */
  private carryTaken = false;
  private readonly labelsF: Float32Array;
  private readonly sourceKind: DataSourceKind;
  private readonly costSpec: ImageCostSpec | null;
  /** The rounds and BFS passes of the next calls (roundSchedule.ts). */
  private readonly schedule: RoundSchedule;
  /** warmStart: whether it is on (each α's move starts from the flows its last move ended with) */
  readonly warmStart: boolean;
  /** The device WTA and energy (readouts.ts): dispose keeps or releases the program only after their calls in flight. */
  private readonly readouts: DeviceReadouts;
  private disposed = false;
  private readonly verifier?: MoveVerifier;
  /** The host-driven move loop (move(), and the moves of a cycle that do not run resident). */
  private readonly hostMoves: HostMoves;
  /** The resident move loop (the option resident), made when a cycle first runs resident. */
  private resident?: ResidentMoves;
  /** Why resident moves were turned off for the rest of this solver's life, if they were. */
  get residentOff(): string | undefined { return this.resident?.off; }

  /**
   * `held`, what the solver's owner keeps between solvers: `flows`, flows a
   * solver of the same shape left (the previous frame of a sequence), and
   * where this one leaves its own (flowCarry.ts); `programs`, the store
   * this solver takes a kept program from and gives its own back to
   * (keptPrograms.ts; without one, its program is released at dispose).
   */
  constructor(private readonly ctx: GpuContext, private readonly energy: MrfEnergy, options: GpuMoveOptions, held: SolverHeld = {}) {
    this.carry = held.flows;
    this.programs = held.programs;
    const source = energy.data;
    if (source.kind === 'banded') throw new Error('gpu expansion: a banded data term is solved on the host (expansion/bandedMoves.ts), not by the device moves');
    this.o = resolveGpuMoveOptions(energy.width, energy.height, options, ctx.mode === 'webgpu' && workgroupEntries.installed);
    this.log = new CallLog(this.o);
    for (const k of ['planCompileRounds', 'planCompileRoundsPerRound'] as const) {
      const v = this.o[k];
      if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v)) throw new Error(`gpu expansion option ${k}: expected a finite number ≥ 0, got ${String(v)}`);
    }
    if (!Number.isInteger(this.o.lookAhead) || this.o.lookAhead < 0 || this.o.lookAhead > 16) throw new Error(`gpu expansion option lookAhead: expected an integer in 0..16, got ${String(this.o.lookAhead)}`);
    for (const k of ['iterationsPerRound', 'bfsPasses', 'finalBfsFactor', 'initialRounds', 'maxIterations', 'maxCachedPlans', 'tileSide'] as const) {
      const v = this.o[k];
      if (!Number.isInteger(v) || v < 1) throw new Error(`gpu expansion option ${k}: expected a positive integer, got ${String(v)}`);
    }
    const initialBfs = this.o.initialBfsPasses;
    if (initialBfs !== Number.POSITIVE_INFINITY && (!Number.isInteger(initialBfs) || initialBfs < 1)) {
      throw new Error(`gpu expansion option initialBfsPasses: expected a positive integer, got ${String(initialBfs)}`);
    }
    kernelFamiliesOf('gpu expansion', this.o);
    for (const k of ['resume', 'gate', 'recordAhead', 'borrowFlows', 'keepPlans', 'resident'] as const) {
      if (typeof this.o[k] !== 'boolean') throw new Error(`gpu expansion option ${k}: expected true or false, got ${String(this.o[k])}`);
    }
    if (this.o.variant !== 'classic' && this.o.variant !== 'reversed') throw new Error(`gpu expansion option variant: expected classic or reversed, got '${String(this.o.variant)}'`);
    const { width: W, height: H, labels: L } = energy;
    this.W = W;
    this.H = H;
    this.n = W * H;
    if (!isMetricTable(energy)) {
      throw new Error(`gpu expansion: the ${energy.smoothness} smoothness term with truncation ${energy.truncation} is not a metric; its graphs may need truncation, which the device moves do not check (use a MaxFlowSolver through GraphMoveSolver)`);
    }
    this.sourceKind = source.kind;
    this.costSpec = source.kind === 'images' ? imageCostSpec(source.spec) : null;
    const bounds = exactTermBounds(energy, this.costSpec);
    this.backend = `gpu-expansion-${ctx.mode}`;
    this.device = ctx.device;
    if (this.o.verify) {
      if (source.kind !== 'volume') throw new Error("gpu expansion: verify needs the data cost volume on the host (costs 'volume')");
      this.verifier = new MoveVerifier(energy, this.o.variant);
    }
    const storeBytes = 8 * this.n * L;
    const warmStart = this.o.warmStart;
    if (warmStart === undefined) {
      this.warmStart = storeBytes <= os.totalmem() / 4;
    } else {
      if (typeof warmStart !== 'boolean') throw new Error(`gpu expansion option warmStart: expected true or false, got ${String(warmStart)}`);
      this.warmStart = warmStart;
    }
    this.flowsInOut = this.o.resume || this.warmStart;
    const layout = { warmStart: this.warmStart, flowsInOut: this.flowsInOut, resume: this.o.resume };
    this.flowShape = gpuFlowShape(W, H, L, layout);
    this.schedule = new RoundSchedule({
      initialRounds: this.o.initialRounds, bfsPasses: this.o.bfsPasses, maxBfsPasses: this.n + 1, fixedRounds: this.o.fixedRounds, gate: this.o.gate,
      flowsInOut: this.flowsInOut, resume: this.o.resume,
      planCompileRounds: this.o.planCompileRounds, planCompileRoundsPerRound: this.o.planCompileRoundsPerRound,
    }, (rounds, bfs) => this.plans.has(rounds, bfs, this.verifier !== undefined));

    const { program, key, tookKeptPlans, dataReady } = acquireProgram(ctx, energy, this.costSpec, this.o, this.flowsInOut, this.programs);
    this.dataReady = dataReady ?? Promise.resolve();
    // A failure is reported by the first call that waits for it, not as an unhandled rejection.
    this.dataReady.catch(() => undefined);
    this.programKey = key;
    this.tookKeptPlans = tookKeptPlans;
    this.program = program;
    const host = programHostArrays(program, this.n, this.flowsInOut);
    this.labelsF = host.labelsF;
    this.hostFlows = new HostFlows(W, H, L, layout, host.zeroFlows);
    this.plans = new PlanCache(program, this.o, this.flowsInOut, this.counters);
    this.readouts = new DeviceReadouts({
      gpu: program.ctx.gpu, program, W, H, L, bandHeight: bandHeightOf(energy), sourceKind: this.sourceKind, costSpec: this.costSpec,
      maxDataCost: bounds.maxDataCost, maxEdgeTerm: bounds.maxEdgeTerm, kept: this.programKey !== null, counters: this.counters,
    });
    this.hostMoves = new HostMoves({
      o: this.o, W, H, webgpu: ctx.mode === 'webgpu', schedule: this.schedule, plans: this.plans, log: this.log, labelsF: this.labelsF,
      flowsInOut: this.flowsInOut, warmStart: this.warmStart, verifier: this.verifier,
    });
  }

  /** Plans compiled and not yet dropped (at most the option maxCachedPlans). */
  get cachedPlans(): number {
    return this.plans.size;
  }

  /** Executor kinds of the compiled plans (e.g. 'fused-encoder'), for reports. */
  executorKinds(): string[] {
    return this.plans.executorKinds();
  }

  /** The optimal expansion of `alpha` from `labels` (in place): calls until the move converges, each continuing (resume) or redoing the last. */
  async move(alpha: number, labels: Uint16Array): Promise<MoveResult> {
    this.checkMoveArgs([alpha], labels);
    await this.dataReady;
    this.takeCarriedHostFlows();
    return this.hostMoves.move(alpha, labels, this.hostFlows);
  }

  private checkMoveArgs(alphas: readonly number[], labels: Uint16Array): void {
    const L = this.energy.labels;
    for (const a of alphas) if (!Number.isInteger(a) || a < 0 || a >= L) throw new Error(`gpu expansion: α = ${a} is outside 0..${L - 1}`);
    if (labels.length !== this.n) throw new Error(`gpu expansion: labeling has ${labels.length} pixels, the energy ${this.n}`);
  }

  /**
   * The moves of a cycle (MoveSolver.runCycle). With resident moves (the
   * option resident) the next move is submitted while the device still
   * runs the last one, and the cycle's end (energy and label counts) is
   * computed on the device; otherwise one move after another, as move().
   */
  async runCycle(alphas: readonly number[], labels: Uint16Array, hooks: CycleHooks): Promise<CycleEnd | void> {
    this.checkMoveArgs(alphas, labels);
    await this.dataReady;
    // Resident moves hand back the index of the first move they could not run (a plan gpu.js could not compile for them).
    let from = 0;
    if (this.residentApplies()) {
      const carried = this.resident ? undefined : this.carry?.takeDevice(this.flowShape);
      this.resident ??= new ResidentMoves({
        o: this.o, W: this.W, H: this.H, L: this.energy.labels, schedule: this.schedule, plans: this.plans, log: this.log, labelsF: this.labelsF, hostZeroFlows: this.hostFlows.zeros,
        readouts: this.readouts, flows: carried,
      });
      const ran = await this.resident.runCycle(alphas, labels, hooks);
      if (ran.from === alphas.length) return ran.end;
      from = ran.from;
    }
    for (let i = from; i < alphas.length; i++) {
      if (hooks.skip(alphas[i])) hooks.done(i, null);
      else hooks.done(i, await this.move(alphas[i], labels));
    }
  }

  /** The host flows a solver of this shape left in the carry, taken at this solver's first move (the carry's owner may drop them until then). */
  private takeCarriedHostFlows(): void {
    if (this.carryTaken) return;
    this.carryTaken = true;
    const h = this.carry?.takeHost(this.flowShape);
    if (h) this.hostFlows = h;
  }

  /** Whether this solver's cycles run as resident moves (see the option resident). */
  residentApplies(): boolean {
    const bytes = 8 * this.n * (this.energy.labels + 4);
    return this.o.resident && this.residentOff === undefined && this.ctx.mode === 'webgpu' && onePassCalls.installed && this.ctx.flags.onePassCalls && this.ctx.flags.inPlaceCalls
      && !this.verifier && this.warmStart && this.o.resume && this.flowsInOut && bytes <= RESIDENT_FLOWS_MAX_BYTES;
  }

  /**
   * MoveSolver.initialWta: on WebGPU the WTA labeling is computed on the
   * device (deviceWta); on gpu.js's CPU backends the host's WTA is faster,
   * and undefined leaves it to the caller.
   */
  async initialWta(window: number): Promise<Uint16Array | undefined> {
    return this.ctx.mode === 'webgpu' ? this.deviceWta(window) : undefined;
  }

  /** The device WTA (readouts.ts); `chunkEntries` bounds a label chunk's intermediates. */
  async deviceWta(window: number, chunkEntries?: number): Promise<Uint16Array | undefined> {
    await this.dataReady;
    return this.readouts.wta(window, chunkEntries);
  }

  /** Energy of a labeling: on the host when the volume is there, else reduced on the device (exact partial sums). */
  async energyOf(labels: Uint16Array): Promise<EnergyBreakdown> {
    if (this.sourceKind === 'volume') return computeEnergy(this.energy, labels);
    await this.dataReady;
    return this.readouts.energy(labels);
  }

  dispose(): void {
    // A second dispose would keep (or release) the program again.
    if (this.disposed) return;
    this.disposed = true;
    // The resident flows and staging buffers are this solver's (plans may be kept for the next one); with a carry, the flows go to the next solver.
    if (this.carry) this.carry.keep(this.flowShape, this.hostFlows, this.resident?.releaseFlows());
    this.resident?.destroy();
    // The auxiliary pipelines bind the literals: the program is kept (and refilled by the next solver) or released only after their calls in flight.
    const key = this.programKey;
    const program = this.program;
    const done = (): void => {
      if (key !== null && this.programs) this.programs.keep(key, program, () => releaseProgram(program), this.ctx.flags);
      else releaseProgram(program);
    };
    // Kept at once when no call is in flight, so that a solver made right after this one finds it.
    const inFlight = this.readouts.inFlight();
    if (inFlight.length > 0) void Promise.allSettled(inFlight).then(done);
    else done();
  }
}
