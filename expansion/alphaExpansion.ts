import { computeEnergy, isMetricTable, EnergyBreakdown, MrfEnergy } from '../data/energy';
import { LabelOrder, labelOrderForCycle } from './labelOrder';
import type { CycleEnd, MoveResult, MoveSolver } from './moveSolver';
import { optionError } from '../data/errors';

/** Progress of one move, for callers that report it. */
export interface MoveProgress {
  cycle: number;
  alpha: number;
  index: number;
  count: number;
  changed: number;
  stats?: Record<string, number>;
  /** Coarse to fine: the pyramid level of the move (0 = full size) and the levels in all. */
  level?: number;
  levels?: number;
}

export interface ExpansionOptions {
  /** Label order per cycle (default 'frequent', Choi & Park §3.4). */
  order?: LabelOrder;
  /**
   * Number of cycles, or 'converge' to stop after a cycle that lowers the
   * energy by nothing (default 4, as the paper). Either way the run ends
   * after a cycle that changes no pixel: every move of it started from the
   * labeling it left, so any later cycle would change nothing either.
   */
  cycles?: number | 'converge';
  /** Upper bound on cycles when cycles = 'converge' (default 100). */
  maxCycles?: number;
  /** Seed of the 'random' order. */
  seed?: number;
  /** Check every move: the true energy after it must equal the cut's prediction and never rise (slower: one energy evaluation per move). */
  checkMoves?: boolean;
  /**
   * Skip a move whose label was expanded before with no pixel changing
   * anywhere since (default true). Such a move is exact to skip: the moves
   * from the current labeling are a subset of those the earlier move chose
   * from, and the current labeling was that move's optimum, so the move
   * cannot lower the energy. Later cycles of a converged run then cost
   * nothing. False runs every move, as the paper counts them.
   */
  skipUnchanged?: boolean;
  /**
   * Continue a run stopped after `cycle` cycles, from its labeling (the
   * `initial` labeling) and the labels whose moves it had found changing
   * nothing (`unchanged`, as onCycle reports them): the cycles run are
   * cycle + 1 … `cycles`, with the order and the skips of the run had it
   * not stopped.
   */
  resume?: ExpansionResume;
  /** Called once with the energy of the initial labeling, before the first move. */
  onStart?: (initialEnergy: EnergyBreakdown) => void;
  /** Called after every move (skipped ones included); `stats` holds the solver's counters of a move that ran a cut. */
  onMove?: (info: MoveProgress) => void;
  /**
   * Called (and awaited) after every cycle with its report and the labeling
   * so far, e.g. to write a checkpoint that a later run can start from, and
   * the labels whose next move is known to change nothing (what `resume`
   * needs besides the labeling). The labeling is the run's own: read it or
   * copy it, never modify it.
   */
  onCycle?: (report: CycleReport, labels: Uint16Array, unchanged: number[]) => void | Promise<void>;
}

/** Where a stopped run stood after a cycle: the cycles run and the labels skippable then (ExpansionOptions.resume). */
export interface ExpansionResume {
  cycle: number;
  unchanged: number[];
}

export interface CycleReport {
  cycle: number;
  energy: EnergyBreakdown;
  /** Labels whose move changed at least one pixel. */
  labelsChanged: number;
  pixelsChanged: number;
  cuts: number;
  /** Moves skipped because nothing changed since their label was last expanded (see skipUnchanged). */
  skipped: number;
  buildMs: number;
  flowMs: number;
  /** Total of each numeric max-flow counter over this cycle's cuts. */
  stats: Record<string, number>;
}

export interface ExpansionResult {
  labels: Uint16Array;
  initialEnergy: EnergyBreakdown;
  cycles: CycleReport[];
  finalEnergy: EnergyBreakdown;
  cuts: number;
  backend: string;
  device: string;
  /** Moves whose truncated (non-submodular) graph would have raised the energy, and were undone. */
  rejectedMoves: number;
}

/**
 * α-expansion (Boykov, Veksler & Zabih): for every label α in turn, the
 * optimal move that lets any pixel switch to α; a cycle visits every label.
 * `labels` is the initial labeling and is not modified.
 */
