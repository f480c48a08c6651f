import { mayUseWebGpu } from '../../graphcut/backends';
import { webGpuDevice } from '../../graphcut/gpuBackend';
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
