import type { KernelFamilies } from '../../gpu/maxflow/pushRelabelKernels';
import { LEVEL_BFS } from './levelBfsKernel';
import { LOCKSTEP_PUSH } from './lockstepKernels';

/**
 * The kernel families the benchmarks give a run besides the product's: the
 * lockstep push and the level BFS, the baseline of the GPU ablation (the
 * sweep and scan techniques start from them) and of the kernel
 * comparisons. A run takes them as its `families` option (GpuMoveOptions,
 * PushRelabelOptions, match()'s `gpu`), then names them as `push:
 * 'lockstep'` and `bfs: 'level'`.
 */
export const ABLATION_FAMILIES: KernelFamilies = Object.freeze({ push: Object.freeze([LOCKSTEP_PUSH]), bfs: Object.freeze([LEVEL_BFS]) });
