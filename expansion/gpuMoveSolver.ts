import * as os from 'os';
import { Input, type GPU, type IGPUKernelSettings, type IKernelRunShortcut, type IPipelineRunShortcut, type KernelOutput } from 'gpu.js';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import type { GpuContext } from '../graphcut/gpuBackend';
import { callInPlace, liveExecutor, onePassCalls, recordAhead, returnFlatResults, type FusedExecutor } from '../graphcut/gpujs/onePassCalls';
import { compiledExecutor, ResidentBuffers, resultBuffer, type BufferLike, type ReadResults } from '../graphcut/gpujs/residentCalls';
import { noteDeviceActive } from '../graphcut/gpuClockWarmup';
import { bindSharedLiterals, canRefillSharedLiterals, refillSharedLiteral, releaseSharedLiterals, shareLiterals } from '../graphcut/gpujs/sharedLiterals';
import { cutCapacity, MAX_GPU_EXACT_CAPACITY } from '../graphcut/gridGraph';
import { flattenState, GpuPrecisionError, sinkResidualOf } from '../graphcut/pushRelabel';
import {
  checkKernelScheme, gatedKernel, globalRelabelPasses, iterationPasses, STATE_PLANES, PLANE, type BfsScheme, type GlobalRelabel, type PushScheme, type StatePass,
} from '../graphcut/pushRelabelKernels';
import { forwardGradients } from '../data/costImage';
import { BinaryStepBuilder, type GraphVariant } from './binaryStep';
import { computeEnergy, isMetricTable, pairwise, type CostImage, type EnergyBreakdown, type MrfEnergy } from '../data/energy';
import {
  applyCutSource, capacitySource, changedTilesSource, checkTilesSource, energyChunksSource, energyTermsSource, flowPlanesSource,
  initStateSource, MOVE_DONE_GATE, orTilesSource, reductionLevels, startMoveSource, sumFinalSource, sumTilesSource, tallySource, wtaCostsSource, wtaPickSource,
  wtaRowSumsSource, imageCostSpec, type DataSourceKind, type ImageCostSpec,
} from './gpuMoveKernels';
import { keepProgram, takeKeptProgram } from './gpuKeptPrograms';
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

/**
 * Moves whose needs choose the next rounds; the fixed cost of a call, and the extra cost of
 * uploading and reading back a move's flows (resume, warmStart), in rounds;
 * the most rounds a plan gets.
 */
const ADAPT_WINDOW = 32;
const CALL_COST_IN_ROUNDS = 2;
const FLOWS_COST_IN_ROUNDS = 1;
/**
 * Cost of a gated round (after its move converged) relative to a full
 * round: its passes are copies, which at the Middlebury sizes cost about
 * what dispatching a pass costs. Least-squares fits of per-call device
 * times gave 0.4 (Adirondack) to 0.7 (teddy) (H200, a26d8b0; gpuBench's
 * per-call records).
 */
const GATED_ROUND_COST = 0.5;
const MAX_ROUNDS = 1 << 12;
/**
 * Defaults of planCompileRounds and planCompileRoundsPerRound: compiling a
 * plan of R rounds is priced at 10 + 2.5·R rounds when the rounds of the
 * next calls are chosen. Since plans share their kernel builds and
 * constant inputs, a compile's extra time grows with the passes it traces
 * and binds: the first calls of plans cost 7 + 1.9·R ms more than calls of
 * compiled ones on tsukuba (0.8 ms a round), 7 + 2.2·R ms on teddy (0.7 ms)
 * and 15 + 1.7·R ms on Adirondack (1.2 ms), about 10 + 2.5·R rounds on all
 * three. The flat price of 40 rounds it replaces (set when a compile cost
 * 55–590 ms) overpriced short plans and underpriced long ones: in two sets
 * of four paired runs, moves took 4–5 % less time on tsukuba, 5–11 % on
 * teddy and 6–7 % on Adirondack by the median (H200, BENCHMARKS.md).
 */
const PLAN_COMPILE_ROUNDS = 10;
const PLAN_COMPILE_ROUNDS_PER_ROUND = 2.5;
/**
 * Entries of a WTA chunk's [W, H, NC] intermediates (deviceWta): 2^24 floats
 * (64 MiB) each, so tsukuba to Adirondack take one or two chunks and a
 * 3000×2000 pair two labels a chunk.
 */
const WTA_CHUNK_ENTRIES = 1 << 24;
/** Auxiliary pipelines a program keeps (DeviceProgram.aux): a WTA and an energy pipeline per window or chunk in use, a few windows of a parameter sweep. */
const MAX_AUX_PIPELINES = 6;
/**
 * Compiled plans kept at once (least recently used dropped first): 32, and
 * 8 above 2^20 pixels. Each plan holds its own device buffers, several of
 * them state-sized: a 3000×2000 cycle that compiled 26 plans peaked at
 * 37.8 GB of GPU memory against 17.0 GB for an earlier build's 9 (H200).
 * At the Middlebury sizes plans are small and recompiling costs time.
 */
export function defaultMaxCachedPlans(pixels: number): number {
  return pixels > 1 << 20 ? 8 : 32;
}
/**
 * Rounds a plan may get: powers of two and their halfway points (a plan is
 * compiled once per shape, so the choices are few; halfway points halve
 * the rounds a move gets beyond its need: teddy's moves need 4–9).
 */
