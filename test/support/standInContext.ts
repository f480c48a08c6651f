import { GPU } from 'gpu.js';
import { resolveDeviceFlags, type DeviceFlags } from '../../gpu/runtime/deviceFlags';
import type { GpuContext } from '../../gpu/runtime/context';
import { adaptInstance } from '../../gpu/runtime/gpujs/scope';

/**
 * A stand-in for createGpuContext('webgpu', flags) where no adapter
 * answers (CI): a gpu.js instance in webgpu mode, adapted with the flags as
 * createGpuContext's instances are, whose kernels run on whatever device
 * gpu.js acquires (a test's stand-in device: support/recordingDevice.ts).
 */
export function standInWebGpuContext(flags: Partial<DeviceFlags> = {}): GpuContext {
  const gpu = new GPU({ mode: 'webgpu' });
  const resolved = resolveDeviceFlags(flags);
  adaptInstance(gpu, resolved);
  return { gpu, mode: 'webgpu', device: 'stand-in', deviceErrors: [], flags: resolved, destroyed: false, destroy: () => undefined };
}
