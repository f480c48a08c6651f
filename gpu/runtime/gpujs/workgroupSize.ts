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
 * and graphical kernels are left alone. The shape is the flag `workgroup`
 * of the kernel's gpu.js instance (scope.ts flagsFor; checked when the
 * context was made: ../deviceFlags.ts resolveDeviceFlags).
 */
import { wrappedKernelPrototype } from './internals';
import { flagsFor } from './scope';

const GPU_JS_SHAPE = '@workgroup_size(8, 8, 1)';

/** Shapes a setting may take: at most 256 threads, WebGPU's default limit per workgroup. */
export type WorkgroupShape = readonly [number, number];

/** Whether the rewrite is installed (each kernel assembled from then on takes its instance's workgroup flag). */
export const kernelWorkgroup: { readonly installed: boolean } = { installed: false };

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
 * Makes gpu.js's WebGPU kernels take their instance's workgroup flag (idempotent).
 * Returns false, changing nothing, when gpu.js is not the version this was
 * written for or its kernel class lacks assembleWGSL.
 */
export function installWorkgroupSize(): boolean {
  if (kernelWorkgroup.installed) return true;
  const proto = wrappedKernelPrototype<AssemblingKernel>(['assembleWGSL']);
  if (!proto) return false;
  const assemble = proto.assembleWGSL;
  proto.assembleWGSL = function (this: AssemblingKernel) {
    const flags = flagsFor(this);
    return flags ? withWorkgroupShape(this, assemble.call(this), flags.workgroup) : assemble.call(this);
  };
  (kernelWorkgroup as { installed: boolean }).installed = true;
  return true;
}