const ROUND_CHOICES: readonly number[] = (() => {
  const out: number[] = [1];
  for (let r = 2; r <= MAX_ROUNDS; r *= 2) out.push(r, (3 * r) / 2);
  return out.filter((r) => r <= MAX_ROUNDS);
})();
/**
 * Default of finalBfsFactor: the last round of a plan runs this many times
 * B BFS passes. Only the last check decides whether a move converged, and a
 * global relabel restarts from scratch, so a move whose final BFS needs
 * more than B passes could not converge in any number of rounds: on
 * Adirondack, 303 calls failed with a BFS shortfall at B = 16 for 292 moves
 * (H200, cold starts). It was 4 until warm starts made most calls a round
 * or two long, when the last BFS became a large part of a call: with 2,
 * tsukuba, teddy and Adirondack made the same calls with the same
 * shortfalls as with 4, and ran 2–14 % faster (H200, BENCHMARKS.md).
 */
const FINAL_BFS_FACTOR = 2;
/**
 * Default tileSide: each thread of the per-pixel reductions (a convergence
 * check, the count of changed pixels) walks a 2×2 tile of pixels. A whole
 * check (tiles and OR levels) took 31 µs at 384×288 and 89 µs at 718×496
 * with 2×2 tiles, against 93 and 202 µs with 8×8 (whose 48×36 threads keep
 * few of the GPU's cores busy, each walking 64 pixels): whole runs, six
 * pairs alternating in one process, moved from 412 to 337 ms on tsukuba,
 * 1742 to 1634 ms on teddy and 8076 to 7739 ms on Adirondack by the median
 * (H200, BENCHMARKS.md). 1×1 was as fast per check at these sizes and no
 * faster per run.
 */
const TILE_SIDE = 2;

export interface GpuMoveOptions {
  variant: GraphVariant;
  /** K: push-relabel iterations per round (default 24; with sweeps an iteration is a horizontal and a vertical pass; 16 until the shaders ran without bounds checks, when 24 took 3–10 % off teddy's and Adirondack's moves and left tsukuba's within noise, H200, BENCHMARKS.md). */
  iterationsPerRound?: number;
  /** B: BFS passes of the global relabel after every round but the plan's last (which gets finalBfsFactor·B), and initially (default: defaultBfsPasses). */
  bfsPasses?: number;
  /** The last round's global relabel runs this many times B passes (default 2). */
  finalBfsFactor?: number;
  /** Rounds per move in the first plan; later plans adapt to the rounds moves needed (default: defaultInitialRounds). */
  initialRounds?: number;
  /** Moves chained in one pipeline call (default 1: on tsukuba the rounds moves need vary so much that chaining lost to redos, H200). */
  movesPerCall?: number;
  /** Keep the number of rounds fixed instead of adapting it (ablation). */
  fixedRounds?: boolean;
  /** --verify: every cut is re-solved on the CPU with BK and compared (graph, flow and cut); one move per call. */
  verify?: boolean;
  /** Safety limit: a move needing more push-relabel iterations than this throws (default 4·10^6). */
  maxIterations?: number;
  /** Push kernels: 'sweep' (segmented runs, a horizontal and a vertical pass per iteration), 'split-sweep' (each sweep as a gather of the runs, walked once per pixel, and a loop-free apply) or 'lockstep' (one edge per pass); default: defaultPush. */
  push?: PushScheme;
  /** Global relabel passes: 'scan' (default: relaxation along straight residual runs) or 'level' (one BFS level per pass). */
  bfs?: BfsScheme;
  /** Segment length of the sweeps and longest run of a BFS scan (default: defaultReach). */
  reach?: number;
  /**
   * A move that has not converged continues from the edge flows it had
   * reached, in the next call, instead of being redone from scratch
   * (default true). Each single-move call then also reads back its flows
   * ([W, H, 2] floats); moves chained in one call (movesPerCall > 1) are
   * still redone.
   */
  resume?: boolean;
  /**
   * Start each move from the edge flows that the same α's previous move
   * ended with (clamped to the new graph; initStateSource) instead of from
   * zero flow. Needs one move per call; the flows of every label are kept
   * on the host, 8·W·H·L bytes (default: on when that is at most a quarter
   * of the machine's memory and moves are not chained).
   */
  warmStart?: boolean;
  /** Compiled plans kept (each holds device buffers); the least recently used is dropped beyond it (default: defaultMaxCachedPlans). */
  maxCachedPlans?: number;
  /**
   * What compiling a plan shape not in the cache costs, in rounds, when the
   * rounds of the next calls are chosen: planCompileRounds plus
   * planCompileRoundsPerRound for each round of the plan (defaults 10 and
   * 2.5, measured; both 0 ignore compiles, as builds before these options
   * did).
   */
  planCompileRounds?: number;
  planCompileRoundsPerRound?: number;
  /**
   * Gate the state passes and checks on the move's tally (default true):
   * once a check has passed, the plan's remaining rounds are copies of the
   * state instead of push-relabel and BFS passes (MOVE_DONE_GATE).
   */
  gate?: boolean;
  /**
   * With warmStart, a move whose α has no stored flows yet (the first
   * cycle) starts from the flows the last converged move ended with,
   * another α's, instead of zero flow (default true). Any flows give a valid
   * preflow once clamped, so only the rounds change: the first cycle's
   * moves needed 27 % fewer on teddy and 15 % fewer on Adirondack (8 % more
   * on tsukuba), and whole runs' moves took 1–10 % less time on tsukuba,
   * −4 to +1.5 % on teddy and 2–4 % less on Adirondack by the median of two
   * sets of five and six pairs (H200, BENCHMARKS.md).
   */
  borrowFlows?: boolean;
  /** Side of the square of pixels each thread of a per-pixel reduction (a convergence check, the count of changed pixels) walks (default 2; it was 8). */
  tileSide?: number;
  /**
   * On dispose, keep the kernels and compiled plans for the next solver of
   * the same shape and device options in this process, which takes them
   * with its own energy instead of compiling its own (default true; grids
   * up to 2^20 pixels, WebGPU and gpu.js's cpu backend: REFILLABLE_MODES;
   * expansion/gpuKeptPrograms.ts).
   */
  keepPlans?: boolean;
  /**
   * While the device runs a call, record the passes of the call expected
   * next (the next move's plan, taken to start like this one), so that
   * the host does not record them between the two calls while the device
   * idles (default true; WebGPU with one-pass calls only:
   * graphcut/gpujs/onePassCalls.ts, recordAhead).
   */
  recordAhead?: boolean;
  /**
   * Run each cycle's moves (runCycle) with the flows of every label kept on
   * the device and the next move submitted before the last one's results
   * are read, taking that move's labels on the device (default true where
   * it applies: WebGPU with one-pass calls, warmStart and resume on, one
   * move per call, no --verify, and the device flows within
   * RESIDENT_FLOWS_MAX_BYTES). A look-ahead move is dropped, and submitted
   * again, when the move before it had not converged or changed which
   * label comes next; the labels are those of one-by-one moves either way
   * (the cut of a maximum flow is unique: the pixels that reach the sink).
   */
  resident?: boolean;
}

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

