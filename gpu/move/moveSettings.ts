import type { GraphVariant } from '../../expansion/binaryStep';
import { DEFAULT_BLOCK, type BlockSettings, type KernelFamilies } from '../maxflow/pushRelabelKernels';
import { NO_FAMILIES, type BfsScheme, type ProductPush, type PushScheme } from '../maxflow/kernelFamilies';
import type { DeviceFlags } from '../runtime/deviceFlags';

/**
 * The settings of the device moves (GpuMoveSolver): every option, its
 * default, and the defaults that depend on the grid's size, computed here
 * and nowhere else (resolveGpuMoveOptions). The defaults are chosen for the
 * fastest whole runs at the Middlebury sizes; none changes a result (every
 * setting gives the same labels and energies).
 */

export interface GpuMoveOptions {
  variant: GraphVariant;
  /** K: push-relabel iterations per round (default 24; with sweeps an iteration is a horizontal and a vertical pass; with the block push, launches of each tiling per round, default 3). */
  iterationsPerRound?: number;
  /** B: BFS passes of the global relabel after every round but the plan's last (which gets finalBfsFactor·B), and initially (default: defaultBfsPasses; block BFS launches, default 8). */
  bfsPasses?: number;
  /** The last round's global relabel runs this many times B passes (default 2; 1 with the block BFS). */
  finalBfsFactor?: number;
  /**
   * Passes of the global relabel a move's call starts with, before its
   * first check, at most B (default: 2 launches with the block BFS, B with
   * the others). Fewer leave the pixels farther from the sink unreached
   * until the first round's relabel, which only delays their first
   * pushes: that check's shortfall is not counted against B (tallySource).
   */
  initialBfsPasses?: number;
  /** Rounds per move in the first plan; later plans adapt to the rounds moves needed (default: defaultInitialRounds). */
  initialRounds?: number;
  /** Keep the number of rounds fixed instead of adapting it (ablation). */
  fixedRounds?: boolean;
  /** --verify: every cut is re-solved on the CPU with BK and compared (graph, flow and cut). */
  verify?: boolean;
  /** Safety limit: a move needing more push-relabel iterations than this throws (default 4·10^6). */
  maxIterations?: number;
  /**
   * The push family (gpu/maxflow/kernelFamilies.ts): 'sweep' (segmented runs, a horizontal
   * and a vertical pass per iteration), 'split-sweep' (each sweep as a gather of the runs,
   * walked once per pixel, and a loop-free apply), 'block' (tiles in workgroup memory, many
   * iterations per launch; an iteration of K is one launch of each of the two tilings), or
   * one of `families`; default: defaultPush.
   */
  push?: PushScheme;
  /** The BFS family of the global relabel: 'scan' (relaxation along straight residual runs), 'block' (each tile to its fixed point per launch), or one of `families`; default: 'block' where it runs, else 'scan'. */
  bfs?: BfsScheme;
  /**
   * Push and BFS families besides the product's, which `push` and `bfs`
   * may name (the benchmarks' ablation gives its lockstep push and level
   * BFS so); default none. A name must stand for one set of kernels
   * wherever runs share a program store, which keys kept programs by the
   * names (a given family may not take a product family's name).
   */
  families?: KernelFamilies;
  /** The block schemes' tile and local iterations per push launch (default DEFAULT_BLOCK). */
  block?: BlockSettings;
  /** Segment length of the sweeps and longest run of a BFS scan (default: defaultReach). */
  reach?: number;
  /**
   * A move that has not converged continues from the edge flows it had
   * reached, in the next call, instead of being redone from scratch
   * (default true). Each call then also reads back its move's flows
   * ([W, H, 2] floats).
   */
  resume?: boolean;
  /**
   * Start each move from the edge flows that the same α's previous move
   * ended with (clamped to the new graph; initStateSource) instead of from
   * zero flow. The flows of every label are kept on the host, 8·W·H·L
   * bytes (default: on when that is at most a quarter of the machine's
   * memory).
   */
  warmStart?: boolean;
  /** Compiled plans kept (each holds device buffers); the least recently used is dropped beyond it (default: defaultMaxCachedPlans). */
  maxCachedPlans?: number;
  /**
   * What compiling a plan shape not in the cache costs, in rounds, when the
   * rounds of the next calls are chosen: planCompileRounds plus
   * planCompileRoundsPerRound for each round of the plan (defaults 10 and
   * 2.5: a compile's time grows with the passes it traces and binds; both 0
   * ignore compiles).
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
   * preflow once clamped, so only the rounds change (fewer in the first
   * cycle at the Middlebury sizes).
   */
  borrowFlows?: boolean;
  /** Side of the square of pixels each thread of a per-pixel reduction (a convergence check, the count of changed pixels) walks (default 2). */
  tileSide?: number;
  /**
   * On dispose, keep the kernels and compiled plans for the next solver of
   * the same shape and device options in this process, which takes them
   * with its own energy instead of compiling its own (default true; grids
   * up to 2^20 pixels, WebGPU and gpu.js's cpu backend: REFILLABLE_MODES;
   * gpu/move/keptPrograms.ts).
   */
  keepPlans?: boolean;
  /**
   * While the device runs a call, record the passes of the call expected
   * next (the next move's plan, taken to start like this one), so that
   * the host does not record them between the two calls while the device
   * idles (default true; WebGPU with one-pass calls only:
   * gpu/runtime/gpujs/onePassCalls.ts, recordAhead).
   */
  recordAhead?: boolean;
  /**
   * Run each cycle's moves (runCycle) with the flows of every label kept on
   * the device and the next move submitted before the last one's results
   * are read, taking that move's labels on the device (default true where
   * it applies: WebGPU with one-pass calls, warmStart and resume on, no
   * --verify, and the device flows within
   * RESIDENT_FLOWS_MAX_BYTES). A look-ahead move is dropped, and submitted
   * again, when the move before it had not converged or changed which
   * label comes next; the labels are those of one-by-one moves either way
   * (the cut of a maximum flow is unique: the pixels that reach the sink).
   */
  resident?: boolean;
  /**
   * Resident moves: how many calls of the next moves are submitted ahead
   * of the one whose results are awaited (default LOOK_AHEAD; 0 submits
   * each move after the last one's results). Calls ahead keep the device
   * busy while the host reads a call's results and records the next; a
   * move that does not converge drops them all.
   */
  lookAhead?: number;
}

