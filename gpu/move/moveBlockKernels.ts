/**
 * The move bookkeeping of a plan as workgroup kernels (WebGPU only, beside
 * the block push and BFS): the tally of a convergence check and the count
 * of the pixels a move changed, each one launch over the whole grid.
 *
 * A plan's call is a chain of dependent dispatches, and at the Middlebury
 * sizes each costs about the same to record, submit and run however little
 * it does. The gather kernels of reductionKernels.ts reduce 8×8 blocks per
 * level, so a check's codes and a move's changed pixels took two to four
 * dispatches each before a single value was left; here one workgroup
 * reduces in workgroup memory what several launches did.
 */
import type { GPU, IGPUKernelSettings } from 'gpu.js';
import { BLOCK_CHECK_SPAN } from '../maxflow/blockCheckKernel';
import { runsWgsl, workgroupKernel, zeroedAtomics } from '../maxflow/blockWorkgroup';
import { workgroupEntryMarker } from '../runtime/gpujs/workgroupEntry';

/** Threads of the tally's single workgroup: each ORs every TALLY_THREADS-th code. */
const TALLY_THREADS = 64;

/**
 * WGSL of the move's tally (reductionKernels.ts tallySource: the same four
 * values from the same codes) over all [CW, CH] codes of a block check
 * (blockCheckWgsl), in one workgroup: the codes OR-ed in workgroup memory,
 * then T updated, [4].
 */
export function blockTallyWgsl(name: string, CW: number, CH: number, afterRounds: boolean): string {
  const n = CW * CH;
  return `${workgroupEntryMarker({ name, threads: [TALLY_THREADS, 1], groups: [1, 1] })}
var<workgroup> ${name}_code : atomic<u32>;
fn ${name}(lid : vec3<u32>, wid : vec3<u32>) {
  ${zeroedAtomics(`${name}_code`)}
  var code = 0u;
  for (var k = i32(lid.x); k < ${n}; k += ${TALLY_THREADS}) {
    code = code | u32(get_user_RB(0, k / ${CW}, k % ${CW}));
  }
  if (code != 0u) { atomicOr(&${name}_code, code); }
  workgroupBarrier();
  let all = atomicLoad(&${name}_code);
  if (lid.x < 4u) {
    let unfixed = f32((all >> 1u) & 1u);
    let b = max(f32(all & 1u), unfixed);
    var v = get_user_T(0, 0, i32(lid.x));
    if (lid.x == 1u) { v = v + b; }
    if (lid.x == 2u) { v = b; }
    ${afterRounds ? 'if (lid.x == 3u) { v = max(v, unfixed); }' : ''}
    result[lid.x] = v;
  }
}
`;
}

/**
 * The tally of a block check's codes [CW, CH]: (RB, T) → T', [4]; with
 * `afterRounds` false a BFS shortfall is not recorded (tallySource).
 * `settings` must have the output [4].
 */
export function blockTally(gpu: GPU, CW: number, CH: number, afterRounds: boolean, settings: IGPUKernelSettings): (RB: unknown, T: unknown) => unknown {
  if (!runsWgsl(gpu)) throw new Error('bfs scheme block: needs WebGPU (its kernels are WGSL with workgroup memory)');
  const name = `blockTally_${CW}x${CH}${afterRounds ? '' : '_first'}`;
  const k = workgroupKernel(gpu, ['RB', 'T'], name, blockTallyWgsl(name, CW, CH, afterRounds), settings, null);
  return (RB, T) => k(RB, T, undefined);
}

/** Threads per side of a count's workgroup: 2×2 pixels each, as the block check. */
const COUNT_THREADS = 16;

/**
 * WGSL of the pixels whose label differs between two labelings A and B
 * ([W, H] each), per 32×32 square (the block check's squares),
 * [ceil(W/32), ceil(H/32)]: the host adds the squares' counts up.
 */
export function changedSquaresWgsl(name: string, W: number, H: number): string {
  const T = COUNT_THREADS;
  const per = BLOCK_CHECK_SPAN / T;
  const OW = Math.ceil(W / BLOCK_CHECK_SPAN);
  return `${workgroupEntryMarker({ name, threads: [T, T], groups: [OW, Math.ceil(H / BLOCK_CHECK_SPAN)] })}
var<workgroup> ${name}_count : atomic<u32>;
fn ${name}(lid : vec3<u32>, wid : vec3<u32>) {
  ${zeroedAtomics(`${name}_count`)}
  var c = 0u;
  for (var b = 0; b < ${per}; b++) {
    for (var a = 0; a < ${per}; a++) {
      let x = i32(wid.x) * ${BLOCK_CHECK_SPAN} + a * ${T} + i32(lid.x);
      let y = i32(wid.y) * ${BLOCK_CHECK_SPAN} + b * ${T} + i32(lid.y);
      if (x < ${W} && y < ${H}) {
        if (get_user_A(0, y, x) != get_user_B(0, y, x)) { c = c + 1u; }
      }
    }
  }
  if (c != 0u) { atomicAdd(&${name}_count, c); }
  workgroupBarrier();
  if (lid.x == 0u && lid.y == 0u) {
    result[wid.x + ${OW}u * wid.y] = f32(atomicLoad(&${name}_count));
  }
}
`;
}

/** The per-square counts of changed pixels (changedSquaresWgsl): (A, B) → [ceil(W/32), ceil(H/32)], the output `settings` must have. */
export function changedSquares(gpu: GPU, W: number, H: number, settings: IGPUKernelSettings): (A: unknown, B: unknown) => unknown {
  if (!runsWgsl(gpu)) throw new Error('bfs scheme block: needs WebGPU (its kernels are WGSL with workgroup memory)');
  const name = `changedSquares_${W}x${H}`;
  const k = workgroupKernel(gpu, ['A', 'B'], name, changedSquaresWgsl(name, W, H), settings, null);
  return (A, B) => k(A, B, undefined);
}