/** How a move starts: from zero flow, or from its α's stored flows (warmStart). */
type StartKind = 'cold' | 'warm';


interface Plan {
  pipe: IPipelineRunShortcut;
  moves: number;
  rounds: number;
  bfs: number;
  verify: boolean;
  /** calls made with it so far (the first one compiles it) */
  calls: number;
}

interface Kernels {
  caps: IKernelRunShortcut;
  /** the init from zero flow (chained moves), and the one from given flows (single moves with resume or warmStart) */
  init: IKernelRunShortcut;
  initFromFlows: IKernelRunShortcut;
  /** the flow planes of a state, [W, H, 2] */
  flows: IKernelRunShortcut;
  steps: StatePass[];
  relabel: GlobalRelabel;
  /** gated like the state passes: the gate's input last */
  checkTiles: (...a: unknown[]) => unknown;
  /** levels of the tile reductions, from [ceil(W/tileSide), ceil(H/tileSide)] down to at most 8×8: sums (changed pixels) and ORs (check codes) */
  sumTiles: IKernelRunShortcut[];
  orTiles: IKernelRunShortcut[];
  tally: IKernelRunShortcut;
  tallyFirst: IKernelRunShortcut;
  startMove: IKernelRunShortcut;
  apply: IKernelRunShortcut;
  changedTiles: IKernelRunShortcut;
  sumFinal: IKernelRunShortcut;
}

/**
 * What a solver builds on the device, which depends on the energy's shape
 * and the device options only: kept for the next solver of the same shape
 * (gpuKeptPrograms.ts), which refills the constant inputs with its energy.
 */
interface DeviceProgram {
  /** the context whose gpu.js instance made the kernels and plans (a destroyed one takes them with it) */
  ctx: GpuContext;
  kernels: Kernels;
  plans: Map<string, Plan>;
  /** the constant inputs the plans bind: data term (volume or images), smoothness weights, V table, four zeros */
  literals: [Input, Input, Input, Input];
  /**
   * Pipelines besides the moves' plans, by what they compile: the device
   * WTA's (window and chunk) and the energy's (its chunk of columns). They
   * bind the same literals, so a kept program keeps them too; at most
   * MAX_AUX_PIPELINES, the least recently used dropped first.
   */
  aux: Map<string, IPipelineRunShortcut>;
}

/**
 * Backends whose compiled plans see a refilled constant input: WebGPU binds
 * the literal's device buffer (refilled by a queue write) and gpu.js's cpu
 * backend reads the Input at every call. Its webasm backend copies each
 * literal into the plan's WebAssembly memory when the plan compiles, so a
 * kept webasm plan would run on the last energy's values: it keeps none.
 */
const REFILLABLE_MODES: ReadonlySet<string> = new Set(['webgpu', 'cpu']);

/** Largest grid whose program is kept after its solver: a program holds the buffers of all its plans, several gigabytes at 3000×2000. */
const MAX_KEPT_PROGRAM_PIXELS = 1 << 20;

/**
 * Most device memory the resident moves' flows may take (8·W·H bytes per
 * label, plus a few in flight): 2 GiB, which covers every Middlebury scene
 * (Adirondack at quarter size: 0.2 GB) but not a 3000×2000 pair with 300
 * labels (14 GB), whose moves keep their flows on the host.
 */
export const RESIDENT_FLOWS_MAX_BYTES = 2 ** 31;

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
  discardedMoves: number;
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

/**
 * One pipeline call, for time models (gpuBench saves them with each run:
 * the fixed cost of a call and the cost of a round, full or gated, are
 * fitted from them).
 */
