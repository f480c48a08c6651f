import type { EnergyBreakdown } from '../data/energy';
import type { CycleReport, ExpansionResult, ExpansionResume, MoveProgress } from '../expansion/alphaExpansion';
import type { ClockWarmupReport } from '../gpu/runtime/clockWarmup';
import type { GpuMoveSettings } from '../gpu/move/moveSettings';
import type { LevelReport, LevelShape } from './coarseToFine';
import type { Raster } from '../data/raster';
import type { SharedStage } from '../data/sharedStage';
import type { StripRunner } from './levelStrips';
import type { MedianRunner } from './medianFill';
import type { TermsRunner } from './levelTerms';
import type { WarmStart, WarmStartRecord } from './warmStart';
import type { ProgramStore } from '../gpu/move/keptPrograms';
import type { BackendName, MatchParams } from './params';
import type { BackendPlacement } from '../gpu/runtime/backends';

/** What match() takes and returns, and the events it reports as it runs. */

/**
 * What a matcher decides once from its options, for every pair and level it
 * matches: the parameters, checked and resolved (paramSchema.ts), and where
 * its backend runs (gpu/runtime/backends.ts placeBackend: 'auto' asks for an
 * adapter once). The options themselves are not read again for either.
 */
export interface MatchPlan {
  params: MatchParams;
  place: BackendPlacement;
}

export interface MatchOptions extends Partial<MatchParams> {
  /** Number of labels: disparities minDisp..minDisp + ndisp − 1. */
  ndisp: number;
  /** Disparity of label 0 (option --min-disp). Default 0. */
  minDisp?: number;
  /** A given initial disparity map instead of WTA / zero. */
  initialLabels?: Uint16Array;
  backend?: BackendName;
  /** Solve every cut also with the CPU solver and fail on any difference. */
  verify?: boolean;
  /** Progress callback, once per α-expansion move. */
  onMove?: (info: MoveProgress) => void;
  /**
   * Called (and awaited) after every cycle with its report, the labeling so
   * far of the pair's left view (a map of the pair's size), and what a run
   * resumed from this cycle needs (`resume`; absent for the finest level of
   * a coarse-to-fine run, which cannot be resumed): checkpoints.
   */
  onCycle?: (report: CycleReport, labels: Uint16Array, state?: MatchResume) => void | Promise<void>;
  /**
   * Continue a run of the same pair and parameters from the state an
   * onCycle gave: the cycles after state.cycle run as they would have had
   * the run not stopped (same energies), at one level; `initialLabels` is
   * then not used.
   */
  resume?: MatchResume;
  /** Told each phase as it ends (live progress: the backend is known after the solver setup, the cycles as each ends). */
  onEvent?: (event: MatchEvent) => void;
  /**
   * The threads that run a pyramid's finer levels and the median fill's
   * bands (stripPool(n), stereo/stripRunner.ts), kept by the caller across
   * matches: a thread runs its first strips several times slower than
   * later ones, so matches that share a pool run their finer levels
   * faster. The caller closes it. Default: a pool of one thread per core,
   * started by a pyramid's match (and by a SequenceMatcher for
   * frames of 0.1 MP or more, for the median's bands).
   */
  stripPool?: StripPool;
  /**
   * Where the device moves keep their programs (kernels and compiled plans)
   * between matches of one shape and device setting (expansion/
   * gpu/move/keptPrograms.ts), held by the caller: a Matcher holds one, and
   * callers that sweep parameters over one pair can share one between
   * matchers. The caller releases it. Default: none; the match releases
   * its program at the end.
   */
  programs?: ProgramStore;
  /** Bytes of host memory the match may use: a pair whose estimate (stereo/memoryPlan.ts) passes it is refused before the costs. Default 85 % of the machine's. */
  maxMemory?: number;
  /** Where `initialLabels` came from, recorded in the result (a file and its integer scale). */
  initSource?: { file: string; scale: number };
  /**
   * Device settings of the GPU backends: K (iterationsPerRound), B
   * (bfsPasses) and whether compiled programs are kept for the next run of
   * the same shape (keepPlans); defaults are the measured best. The other
   * keys are the device moves' schedule knobs (gpu/move/moveSettings.ts
   * GpuMoveSettings), for benchmarks and ablations: they change the time,
   * never the labels; `device` holds the device path's switches
   * (gpu/runtime/deviceFlags.ts), which the run's gpu.js context is made with.
   */
  gpu?: GpuMoveSettings;
  /**
   * With the device moves (backend gpu or auto), queue spin work on the GPU
   * before the costs so that an idle GPU's clock is raised when the moves
   * start (gpu/runtime/clockWarmup.ts). Default: on when the host computes
   * the costs and the WTA (the spin runs while it does), off when they are
   * left to the device, which would wait behind the spin (warmUpForBackend).
   */
  warmUpClocks?: boolean;
  /** A frame of a sequence: start from the previous frame's labels (and device flows) unless that start's energy is the higher (stereo/warmStart.ts); at one level. */
  warmStart?: WarmStart;
}

