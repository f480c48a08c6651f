import { ReadsOnThread, readsHere, type ReadJob, type Reads } from '../../data/readThread';
import { mayUseWebGpu } from '../../gpu/runtime/backends';
import { webGpuDevice, webGpuSetUpWouldBlock } from '../../gpu/runtime/context';
import type { BackendName } from '../../stereo/params';

/**
 * Starts creating the WebGPU device when the run may use it (backends gpu
 * and auto), without waiting, and gives the reads of the run's inputs
 * (scene folders, images). Dawn makes the adapter and device on this
 * thread and holds it meanwhile; where it will, the reads are started on a
 * worker thread first, so that the inputs are read while the device is
 * made instead of after. Otherwise each read is done here when its result
 * is asked for. A failure to make the device is not reported here: the run
 * meets it again where it decides on its backend, and reports it there.
 */
export function startDeviceReading<J extends ReadJob>(backend: string, jobs: readonly J[]): Reads<J> {
  if (!mayUseWebGpu(backend as BackendName)) return readsHere(jobs);
  const reads = webGpuSetUpWouldBlock() ? new ReadsOnThread(jobs) : readsHere(jobs);
  webGpuDevice().catch(() => undefined);
  return reads;
}
