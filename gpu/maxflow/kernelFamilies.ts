import { bfsScanSource } from './bfsKernels';
import { blockRelabel } from './blockBfsKernels';
import { blockPushPasses } from './blockPushKernels';
import { STATE_PLANES } from './pushRelabelLayout';
import {
  checkKernelSettings, gatedKernel, gatherBfs, stateKernel, type BfsFamily, type BlockSettings, type KernelFamilies, type PushFamily, type StatePass,
} from './pushRelabelKernels';
import { sweepApplySource, sweepGatherSource, sweepPushSource } from './sweepKernels';

/**
 * The product's push and BFS kernel families, each under its name, and the
 * families of a run: the product's and those its caller gives besides
 * (`families`, an option of the solvers: the benchmarks' ablation passes
 * its lockstep push and level BFS that way). Nothing is registered for the
 * process: a run uses the families it was given, and no other run sees them.
 *
 *  - 'sweep'        flow down whole straight runs of admissible edges inside
 *                   segments of `reach` pixels, a horizontal and a vertical
 *                   pass per iteration (sweepKernels.ts; the default where
 *                   WGSL does not run);
 *  - 'split-sweep'  the same sweeps, each as a gather pass that walks the
 *                   runs once per pixel and a loop-free apply pass (the
 *                   default above 2^20 pixels);
 *  - 'block'        tiles in workgroup memory, many iterations per launch,
 *                   an iteration one launch of each of two tilings
 *                   (blockPushKernels.ts; WebGPU only, its default);
 * and the BFS families
 *  - 'scan'         a pass relaxes distances along straight residual runs
 *                   of up to `reach` pixels (bfsKernels.ts);
 *  - 'block'        a launch takes every tile to the fixed point of the BFS
 *                   equations (blockBfsKernels.ts; WebGPU only, its default).
 */

/** The product's push families' names; a run names others only when it is given them (`families`). */
export type ProductPush = 'sweep' | 'split-sweep' | 'block';
export type ProductBfs = 'scan' | 'block';
/** A push family's name: the product's, or one of the families a run is given (the intersection keeps the product's names offered by editors). */
export type PushScheme = ProductPush | (string & {});
export type BfsScheme = ProductBfs | (string & {});

export const SWEEP_PUSH: PushFamily = Object.freeze<PushFamily>({
  name: 'sweep',
  passes: (gpu, settings, gate) => (['h', 'v'] as const).map((axis): StatePass => {
    const k = stateKernel(gpu, sweepPushSource(axis), settings, gate);
    return (S, C, G) => k(S, C, G);
  }),
});

export const SPLIT_SWEEP_PUSH: PushFamily = Object.freeze<PushFamily>({
  name: 'split-sweep',
  passes: (gpu, settings, gate) => (['h', 'v'] as const).map((axis): StatePass => {
    // A gated gather returns zeros: the gated apply that reads them returns its input anyway.
    const gather = gatedKernel(gpu, sweepGatherSource(axis), settings(2), gate, '0.0');
    const apply = stateKernel(gpu, sweepApplySource(axis), settings, gate);
    return (S, C, G) => apply(S, C, gather(S, C, G), G);
  }),
});

export const BLOCK_PUSH: PushFamily = Object.freeze<PushFamily>({
  name: 'block',
  passes: (gpu, settings, gate, block) => {
    const s = settings(STATE_PLANES);
    const [W, H] = s.output as number[];
    return blockPushPasses(gpu, W, H, block.tile, block.iterations, s, gate ?? null);
  },
});

export const SCAN_BFS: BfsFamily = gatherBfs('scan', bfsScanSource);

export const BLOCK_BFS: BfsFamily = Object.freeze<BfsFamily>({
  name: 'block',
  passes: (gpu, settings, gate, block) => {
    const dist = settings(1);
    const [W, H] = dist.output as number[];
    return { launches: blockRelabel(gpu, W, H, block.tile, dist, settings(STATE_PLANES), gate ?? null) };
  },
});

/** Frozen, as every constant set of families is: a run's families are what it was given, never changed behind it. */
export const PRODUCT_FAMILIES: KernelFamilies = Object.freeze({ push: Object.freeze([SWEEP_PUSH, SPLIT_SWEEP_PUSH, BLOCK_PUSH]), bfs: Object.freeze([SCAN_BFS, BLOCK_BFS]) });

/** No families besides the product's: the default of the solvers' `families` option. */
export const NO_FAMILIES: KernelFamilies = Object.freeze({ push: Object.freeze([]), bfs: Object.freeze([]) });

/**
 * The families a run may use: the product's, then `given`. A given family
 * must have a name of its own (one of the product's, or one given twice,
 * would make a name stand for two sets of kernels); otherwise a one-line
 * error naming the option, prefixed by `owner`.
 */
export function runFamilies(owner: string, given: KernelFamilies = NO_FAMILIES): KernelFamilies {
  const list = (kind: 'push' | 'bfs'): ReadonlyArray<PushFamily | BfsFamily> => {
    const extra: unknown = (given as { push?: unknown; bfs?: unknown } | null)?.[kind];
    if (!Array.isArray(extra)) throw new Error(`${owner} option families: expected { push: [...], bfs: [...] } of kernel families, got ${kind} ${String(extra)}`);
    const all = [...PRODUCT_FAMILIES[kind], ...(extra as Array<PushFamily | BfsFamily>)];
    all.forEach((f, i) => {
      if (typeof f?.name !== 'string' || typeof f.passes !== 'function') throw new Error(`${owner} option families: a ${kind} family needs a name and passes(), got ${String(f)}`);
      if (all.findIndex((g) => g.name === f.name) !== i) throw new Error(`${owner} option families: ${kind} family '${f.name}' is named twice (a name stands for one set of kernels)`);
    });
    return all;
  };
  return { push: list('push') as PushFamily[], bfs: list('bfs') as BfsFamily[] };
}

/**
 * The push and BFS families a run's options name, among the product's and
 * its `families`, with the settings the families share checked; throws a
 * one-line error naming the option, prefixed by `owner`.
 */
export function kernelFamiliesOf(owner: string, o: { push: string; bfs: string; reach: number; block?: BlockSettings; families?: KernelFamilies }): { push: PushFamily; bfs: BfsFamily } {
  const families = runFamilies(owner, o.families);
  const pick = <F extends PushFamily | BfsFamily>(kind: 'push' | 'bfs', list: readonly F[], name: string): F => {
    const f = list.find((g) => g.name === name);
    if (!f) throw new Error(`${owner} option ${kind}: expected ${list.map((g) => `'${g.name}'`).join(', ')}, got '${String(name)}'`);
    return f;
  };
  const push = pick('push', families.push, o.push);
  const bfs = pick('bfs', families.bfs, o.bfs);
  checkKernelSettings(owner, o);
  return { push, bfs };
}
