import type { GraphVariant } from '../../expansion/binaryStep';
import type { LabelOrder } from '../../expansion/labelOrder';
import type { BfsScheme, PushScheme } from '../../gpu/maxflow/kernelFamilies';
import type { InitKind } from '../../stereo/params';

/**
 * The technique switches of the benchmark, applied cumulatively from a
 * baseline, in the order of Choi & Park's Fig. 5:
 *   graph   Kolmogorov's construction → reversed terminals (§3.2)
 *   init    all-zero labeling → 9×9 WTA (§3.3)
 *   order   sequential labels → most frequent first (§3.4)
 *   sweep   lockstep pushes over one edge per pass → segmented sweeps that
 *           push along whole straight runs of admissible edges per pass (our
 *           counterpart of the paper's repetitive block push-relabel, §4.2)
 *   scan    global relabel one BFS level per pass → relaxation along
 *           straight residual runs per pass (fewer passes per global relabel)
 *   block   sweeps → repetitive block push-relabel: tiles in workgroup
 *           memory, many local iterations per launch (§4; WebGPU only)
 *   blockbfs scans → block global relabel: each tile's BFS to its fixed
 *           point per launch (§5; WebGPU only)
 *   k       push-relabel iterations per round between global relabels: baseline K → K
 *   rounds  a fixed number of push-relabel rounds (each ending in a global
 *           relabel) per device call → rounds adapted to what recent moves
 *           needed (fewer wasted rounds and readbacks: our counterpart of the
 *           paper's low-overhead global relabel scheme)
 *   resume  a move that has not converged when its call ends is redone from
 *           scratch with twice the rounds → continued from its read-back state
 *   gate    the rounds a call runs after its move converged repeat the full
 *           passes → gated to copies of the state (and the rounds per call
 *           chosen for that cost)
 *   warm    every move starts from zero flow → from the flows its α's
 *           previous move ended with (dynamic graph cuts, Kohli & Torr)
 * `sweep`, `scan`, `block`, `blockbfs`, `k`, `rounds`, `resume`, `gate` and `warm` act on the device push-relabel only; on BK they change
 * nothing and are left out. The final step is the device solver's default.
 * A kernel technique is a step only where the kernel families it switches
 * between are at hand (StepKernels): the block families where WGSL runs, the
 * lockstep push and level BFS the sweep and scan start from where the run was
 * given them (the ablation script, bench/gpuAblation.ts; no default of the
 * product uses them, so `stereocut bench` leaves those two steps out).
 */
export type TechniqueId = 'graph' | 'init' | 'order' | 'sweep' | 'scan' | 'block' | 'blockbfs' | 'k' | 'rounds' | 'resume' | 'gate' | 'warm';
export const TECHNIQUES: readonly TechniqueId[] = ['graph', 'init', 'order', 'sweep', 'scan', 'block', 'blockbfs', 'k', 'rounds', 'resume', 'gate', 'warm'];
export const TECHNIQUE_LABELS: Record<TechniqueId, string> = {
  graph: 'reversed graph',
  init: 'WTA init',
  order: 'frequent-first order',
  sweep: 'sweep push',
  scan: 'scan BFS',
  block: 'block push-relabel',
  blockbfs: 'block BFS',
  k: 'K iterations per round',
  rounds: 'adaptive rounds',
  resume: 'resumed moves',
  gate: 'gated rounds',
  warm: 'warm-started moves',
};

export interface TechniqueConfig {
  graph: GraphVariant;
  init: InitKind;
  order: LabelOrder;
  /** Push kernels and global relabel passes (device backends). */
  push: PushScheme;
  bfs: BfsScheme;
  /** Push-relabel iterations per round (device backends). */
  k: number;
  rounds: 'fixed' | 'adaptive';
  /** A move that has not converged: redone from scratch, or continued from its state (device backends). */
  resume: boolean;
  /** Rounds after a move converged: full passes, or gated copies (device backends). */
  gate: boolean;
  /** Each move from zero flow, or from its α's previous flows (device backends). */
  warm: boolean;
}

export interface BenchStep {
  /** 'baseline' or the technique switched on at this step. */
  id: 'baseline' | TechniqueId;
  label: string;
  config: TechniqueConfig;
}

/** The names of the kernel families a device step may use (push and BFS); none for BK. */
export interface StepKernels {
  push: readonly string[];
  bfs: readonly string[];
}
export const NO_STEP_KERNELS: StepKernels = { push: [], bfs: [] };

