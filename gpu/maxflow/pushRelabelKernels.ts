import type { GPU, IGPUKernelSettings } from 'gpu.js';
import { checkBlockSettings, DEFAULT_BLOCK_ITERATIONS, DEFAULT_BLOCK_TILE, type BlockTile } from './blockWorkgroup';
import { bfsHeightsSource, bfsStartSource, withHeightsSource } from './bfsKernels';
import { STATE_PLANES } from './pushRelabelLayout';

/**
 * The push-relabel kernel families and their assembly: what a family of
 * push or BFS kernels gives (PushFamily, BfsFamily), the gate every pass
 * takes, and one iteration and one global relabel compiled with a gpu.js
 * instance from the families a run names. The families themselves are the
 * product's (kernelFamilies.ts) and those a run is given besides (the
 * benchmarks' ablation baselines); the state layout is pushRelabelLayout.ts.
 */

/** Kernel settings for an output of `planes` [W, H] planes (the state has STATE_PLANES, a distance array 1). */
export type PlaneSettings = (planes: number) => IGPUKernelSettings;

/**
 * A family of push kernels, known by its name: it compiles the passes of
 * one push-relabel iteration, each taking (S, C) and, compiled with a
 * gate, the gate's input G last. A family's name names its kernels (a kept
 * program is keyed by the names), so two families never share one.
 */
export interface PushFamily {
  readonly name: string;
  passes(gpu: GPU, settings: PlaneSettings, gate: KernelGate | undefined, block: BlockSettings): StatePass[];
}

/** One BFS pass over the distances D [W, H]: (S, C, D, G?) → D; gated, D unchanged. */
export type DistancePass = (S: unknown, C: unknown, D: unknown, G?: unknown) => unknown;

/**
 * What a BFS family compiles: a gather pass over the distances, which a
 * global relabel runs between the shared start and merge kernels, or
 * launches that relabel the state by themselves (the first starting from
 * the state, the last writing it: the block BFS).
 */
export type BfsPasses = { pass: DistancePass } | { launches: GlobalRelabel };

/** A family of global-relabel (BFS) kernels, known by its name (as a PushFamily is). */
export interface BfsFamily {
  readonly name: string;
  passes(gpu: GPU, settings: PlaneSettings, gate: KernelGate | undefined, block: BlockSettings): BfsPasses;
}

/** Push and BFS families, each known by its name. */
export interface KernelFamilies {
  readonly push: readonly PushFamily[];
  readonly bfs: readonly BfsFamily[];
}

/** The settings of the block schemes: the tile (threads = pixels per workgroup) and the local iterations per push launch. */
export interface BlockSettings {
  tile: BlockTile;
  iterations: number;
}
export const DEFAULT_BLOCK: BlockSettings = { tile: DEFAULT_BLOCK_TILE, iterations: DEFAULT_BLOCK_ITERATIONS };

/** Longest reach a scheme accepts (the walks are loops of that many steps per thread). */
export const MAX_REACH = 4096;

/** Checks the settings the families share; throws a one-line error naming the option, prefixed by `owner`. */
export function checkKernelSettings(owner: string, o: { reach: number; block?: BlockSettings }): void {
  if (o.block) checkBlockSettings(owner, o.block.tile, o.block.iterations);
  if (!Number.isInteger(o.reach) || o.reach < 1 || o.reach > MAX_REACH) throw new Error(`${owner} option reach: expected an integer in 1..${MAX_REACH}, got ${String(o.reach)}`);
}

/**
 * One pass of a push-relabel iteration as recorded in a pipeline: the state
 * after it, from the state and the capacities, and from the gate's input G
 * when the passes were compiled with a gate.
 */
export type StatePass = (S: unknown, C: unknown, G?: unknown) => unknown;

/**
 * A gate for state kernels: an extra last argument G and a condition on it
 * under which the kernel returns its input state unchanged. A compiled
 * pipeline cannot branch on the host, so a plan that has reached its goal
 * (a move that has converged) still dispatches every pass it recorded; the
 * gate makes those passes copies, which cost the dispatch and one read and
 * write per value instead of the pass's walks.
 */
export interface KernelGate {
  /** a condition on G (e.g. 'G[2] === 0.0') under which the pass changes nothing */
  skip: string;
  /** the same condition in WGSL over G's accessor (e.g. 'get_user_G(0, 0, 2) == 0.0'), for the block kernels */
  wgsl: string;
}