/** Where a run stood after a cycle (MatchOptions.onCycle, resume): every view's labels stacked (the left–right check's right view after the left one), the cycles run, the labels whose next move changes nothing. */
export interface MatchResume extends ExpansionResume {
  labels: Uint16Array;
}

/** The phases of a match as they end, in this order ('cycle' once per cycle; 'leftRightCheck' when the check of the two views' maps ends). */
export type MatchEvent =
  | { kind: 'start'; width: number; height: number; ndisp: number; minDisp: number; params: MatchParams & { tau: number }; init: InitRecord; backend: BackendName }
  | { kind: 'costs'; ms: number }
  | { kind: 'solver'; backend: string; device: string; ms: number; fallbacks: string[] }
  | { kind: 'init'; ms: number }
  /** `view`: which view, where a pyramid's coarsest level matches its views apart (0 left, 1 right; stereo/matchPyramid.ts). */
  | { kind: 'initialEnergy'; energy: EnergyBreakdown; view?: 0 | 1 }
  | { kind: 'cycle'; report: CycleReport; of: number | 'converge'; view?: 0 | 1 }
  | { kind: 'leftRightCheck'; ms: number; inconsistent: number; filled: boolean }
  | { kind: 'level'; level: number; of: number; shape: LevelShape; shapes: LevelShape[] }
  | { kind: 'levelDone'; report: LevelReport };

/** What the initial labeling was: a method, or a given map (and the file and scale it was read from, when the caller says). */
export type InitRecord = { kind: 'wta'; window: number } | { kind: 'zero' } | { kind: 'given'; file?: string; scale?: number };

export interface PhaseTimes {
  /** The energy: data costs (unless left to the device) and smoothness weights; the clock warm-up's queueing included. */
  costsMs: number;
  /** Creating the move solver (device programs, uploads of the energy). */
  setupMs: number;
  /** The initial labeling (on the device when the solver offers it). */
  initMs: number;
  buildMs: number;
  flowMs: number;
  expansionMs: number;
  totalMs: number;
  /**
   * The left–right check (lrCheck): the views' maps compared and the
   * inconsistent pixels filled. The right view is matched with the left
   * one (as one energy; apart at a pyramid's coarsest level): its costs and
   * moves are in costsMs and expansionMs.
   */
  checkMs?: number;
  /** Sub-pixel refinement (subpixel). */
  subpixelMs?: number;
}