/** The device settings a user of match() changes: K, B and whether programs are kept; defaults are the measured best. */
export type GpuDeviceSettings = Pick<GpuMoveOptions, 'iterationsPerRound' | 'bfsPasses' | 'keepPlans'>;

/**
 * What match() takes as `gpu`: the device settings, the schedule knobs
 * that benchmarks and ablations set (each changes the time a run takes,
 * never its labels or energies), and `device`, the device path's switches
 * (gpu/runtime/deviceFlags.ts DeviceFlags: one-pass and in-place calls, the
 * kernel build cache and its pipelines, shared literals, kept programs, the
 * workgroup shape, the clock warm-up, Dawn's bounds checks), which the
 * run's gpu.js context is made with (createGpuContext) and which its clock
 * warm-up reads. An argument of the run, so two runs in one process never
 * see each other's; its keys are checked once, at the library's entry
 * (stereo/matchOptions.ts: an unknown knob or flag, or a flag's value it
 * does not take, is refused naming it).
 */
export type GpuMoveSettings = Omit<GpuMoveOptions, 'variant' | 'verify'> & { device?: Partial<DeviceFlags> };

/** Every key of GpuMoveSettings (the compiler checks the list against the type). */
export const GPU_MOVE_SETTINGS: ReadonlyArray<keyof GpuMoveSettings> = Object.keys({
  iterationsPerRound: 1, bfsPasses: 1, finalBfsFactor: 1, initialBfsPasses: 1, initialRounds: 1, fixedRounds: 1, maxIterations: 1, push: 1, bfs: 1, families: 1, block: 1,
  reach: 1, resume: 1, warmStart: 1, maxCachedPlans: 1, planCompileRounds: 1, planCompileRoundsPerRound: 1, gate: 1, borrowFlows: 1, tileSide: 1, keepPlans: 1,
  recordAhead: 1, resident: 1, lookAhead: 1, device: 1,
} satisfies Record<keyof GpuMoveSettings, 1>) as Array<keyof GpuMoveSettings>;

/** Pricing of a plan compile in the round choice: planCompileRounds + planCompileRoundsPerRound·R rounds for an R-round plan (a compile's time grows with the passes it traces and binds). */
export const PLAN_COMPILE_ROUNDS = 10;
export const PLAN_COMPILE_ROUNDS_PER_ROUND = 2.5;

/**
 * Default of finalBfsFactor but with the block BFS (BLOCK_DEFAULTS): the
 * last round of a plan runs this many times B BFS passes. Only the last
 * check decides whether a move converged, and a global relabel restarts
 * from scratch, so a move whose final BFS needs more than B passes could
 * not converge in any number of rounds of the plan.
 */
export const FINAL_BFS_FACTOR = 2;

/**
 * Default tileSide: each thread of the per-pixel reductions (a convergence
 * check, the count of changed pixels) walks a 2×2 tile of pixels; larger
 * tiles keep few of the GPU's cores busy at the Middlebury sizes.
 */
export const TILE_SIDE = 2;

/**
 * Compiled plans kept at once (least recently used dropped first): 32, and
 * 8 above 2^20 pixels, where each plan's state-sized device buffers add up
 * to gigabytes. At the Middlebury sizes plans are small and recompiling
 * costs time.
 */
export function defaultMaxCachedPlans(pixels: number): number {
  return pixels > 1 << 20 ? 8 : 32;
}

/**
 * Default reach (segment length of the sweeps, longest run of a BFS scan):
 * 8 up to 2^20 pixels, 32 above. A global relabel of B scans covers
 * distances up to about B·reach per straight stretch, and a pass walks up
 * to reach pixels each way, so a shorter reach makes cheaper passes that
 * need more of them.
 */
