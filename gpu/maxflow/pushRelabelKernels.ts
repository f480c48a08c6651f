import type { GPU, IGPUKernelSettings } from 'gpu.js';
import { checkBlockSettings, DEFAULT_BLOCK_ITERATIONS, DEFAULT_BLOCK_TILE, type BlockTile } from './blockWorkgroup';
import { blockPushPasses } from './blockPushKernels';
import { blockRelabel } from './blockBfsKernels';
import { bfsHeightsSource, bfsPassSource, bfsScanSource, bfsStartSource, withHeightsSource } from './bfsKernels';
import { pushRelabelSource } from './lockstepKernels';
import { STATE_PLANES } from './pushRelabelLayout';
import { sweepApplySource, sweepGatherSource, sweepPushSource } from './sweepKernels';

/**
 * The push-relabel kernel schemes and their assembly: which sources
 * (lockstepKernels.ts, sweepKernels.ts, bfsKernels.ts; the state layout in
 * pushRelabelLayout.ts) make one iteration and one global relabel, gated or
 * not, compiled with a gpu.js instance.
 */

/**
 * Kernel schemes. 'lockstep' moves flow one edge per pass and lowers BFS
 * distances one level per pass (lockstepKernels.ts, bfsPassSource). 'sweep' pushes flow
 * along whole straight runs of admissible edges in one pass and lets the BFS
 * relax along straight residual runs: the number of passes then follows the
 * number of turns of the paths flow and distances travel, not their length.
 * 'block' runs many iterations per launch tile by tile in workgroup memory,
 * and a BFS launch takes each tile to its fixed point (blockPushKernels.ts, blockBfsKernels.ts;
 * WebGPU only).
 */
export type PushScheme = 'lockstep' | 'sweep' | 'split-sweep' | 'block';
export const PUSH_SCHEMES: readonly PushScheme[] = ['sweep', 'split-sweep', 'lockstep', 'block'];
export type BfsScheme = 'level' | 'scan' | 'block';
export const BFS_SCHEMES: readonly BfsScheme[] = ['scan', 'level', 'block'];

/** The settings of the block schemes: the tile (threads = pixels per workgroup) and the local iterations per push launch. */
export interface BlockSettings {
  tile: BlockTile;
  iterations: number;
}
export const DEFAULT_BLOCK: BlockSettings = { tile: DEFAULT_BLOCK_TILE, iterations: DEFAULT_BLOCK_ITERATIONS };

/** Longest reach a scheme accepts (the walks are loops of that many steps per thread). */
export const MAX_REACH = 4096;

/** Checks a kernel scheme's settings; throws a one-line error naming the option, prefixed by `owner`. */
export function checkKernelScheme(owner: string, o: { push: PushScheme; bfs: BfsScheme; reach: number; block?: BlockSettings }): void {
  if (!PUSH_SCHEMES.includes(o.push)) throw new Error(`${owner} option push: expected ${PUSH_SCHEMES.map((p) => `'${p}'`).join(', ')}, got '${String(o.push)}'`);
  if (!BFS_SCHEMES.includes(o.bfs)) throw new Error(`${owner} option bfs: expected ${BFS_SCHEMES.map((p) => `'${p}'`).join(', ')}, got '${String(o.bfs)}'`);
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

/**
 * Compiles the passes of one push-relabel iteration of a scheme with `gpu`;
 * `settings(planes)` gives the kernel settings for an output of that many
 * [W, H] planes (the state has STATE_PLANES, a split sweep's gather 2).
 * With a gate, every pass takes the gate's input as its third argument.
 */
export function iterationPasses(gpu: GPU, push: PushScheme, settings: (planes: number) => IGPUKernelSettings, gate?: KernelGate, block: BlockSettings = DEFAULT_BLOCK): StatePass[] {
  if (push === 'block') {
    const s = settings(STATE_PLANES);
    const [W, H] = s.output as number[];
    return blockPushPasses(gpu, W, H, block.tile, block.iterations, s, gate ?? null);
  }
  const state = (source: string): ((...a: unknown[]) => unknown) => gatedKernel(gpu, source, settings(STATE_PLANES), gate, UNCHANGED_STATE);
  if (push === 'lockstep') {
    const k = state(pushRelabelSource());
    return [(S, C, G) => k(S, C, G)];
  }
  return (['h', 'v'] as const).map((axis): StatePass => {
    if (push === 'sweep') {
      const k = state(sweepPushSource(axis));
      return (S, C, G) => k(S, C, G);
    }
    // A gated gather returns zeros: the gated apply that reads them returns its input anyway.
    const gather = gatedKernel(gpu, sweepGatherSource(axis), settings(2), gate, '0.0');
    const apply = state(sweepApplySource(axis));
    return (S, C, G) => apply(S, C, gather(S, C, G), G);
  });
}

/** Source of one global-relabel pass of a BFS scheme. */
export function bfsPassSourceOf(bfs: Exclude<BfsScheme, 'block'>): string {
  return bfs === 'scan' ? bfsScanSource() : bfsPassSource();
}

/**
 * A global relabel as recorded in a pipeline: the state with its heights
 * replaced by `passes` BFS passes, started from scratch (bfsStart) or from
 * the state's heights; G is the gate's input when compiled with a gate.
 */
export type GlobalRelabel = (S: unknown, C: unknown, passes: number, fromScratch: boolean, G?: unknown) => unknown;

/**
 * Compiles the global relabel of a BFS scheme with `gpu`; `settings(planes)`
 * as for iterationPasses (1 plane: the [W, H] distances). Gated, the
 * distance kernels return the distances they were given and withHeights
 * its input state. The block scheme's relabel is its launches alone (the
 * first starts from the state, the last writes it: blockRelabel); a
 * relabel of no passes, which only restarts or keeps the heights, uses
 * the start and merge kernels of the others.
 */
export function globalRelabelPasses(gpu: GPU, bfs: BfsScheme, settings: (planes: number) => IGPUKernelSettings, gate?: KernelGate, block: BlockSettings = DEFAULT_BLOCK): GlobalRelabel {
  const dist = settings(1);
  const own = 'S[1][this.thread.y][this.thread.x]';
  const start = gatedKernel(gpu, bfsStartSource(), dist, gate, own);
  const heights = gatedKernel(gpu, bfsHeightsSource(), dist, gate, own);
  const merge = gatedKernel(gpu, withHeightsSource(), settings(STATE_PLANES), gate, UNCHANGED_STATE);
  const [W, H] = dist.output as number[];
  const blocks = bfs === 'block' ? blockRelabel(gpu, W, H, block.tile, dist, settings(STATE_PLANES), gate ?? null) : null;
  const pass = bfs === 'block' ? null : gatedKernel(gpu, bfsPassSourceOf(bfs), dist, gate, 'D[this.thread.y][this.thread.x]');
  return (S, C, passes, fromScratch, G) => {
    if (passes === 0 && !fromScratch) return S;
    if (blocks && passes > 0) return blocks(S, C, passes, fromScratch, G);
    let D = fromScratch ? start(S, G) : heights(S, G);
    for (let i = 0; i < passes; i++) D = pass!(S, C, D, G);
    return merge(S, D, G);
  };
}
