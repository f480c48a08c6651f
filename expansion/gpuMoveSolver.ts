import * as os from 'os';
import { Input, type GPU, type KernelOutput } from 'gpu.js';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import type { GpuContext } from '../graphcut/gpuBackend';
import { callInPlace, liveExecutor, onePassCalls, recordAhead, returnFlatResults, type FusedExecutor } from '../graphcut/gpujs/onePassCalls';
import { compiledExecutor, ResidentBuffers, resultBuffer, type BufferLike, type ReadResults } from '../graphcut/gpujs/residentCalls';
import { noteDeviceActive } from '../graphcut/gpuClockWarmup';
import { bindSharedLiterals, canRefillSharedLiterals, refillSharedLiteral, shareLiterals } from '../graphcut/gpujs/sharedLiterals';
import { cutCapacity, MAX_GPU_EXACT_CAPACITY } from '../graphcut/gridGraph';
import { flattenState, GpuPrecisionError, sinkResidualOf } from '../graphcut/pushRelabel';
import { checkKernelScheme, PLANE } from '../graphcut/pushRelabelKernels';
import { VerificationError } from '../data/errors';
import { BinaryStepBuilder } from './binaryStep';
import { computeEnergy, isMetricTable, pairwise, type EnergyBreakdown, type MrfEnergy } from '../data/energy';
import { imageCostSpec, type DataSourceKind, type ImageCostSpec } from './gpuMoveKernels';
import { DeviceReadouts, readLabels } from './gpuReadouts';
import { keepProgram, takeKeptProgram } from './gpuKeptPrograms';
import { RoundSchedule, type StartKind } from './roundSchedule';
import { createKernels, imagePlanes, MAX_KEPT_PROGRAM_PIXELS, planKey, REFILLABLE_MODES, releaseProgram, type DeviceProgram, type Kernels, type Plan, type Planes } from './gpuDeviceProgram';
import { CallLog, readTally, type GpuCallRecord, type GpuMoveCounters, type MoveTally } from './gpuCallLog';
import { resolveGpuMoveOptions, type GpuMoveOptions, type ResolvedGpuMoveOptions } from './gpuMoveSettings';
import type { CycleHooks, MoveResult, MoveSolver } from './moveSolver';

/**
 * α-expansion moves on the device. The energy is uploaded once (data costs
 * as a volume, or the two images from which every kernel recomputes the
 * costs it needs; smoothness weights; the V table), and each move is one
 * chain of kernels inside one gpu.js pipeline call: the binary graph built
 * from the labels (binaryStep.ts's construction, either variant), rounds of
 * K push-relabel iterations (sweep or lockstep kernels) each followed by a
 * global relabel (B scan or level BFS passes) and a convergence check reduced on the device, then the cut
 * applied to the labels. A plan chains several moves (a whole cycle's α
 * list, in chunks): the only traffic per call is the labels in, the labels
 * out and a few numbers per move.
 *
 * Exactness: a move's cut is applied only when its final check passed (its
 * heights are the exact residual distances to the sink and no pixel with
 * excess can reach it: the flow is maximum and the finite-height pixels are
 * the canonical sink side). A move that did not converge leaves the labels
 * alone, and so do all later moves of the same call (they were built on the
 * wrong labels). With `resume` (one move per call) the call also returns the
 * move's edge flows, and the next call starts the move again from them (with
 * the rounds that recent moves suggest, continuationRounds): any flows give
 * a valid preflow (initStateSource), and the initial global relabel restores
 * exact heights. Otherwise the move is redone from scratch with twice the
 * rounds. Either way a check that
 * failed because the BFS had not reached its fixed point doubles the BFS
 * passes for that move. Running more rounds after convergence
 * changes nothing (no pixel with excess has a finite height, the BFS is at
 * its fixed point), which is what makes a fixed, speculative number of
 * rounds safe; with the gate (default) those rounds are copies of the
 * state, so a plan may overshoot cheaply.
 *
 * Warm starts (warmStart): a converged move's edge flows are kept per α on
 * the host (the flows the call reads back), and α's next move starts from
 * them instead of zero flow (initStateSource). Any flows give a valid
 * preflow of the new graph once clamped, so this changes where push-relabel
 * starts, never the cut it ends with. A move whose α has no flows yet (the
 * first cycle) starts from the flows the last converged move ended with
 * (borrowFlows), on the same grounds.
 *
 * With resume or warmStart every single-move plan takes the move's
 * starting flows (all zero for a cold start) and returns its final ones, so
 * fresh, warm and continued moves share one compiled plan per rounds and
 * BFS passes, and a call moves two [W, H] planes each way besides the
 * labels.
 *
 * Kernels and plans depend on the energy's shape and the options, not on
 * its values (the constant inputs): on dispose they are kept for the next
 * solver of the same shape, which refills the constant inputs with its
 * own energy (keepPlans, gpuKeptPrograms.ts).
 */

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
  results: Promise<ReadResults>;
  tCall: number;
  submitMs: number;
  lookAhead: boolean;
  compiled: boolean;
}



/**
 * Most device memory the resident moves' flows may take (8·W·H bytes per
 * label, plus a few in flight): 2 GiB, which covers every Middlebury scene
 * (Adirondack at quarter size: 0.2 GB) but not a 3000×2000 pair with 300
 * labels (14 GB), whose moves keep their flows on the host.
 */
export const RESIDENT_FLOWS_MAX_BYTES = 2 ** 31;

