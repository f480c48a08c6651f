import type { GPU, IGPUKernelSettings } from 'gpu.js';
import { workgroupEntryMarker } from '../runtime/gpujs/workgroupEntry';
import { gateHead, runsWgsl, wgslFloat, workgroupKernel, zeroedAtomics, type WgslGate } from './blockWorkgroup';

/** Threads per side of a block check's workgroup, and pixels per side of the square each workgroup checks (2×2 pixels a thread). */
const CHECK_THREADS = 16;
export const BLOCK_CHECK_SPAN = 32;

/**
 * WGSL of the convergence check of a state, one workgroup per 32×32
 * pixels, [ceil(W/32), ceil(H/32)]: the code of gpu/move/reductionKernels.ts's
 * checkTilesSource (1 when a pixel holds excess at a finite height, plus 2
 * when a height is not a fixed point of the BFS equations), OR-ed over the
 * square in workgroup memory, so that a check needs one launch where the
 * per-pixel gather and its first reduction levels needed several. Gated,
 * it reports 0 (converged), as the gated gather does.
 */
export function blockCheckWgsl(name: string, W: number, H: number, gate: WgslGate | null): string {
  const T = CHECK_THREADS;
  const per = BLOCK_CHECK_SPAN / T;
  const OW = Math.ceil(W / BLOCK_CHECK_SPAN);
  const INF = wgslFloat(W * H + 1);
  const v = (s: string): string => `${name}_${s}`;
  return `${workgroupEntryMarker({ name, threads: [T, T], groups: [OW, Math.ceil(H / BLOCK_CHECK_SPAN)] })}
var<workgroup> ${v('gate')} : u32;
var<workgroup> ${v('code')} : atomic<u32>;
fn ${name}(lid : vec3<u32>, wid : vec3<u32>) {
  ${zeroedAtomics(v('code'))}
  ${gateHead(name, gate)}
  var code = 0u;
  if (gated == 0u) {
    for (var b = 0; b < ${per}; b++) {
      for (var a = 0; a < ${per}; a++) {
        let x = i32(wid.x) * ${BLOCK_CHECK_SPAN} + a * ${T} + i32(lid.x);
        let y = i32(wid.y) * ${BLOCK_CHECK_SPAN} + b * ${T} + i32(lid.y);
        if (x < ${W} && y < ${H}) {
          let e = get_user_S(0, y, x);
          let h = get_user_S(1, y, x);
          if (e > 0.0 && h < ${INF}) { code = code | 1u; }
          var want = 1.0;
          if (e >= 0.0) {
            var m = ${INF} - 1.0;
            if (x + 1 < ${W}) {
              if (get_user_C(0, y, x) - get_user_S(2, y, x) > 0.0) { m = min(m, get_user_S(1, y, x + 1)); }
            }
            if (y + 1 < ${H}) {
              if (get_user_C(2, y, x) - get_user_S(3, y, x) > 0.0) { m = min(m, get_user_S(1, y + 1, x)); }
            }
            if (x > 0) {
              if (get_user_C(1, y, x - 1) + get_user_S(2, y, x - 1) > 0.0) { m = min(m, get_user_S(1, y, x - 1)); }
            }
            if (y > 0) {
              if (get_user_C(3, y - 1, x) + get_user_S(3, y - 1, x) > 0.0) { m = min(m, get_user_S(1, y - 1, x)); }
            }
            want = min(${INF}, m + 1.0);
          }
          if (want != h) { code = code | 2u; }
        }
      }
    }
  }
  if (code != 0u) { atomicOr(&${v('code')}, code); }
  workgroupBarrier();
  if (lid.x == 0u && lid.y == 0u) {
    result[wid.x + ${OW}u * wid.y] = f32(atomicLoad(&${v('code')}));
  }
}
`;
}

/**
 * The block convergence check (blockCheckWgsl): (S, C[, G]) → codes
 * [ceil(W/32), ceil(H/32)]; `settings` must have that output.
 */
export function blockCheck(gpu: GPU, W: number, H: number, settings: IGPUKernelSettings, gate: WgslGate | null): (...a: unknown[]) => unknown {
  if (!runsWgsl(gpu)) throw new Error('bfs scheme block: needs WebGPU (its kernels are WGSL with workgroup memory)');
  const name = `blockCheck${gate ? '_g' : ''}`;
  return workgroupKernel(gpu, ['S', 'C'], name, blockCheckWgsl(name, W, H, gate), settings, gate);
}
