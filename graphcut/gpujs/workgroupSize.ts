/**
 * Workgroups of 256 threads for gpu.js's 2D and 3D WebGPU kernels.
 *
 * gpu.js 2.24.1 gives every 2D/3D kernel 8×8 = 64-thread workgroups
 * (web-gpu/kernel.js, assembleWGSL); 64-thread workgroups leave much of a
 * GPU's scheduling capacity idle, and the same pass in 256-thread
 * workgroups runs in far less time. Every pass of a move is such a kernel.
 *
 * A kernel's threads find their element from their global invocation id and
 * return when it lies outside the output (gpu.js's generated `main` checks
 * it), so the shape of a workgroup changes which threads run together, never
 * what any of them computes. gpu.js derives the dispatch from the kernel's
 * `workgroupSize`, which assembleWGSL sets with the WGSL attribute;
 * `installWorkgroupSize` rewrites both, for the gpu.js version it was written
 * against only, and only where the WGSL carries gpu.js's attribute exactly
 * once. 1D kernels (gpu.js folds their dispatch with the workgroup width)
 * and graphical kernels are left alone.
 */
import { deviceFlags } from '../deviceFlags';
import { wrappedKernelPrototype } from './internals';
import { adaptsFor } from './scope';

const GPU_JS_SHAPE = '@workgroup_size(8, 8, 1)';

/** Shapes a setting may take: at most 256 threads, WebGPU's default limit per workgroup. */
export type WorkgroupShape = readonly [number, number];

/** Whether the rewrite is installed (the shape of the kernels built from now on is deviceFlags.workgroup; kernels built earlier keep theirs). */
export const kernelWorkgroup: { readonly installed: boolean } = { installed: false };

/**
 * Sets the workgroup shape of the 2D/3D kernels built from now on: two
 * positive integers with a product of at most 256 ([8, 8] is gpu.js's own);
 * anything else throws, naming the setting.
 */
export function setKernelWorkgroup(shape: unknown): void {
  const ok = Array.isArray(shape) && shape.length === 2 && shape.every((v) => Number.isInteger(v) && v >= 1) && shape[0] * shape[1] <= 256;
  if (!ok) throw new Error(`kernel workgroup shape: expected two positive integers with a product of at most 256, got ${JSON.stringify(shape)}`);
  deviceFlags.workgroup = [shape[0], shape[1]];
}

interface AssemblingKernel {
  output: number[];
  graphical?: boolean;
  workgroupSize: number[];
  assembleWGSL(): string;
}

/**
 * The WGSL of a 2D/3D kernel with gpu.js's workgroup attribute set to
 * `shape`, and the kernel's workgroupSize to match; other kernels, and any
 * source without exactly one such attribute, unchanged.
 */
function withWorkgroupShape(kernel: AssemblingKernel, wgsl: string, shape: WorkgroupShape): string {
  if (kernel.output.length === 1 || kernel.graphical) return wgsl;
  if (wgsl.split(GPU_JS_SHAPE).length !== 2) return wgsl;
  kernel.workgroupSize = [shape[0], shape[1], 1];
  return wgsl.replace(GPU_JS_SHAPE, `@workgroup_size(${shape[0]}, ${shape[1]}, 1)`);
}

/**
 * Makes gpu.js's WebGPU kernels take deviceFlags.workgroup (idempotent).
 * Returns false, changing nothing, when gpu.js is not the version this was
 * written for or its kernel class lacks assembleWGSL.
 */
export function installWorkgroupSize(): boolean {
  if (kernelWorkgroup.installed) return true;
  const proto = wrappedKernelPrototype<AssemblingKernel>(['assembleWGSL']);
  if (!proto) return false;
  const assemble = proto.assembleWGSL;
  proto.assembleWGSL = function (this: AssemblingKernel) {
    return adaptsFor(this) ? withWorkgroupShape(this, assemble.call(this), deviceFlags.workgroup) : assemble.call(this);
  };
  (kernelWorkgroup as { installed: boolean }).installed = true;
  return true;
}