export class GpuMoveSolver implements MoveSolver {
  readonly backend: string;
  readonly device: string;
  /** The calls' records and counters, for reports (gpuCallLog.ts). */
  private readonly log: CallLog;
  get counters(): GpuMoveCounters { return this.log.counters; }
  /** Every pipeline call so far, in order. */
  get calls(): readonly GpuCallRecord[] { return this.log.calls; }
  private readonly o: ResolvedGpuMoveOptions;
  get movesPerCall(): number { return this.verifier ? 1 : this.o.movesPerCall; }
  private readonly W: number;
  private readonly H: number;
  private readonly n: number;
  private readonly program: DeviceProgram;
  /** the key the program is kept under after dispose (keepPlans), or null */
  private readonly programKey: string | null;
  /** whether the program was taken from an earlier solver (kept plans) */
  readonly tookKeptPlans: boolean;
  private readonly gpu: GPU;
  private readonly kernels: Kernels;
  private readonly plans: Map<string, Plan>;
  /** the program's constant inputs: data term, weights, V table, zeros */
  private readonly literals: DeviceProgram['literals'];
  /**
   * Whether the plans take the starting flows of their (single) move and
   * return its final ones (resume or warmStart); the flows a move that has
   * not converged reached (resume); all-zero flows, a cold start.
   */
  private readonly flowsInOut: boolean;
  private readonly carriedFlows: Float32Array;
  private readonly zeroFlows: Float32Array;
  private readonly labelsF: Float32Array;
  private readonly sourceKind: DataSourceKind;
  private readonly costSpec: ImageCostSpec | null;
  /** The largest data cost (the volume's largest entry, or the images' τ·scale): bounds the WTA's window sums. */
  private maxDataCost = 0;
  /** The largest w·V(a, b) of a smoothness term: with maxDataCost, bounds the energy's partial sums (energyOf). */
  private maxEdgeTerm = 0;
  /** The rounds and BFS passes of the next calls (roundSchedule.ts). */
  private readonly schedule: RoundSchedule;
  /** warmStart: whether it is on, and the flows [W, H, 2] each α's last move ended with */
  readonly warmStart: boolean;
  private readonly flowStore: Array<Float32Array | undefined>;
  private lastFlows?: Float32Array;
  /** The device WTA and energy (gpuReadouts.ts): dispose keeps or releases the program only after their calls in flight. */
  private readonly readouts: DeviceReadouts;
  private disposed = false;
  /** The plan guessed for the next call during the last one (moveSequence carries it between calls of the driver). */
  private guessedPlan?: Plan;
  private readonly verifier?: { builder: BinaryStepBuilder; bk: BoykovKolmogorovSolver; cuts: number };
  /** Resident moves (the option resident): device buffers, each α's last flows on the device, the last converged move's, and zero flows. */
  private residency?: ResidentBuffers;
  private readonly deviceFlows: Array<BufferLike | undefined> = [];
  private deviceLastFlows?: BufferLike;
  private deviceZeroFlows?: BufferLike;
  /** Why resident moves were turned off for the rest of this solver's life, if they were (see ResidentUnavailable). */
  residentOff?: string;
  /** Resident calls in flight per plan: such plans are never evicted from the cache (a look-ahead call copies the labels out of their buffers). */
  private readonly busyPlans = new Map<Plan, number>();