/** What match() returns: the expansion's report (energies per cycle, cuts, backend) plus the disparity and how it was made. */
export interface MatchResult extends Omit<ExpansionResult, 'labels'> {
  width: number;
  height: number;
  ndisp: number;
  /** Disparity of label 0: disparity = minDisp + label. */
  minDisp: number;
  /** Disparity per pixel (minDisp + label), row-major; INVALID_DISPARITY where the left–right check left a pixel unfilled. */
  disparity: Uint16Array;
  /** Every parameter with the value that ran (τ filled in from the cost kind's default when not given). */
  params: MatchParams & { tau: number };
  /** The initial labeling that ran (params.init says only wta or zero). */
  init: InitRecord;
  /** Pixels the left–right check marked (lrCheck). */
  inconsistentPixels?: number;
  /** 1 where the left–right check marked the pixel (lrCheck), row-major; the confidence map reads it. */
  inconsistent?: Uint8Array;
  /** Refined disparity in pixels (subpixel), +inf where invalid; PFM outputs and evaluation use it. */
  subpixel?: Float32Array;
  /** The integer factor every cost carries (fractional λ made exact); energies are in these units. */
  costScale: number;
  times: PhaseTimes;
  /** Why the run left the backend asked for ('auto' without a GPU, a lost device, an energy beyond f32), in order. */
  fallbacks: string[];
  /** The clock warm-up queued before the costs (backends gpu and auto; see MatchOptions.warmUpClocks). */
  clockWarmup?: ClockWarmupReport;
  /**
   * Coarse to fine (params.levels > 1): the levels' shapes, coarsest first,
   * and each finer level's account. The result's energies, cycles and
   * cuts are then those of the finest level, whose energy is banded
   * (stereo/coarseToFine.ts); the coarsest level's are in `coarsest`.
   */
  /** With MatchOptions.warmStart: how the frame started, and every view's final labels for the next frame. */
  warmStart?: WarmStartRecord;
  pyramid?: { shapes: LevelShape[]; coarsest: Pick<MatchResult, 'initialEnergy' | 'finalEnergy' | 'cuts' | 'times' | 'backend'>; levels: LevelReport[] };
}

/**
 * What runs the strips of a pyramid's finer levels: a pool of worker
 * threads (data/threadPool.ts) that one match starts before its coarsest level, so
 * the threads load while that level runs, and ends when it ends; or this
 * thread, one strip after another. Both give the same labels: the strips
 * are fixed by the level's size, not by the threads.
 */
export interface StripPool {
  run: StripRunner;
  /** Bands of the median fill (stereo/medianFill.ts) of the finest level, or of a pair at one level, on the same threads; absent: this thread filters the whole map. */
  median?: MedianRunner;
  /** The shared memory the median's bands are views of (kept for the pool's life). */
  medianStage?: SharedStage;
  /** Bands of a finer level's terms (stereo/levelTerms.ts), on the same threads; absent: this thread makes them. */
  terms?: TermsRunner;
  /** A view of a pyramid's coarsest level matched by BK on one of the threads, beside the other view on the match's thread; absent: the views one after the other there. */
  view?: ViewRunner;
  /** Shared memory for the pairs, terms and bands of a pyramid's finer levels, which the strips and term bands then read as views (kept from one match to the next); absent: they carry copies. */
  pairStage?: SharedStage;
  /** Threads in the pool; 0 when this thread runs the strips. */
  threads: number;
  close(): Promise<void>;
}

/**
 * One view of a pyramid's coarsest level matched on a strip thread
 * (stereo/stripWorker.ts) while the match's own thread matches the other:
 * where that level runs on the host (BK), the two views' cuts then run on
 * two cores at once. The pair and the plan are plain data; the view is
 * matched as matchViews matches it on the match's thread (the same labels
 * and energies: BK is deterministic and the costs do not depend on the
 * thread that computes them).
 */
export interface ViewJob {
  /** The view's pair (the right view's: the mirrored, swapped pair). */
  viewLeft: Raster;
  viewRight: Raster;
  ndisp: number;
  minDisp: number;
  /** The match's parameters (one level) and its placement, which runs BK. */
  plan: MatchPlan;
}

/** Matches a view on a thread; resolves with its result (its cycles, for the events the match tells). */
export type ViewRunner = (job: ViewJob) => Promise<MatchResult>;