export async function alphaExpansion(
  energy: MrfEnergy,
  initial: Uint16Array,
  solver: MoveSolver,
  options: ExpansionOptions = {},
): Promise<ExpansionResult> {
  const order = options.order ?? 'frequent';
  const cyclesOpt = options.cycles ?? 4;
  const maxCycles = cyclesOpt === 'converge' ? (options.maxCycles ?? 100) : cyclesOpt;
  if (!Number.isInteger(maxCycles) || maxCycles < 0) {
    const option = cyclesOpt === 'converge' ? 'maxCycles' : 'cycles';
    throw optionError(typeof maxCycles === 'number' ? 'range' : 'type', 'alphaExpansion', option, cyclesOpt === 'converge' ? maxCycles : cyclesOpt, option === 'cycles' ? "an integer ≥ 0 or 'converge'" : 'an integer ≥ 0');
  }
  const n = energy.width * energy.height;
  if (initial.length !== n) throw new Error(`initial labeling has ${initial.length} pixels, the energy ${n}`);
  for (let p = 0; p < n; p++) {
    if (initial[p] >= energy.labels) throw new Error(`initial labeling: label ${initial[p]} at pixel ${p} is outside 0..${energy.labels - 1}`);
  }
  const labels = initial.slice();
  // A metric V's move graphs are exact, never truncated: only a non-metric energy's moves may need undoing.
  const backup = isMetricTable(energy) ? undefined : new Uint16Array(n);
  const energyOf = (l: Uint16Array): Promise<EnergyBreakdown> | EnergyBreakdown => (solver.energyOf ? solver.energyOf(l) : computeEnergy(energy, l));
  const initialEnergy = await energyOf(labels);
  options.onStart?.(initialEnergy);
  let current = initialEnergy;
  const cycles: CycleReport[] = [];
  let cuts = 0;
  let rejected = 0;
  const skipUnchanged = options.skipUnchanged ?? true;
  // version counts the moves that changed a pixel; expandedAt[α] is the version right after α's last move.
  let version = 0;
  const expandedAt = new Float64Array(energy.labels).fill(-1);
  const start = options.resume?.cycle ?? 0;
  if (!Number.isInteger(start) || start < 0) throw new Error(`resume: cycle must be an integer ≥ 0 (got ${String(start)})`);
  for (const alpha of options.resume?.unchanged ?? []) {
    if (!(Number.isInteger(alpha) && alpha >= 0 && alpha < energy.labels)) throw new Error(`resume: label ${String(alpha)} is outside 0..${energy.labels - 1}`);
    expandedAt[alpha] = version;
  }
  // What the solver reported of the labels the last cycle it ran left (their energy and label counts), if anything.
  let end: CycleEnd | void = undefined;
  const skippable = (alpha: number): boolean => skipUnchanged && expandedAt[alpha] === version;
  const record = (alpha: number, changed: number): void => {
    if (changed > 0) version++;
    expandedAt[alpha] = version;
  };

  for (let c = start; c < maxCycles; c++) {
    const report: CycleReport = {
      cycle: c + 1, energy: current, labelsChanged: 0, pixelsChanged: 0, cuts: 0, skipped: 0, buildMs: 0, flowMs: 0, stats: {},
    };
    const alphas = labelOrderForCycle(order, labels, energy.labels, c, options.seed ?? 1, end ? end.labelCounts : undefined);
    end = undefined;
    // A move that ran a cut: into the report, the skip bookkeeping and the progress callback (`changed` after any undo).
    const account = (i: number, r: MoveResult, changed: number): void => {
      report.cuts++;
      report.buildMs += r.buildMs;
      report.flowMs += r.flowMs;
      for (const [k, v] of Object.entries(r.stats)) report.stats[k] = (report.stats[k] ?? 0) + v;
      if (changed > 0) { report.labelsChanged++; report.pixelsChanged += changed; }
      record(alphas[i], changed);
      options.onMove?.({ cycle: c + 1, alpha: alphas[i], index: i, count: alphas.length, changed, stats: r.stats });
    };
    // The solver runs the cycle itself, asking before each move whether to skip it (same moves, same order); --check-moves needs every move on its own.
    const cycleRun = typeof solver.runCycle === 'function' && !options.checkMoves;
    if (cycleRun) {
      end = await solver.runCycle!(alphas, labels, {
        skip: skippable,
        done: (i, r) => {
          const alpha = alphas[i];
          if (r === null) {
            report.skipped++;
            options.onMove?.({ cycle: c + 1, alpha, index: i, count: alphas.length, changed: 0 });
            return;
          }
          if (r.truncatedTerms > 0) throw new Error(`α-expansion: ${solver.backend} truncated a graph in a cycle it ran itself (α=${alpha})`);
          account(i, r, r.changed);
        },
      });
    }
    for (let i = 0; i < (cycleRun ? 0 : alphas.length); i++) {
      const alpha = alphas[i];
      if (skippable(alpha)) {
        report.skipped++;
        options.onMove?.({ cycle: c + 1, alpha, index: i, count: alphas.length, changed: 0 });
        continue;
      }
      backup?.set(labels);
      const r = await solver.move(alpha, labels);
      let changed = r.changed;
      if (r.truncatedTerms > 0 || options.checkMoves) {
        // Truncated graphs are not exact: keep the move only if the true energy did not rise.
        const after = computeEnergy(energy, labels);
        if (options.checkMoves && r.truncatedTerms === 0 && after.total !== r.predictedEnergy) {
          throw new Error(`α-expansion: move α=${alpha} gave energy ${after.total} but its cut predicted ${r.predictedEnergy}`);
        }
        if (after.total > current.total) {
          if (r.truncatedTerms === 0 || !backup) throw new Error(`α-expansion: move α=${alpha} raised the energy from ${current.total} to ${after.total}`);
          labels.set(backup);
          changed = 0;
          rejected++;
        } else {
          current = after;
        }
      }
      account(i, r, changed);
    }
    cuts += report.cuts;
    current = end ? end.energy : await energyOf(labels);
    report.energy = current;
    cycles.push(report);
    const previous = cycles.length === 1 ? initialEnergy.total : cycles[cycles.length - 2].energy.total;
    if (current.total > previous) throw new Error(`α-expansion: cycle ${c + 1} raised the energy from ${previous} to ${current.total}`);
    await options.onCycle?.(report, labels, unchangedLabels(expandedAt, version));
    if (report.pixelsChanged === 0 || (cyclesOpt === 'converge' && current.total === previous)) break;
  }
  return {
    labels, initialEnergy, cycles, finalEnergy: current, cuts, backend: solver.backend, device: solver.device, rejectedMoves: rejected,
  };
}

/** The labels whose last move came after the last change of any pixel: their next move would change nothing. */
function unchangedLabels(expandedAt: Float64Array, version: number): number[] {
  const out: number[] = [];
  for (let a = 0; a < expandedAt.length; a++) if (expandedAt[a] === version) out.push(a);
  return out;
}