  constructor(private readonly ctx: GpuContext, private readonly energy: MrfEnergy, options: GpuMoveOptions) {
    const source = energy.data;
    this.o = resolveGpuMoveOptions(energy.width, energy.height, options);
    this.log = new CallLog(this.o);
    for (const k of ['planCompileRounds', 'planCompileRoundsPerRound'] as const) {
      const v = this.o[k];
      if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v)) throw new Error(`gpu expansion option ${k}: expected a finite number ≥ 0, got ${String(v)}`);
    }
    for (const k of ['iterationsPerRound', 'bfsPasses', 'finalBfsFactor', 'initialRounds', 'movesPerCall', 'maxIterations', 'maxCachedPlans', 'tileSide'] as const) {
      const v = this.o[k];
      if (!Number.isInteger(v) || v < 1) throw new Error(`gpu expansion option ${k}: expected a positive integer, got ${String(v)}`);
    }
    checkKernelScheme('gpu expansion', this.o);
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
    this.checkExactness();
    this.backend = `gpu-expansion-${ctx.mode}`;
    this.device = ctx.device;
    if (this.o.verify) {
      if (source.kind !== 'volume') throw new Error('gpu expansion: --verify needs the data cost volume on the host');
      this.verifier = { builder: new BinaryStepBuilder(W, H), bk: new BoykovKolmogorovSolver(), cuts: 0 };
    }
    // Set after the verifier: --verify runs one move per call (movesPerCall).
    const chained = this.movesPerCall > 1;
    const storeBytes = 8 * this.n * L;
    const warmStart = this.o.warmStart;
    if (warmStart === undefined) {
      this.warmStart = !chained && storeBytes <= os.totalmem() / 4;
    } else {
      if (typeof warmStart !== 'boolean') throw new Error(`gpu expansion option warmStart: expected true or false, got ${String(warmStart)}`);
      if (warmStart && chained) throw new Error(`gpu expansion option warmStart: needs one move per call, got movesPerCall ${this.o.movesPerCall}`);
      this.warmStart = warmStart;
    }
    this.flowStore = new Array<Float32Array | undefined>(this.warmStart ? L : 0);
    this.labelsF = new Float32Array(this.n);
    this.flowsInOut = !chained && (this.o.resume || this.warmStart);
    this.carriedFlows = new Float32Array(this.flowsInOut && this.o.resume ? 2 * this.n : 0);
    this.zeroFlows = new Float32Array(this.flowsInOut ? 2 * this.n : 0);
    this.schedule = new RoundSchedule({
      initialRounds: this.o.initialRounds, bfsPasses: this.o.bfsPasses, maxBfsPasses: this.n + 1, fixedRounds: this.o.fixedRounds, gate: this.o.gate,
      flowsInOut: this.flowsInOut, resume: this.o.resume, movesPerCall: this.movesPerCall,
      planCompileRounds: this.o.planCompileRounds, planCompileRoundsPerRound: this.o.planCompileRoundsPerRound,
    }, (moves, rounds, bfs) => this.plans.has(planKey(moves, rounds, bfs, this.verifier !== undefined)));

    // Constant inputs: captured by the plans as literals, so each is uploaded once per compiled plan, never per call.
    let dataDims: [number, number, number];
    let dataValues: () => Float32Array;
    if (source.kind === 'volume') {
      const costs = source.costs;
      if (costs.length !== this.n * L) throw new Error(`gpu expansion: data term has ${costs.length} entries, expected ${this.n * L} (${W}×${H}×${L})`);
      dataDims = [L, W, H];
      dataValues = () => Float32Array.from(costs);
    } else {
      const spec = this.costSpec!;
      const C = spec.channels;
      for (const [name, im] of [['left', source.left], ['right', source.right]] as const) {
        if (im.width !== W || im.height !== H || im.channels !== C) throw new Error(`gpu expansion: ${name} image is ${im.width}×${im.height}×${im.channels}, the energy ${W}×${H}×${C}`);
      }
      dataDims = [W * C, H, 6];
      dataValues = () => imagePlanes(source.left, source.right, spec);
    }
    const wt = new Float32Array(2 * this.n);
    wt.set(energy.wH, 0);
    wt.set(energy.wV, this.n);
    const vt = new Float32Array(L * L);
    for (let a = 0; a < L; a++) for (let b = 0; b < L; b++) vt[a * L + b] = pairwise(energy.smoothness, energy.truncation, a, b);

    // Everything the kernels and plans depend on besides the energy's values.
    const o = this.o;
    this.programKey = o.keepPlans && this.n <= MAX_KEPT_PROGRAM_PIXELS && REFILLABLE_MODES.has(ctx.mode)
      ? JSON.stringify([ctx.mode, W, H, L, source.kind, this.costSpec, dataDims, o.variant, o.push, o.bfs, o.reach, o.gate, o.tileSide, o.iterationsPerRound, o.finalBfsFactor, this.flowsInOut, o.maxCachedPlans])
      : null;
    let program = this.programKey === null ? undefined : takeKeptProgram<DeviceProgram>(this.programKey);
    if (program && (program.ctx.destroyed || !canRefillSharedLiterals(program.literals))) {
      releaseProgram(program);
      program = undefined;
    }
    if (program) {
      // The new energy's values replace the last solver's, on the host and in the device buffers the plans bind.
      const [data, weights, vTable] = program.literals;
      refillSharedLiteral(data, source.kind === 'volume' ? source.costs : dataValues());
      refillSharedLiteral(weights, wt);
      refillSharedLiteral(vTable, vt);
    } else {
      const literals: DeviceProgram['literals'] = [
        new Input(dataValues() as unknown as number[], dataDims),
        new Input(wt as unknown as number[], [W, H, 2]),
        new Input(vt as unknown as number[], [L, L]),
        new Input(new Float32Array(4) as unknown as number[], [4]),
      ];
      // Changed only between solvers (refillSharedLiteral): every plan binds and uploads them once per device, not once per plan and seat (graphcut/gpujs/sharedLiterals.ts).
      shareLiterals(literals);
      program = { ctx, kernels: createKernels(ctx.gpu, { W, H, L, sourceKind: source.kind, costSpec: this.costSpec }, this.o), plans: new Map(), literals, aux: new Map() };
    }
    this.tookKeptPlans = program.plans.size > 0;
    this.program = program;
    this.gpu = program.ctx.gpu;
    this.kernels = program.kernels;
    this.plans = program.plans;
    this.literals = program.literals;
    this.readouts = new DeviceReadouts({
      gpu: this.gpu, program, W, H, L, sourceKind: this.sourceKind, costSpec: this.costSpec,
      maxDataCost: this.maxDataCost, maxEdgeTerm: this.maxEdgeTerm, kept: this.programKey !== null, counters: this.counters,
    });
  }

  /** Refuses energies whose graphs could hold a value that f32 does not represent exactly. */
  private checkExactness(): void {
    const e = this.energy;
    const source = e.data;
    const spec = this.costSpec;
    if (this.n + 2 > MAX_GPU_EXACT_CAPACITY) throw new GpuPrecisionError(`grid has ${this.n} pixels; heights up to ${this.n + 1} exceed 2^24`);
    let maxD = 0;
    if (source.kind === 'volume') {
      const D = source.costs;
      for (let i = 0; i < D.length; i++) if (D[i] > maxD) maxD = D[i];
    } else if (spec) {
      maxD = spec.maxCost;
      // Census: 16 bits per channel (a 16-bit half of a code word); the others: 8-bit samples, gradients differ by up to 510.
      const rawMax = (spec.kind === 'census' ? 16 : spec.kind === 'sad' ? 255 : spec.kind === 'ssd' ? 255 * 255 : 1275) * spec.channels;
      if (rawMax * spec.scale > MAX_GPU_EXACT_CAPACITY) throw new GpuPrecisionError(`raw costs up to ${rawMax}·${spec.scale} exceed 2^24`);
    }
    let maxW = 0;
    for (let i = 0; i < this.n; i++) maxW = Math.max(maxW, e.wH[i], e.wV[i]);
    let maxV = 0;
    for (let a = 0; a < e.labels; a++) for (let b = 0; b < e.labels; b++) maxV = Math.max(maxV, pairwise(e.smoothness, e.truncation, a, b));
    // Unary: |D(α) − D(l)| plus two terms of at most w·V per incident edge; excess can also receive 4 edge capacities of at most 2·w·V.
    this.maxDataCost = maxD;
    this.maxEdgeTerm = maxW * maxV;
    const bound = maxD + 16 * maxW * maxV;
    if (bound > MAX_GPU_EXACT_CAPACITY) throw new GpuPrecisionError(`excess and capacities can reach ${bound}, above the f32-exact bound 2^24`);
  }

  /**
   * The compiled plan (cached per shape): `moves` moves of `rounds` rounds
   * each; with flowsInOut (one move) the move's starting flows are the third
   * argument and its final flows come back after the labels and tallies.
   */
  private plan(moves: number, rounds: number, bfs: number, verify: boolean): Plan {
    const fromFlows = this.flowsInOut;
    const key = planKey(moves, rounds, bfs, verify);
    const cached = this.plans.get(key);
    if (cached) {
      // Most recently used last: the cache evicts from the front.
      this.plans.delete(key);
      this.plans.set(key, cached);
      return cached;
    }
    const k = this.kernels;
    const K = this.o.iterationsPerRound;
    const finalBfs = this.o.finalBfsFactor * bfs;
    const [data, wt, vt, zeros] = this.literals;
    const sum = (tiles: unknown): unknown => k.sumTiles.reduce((r, f) => f(r), tiles);
    const or = (tiles: unknown): unknown => k.orTiles.reduce((r, f) => f(r), tiles);
    // State passes and checks take the move's tally last (the gate's input; dropped when ungated).
    const check = (S: unknown, C: unknown, T: unknown): unknown => or(k.checkTiles(S, C, T));
    const rounds_ = (S0: unknown, C: unknown, T0: unknown): [unknown, unknown] => {
      let S = S0;
      let T = T0;
      for (let r = 0; r < rounds; r++) {
        for (let i = 0; i < K; i++) for (const step of k.steps) S = step(S, C, T);
        S = k.relabel(S, C, r === rounds - 1 ? finalBfs : bfs, true, T);
        T = k.tally(check(S, C, T), T);
      }
      return [S, T];
    };
    // After the labels and tallies: the move's final flows (flowsInOut), then its state and capacities (--verify).
    const tail = (S: unknown, C: unknown): unknown[] => [...(fromFlows ? [k.flows(S)] : []), ...(verify ? [S, C] : [])];
    // `moves` moves chained (F: the move's starting flows, flowsInOut plans only).
    const literals = this.literals;
    const moves_ = (LB0: unknown, AL: unknown, F: unknown): unknown[] => {
      bindSharedLiterals(literals);
      let LB = LB0;
      let T: unknown = zeros;
      const outs: unknown[] = [];
      let S: unknown = null;
      let C: unknown = null;
      for (let j = 0; j < moves; j++) {
        T = k.startMove(T);
        C = k.caps(LB, AL, wt, vt, j);
        const S0 = fromFlows ? k.initFromFlows(LB, AL, data, wt, vt, j, C, F) : k.init(LB, AL, data, wt, vt, j);
        S = k.relabel(S0, C, bfs, true, T);
        T = k.tallyFirst(check(S, C, T), T);
        [S, T] = rounds_(S, C, T);
        const next = k.apply(LB, S, AL, T, j);
        outs.push(T, k.sumFinal(sum(k.changedTiles(next, LB))));
        LB = next;
      }
      return [LB, ...outs, ...tail(S, C)];
    };
    const pipe = fromFlows
      ? this.gpu.createPipeline(function (LB0: unknown, AL: unknown, F: unknown) { return moves_(LB0, AL, F); })
      : this.gpu.createPipeline(function (LB0: unknown, AL: unknown) { return moves_(LB0, AL, null); });
    // --verify reads the state and capacities as planes of rows; other plans take flat results.
    if (!verify) returnFlatResults(pipe);
    const p: Plan = { pipe, moves, rounds, bfs, verify, calls: 0 };
    this.plans.set(key, p);
    if (this.plans.size > this.o.maxCachedPlans) {
      const evicted = [...this.plans.entries()].find(([, q]) => !this.busyPlans.has(q));
      if (evicted) {
        this.plans.delete(evicted[0]);
        void evicted[1].pipe.destroy();
      }
    }
    this.counters.plans++;
    return p;
  }

  /** Plans compiled and not yet dropped (at most the option maxCachedPlans). */
  get cachedPlans(): number {
    return this.plans.size;
  }

  /** Executor kinds of the compiled plans (e.g. 'fused-encoder'), for reports. */
  executorKinds(): string[] {
    const kinds = new Set<string>();
    for (const p of this.plans.values()) if (p.pipe.executorKind) kinds.add(p.pipe.executorKind);
    return [...kinds];
  }

  async move(alpha: number, labels: Uint16Array): Promise<MoveResult> {
    const [r] = await this.moveSequence([alpha], labels);
    return r;
  }

  /**
   * Runs the moves of `alphas` in order on `labels` (in place), each exactly
   * as move() would; returns one result per α.
   */
  async moveSequence(alphas: readonly number[], labels: Uint16Array): Promise<MoveResult[]> {
    const L = this.energy.labels;
    for (const a of alphas) if (!Number.isInteger(a) || a < 0 || a >= L) throw new Error(`gpu expansion: α = ${a} is outside 0..${L - 1}`);
    if (labels.length !== this.n) throw new Error(`gpu expansion: labeling has ${labels.length} pixels, the energy ${this.n}`);
    const results: MoveResult[] = [];
    const perCall = this.verifier ? 1 : this.o.movesPerCall;
    const K = this.o.iterationsPerRound;
    let next = 0;
    // The move at alphas[next]: calls that failed so far, rounds they ran, and the rounds of a continuation (when its flows were kept).
    let attempts = 0;
    let spent = 0;
    let resumeRounds = 0;
    let unfinishedMs = 0;
    // Whether the move at alphas[next] started from borrowed flows (borrowFlows).
    let borrowedStart = false;
    // The plan guessed, during the previous call, for this one.
    let guessed: Plan | undefined = this.guessedPlan;
    while (next < alphas.length) {
      const resuming = resumeRounds > 0;
      const chunk = resuming ? alphas.slice(next, next + 1) : alphas.slice(next, next + perCall);
      const stored = this.warmStart ? this.flowStore[chunk[0]] : undefined;
      const kind: StartKind = stored ? 'warm' : 'cold';
      // A cold move may start from the flows of the last move that converged (another α's), when borrowFlows is on.
      const borrowed = !stored && this.o.borrowFlows && this.warmStart ? this.lastFlows : undefined;
      if (!resuming) borrowedStart = borrowed !== undefined;
      const t0 = performance.now();
      const plan = this.plan(chunk.length, resuming ? resumeRounds : this.schedule.rounds(kind), this.schedule.bfs, this.verifier !== undefined);
      const compiled = plan.calls++ === 0;
      if (guessed) {
        this.counters.guessedCalls++;
        if (guessed === plan) this.counters.guessHits++;
      }
      this.labelsF.set(labels); // Uint16 → f32 is exact; set() converts natively, about 15 times faster than a JS loop
      const before = this.verifier ? labels.slice() : undefined;
      const args: Input[] = [
        new Input(this.labelsF as unknown as number[], [this.W, this.H]),
        new Input(Float32Array.from(chunk) as unknown as number[], [chunk.length]),
      ];
      if (this.flowsInOut) {
        const start = resuming ? this.carriedFlows : stored ?? borrowed ?? this.zeroFlows;
        args.push(new Input(start as unknown as number[], [this.W, this.H, 2]));
      }
      const tCall = performance.now();
      let tSubmitted = NaN;
      const pending = callInPlace(plan.pipe, args);
      // A call that compiles its plan has not submitted by then; guessing would only delay it.
      const guess = compiled ? undefined : this.guessNextPlan(kind);
      guessed = guess;
      setImmediate(() => {
        tSubmitted = performance.now();
        if (guess && this.o.recordAhead && recordAhead(guess.pipe)) this.counters.recordedAhead++;
      });
      const out = (await pending) as unknown[];
      const tBack = performance.now();
      if (this.ctx.mode === 'webgpu') noteDeviceActive();
      const rows = out[0] as ArrayLike<ArrayLike<number>>;
      let done = 0;
      const neededRounds: number[] = [];
      let failed = false;
      let bfsShort = false;
      for (let j = 0; j < chunk.length; j++) {
        const T = readTally(out[1 + 2 * j] as ArrayLike<number>);
        const changed = (out[2 + 2 * j] as ArrayLike<number>)[0];
        if (T.gated) break;
        if (!T.converged) { failed = true; bfsShort = T.bfsShort; break; }
        // Rounds of the earlier calls of the move, and the checks that failed in this one.
        const rounds = (j === 0 ? spent : 0) + T.failedChecks;
        neededRounds.push(rounds);
        results.push({
          changed, predictedEnergy: NaN, buildMs: 0, flowMs: 0, truncatedTerms: 0,
          stats: {
            gpuMoves: 1, rounds, iterations: rounds * K,
            redoneMoves: j === 0 && attempts > 0 && !resuming ? 1 : 0, resumedCalls: j === 0 && resuming ? attempts : 0,
            warmMoves: j === 0 && kind === 'warm' ? 1 : 0,
            borrowedMoves: j === 0 && borrowedStart ? 1 : 0,
          },
        });
        done++;
      }
      // Labels after the last converged move (later moves of the call were gated and left them alone).
      readLabels(rows, labels, this.W, this.H);
      // The move's final flows follow the labels and its tally and changed count (flowsInOut), then --verify's state and capacities.
      const flowsOut = (this.flowsInOut ? out[3] : undefined) as KernelOutput;
      if (this.verifier && done === 1) {
        const at = this.flowsInOut ? 4 : 3;
        const vr = this.verifyCut(chunk[0], before!, out[at] as Planes, out[at + 1] as Planes);
        Object.assign(results[results.length - 1].stats, { verifiedCuts: 1 });
        results[results.length - 1].predictedEnergy = vr;
      }
      if (this.warmStart && done === 1) {
        // The converged move's flows start this α's next move.
        const alpha = chunk[0];
        const store = this.flowStore[alpha] ?? new Float32Array(2 * this.n);
        this.flowStore[alpha] = flattenState(flowsOut, this.W, this.H, store, 0, 2);
        this.lastFlows = this.flowStore[alpha];
        if (kind === 'warm') this.counters.warmMoves++;
      }
      const T0 = readTally(out[1] as ArrayLike<number>);
      this.log.called({
        rounds: plan.rounds, bfs: plan.bfs, moves: chunk.length, resumed: resuming, warm: kind === 'warm', compiled, failedChecks: T0.failedChecks, converged: T0.converged && !T0.gated,
        deviceMs: tBack - tCall, submitMs: Number.isNaN(tSubmitted) ? tBack - tCall : tSubmitted - tCall, lookAhead: false,
      }, chunk.length);
      this.counters.moves += done;
      this.counters.discardedMoves += chunk.length - done - (failed ? 1 : 0);
      // Time of the call, spread over the moves it completed (the driver sums per-move times); a call that completed none (continued or redone) is charged to the move it worked on, which the next completing call finishes.
      const elapsed = performance.now() - t0;
      if (done > 0) {
        for (let j = results.length - done; j < results.length; j++) results[j].flowMs = elapsed / done;
        results[results.length - done].flowMs += unfinishedMs;
        unfinishedMs = 0;
      } else {
        unfinishedMs += elapsed;
      }
      this.counters.hostMs += elapsed - (tBack - tCall);
      next += done;
      if (!failed) {
        if (done > 0 && borrowedStart) this.counters.borrowedMoves++;
        attempts = 0;
        spent = 0;
        resumeRounds = 0;
        this.schedule.movesDone(neededRounds, kind);
        continue;
      }
      attempts++;
      if (bfsShort) {
        // The global relabel restarts from scratch each round: without more passes it never reaches its fixed point.
        this.counters.bfsShortfalls++;
        this.schedule.bfsFellShort();
      }
      if (this.o.resume && this.flowsInOut) {
        // Continue from the flows the device had reached (the labels did not change, so neither did the graph).
        spent += plan.rounds;
        resumeRounds = this.schedule.continuation(spent, plan.rounds, kind);
        flattenState(flowsOut, this.W, this.H, this.carriedFlows, 0, 2);
      } else {
        this.counters.redoneMoves++;
        spent = 0;
        resumeRounds = 0;
        // A BFS shortfall says nothing about the flow (the test of the excess needs exact heights): only the passes double then.
        if (!bfsShort) this.schedule.doubleRounds(kind);
      }
      const ran = resumeRounds > 0 ? spent : plan.rounds;
      if ((resumeRounds > 0 ? spent + resumeRounds : this.schedule.rounds(kind)) * K > this.o.maxIterations) {
        throw new Error(`gpu expansion: move α=${alphas[next]} did not converge within ${ran * K} push-relabel iterations (maxIterations = ${this.o.maxIterations})`);
      }
    }
    this.guessedPlan = guessed;
    return results;
  }


  /**
   * The moves of a cycle (MoveSolver.runCycle). With resident moves (the
   * option resident) the next move is submitted while the device still
   * runs the last one; otherwise one move after another, as move().
   */
  async runCycle(alphas: readonly number[], labels: Uint16Array, hooks: CycleHooks): Promise<void> {
    const L = this.energy.labels;
    for (const a of alphas) if (!Number.isInteger(a) || a < 0 || a >= L) throw new Error(`gpu expansion: α = ${a} is outside 0..${L - 1}`);
    if (labels.length !== this.n) throw new Error(`gpu expansion: labeling has ${labels.length} pixels, the energy ${this.n}`);
    // Resident moves hand back the index of the first move they could not run (a plan gpu.js could not compile for them).
    const from = this.residentApplies() ? await this.residentCycle(alphas, labels, hooks) : 0;
    for (let i = from; i < alphas.length; i++) {
      if (hooks.skip(alphas[i])) hooks.done(i, null);
      else hooks.done(i, (await this.moveSequence([alphas[i]], labels))[0]);
    }
  }

  /** Whether this solver's cycles run as resident moves (see the option resident). */
  residentApplies(): boolean {
    const bytes = 8 * this.n * (this.energy.labels + 4);
    return this.o.resident && this.residentOff === undefined && this.ctx.mode === 'webgpu' && onePassCalls.installed && onePassCalls.enabled && onePassCalls.inPlace
      && !this.verifier && this.movesPerCall === 1 && this.warmStart && this.o.resume && this.flowsInOut && bytes <= RESIDENT_FLOWS_MAX_BYTES;
  }

  /**
   * A cycle of resident moves. Each call takes its starting flows from a
   * device buffer (its α's last flows, the last converged move's, the
   * flows its move had reached, or zeros) and leaves its final flows in a
   * buffer of its own; only the labels, the tally and the changed count
   * are read back. While a call runs, the next move that is not skipped
   * (as far as the driver can tell yet) is submitted too, with the labels
   * the running call will produce, copied on the device. Once the running
   * call's results are in and reported, that look-ahead call is kept if
   * the running move converged and the driver still names the same next
   * move; else it is dropped (its device work is wasted, nothing else)
   * and the right call is submitted from the host's labels.
   */
  private async residentCycle(alphas: readonly number[], labels: Uint16Array, hooks: CycleHooks): Promise<number> {
    const K = this.o.iterationsPerRound;
    const flowBytes = 8 * this.n;
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
    let carried: BufferLike | undefined;
    let moveMs = 0;
    let lastResultAt = performance.now();
    let cur: ResidentFlight | undefined;
    let index = nextMove(0, true);
    try {
      if (index >= 0) cur = await this.submitResident(alphas, index, labels, undefined, 0, undefined);
      while (cur) {
        // Look ahead while `cur` runs: the next move not skipped so far, if its plan is compiled (a compile would hold the host up).
        let ahead: ResidentFlight | undefined;
        const guess = nextMove(cur.index + 1, false);
        if (guess >= 0 && alphas[guess] !== cur.alpha) ahead = await this.submitResident(alphas, guess, labels, cur, 0, undefined);
        const results = await cur.results;
        const tBack = performance.now();
        if (this.ctx.mode === 'webgpu') noteDeviceActive();
        let T: MoveTally;
        let changed: number;
        let converged: boolean;
        try {
          T = readTally(results.views[1]);
          changed = results.views[2][0];
          converged = !T.gated && T.converged;
          // Labels change only in a converged call; f32 → uint16 is exact for labels.
          if (converged) labels.set(results.views[0]);
        } finally {
          results.release();
        }
        const waited = tBack - Math.max(cur.tCall, lastResultAt);
        this.log.called({
          rounds: cur.plan.rounds, bfs: cur.plan.bfs, moves: 1, resumed: cur.resuming, warm: cur.kind === 'warm', compiled: cur.compiled, failedChecks: T.failedChecks, converged,
          deviceMs: waited, submitMs: cur.submitMs, lookAhead: cur.lookAhead,
        }, 1);
        this.releasePlan(cur.plan);
        moveMs += tBack - lastResultAt;
        lastResultAt = tBack;
        if (converged) {
          const rounds = spent + T.failedChecks;
          const result: MoveResult = {
            changed, predictedEnergy: NaN, buildMs: 0, flowMs: moveMs, truncatedTerms: 0,
            stats: {
              gpuMoves: 1, rounds, iterations: rounds * K, redoneMoves: 0, resumedCalls: cur.resuming ? attempts : 0,
              warmMoves: cur.kind === 'warm' ? 1 : 0, borrowedMoves: cur.borrowed ? 1 : 0,
            },
          };
          this.counters.moves++;
          if (cur.kind === 'warm') this.counters.warmMoves++;
          if (cur.borrowed) this.counters.borrowedMoves++;
          // The move's final flows start its α's next move, and borrowing moves; those it replaces are free again.
          const old = this.deviceFlows[cur.alpha];
          this.deviceFlows[cur.alpha] = cur.flowsOut;
          this.deviceLastFlows = cur.flowsOut;
          if (old) this.residency!.give(old, flowBytes);
          if (carried) this.residency!.give(carried, flowBytes);
          carried = undefined;
          attempts = 0;
          spent = 0;
          resumeRounds = 0;
          moveMs = 0;
          this.schedule.movesDone([rounds], cur.kind);
          this.counters.hostMs += performance.now() - tBack;
          hooks.done(cur.index, result);
          const tNext = performance.now();
          index = nextMove(cur.index + 1, true);
          if (ahead && ahead.index === index) {
            cur = ahead;
          } else {
            if (ahead) this.dropResident(ahead, flowBytes);
            cur = index >= 0 ? await this.submitResident(alphas, index, labels, undefined, 0, undefined) : undefined;
          }
          this.counters.hostMs += performance.now() - tNext;
          continue;
        }
        // Not converged: the labels did not change; continue the move from the flows it reached (or double the BFS passes first).
        if (ahead) this.dropResident(ahead, flowBytes);
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
        if (carried) this.residency!.give(carried, flowBytes);
        carried = cur.flowsOut;
        cur = await this.submitResident(alphas, cur.index, labels, undefined, resumeRounds, { kind: cur.kind, borrowed: cur.borrowed, flows: carried });
        this.counters.hostMs += performance.now() - tBack;
      }
    } catch (e) {
      // Calls still in flight finish on the device; their staging buffers are left to the destroy.
      this.busyPlans.clear();
      if (!(e instanceof ResidentUnavailable)) throw e;
      // The rest of the run moves one by one through gpu.js's call, from the move that could not be submitted (started afresh; the flows kept on the device are given up).
      this.residentOff = e.message;
      return e.index;
    }
    return alphas.length;
  }

  /**
   * Submits the resident call of the move at `index`: from the host's
   * labels, or (`after`, a look-ahead) from the labels `after` will leave,
   * assuming it converges; a fresh move's flows are its α's, else the
   * last converged move's (borrowFlows), else zeros; a continuation
   * (`resumeRounds` > 0) gives its kind and flows. A look-ahead whose plan
   * is not compiled yet is not submitted (undefined).
   */
  private async submitResident(
    alphas: readonly number[], index: number, labels: Uint16Array, after: ResidentFlight | undefined,
    resumeRounds: number, resume: { kind: StartKind; borrowed: boolean; flows: BufferLike } | undefined,
  ): Promise<ResidentFlight | undefined> {
    const alpha = alphas[index];
    const tCall = performance.now();
    const stored = this.deviceFlows[alpha];
    const kind: StartKind = resume ? resume.kind : stored ? 'warm' : 'cold';
    const lastFlows = after ? after.flowsOut : this.deviceLastFlows;
    const borrowedFlows = !resume && !stored && this.o.borrowFlows ? lastFlows : undefined;
    const rounds = resume ? resumeRounds : this.schedule.rounds(kind);
    const alphaArg = Float32Array.of(alpha);
    let plan: Plan | undefined;
    let ex: FusedExecutor | null;
    let compiled = false;
    if (after) {
      // Only a plan that is cached and compiled: neither a compile nor an eviction for a call that may be dropped.
      plan = this.plans.get(planKey(1, rounds, this.schedule.bfs, false));
      ex = plan ? liveExecutor(plan.pipe) : null;
      if (!plan || !ex) return undefined;
    } else {
      plan = this.plan(1, rounds, this.schedule.bfs, false);
      this.labelsF.set(labels);
      compiled = plan.calls === 0;
      ex = await compiledExecutor(plan.pipe, [
        new Input(this.labelsF as unknown as number[], [this.W, this.H]),
        new Input(alphaArg as unknown as number[], [1]),
        new Input(this.zeroFlows as unknown as number[], [this.W, this.H, 2]),
      ]);
      if (!ex) throw new ResidentUnavailable(index, `gpu.js ran plan ${planKey(1, rounds, this.schedule.bfs, false)} on its generic executor (${String((plan.pipe as { pipeline?: { fallbackReason?: unknown } }).pipeline?.fallbackReason ?? 'no reason given')})`);
    }
    if (!this.residency) {
      this.residency = new ResidentBuffers(ResidentBuffers.deviceOf(ex));
      this.deviceZeroFlows = this.residency.zeros(8 * this.n);
    }
    plan.calls++;
    const flowsOut = this.residency.take(8 * this.n);
    const flowsIn = resume ? resume.flows : stored ?? borrowedFlows ?? this.deviceZeroFlows!;
    const results: Promise<ReadResults> = this.residency.submit(ex, {
      hostArgs: after ? [[1, alphaArg]] : [[0, this.labelsF], [1, alphaArg]],
      deviceArgs: after ? [[0, resultBuffer(after.ex, 0)], [2, flowsIn]] : [[2, flowsIn]],
      keep: [[3, flowsOut]],
      read: [0, 1, 2],
    });
    // A dropped call's results are never looked at; its staging buffer is freed once it is back.
    this.busyPlans.set(plan, (this.busyPlans.get(plan) ?? 0) + 1);
    return {
      index, alpha, plan, ex, kind, resuming: resume !== undefined, borrowed: resume ? resume.borrowed : borrowedFlows !== undefined,
      flowsOut, results, tCall, submitMs: performance.now() - tCall, lookAhead: after !== undefined, compiled,
    };
  }

  /** One resident call of `plan` fewer in flight. */
  private releasePlan(plan: Plan): void {
    const left = (this.busyPlans.get(plan) ?? 1) - 1;
    if (left > 0) this.busyPlans.set(plan, left);
    else this.busyPlans.delete(plan);
  }

  /** Drops a look-ahead call: its flows buffer is free again (later writes to it are ordered after the call), its staging once it is back. */
  private dropResident(f: ResidentFlight, flowBytes: number): void {
    this.counters.droppedCalls++;
    this.releasePlan(f.plan);
    this.residency!.give(f.flowsOut, flowBytes);
    void f.results.then((r) => r.release(), () => undefined);
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
    return this.plans.get(planKey(this.movesPerCall, this.schedule.rounds(kind), this.o.bfsPasses, this.verifier !== undefined));
  }

  /**
   * --verify for one move: rebuilds the graph on the CPU, solves it with BK
   * and checks the device graph, the flow and the canonical cut against it.
   * Returns the energy the cut predicts (flow + constant).
   */
  private verifyCut(alpha: number, before: Uint16Array, S: Planes, C: Planes): number {
    const v = this.verifier!;
    v.cuts++;
    const { W, H, n } = this;
    const step = v.builder.build(this.energy, before, alpha, this.o.variant);
    const g = step.graph;
    for (let y = 0, p = 0; y < H; y++) {
      for (let x = 0; x < W; x++, p++) {
        if (C[0][y][x] !== g.right[p] || C[2][y][x] !== g.down[p] || C[1][y][x] !== g.rightRev[p] || C[3][y][x] !== g.downRev[p]) {
          throw new VerificationError(`--verify: cut ${v.cuts} (α=${alpha}): the device graph differs from the CPU construction at pixel ${p}`);
        }
      }
    }
    const ref = v.bk.solveSync(g);
    const sinkSide = new Uint8Array(n);
    let flow = 0;
    for (let y = 0, p = 0; y < H; y++) {
      for (let x = 0; x < W; x++, p++) {
        sinkSide[p] = S[PLANE.height][y][x] < n + 1 ? 1 : 0;
        // Builder graphs have c(s→p)·c(p→t) = 0, so the flow into the sink is Σ c(p→t) − final sink residual.
        flow += g.sink[p] - sinkResidualOf(S[PLANE.net][y][x]);
      }
    }
    if (flow !== ref.flow) throw new VerificationError(`--verify: cut ${v.cuts} (α=${alpha}): the device found max-flow ${flow}, the CPU solver ${ref.flow}`);
    let differing = 0;
    for (let p = 0; p < n; p++) if (sinkSide[p] !== ref.sinkSide[p]) differing++;
    if (differing > 0) throw new VerificationError(`--verify: cut ${v.cuts} (α=${alpha}): device and CPU agree on the flow ${flow} but ${differing} pixels are on different sides of the canonical cut`);
    if (cutCapacity(g, sinkSide) !== flow) throw new VerificationError(`--verify: cut ${v.cuts} (α=${alpha}): the device cut's capacity differs from its flow`);
    return flow + step.constant;
  }

  /**
   * MoveSolver.initialWta: on WebGPU the WTA labeling is computed on the
   * device (deviceWta); on gpu.js's CPU backends the host's WTA is faster,
   * and undefined leaves it to the caller.
   */
  async initialWta(window: number): Promise<Uint16Array | undefined> {
    return this.ctx.mode === 'webgpu' ? this.deviceWta(window) : undefined;
  }

  /** The device WTA (gpuReadouts.ts); `chunkEntries` bounds a label chunk's intermediates. */
  deviceWta(window: number, chunkEntries?: number): Promise<Uint16Array | undefined> {
    return this.readouts.wta(window, chunkEntries);
  }

  /** Energy of a labeling: on the host when the volume is there, else reduced on the device (exact partial sums). */
  async energyOf(labels: Uint16Array): Promise<EnergyBreakdown> {
    if (this.sourceKind === 'volume') return computeEnergy(this.energy, labels);
    return this.readouts.energy(labels);
  }

  dispose(): void {
    // A second dispose would keep (or release) the program again.
    if (this.disposed) return;
    this.disposed = true;
    // The resident flows and staging buffers are this solver's (plans may be kept for the next one).
    this.residency?.destroy();
    this.residency = undefined;
    // The auxiliary pipelines bind the literals: the program is kept (and refilled by the next solver) or released only after their calls in flight.
    const key = this.programKey;
    const program = this.program;
    const done = (): void => {
      if (key !== null) keepProgram(key, program, () => releaseProgram(program));
      else releaseProgram(program);
    };
    // Kept at once when no call is in flight, so that a solver made right after this one finds it.
    const inFlight = this.readouts.inFlight();
    if (inFlight.length > 0) void Promise.allSettled(inFlight).then(done);
    else done();
  }
}