export function defaultReach(width: number, height: number): number {
  return width * height > 1 << 20 ? 32 : 8;
}

/**
 * Default B (BFS passes per global relabel): 16 up to 512 pixels a side, 32
 * above, where more moves' BFS would otherwise fall short and cost another
 * call.
 */
export function defaultBfsPasses(width: number, height: number): number {
  return Math.max(width, height) > 512 ? 32 : 16;
}

/**
 * Default initialRounds: 8 up to 512 pixels a side, 12 above (the rule of
 * B): about what the first cycle's moves need, so that few continue.
 */
export function defaultInitialRounds(width: number, height: number): number {
  return Math.max(width, height) > 512 ? 12 : 8;
}

/**
 * Default push kernels: the split sweep above 2^20 pixels (its walks run
 * once per pixel instead of once per changed state plane), the
 * single-kernel sweep below, where a pass costs about what dispatching it
 * costs.
 */
export function defaultPush(width: number, height: number): ProductPush {
  return width * height > 1 << 20 ? 'split-sweep' : 'sweep';
}

/**
 * Defaults of the block schemes (where they run: WebGPU with the workgroup
 * entry adaptation): K = 3 launches of each tiling per round, each 32 local
 * iterations on 16×16 tiles, and B = 8 block BFS launches per global
 * relabel, of which a call's first relabel runs 2, and the last round's B
 * too (finalBfsFactor 1). Measured on whole runs (BENCHMARKS.md): fewer
 * local iterations or BFS launches per round made more rounds, more made
 * each round dearer; the first relabel only has to reach the excess near
 * the sink for the first round's pushes, and the first round's relabel
 * reaches the rest. Most moves of the later cycles need one round, so
 * their calls' passes are mostly that round's relabel: a longer last
 * relabel cost each of them more than the continuations of the few whose
 * BFS fell short (each continued with 2·B: RoundSchedule.bfsFellShort).
 */
export const BLOCK_DEFAULTS: { iterationsPerRound: number; bfsPasses: number; initialBfsPasses: number; finalBfsFactor: number; block: BlockSettings } = {
  iterationsPerRound: 3, bfsPasses: 8, initialBfsPasses: 2, finalBfsFactor: 1, block: DEFAULT_BLOCK,
};

/**
 * Default lookAhead: one call submitted ahead. Two to four ahead measured
 * no faster on whole runs (BENCHMARKS.md): the device, not the readback,
 * bounds the moves once one call waits behind the running one.
 */
export const LOOK_AHEAD = 1;

/** Passes of a call's first global relabel: the option initialBfsPasses, at most B (`bfs`, which doubles after a shortfall). */
export function initialBfs(bfs: number, initialBfsPasses: number): number {
  return Math.min(bfs, initialBfsPasses);
}

/** Every option with its default filled in for a W×H grid (warmStart stays as given: its default depends on the solver's memory). */
export type ResolvedGpuMoveOptions = Required<Omit<GpuMoveOptions, 'warmStart'>> & Pick<GpuMoveOptions, 'warmStart'>;

/**
 * The options of a solver on a W×H grid: defaults, then `options`. `blocks`: whether the block schemes can run (then they are the
 * default push and BFS). K, B and the block settings not given default by
 * the scheme that runs (BLOCK_DEFAULTS for the block schemes).
 */
export function resolveGpuMoveOptions(width: number, height: number, options: GpuMoveOptions, blocks = false): ResolvedGpuMoveOptions {
  const given = options;
  const push = given.push ?? (blocks ? 'block' : defaultPush(width, height));
  const bfs = given.bfs ?? (blocks ? 'block' : 'scan');
  return {
    iterationsPerRound: push === 'block' ? BLOCK_DEFAULTS.iterationsPerRound : 24,
    bfsPasses: bfs === 'block' ? BLOCK_DEFAULTS.bfsPasses : defaultBfsPasses(width, height),
    initialBfsPasses: bfs === 'block' ? BLOCK_DEFAULTS.initialBfsPasses : Number.POSITIVE_INFINITY,
    finalBfsFactor: bfs === 'block' ? BLOCK_DEFAULTS.finalBfsFactor : FINAL_BFS_FACTOR,
    initialRounds: defaultInitialRounds(width, height), fixedRounds: false, verify: false, maxIterations: 4_000_000,
    push, bfs, families: NO_FAMILIES, block: BLOCK_DEFAULTS.block, reach: defaultReach(width, height), resume: true,
    maxCachedPlans: defaultMaxCachedPlans(width * height), gate: true, planCompileRounds: PLAN_COMPILE_ROUNDS, planCompileRoundsPerRound: PLAN_COMPILE_ROUNDS_PER_ROUND, recordAhead: true, tileSide: TILE_SIDE, borrowFlows: true, keepPlans: true, resident: true, lookAhead: LOOK_AHEAD,
    ...given,
  };
}