/** The kernel techniques: the family each switches from and to, in the paper's order. */
const KERNEL_SWITCHES: ReadonlyArray<[TechniqueId, { field: 'push' | 'bfs'; from: string; to: string }]> = [
  ['sweep', { field: 'push', from: 'lockstep', to: 'sweep' }],
  ['scan', { field: 'bfs', from: 'level', to: 'scan' }],
  ['block', { field: 'push', from: 'sweep', to: 'block' }],
  ['blockbfs', { field: 'bfs', from: 'scan', to: 'block' }],
];
const kernelSwitch = (t: TechniqueId) => KERNEL_SWITCHES.find(([id]) => id === t)?.[1];

/** Whether a technique changes anything on a backend, with the kernel families at hand (a kernel technique needs both of its families). */
export function appliesTo(t: TechniqueId, backend: string, kernels: StepKernels = NO_STEP_KERNELS): boolean {
  const sw = kernelSwitch(t);
  if (sw && !(kernels[sw.field].includes(sw.from) && kernels[sw.field].includes(sw.to))) return false;
  return !(t !== 'graph' && t !== 'init' && t !== 'order' && backend === 'bk');
}

export function parseTechniques(list: readonly string[] | undefined): TechniqueId[] {
  if (!list || list.length === 0) return [...TECHNIQUES];
  const out: TechniqueId[] = [];
  for (const raw of list.flatMap((s) => s.split(','))) {
    const t = raw.trim();
    if (!(TECHNIQUES as readonly string[]).includes(t)) throw new Error(`--techniques: unknown technique '${t}' (expected ${TECHNIQUES.join(', ')})`);
    if (!out.includes(t as TechniqueId)) out.push(t as TechniqueId);
  }
  // Cumulative steps follow the paper's order whatever order they were given in.
  return TECHNIQUES.filter((t) => out.includes(t));
}

/**
 * Baseline, then one step per technique (those that apply to the backend),
 * each adding its switch to the previous. `kernels`: the families the
 * device steps may use (the block families only where they run: WebGPU
 * with the workgroup entry); a kernel technique without its families is
 * left out, its field at the final setting those families allow (without
 * the block families the sweeps and scans stay; without the lockstep push
 * and level BFS the chain starts from the sweeps and scans).
 */
export function cumulativeSteps(techniques: readonly TechniqueId[], backend: string, k: { baseline: number; tuned: number }, kernels: StepKernels = NO_STEP_KERNELS): BenchStep[] {
  for (const [name, v] of [['--baseline-k', k.baseline], ['--k', k.tuned]] as const) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`${name}: must be an integer ≥ 1 (got ${v})`);
  }
  let cfg: TechniqueConfig = { graph: 'classic', init: 'zero', order: 'sequential', push: 'lockstep', bfs: 'level', k: k.baseline, rounds: 'fixed', resume: false, gate: false, warm: false };
  // A technique left out stays at its final setting in every step, so the chain isolates the ones measured.
  if (!techniques.includes('graph')) cfg.graph = 'reversed';
  if (!techniques.includes('init')) cfg.init = 'wta';
  if (!techniques.includes('order')) cfg.order = 'frequent';
  // A kernel technique that is no step leaves its field at the family it switches to, where that family is at hand.
  for (const [t, sw] of KERNEL_SWITCHES) {
    const step = techniques.includes(t) && appliesTo(t, backend, kernels);
    if (!step && kernels[sw.field].includes(sw.to)) cfg[sw.field] = sw.to;
  }
  if (!techniques.includes('k')) cfg.k = k.tuned;
  if (!techniques.includes('rounds')) cfg.rounds = 'adaptive';
  if (!techniques.includes('resume')) cfg.resume = true;
  if (!techniques.includes('gate')) cfg.gate = true;
  if (!techniques.includes('warm')) cfg.warm = true;
  const steps: BenchStep[] = [{ id: 'baseline', label: 'baseline', config: { ...cfg } }];
  for (const t of techniques) {
    if (!appliesTo(t, backend, kernels)) continue;
    cfg = { ...cfg };
    if (t === 'graph') cfg.graph = 'reversed';
    if (t === 'init') cfg.init = 'wta';
    if (t === 'order') cfg.order = 'frequent';
    const sw = kernelSwitch(t);
    if (sw) cfg[sw.field] = sw.to;
    if (t === 'k') cfg.k = k.tuned;
    if (t === 'rounds') cfg.rounds = 'adaptive';
    if (t === 'resume') cfg.resume = true;
    if (t === 'gate') cfg.gate = true;
    if (t === 'warm') cfg.warm = true;
    steps.push({ id: t, label: `+ ${TECHNIQUE_LABELS[t]}`, config: cfg });
  }
  return steps;
}