export interface GpuCallRecord {
  /** rounds and BFS passes per global relabel of the plan, moves it chained */
  rounds: number;
  bfs: number;
  moves: number;
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

/**
 * Default reach: 8 up to 2^20 pixels, 32 above. A global relabel of B
 * scans covers distances up to about B·reach per straight stretch, and a
 * pass walks up to reach pixels each way, so a shorter reach makes cheaper
 * passes that need more of them. With warm starts, the last BFS at 2·B and
 * the first plan at 8 rounds, reach 8 ran the moves of tsukuba, teddy and
 * Adirondack 10–36 % faster than 16 and 32 (Adirondack 7.8–7.9 s against
 * 12.1–12.4 s; 4 and 12 were slower), while one cycle of a 3000×2000 pair
 * with 300 labels took 201 s against 190 s with 32 (H200, BENCHMARKS.md).
 */
export function defaultReach(width: number, height: number): number {
  return width * height > 1 << 20 ? 32 : 8;
}

/**
 * Default B (BFS passes per global relabel): 16 up to 512 pixels a side, 32
 * above. A move whose BFS falls short costs another call; on Adirondack
 * (718×496) B = 16 fell short on 163 of 292 moves and B = 32 on 31, and the
 * run took 21.9 s against 25.1 s, while on teddy B = 32 took 5.98 s against
 * 5.44 s (H200, a26d8b0, BENCHMARKS.md).
 */
export function defaultBfsPasses(width: number, height: number): number {
  return Math.max(width, height) > 512 ? 32 : 16;
}

/**
 * Default initialRounds: 8 up to 512 pixels a side, 12 above (the rule of
 * B). The first cycle's moves need a median 5 rounds on tsukuba, 6 on
 * teddy and 11 on Adirondack. From 4, tsukuba, teddy and Adirondack made
 * more continuation calls and plan shapes (1–9 % of their moves' time), and
 * 12 overshot on tsukuba (H200). Since compiles are priced by their rounds,
 * 12 ran Adirondack's moves 8 and 5 % faster than 8 (medians of three and
 * five pairs) while tsukuba took 13 % longer and teddy the same; 6 was no
 * faster anywhere (BENCHMARKS.md).
 */
export function defaultInitialRounds(width: number, height: number): number {
  return Math.max(width, height) > 512 ? 12 : 8;
}

/**
 * Default push kernels: the split sweep above 2^20 pixels, the single-kernel
 * sweep below. Per pass on the H200 the split sweep's gather + apply took
 * 0.79 + 0.89 ms against 1.11 + 1.53 ms at 3000×2000 (its walks run once per
 * pixel instead of once per changed state plane); at the Middlebury sizes,
 * where a pass costs about what dispatching it costs, whole runs were the
 * same within noise (BENCHMARKS.md).
 */
export function defaultPush(width: number, height: number): PushScheme {
  return width * height > 1 << 20 ? 'split-sweep' : 'sweep';
}

export class GpuMoveSolver implements MoveSolver {
  readonly backend: string;
  readonly device: string;
  readonly counters: GpuMoveCounters = {
    pipelineCalls: 0, moves: 0, redoneMoves: 0, resumedCalls: 0, warmMoves: 0, borrowedMoves: 0, bfsShortfalls: 0, discardedMoves: 0, plans: 0, rounds: 0, iterations: 0, bfsPasses: 0, guessedCalls: 0, guessHits: 0, recordedAhead: 0, lookAheadCalls: 0, droppedCalls: 0, auxPipelines: 0, deviceMs: 0, hostMs: 0,
  };
  /** Every pipeline call so far, in order. */
  readonly calls: GpuCallRecord[] = [];
  private readonly o: Required<Omit<GpuMoveOptions, 'warmStart'>>;
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
  private bfs: number;
  /**
   * Rounds of the next fresh plans, and the rounds the most recent moves
   * needed (adapt()), apart for moves that start cold and warm: a warm
   * move in a late cycle often needs none, a cold one a dozen.
   */
  private readonly rounds: Record<StartKind, number>;
  private readonly history: Record<StartKind, number[]> = { cold: [], warm: [] };
  /** warmStart: whether it is on, and the flows [W, H, 2] each α's last move ended with */
  readonly warmStart: boolean;
  private readonly flowStore: Array<Float32Array | undefined>;
  private lastFlows?: Float32Array;
  /** Calls of the program's auxiliary pipelines not yet done: dispose keeps or releases the program (refilled or freed literals) only after them. */
  private readonly auxInFlight = new Set<Promise<unknown>>();
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
    this.o = {
      iterationsPerRound: 24, bfsPasses: defaultBfsPasses(energy.width, energy.height), initialRounds: defaultInitialRounds(energy.width, energy.height), movesPerCall: 1, fixedRounds: false, verify: false, maxIterations: 4_000_000,
      push: defaultPush(energy.width, energy.height), bfs: 'scan', reach: defaultReach(energy.width, energy.height), resume: true,
      maxCachedPlans: defaultMaxCachedPlans(energy.width * energy.height), gate: true, planCompileRounds: PLAN_COMPILE_ROUNDS, planCompileRoundsPerRound: PLAN_COMPILE_ROUNDS_PER_ROUND, recordAhead: true, finalBfsFactor: FINAL_BFS_FACTOR, tileSide: TILE_SIDE, borrowFlows: true, keepPlans: true, resident: true,
      ...options,
    };
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
    this.rounds = { cold: this.o.initialRounds, warm: this.o.initialRounds };
    this.bfs = this.o.bfsPasses;
    if (this.o.verify) {
      if (source.kind !== 'volume') throw new Error('gpu expansion: --verify needs the data cost volume on the host');
      this.verifier = { builder: new BinaryStepBuilder(W, H), bk: new BoykovKolmogorovSolver(), cuts: 0 };
    }
    // Set after the verifier: --verify runs one move per call (movesPerCall).
    const chained = this.movesPerCall > 1;
    const storeBytes = 8 * this.n * L;
    if (options.warmStart === undefined) {
      this.warmStart = !chained && storeBytes <= os.totalmem() / 4;
    } else {
      if (typeof options.warmStart !== 'boolean') throw new Error(`gpu expansion option warmStart: expected true or false, got ${String(options.warmStart)}`);
      if (options.warmStart && chained) throw new Error(`gpu expansion option warmStart: needs one move per call, got movesPerCall ${this.o.movesPerCall}`);
      this.warmStart = options.warmStart;
    }
    this.flowStore = new Array<Float32Array | undefined>(this.warmStart ? L : 0);
    this.labelsF = new Float32Array(this.n);
    this.flowsInOut = !chained && (this.o.resume || this.warmStart);
    this.carriedFlows = new Float32Array(this.flowsInOut && this.o.resume ? 2 * this.n : 0);
    this.zeroFlows = new Float32Array(this.flowsInOut ? 2 * this.n : 0);

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
      program = { ctx, kernels: this.createKernels(ctx.gpu, source.kind), plans: new Map(), literals, aux: new Map() };
    }
    this.tookKeptPlans = program.plans.size > 0;
    this.program = program;
    this.gpu = program.ctx.gpu;
    this.kernels = program.kernels;
    this.plans = program.plans;
    this.literals = program.literals;
  }

  /** The kernels of a program, on `gpu`. */
  private createKernels(gpu: GPU, sourceKind: DataSourceKind): Kernels {
    const { W, H } = this;
    const constants = { W, H, INF: this.n + 1, L: this.energy.labels, REACH: this.o.reach };
    const grid = (planes: number): IGPUKernelSettings => kernelSettings(planes > 1 ? [W, H, planes] : [W, H], constants);
    const line = (len: number): IGPUKernelSettings => kernelSettings([len], constants);
    const reversed = this.o.variant === 'reversed';
    const side = this.o.tileSide;
    const tiles = reductionLevels(W, H, side);
    const final = { FW: tiles[tiles.length - 1][0], FH: tiles[tiles.length - 1][1] };
    // Without the gate the kernels are compiled ungated and drop the tally the plans pass them.
    const gate = this.o.gate ? MOVE_DONE_GATE : undefined;
    return {
      caps: gpu.createKernel(capacitySource(), grid(4)),
      init: gpu.createKernel(initStateSource(sourceKind, this.costSpec, reversed), grid(STATE_PLANES)),
      initFromFlows: gpu.createKernel(initStateSource(sourceKind, this.costSpec, reversed, true), grid(STATE_PLANES)),
      flows: gpu.createKernel(flowPlanesSource(), grid(2)),
      steps: iterationPasses(gpu, this.o.push, grid, gate),
      relabel: globalRelabelPasses(gpu, this.o.bfs, grid, gate),
      // A gated check reports the tile as converged (code 0), which keeps the tally as it is.
      checkTiles: gatedKernel(gpu, checkTilesSource(side), kernelSettings(tiles[0], constants), gate, '0.0'),
      sumTiles: tiles.slice(1).map((out, i) => gpu.createKernel(sumTilesSource(), kernelSettings(out, { AW: tiles[i][0], AH: tiles[i][1] }))),
      orTiles: tiles.slice(1).map((out, i) => gpu.createKernel(orTilesSource(), kernelSettings(out, { AW: tiles[i][0], AH: tiles[i][1] }))),
      tally: gpu.createKernel(tallySource(), kernelSettings([4], final)),
      tallyFirst: gpu.createKernel(tallySource(false), kernelSettings([4], final)),
      startMove: gpu.createKernel(startMoveSource(), line(4)),
      apply: gpu.createKernel(applyCutSource(reversed), grid(1)),
      changedTiles: gpu.createKernel(changedTilesSource(side), kernelSettings(tiles[0], constants)),
      sumFinal: gpu.createKernel(sumFinalSource(), kernelSettings([1], final)),
    };
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
      const rawMax = (spec.kind === 'sad' ? 255 : spec.kind === 'ssd' ? 255 * 255 : 1275) * spec.channels;
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
      const plan = this.plan(chunk.length, resuming ? resumeRounds : this.rounds[kind], this.bfs, this.verifier !== undefined);
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
      this.counters.pipelineCalls++;
      if (resuming) this.counters.resumedCalls++;
      this.counters.deviceMs += tBack - tCall;
      const rows = out[0] as ArrayLike<ArrayLike<number>>;
      let done = 0;
      const neededRounds: number[] = [];
      let failed = false;
      let bfsShort = false;
      for (let j = 0; j < chunk.length; j++) {
        const T = out[1 + 2 * j] as ArrayLike<number>;
        const changed = (out[2 + 2 * j] as ArrayLike<number>)[0];
        if (T[0] > 0) break; // gated by an earlier failure
        if (T[2] > 0) { failed = true; bfsShort = T[3] > 0; break; }
        // Rounds of the earlier calls of the move, and the checks that failed in this one (each call's first check precedes its rounds).
        const rounds = (j === 0 ? spent : 0) + T[1];
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
      this.readLabels(rows, labels);
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
      const T0 = out[1] as ArrayLike<number>;
      this.calls.push({
        rounds: plan.rounds, bfs: plan.bfs, moves: chunk.length, resumed: resuming, warm: kind === 'warm', compiled, failedChecks: T0[1], converged: T0[2] === 0 && T0[0] === 0,
        deviceMs: tBack - tCall, submitMs: Number.isNaN(tSubmitted) ? tBack - tCall : tSubmitted - tCall, lookAhead: false,
      });
      this.counters.moves += done;
      this.counters.discardedMoves += chunk.length - done - (failed ? 1 : 0);
      this.countPlanWork(plan, chunk.length);
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
        // Raised BFS passes served the move that fell short; the next starts from B again (keeping them doubled teddy's BFS passes, H200).
        this.bfs = this.o.bfsPasses;
        if (!this.o.fixedRounds) this.adapt(neededRounds, kind);
        continue;
      }
      attempts++;
      if (bfsShort) {
        // The global relabel restarts from scratch each round: without more passes it never reaches its fixed point.
        this.counters.bfsShortfalls++;
        this.bfs = Math.min(2 * this.bfs, this.n + 1);
      }
      if (this.o.resume && this.flowsInOut) {
        // Continue from the flows the device had reached (the labels did not change, so neither did the graph).
        spent += plan.rounds;
        resumeRounds = this.continuationRounds(spent, plan.rounds, kind);
        flattenState(flowsOut, this.W, this.H, this.carriedFlows, 0, 2);
      } else {
        this.counters.redoneMoves++;
        spent = 0;
        resumeRounds = 0;
        // A BFS shortfall says nothing about the flow (the test of the excess needs exact heights): only the passes double then.
        if (!bfsShort) this.rounds[kind] = Math.min(2 * this.rounds[kind], MAX_ROUNDS);
      }
      const ran = resumeRounds > 0 ? spent : plan.rounds;
      if ((resumeRounds > 0 ? spent + resumeRounds : this.rounds[kind]) * K > this.o.maxIterations) {
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
        let T: Float32Array;
        let changed: number;
        let converged: boolean;
        try {
          T = results.views[1].slice();
          changed = results.views[2][0];
          converged = T[0] === 0 && T[2] === 0;
          // Labels change only in a converged call; f32 → uint16 is exact for labels.
          if (converged) labels.set(results.views[0]);
        } finally {
          results.release();
        }
        this.counters.pipelineCalls++;
        if (cur.resuming) this.counters.resumedCalls++;
        const waited = tBack - Math.max(cur.tCall, lastResultAt);
        this.counters.deviceMs += waited;
        this.calls.push({
          rounds: cur.plan.rounds, bfs: cur.plan.bfs, moves: 1, resumed: cur.resuming, warm: cur.kind === 'warm', compiled: cur.compiled, failedChecks: T[1], converged,
          deviceMs: waited, submitMs: cur.submitMs, lookAhead: cur.lookAhead,
        });
        if (cur.lookAhead) this.counters.lookAheadCalls++;
        this.countPlanWork(cur.plan, 1);
        this.releasePlan(cur.plan);
        moveMs += tBack - lastResultAt;
        lastResultAt = tBack;
        if (converged) {
          const rounds = spent + T[1];
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
          this.bfs = this.o.bfsPasses;
          if (!this.o.fixedRounds) this.adapt([rounds], cur.kind);
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
        if (T[3] > 0) {
          this.counters.bfsShortfalls++;
          this.bfs = Math.min(2 * this.bfs, this.n + 1);
        }
        spent += cur.plan.rounds;
        resumeRounds = this.continuationRounds(spent, cur.plan.rounds, cur.kind);
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
    const rounds = resume ? resumeRounds : this.rounds[kind];
    const alphaArg = Float32Array.of(alpha);
    let plan: Plan | undefined;
    let ex: FusedExecutor | null;
    let compiled = false;
    if (after) {
      // Only a plan that is cached and compiled: neither a compile nor an eviction for a call that may be dropped.
      plan = this.plans.get(planKey(1, rounds, this.bfs, false));
      ex = plan ? liveExecutor(plan.pipe) : null;
      if (!plan || !ex) return undefined;
    } else {
      plan = this.plan(1, rounds, this.bfs, false);
      this.labelsF.set(labels);
      compiled = plan.calls === 0;
      ex = await compiledExecutor(plan.pipe, [
        new Input(this.labelsF as unknown as number[], [this.W, this.H]),
        new Input(alphaArg as unknown as number[], [1]),
        new Input(this.zeroFlows as unknown as number[], [this.W, this.H, 2]),
      ]);
      if (!ex) throw new ResidentUnavailable(index, `gpu.js ran plan ${planKey(1, rounds, this.bfs, false)} on its generic executor (${String((plan.pipe as { pipeline?: { fallbackReason?: unknown } }).pipeline?.fallbackReason ?? 'no reason given')})`);
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

  /** A call's work into the counters: each of its `moves` moves ran the plan's rounds, their checks (one more) and their global relabels (the last one finalBfsFactor times longer). */
  private countPlanWork(plan: Plan, moves: number): void {
    this.counters.rounds += moves * (plan.rounds + 1);
    this.counters.iterations += moves * plan.rounds * this.o.iterationsPerRound;
    this.counters.bfsPasses += moves * (plan.rounds + this.o.finalBfsFactor) * plan.bfs;
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
    return this.plans.get(planKey(this.movesPerCall, this.rounds[kind], this.o.bfsPasses, this.verifier !== undefined));
  }

  /**
   * Rounds of the call that continues a move which has run `spent` rounds:
   * the choice that would have cost least for the recent moves that needed
   * more than that, counted from there (twice the last call's rounds when
   * none did). Always doubling overshot: Adirondack ran 5604 rounds for
   * 3494 needed (H200).
   */
  private continuationRounds(spent: number, last: number, kind: StartKind): number {
    const rest = this.history[kind].filter((need) => need > spent).map((need) => need - spent);
    const shape = (R: number): string => planKey(1, R, this.bfs, this.verifier !== undefined);
    return rest.length > 0 ? this.cheapestRounds(rest, true, shape) : Math.min(2 * last, MAX_ROUNDS);
  }

  /**
   * Rounds for the next plans, from the rounds the last ADAPT_WINDOW moves
   * needed: the choice that would have cost them the least (cheapestRounds).
   * Provisioning for the slowest move makes every move pay for it;
   * provisioning for the last move alone (moves vary a lot) redoes too many.
   */
  private adapt(rounds: number[], kind: StartKind): void {
    const history = this.history[kind];
    history.push(...rounds);
    if (history.length > ADAPT_WINDOW) history.splice(0, history.length - ADAPT_WINDOW);
    const shape = (R: number): string => planKey(this.movesPerCall, R, this.bfs, this.verifier !== undefined);
    this.rounds[kind] = this.cheapestRounds(history, this.o.resume && this.flowsInOut, shape);
  }

  /**
   * The rounds R among ROUND_CHOICES that would have cost `needs` least:
   * each call costs the rounds its move needed, its rounds beyond that at
   * GATED_ROUND_COST (gated) or in full (ungated), plus a fixed cost, and a
   * move that needs more than a call gave it gets another with twice the
   * rounds (continued, or redone from scratch). A choice whose plan
   * (`shape(R)`) is not compiled also costs planCompileRounds +
   * planCompileRoundsPerRound·R: without a price, teddy compiled 13 plan
   * shapes whose first calls took 1.5 s of its 5.5 s (H200, 2e83785).
   */
  private cheapestRounds(needs: readonly number[], resume: boolean, shape: (R: number) => string): number {
    const perCall = CALL_COST_IN_ROUNDS + (this.flowsInOut ? FLOWS_COST_IN_ROUNDS : 0);
    const overshoot = this.o.gate ? GATED_ROUND_COST : 1;
    let best = 1;
    let bestCost = Infinity;
    for (const R of ROUND_CHOICES) {
      let cost = this.plans.has(shape(R)) ? 0 : this.o.planCompileRounds + this.o.planCompileRoundsPerRound * R;
      for (const need of needs) {
        let covered = 0;
        for (let r = R; ; r = Math.min(2 * r, MAX_ROUNDS)) {
          // Rounds after convergence are gated copies.
          const rest = Math.max(need - (resume ? covered : 0), 0);
          cost += Math.min(r, rest) + overshoot * Math.max(r - rest, 0) + perCall;
          covered = resume ? covered + r : r;
          if (need <= covered || (!resume && r === MAX_ROUNDS)) break;
        }
      }
      if (cost < bestCost) { bestCost = cost; best = R; }
    }
    return best;
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
          throw new Error(`--verify: cut ${v.cuts} (α=${alpha}): the device graph differs from the CPU construction at pixel ${p}`);
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
    if (flow !== ref.flow) throw new Error(`--verify: cut ${v.cuts} (α=${alpha}): the device found max-flow ${flow}, the CPU solver ${ref.flow}`);
    let differing = 0;
    for (let p = 0; p < n; p++) if (sinkSide[p] !== ref.sinkSide[p]) differing++;
    if (differing > 0) throw new Error(`--verify: cut ${v.cuts} (α=${alpha}): device and CPU agree on the flow ${flow} but ${differing} pixels are on different sides of the canonical cut`);
    if (cutCapacity(g, sinkSide) !== flow) throw new Error(`--verify: cut ${v.cuts} (α=${alpha}): the device cut's capacity differs from its flow`);
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

  /**
   * The WTA labeling of costs/wta.ts (box sums over window × window clipped
   * at the borders, ties to the smaller label), computed on the device from
   * the data the moves read (the volume or the images) in one pipeline
   * call that reads back only the labels. Labels go in chunks of at most
   * `chunkEntries` / (W·H), so the intermediates stay small on a
   * 3000×2000 pair. Undefined when a window sum could reach 2^24, where
   * f32 stops being exact (the host's WTA sums in doubles).
   */
  async deviceWta(window: number, chunkEntries = WTA_CHUNK_ENTRIES): Promise<Uint16Array | undefined> {
    if (!Number.isInteger(window) || window < 1 || window % 2 === 0) throw new Error(`--window: must be an odd integer ≥ 1 (got ${String(window)})`);
    if (!Number.isInteger(chunkEntries) || chunkEntries < 1) throw new Error(`gpu expansion: WTA chunk of ${String(chunkEntries)} entries`);
    if (window * window * this.maxDataCost >= MAX_GPU_EXACT_CAPACITY) return undefined;
    const { W, H, n, gpu } = this;
    const L = this.energy.labels;
    const NC = Math.max(1, Math.min(L, Math.floor(chunkEntries / n)));
    const chunks = Math.ceil(L / NC);
    const key = `wta ${window} ${NC}`;
    const pipe = this.auxPipeline(key, () => {
      const constants = { W, H, L, NC, WIN: window, R: (window - 1) / 2 };
      const costs = gpu.createKernel(wtaCostsSource(this.sourceKind, this.costSpec), kernelSettings([W, H, NC], constants));
      const rows = gpu.createKernel(wtaRowSumsSource(), kernelSettings([W, H, NC], constants));
      // The chunk's place decides the pick's inputs and output: the first has no best so far, the last returns only the labels.
      const pick = (first: boolean, last: boolean): IKernelRunShortcut => gpu.createKernel(wtaPickSource(first, last), kernelSettings(last ? [W, H] : [W, H, 2], constants));
      const pickOnly = chunks === 1 ? pick(true, true) : undefined;
      const pickFirst = chunks > 1 ? pick(true, false) : undefined;
      const pickMiddle = chunks > 2 ? pick(false, false) : undefined;
      const pickLast = chunks > 1 ? pick(false, true) : undefined;
      const literals = this.literals;
      const data = literals[0];
      const wta = gpu.createPipeline(function () {
        bindSharedLiterals(literals);
        let best: unknown = null;
        for (let c = 0; c < chunks; c++) {
          const RS = rows(costs(data, c * NC));
          if (chunks === 1) best = pickOnly!(RS, 0);
          else if (c === 0) best = pickFirst!(RS, 0);
          else best = (c === chunks - 1 ? pickLast! : pickMiddle!)(RS, best, c * NC);
        }
        return best;
      });
      returnFlatResults(wta);
      return wta;
    });
    try {
      const labels = new Uint16Array(n);
      this.readLabels((await this.auxCall(pipe())) as ArrayLike<ArrayLike<number>>, labels);
      return labels;
    } finally {
      // A program that is not kept (above 2^20 pixels, webasm) frees the chunk buffers at once: 64 MiB each at 3000×2000, not needed by the moves.
      if (this.programKey === null) await this.dropAuxPipeline(key);
    }
  }

  /**
   * The program's auxiliary pipeline under `key` (DeviceProgram.aux), made
   * by `make` when it has none; most recently used last.
   */
  private auxPipeline(key: string, make: () => IPipelineRunShortcut): IPipelineRunShortcut {
    const aux = this.program.aux;
    let pipe = aux.get(key);
    if (pipe) aux.delete(key);
    else {
      pipe = make();
      this.counters.auxPipelines++;
    }
    aux.set(key, pipe);
    while (aux.size > MAX_AUX_PIPELINES) {
      const [oldest] = aux.keys();
      void this.dropAuxPipeline(oldest);
    }
    return pipe;
  }

  /** Removes the auxiliary pipeline under `key` and destroys it (after its call in flight). */
  private async dropAuxPipeline(key: string): Promise<void> {
    const pipe = this.program.aux.get(key);
    if (!pipe) return;
    this.program.aux.delete(key);
    await pipe.destroy();
  }

  /** A call of an auxiliary pipeline, tracked until it settles (see auxInFlight). */
  private auxCall<T>(call: Promise<T>): Promise<T> {
    this.auxInFlight.add(call);
    const settled = (): void => { this.auxInFlight.delete(call); };
    call.then(settled, settled);
    return call;
  }

  /** A [W, H] labels result into `labels`: flat on the fused executors (returnFlatResults), rows where gpu.js shapes them; f32 → uint16 is exact for labels. */
  private readLabels(out: ArrayLike<ArrayLike<number>>, labels: Uint16Array): void {
    if (ArrayBuffer.isView(out)) {
      labels.set(out as unknown as Float32Array);
      return;
    }
    for (let y = 0, p = 0; y < this.H; y++) {
      const row = out[y];
      for (let x = 0; x < this.W; x++, p++) labels[p] = row[x];
    }
  }

  /** Energy of a labeling: on the host when the volume is there, else reduced on the device (exact partial sums). */
  async energyOf(labels: Uint16Array): Promise<EnergyBreakdown> {
    if (this.sourceKind === 'volume') return computeEnergy(this.energy, labels);
    const e = this.energy;
    // Columns per partial sum: a sum of CH terms of at most maxTerm each stays below 2^24, so it is exact in f32.
    const maxTerm = Math.max(1, this.maxDataCost, 2 * this.maxEdgeTerm);
    const CH = Math.max(1, Math.min(this.W, Math.floor(MAX_GPU_EXACT_CAPACITY / maxTerm)));
    const pipe = this.auxPipeline(`energy ${CH}`, () => {
      const chunks = Math.ceil(this.W / CH);
      const constants = { W: this.W, H: this.H, INF: this.n + 1, L: e.labels, CH };
      const terms = this.gpu.createKernel(energyTermsSource(this.sourceKind, this.costSpec), kernelSettings([this.W, this.H, 2], constants));
      const sums = this.gpu.createKernel(energyChunksSource(), kernelSettings([chunks, this.H, 2], constants));
      const [data, wt, vt] = this.literals;
      const literals = this.literals;
      return this.gpu.createPipeline(function (LB: unknown) {
        bindSharedLiterals(literals);
        return sums(terms(LB, data, wt, vt));
      });
    });
    this.labelsF.set(labels);
    // Plane 0 the data term, plane 1 the smoothness, each H rows of ceil(W / CH) exact partial sums.
    const out = (await this.auxCall(pipe(new Input(this.labelsF as unknown as number[], [this.W, this.H])))) as ArrayLike<ArrayLike<ArrayLike<number>>>;
    let data = 0;
    let smooth = 0;
    for (let y = 0; y < this.H; y++) {
      for (let c = 0; c < out[0][y].length; c++) {
        data += out[0][y][c];
        smooth += out[1][y][c];
      }
    }
    return { data, smoothness: smooth, total: data + smooth };
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
    if (this.auxInFlight.size > 0) void Promise.allSettled([...this.auxInFlight]).then(done);
    else done();
  }
}

/** Destroys a program's plans, then the device buffers of its literals (once no plan can run again: a destroy waits for the call in flight). */
function releaseProgram(program: DeviceProgram): void {
  const released = [...program.plans.values()].map((p) => p.pipe.destroy());
  released.push(...[...program.aux.values()].map((pipe) => pipe.destroy()));
  program.plans.clear();
  program.aux.clear();
  const literals = program.literals;
  void Promise.allSettled(released).then(() => releaseSharedLiterals(literals));
}

/** The image planes the image-source kernels read: left, right, then for sad+sgrad the forward gradients ∂x, ∂y of each (IM). */
function imagePlanes(left: CostImage, right: CostImage, spec: ImageCostSpec): Float32Array {
  const C = spec.channels;
  const n = left.width * left.height;
  const planes = new Float32Array(6 * n * C);
  planes.set(left.data, 0);
  planes.set(right.data, n * C);
  if (spec.kind === 'sad+sgrad') {
    const [gxL, gyL] = forwardGradients(left);
    const [gxR, gyR] = forwardGradients(right);
    planes.set(gxL, 2 * n * C);
    planes.set(gyL, 3 * n * C);
    planes.set(gxR, 4 * n * C);
    planes.set(gyR, 5 * n * C);
  }
  return planes;
}

/** A [W, H, planes] kernel output as read back: planes of rows. */
type Planes = ArrayLike<ArrayLike<ArrayLike<number>>>;

/** The plan cache's key: one compiled plan per shape. */
function planKey(moves: number, rounds: number, bfs: number, verify: boolean): string {
  return `${moves}:${rounds}:${bfs}:${verify ? 1 : 0}`;
}

/** Kernel settings; loopMaxIterations (a real gpu.js setting missing from its typings) lifts the cap on the row loops. */
function kernelSettings(output: number[], constants: Record<string, number>): IGPUKernelSettings {
  return { output, constants, precision: 'single', loopMaxIterations: 1 << 20 } as IGPUKernelSettings;
}

