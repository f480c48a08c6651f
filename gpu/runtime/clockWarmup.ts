import type { DeviceFlags } from './deviceFlags';
import { isMainThread } from 'worker_threads';
import { webGpuDevice } from './context';

/**
 * Wakes an idle GPU's clocks while the host prepares a run.
 *
 * An idle GPU sits at its lowest clock, and its driver raises the clock only
 * after it has seen a few hundred ms of sustained work, and lowers it again
 * a second or two after the last work. A run's first moves would be that
 * work, and run several times slower than on a raised clock; light scenes,
 * whose moves do not keep the GPU busy, would spend most of their time
 * there.
 *
 * So the run queues a batch of spin dispatches before it computes its
 * costs and initial labeling on the host, which block the main thread. The
 * batch (the flag clockWarmupDispatches) is sized to last about as long as the
 * clock takes to rise from idle, and to cost on a raised clock less GPU
 * time than the host's own work covers; a longer batch would delay the
 * first move. It is skipped when this process used the device within
 * the flag clockWarmupRecentMs, since the clock is still raised then. The batch
 * computes nothing: its result is never read.
 */


/** What the warm-up did: the spin dispatches it queued, or why it queued none. */
export interface ClockWarmupReport {
  dispatches: number;
  skipped?: string;
}

/** The parts of a WebGPU device the warm-up uses (the webgpu package's types are not a dependency). */
export interface SpinDevice {
  createBuffer(d: { size: number; usage: number }): unknown;
  createShaderModule(d: { code: string }): unknown;
  createComputePipeline(d: { layout: 'auto'; compute: { module: unknown; entryPoint: string } }): { getBindGroupLayout(i: number): unknown };
  createBindGroup(d: { layout: unknown; entries: Array<{ binding: number; resource: { buffer: unknown } }> }): unknown;
  createCommandEncoder(): {
    beginComputePass(): { setPipeline(p: unknown): void; setBindGroup(i: number, g: unknown): void; dispatchWorkgroups(x: number): void; end(): void };
    finish(): unknown;
  };
  queue: { submit(c: unknown[]): void };
}

/**
 * The spin kernel: 1056 workgroups of 64 threads (8 per SM of a 132-SM
 * GPU) each chain 65536 multiply-adds, so every SM stays busy; a
 * comparison the compiler cannot decide keeps the loop from being removed.
 */
export const SPIN_WORKGROUPS = 1056;
export const SPIN_SHADER = `@group(0) @binding(0) var<storage, read_write> sink: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  var x = f32(g.x);
  for (var i = 0u; i < 65536u; i++) { x = x * 1.0000001 + 0.5; }
  if (x == -1.0) { sink[0] = x; }
}`;

let lastActive = -Infinity;

/** Called after device work completes (the device moves' calls): the clock is raised for a while. */
export function noteDeviceActive(): void {
  lastActive = performance.now();
}

/** Queues `dispatches` spin dispatches on `device` in one submit; does not wait for them. */
export function queueSpin(device: SpinDevice, dispatches: number): void {
  const STORAGE = 128;
  const sink = device.createBuffer({ size: 16, usage: STORAGE });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module: device.createShaderModule({ code: SPIN_SHADER }), entryPoint: 'main' } });
  const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: sink } }] });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, group);
  for (let i = 0; i < dispatches; i++) pass.dispatchWorkgroups(SPIN_WORKGROUPS);
  pass.end();
  device.queue.submit([encoder.finish()]);
}

/**
 * Queues the warm-up on the WebGPU device that the kernels will use
 * (`device`: gpu.js's shared device by default) unless there is none, the
 * device was active within flags.clockWarmupRecentMs, flags.clockWarmupDispatches is
 * 0, or this is a worker thread (Dawn's Node binding aborts the process
 * when a second thread uses it). `flags`: the run's device flags (checked
 * by resolveDeviceFlags; the warm-up comes before the run's context is
 * made). A warm-up that fails leaves the run as it would have been, and
 * says why.
 */
export async function warmUpGpuClocks(flags: Pick<DeviceFlags, 'clockWarmupDispatches' | 'clockWarmupRecentMs'>, device: () => Promise<SpinDevice | null> = webGpuDevice<SpinDevice>): Promise<ClockWarmupReport> {
  const n = flags.clockWarmupDispatches;
  if (n === 0) return { dispatches: 0, skipped: 'turned off' };
  if (!isMainThread) return { dispatches: 0, skipped: 'not the main thread' };
  if (performance.now() - lastActive < flags.clockWarmupRecentMs) return { dispatches: 0, skipped: `the device was active within the last ${flags.clockWarmupRecentMs} ms` };
  try {
    const d = await device();
    if (!d) return { dispatches: 0, skipped: 'no WebGPU adapter' };
    queueSpin(d, n);
    return { dispatches: n };
  } catch (e) {
    return { dispatches: 0, skipped: `failed: ${e instanceof Error ? e.message : String(e)}` };
  }
}
