import { gpuJsInternal } from '../../gpu/runtime/gpujs/internals';
import { adaptInstance } from '../../gpu/runtime/gpujs/scope';
import { resolveDeviceFlags, type DeviceFlags } from '../../gpu/runtime/deviceFlags';
/**
 * gpu.js's WebGPU kernel build up to its WGSL (web-gpu/kernel.js, build()),
 * which needs no device: what CI can check of the WebGPU kernels.
 */
export interface WgslKernel {
  workgroupSize: number[];
  threadDim: number[];
  paramsLayout: unknown;
  translatedBody: string;
  _device: { limits: { maxComputeWorkgroupsPerDimension: number } };
  setupConstants(): void;
  setupArguments(a: unknown[]): void;
  validateSettings(a: unknown[]): void;
  translateSource(): void;
  computeParamsLayout(): unknown;
  assembleWGSL(): string;
  _computeDispatch(threadDim: number[]): { groups: number[]; dispatchWidth: number };
}
const { WebGPUKernel } = gpuJsInternal<{ WebGPUKernel: new (source: string, settings: object) => WgslKernel }>('web-gpu/kernel');

/** A kernel of `source` built for `args` up to its WGSL; `settings` adds to or replaces the solver's usual ones. */
export function assembleWgsl(source: string, output: number[], args: unknown[], constants: Record<string, unknown>, settings: object = {}): { wgsl: string; kernel: WgslKernel } {
  const kernel = new WebGPUKernel(source, { output, constants, precision: 'single', loopMaxIterations: 1 << 20, ...settings });
  kernel.setupConstants();
  kernel.setupArguments(args);
  kernel.validateSettings(args);
  kernel.threadDim = [...output, 1, 1].slice(0, 3);
  kernel.translateSource();
  kernel.paramsLayout = kernel.computeParamsLayout();
  kernel._device = { limits: { maxComputeWorkgroupsPerDimension: 65535 } };
  return { wgsl: kernel.assembleWGSL(), kernel };
}

/**
 * A stand-in gpu.js instance adapted with `flags` (as createGpuContext
 * adapts its instances): kernels given it as `gpu` in their settings run
 * the adaptations with those flags (gpu/runtime/gpujs/scope.ts).
 */
export function flaggedInstance(flags: Partial<DeviceFlags>): object {
  const gpu = {};
  adaptInstance(gpu, resolveDeviceFlags(flags));
  return gpu;
}