/**
 * `source` with the gate: G appended to its parameters and, first thing, a
 * return of `unchanged` when the gate's condition holds.
 */
export function gatedSource(source: string, gate: KernelGate, unchanged: string): string {
  const head = /^function \(([^)]*)\) \{/.exec(source);
  if (!head) throw new Error('gatedSource: not a kernel source of the form function (…) {');
  return `function (${head[1]}, G) {
    if (${gate.skip}) { return ${unchanged}; }${source.slice(head[0].length)}`;
}

/** A state kernel's return when gated: its own element of the input state. */
export const UNCHANGED_STATE = 'S[this.thread.z][this.thread.y][this.thread.x]';

/**
 * Compiles `source`, with the gate when one is given (returning `unchanged`
 * when it holds). The pass always takes the gate's input as its last
 * argument and drops it when compiled without a gate.
 */
export function gatedKernel(gpu: GPU, source: string, settings: IGPUKernelSettings, gate: KernelGate | undefined, unchanged: string): (...a: unknown[]) => unknown {
  const k = gpu.createKernel(gate ? gatedSource(source, gate, unchanged) : source, settings);
  return (...a: unknown[]) => (gate ? k(...a) : k(...a.slice(0, -1)));
}

/** A state kernel of `source` ([W, H, STATE_PLANES]), gated as the families' state passes are (its own element of the input when shut). */
export function stateKernel(gpu: GPU, source: string, settings: PlaneSettings, gate: KernelGate | undefined): (...a: unknown[]) => unknown {
  return gatedKernel(gpu, source, settings(STATE_PLANES), gate, UNCHANGED_STATE);
}

/** A BFS family of one gather pass over the distances, compiled from `source()` (gated: the distances it was given). */
export function gatherBfs(name: string, source: () => string): BfsFamily {
  return Object.freeze<BfsFamily>({ name, passes: (gpu, settings, gate) => ({ pass: gatedKernel(gpu, source(), settings(1), gate, 'D[this.thread.y][this.thread.x]') }) });
}

/**
 * Compiles the passes of one push-relabel iteration of `push` with `gpu`;
 * `settings(planes)` gives the kernel settings for an output of that many
 * [W, H] planes (the state has STATE_PLANES, a split sweep's gather 2).
 * With a gate, every pass takes the gate's input as its third argument.
 */
export function iterationPasses(gpu: GPU, push: PushFamily, settings: PlaneSettings, gate?: KernelGate, block: BlockSettings = DEFAULT_BLOCK): StatePass[] {
  return push.passes(gpu, settings, gate, block);
}

/**
 * A global relabel as recorded in a pipeline: the state with its heights
 * replaced by `passes` BFS passes, started from scratch (bfsStart) or from
 * the state's heights; G is the gate's input when compiled with a gate.
 */
export type GlobalRelabel = (S: unknown, C: unknown, passes: number, fromScratch: boolean, G?: unknown) => unknown;

/**
 * Compiles the global relabel of `bfs` with `gpu`; `settings(planes)` as
 * for iterationPasses (1 plane: the [W, H] distances). Gated, the distance
 * kernels return the distances they were given and withHeights its input
 * state. A family of launches (the block BFS) relabels with them alone; a
 * relabel of no passes, which only restarts or keeps the heights, uses the
 * start and merge kernels, which every family shares.
 */
export function globalRelabelPasses(gpu: GPU, bfs: BfsFamily, settings: PlaneSettings, gate?: KernelGate, block: BlockSettings = DEFAULT_BLOCK): GlobalRelabel {
  const dist = settings(1);
  const own = 'S[1][this.thread.y][this.thread.x]';
  const start = gatedKernel(gpu, bfsStartSource(), dist, gate, own);
  const heights = gatedKernel(gpu, bfsHeightsSource(), dist, gate, own);
  const merge = gatedKernel(gpu, withHeightsSource(), settings(STATE_PLANES), gate, UNCHANGED_STATE);
  const compiled = bfs.passes(gpu, settings, gate, block);
  const launches = 'launches' in compiled ? compiled.launches : null;
  const pass = 'pass' in compiled ? compiled.pass : null;
  return (S, C, passes, fromScratch, G) => {
    if (passes === 0 && !fromScratch) return S;
    if (launches && passes > 0) return launches(S, C, passes, fromScratch, G);
    let D = fromScratch ? start(S, G) : heights(S, G);
    for (let i = 0; i < passes; i++) D = pass!(S, C, D, G);
    return merge(S, D, G);
  };
}
