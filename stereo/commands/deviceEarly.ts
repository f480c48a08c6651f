import { mayUseWebGpu } from '../../graphcut/backends';
import { webGpuDevice, webGpuSetUpWouldBlock } from '../../graphcut/gpuBackend';
import type { BackendName } from '../params';

/**
 * Starts creating the WebGPU device when the run may use it (backends gpu
 * and auto), without waiting: device creation then overlaps reading the
 * images or scenes, which a fresh process would otherwise do one after the
 * other. A failure here is not reported: the run meets it again where it
 * decides on its backend, and reports it there.
 */
export function startDeviceEarly(backend: string): void {
  if (!mayUseWebGpu(backend as BackendName)) return;
  webGpuDevice().catch(() => undefined);
}

/**
 * Whether startDeviceEarly(backend) will hold this thread while Dawn makes
 * the adapter and device: work that another thread can do meanwhile (reading
 * the scenes) should be started before it.
 */
export function deviceStartBlocks(backend: string): boolean {
  return mayUseWebGpu(backend as BackendName) && webGpuSetUpWouldBlock();
}
