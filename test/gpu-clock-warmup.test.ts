/**
 * The GPU clock warm-up (gpu/runtime/clockWarmup.ts): what it queues on a
 * device (the stand-in device records it), when it queues nothing, and that
 * match() reports it for the device backends only. Whether it raises the
 * clock is measured on the GPU (gpuBench clocks, BENCHMARKS.md).
 */
import { DEFAULT_DEVICE_FLAGS, resolveDeviceFlags } from '../gpu/runtime/deviceFlags';
import { noteDeviceActive, queueSpin, SPIN_SHADER, SPIN_WORKGROUPS, warmUpGpuClocks } from '../gpu/runtime/clockWarmup';
import { isWebGpuAvailable } from '../gpu/runtime/context';
import { generateSyntheticScene } from '../data/synthetic';
import { match, warmUpForBackend } from '../stereo/match';
import { matchSummaryJson, matchSummaryLines } from '../app/summary';
import { RecordingDevice } from './support/recordingDevice';

/** The default flags with the warm-up's two changed (clockWarmupRecentMs 0: the device counts as idle). */
const flags = (over: { clockWarmupDispatches?: number; clockWarmupRecentMs?: number } = {}) => ({ ...DEFAULT_DEVICE_FLAGS, clockWarmupRecentMs: 0, ...over });

const scene = generateSyntheticScene({ width: 24, height: 16, ndisp: 4, seed: 3 });
const run = (o: object) => match(scene.left, scene.right, { ndisp: scene.ndisp, cycles: 1, ...o });

function pipelineCode(device: RecordingDevice): string[] {
  return device.made.map((d) => (JSON.parse(d) as [string, unknown, string])[2]);
}

describe('queueSpin', () => {
  it.each([1, 7, 500])('encodes %i dispatches of the spin kernel in one submit, across every SM', (n) => {
    const device = new RecordingDevice();
    queueSpin(device, n);
    expect(pipelineCode(device)).toEqual([SPIN_SHADER]);
    expect(device.dispatched).toEqual(new Array(n).fill(SPIN_WORKGROUPS));
    expect(device.submitted).toBe(1);
  });
});

describe('warmUpGpuClocks', () => {
  const standIn = (device: RecordingDevice) => async () => device;

  it('queues the flag clockWarmupDispatches on the device when it has been idle', async () => {
    for (const n of [1, 3, 500]) {
      const device = new RecordingDevice();
      await expect(warmUpGpuClocks(flags({ clockWarmupDispatches: n }), standIn(device))).resolves.toEqual({ dispatches: n });
      expect(device.dispatched).toHaveLength(n);
    }
  });

  it('skips the warm-up while the device was active within recentMs, and queues it again after', async () => {
    noteDeviceActive();
    const device = new RecordingDevice();
    const r = await warmUpGpuClocks(flags({ clockWarmupRecentMs: 60_000 }), standIn(device));
    expect(r).toEqual({ dispatches: 0, skipped: 'the device was active within the last 60000 ms' });
    expect(device.dispatched).toHaveLength(0);
    await expect(warmUpGpuClocks(flags(), standIn(device))).resolves.toEqual({ dispatches: DEFAULT_DEVICE_FLAGS.clockWarmupDispatches });
  });

  it('queues nothing when turned off or when there is no device, and says why', async () => {
    await expect(warmUpGpuClocks(flags(), async () => null)).resolves.toEqual({ dispatches: 0, skipped: 'no WebGPU adapter' });
    const device = new RecordingDevice();
    await expect(warmUpGpuClocks(flags({ clockWarmupDispatches: 0 }), standIn(device))).resolves.toEqual({ dispatches: 0, skipped: 'turned off' });
    expect(device.submitted).toBe(0);
  });

  it('never fails the run: a device that throws is reported', async () => {
    await expect(warmUpGpuClocks(flags(), async () => { throw new Error('device lost'); })).resolves.toEqual({ dispatches: 0, skipped: 'failed: device lost' });
    const broken = new RecordingDevice();
    broken.queue.submit = () => { throw new Error('queue gone'); };
    await expect(warmUpGpuClocks(flags(), async () => broken)).resolves.toEqual({ dispatches: 0, skipped: 'failed: queue gone' });
  });

  it.each([-1, 1.5, Number.NaN, '3'])('refuses the flag clockWarmupDispatches = %p by name, where flags are given (a context, match())', async (n) => {
    expect(() => resolveDeviceFlags({ clockWarmupDispatches: n as number })).toThrow(/clockWarmupDispatches: got .*, expected an integer ≥ 0/);
    await expect(run({ backend: 'bk', gpu: { device: { clockWarmupDispatches: n } } })).rejects.toThrow(/gpu\.device\.clockWarmupDispatches: an integer ≥ 0/);
  });
});

describe('match() and the warm-up', () => {

  it('queues none for BK, nor when turned off, and reports none', async () => {
    for (const o of [{ backend: 'bk' }, { backend: 'auto', warmUpClocks: false }]) {
      const r = await run(o);
      expect(r.clockWarmup).toBeUndefined();
      expect(matchSummaryJson(r)).not.toHaveProperty('clockWarmup');
      expect(matchSummaryLines(r).join('\n')).not.toMatch(/warm-up/);
    }
  });

  it('skips it by default when the costs are left to the device, and says why; asked for, it is tried', async () => {
    const why = { dispatches: 0, skipped: 'the costs and the WTA are left to the device, which would wait behind it' };
    await expect(warmUpForBackend('gpu', undefined, true)).resolves.toEqual(why);
    await expect(warmUpForBackend('auto', false, true)).resolves.toBeUndefined();
    await expect(warmUpForBackend('bk', undefined, true)).resolves.toBeUndefined();
    const asked = await warmUpForBackend('auto', true, true, flags());
    expect(asked?.dispatches === DEFAULT_DEVICE_FLAGS.clockWarmupDispatches || asked?.skipped === 'no WebGPU adapter').toBe(true);
    if (await isWebGpuAvailable()) expect((await run({ backend: 'auto' })).clockWarmup).toEqual(why);
  });

  it('tries it for auto when the host computes the costs, and reports what it did', async () => {
    const r = await run({ backend: 'auto', costs: 'volume', gpu: { device: { clockWarmupRecentMs: 0, clockWarmupDispatches: 7 } } });
    if (await isWebGpuAvailable()) {
      expect(r.clockWarmup).toEqual({ dispatches: 7 });
    } else {
      expect(r.clockWarmup).toEqual({ dispatches: 0, skipped: 'no WebGPU adapter' });
      expect(matchSummaryLines(r)).toContain('GPU clock warm-up skipped: no WebGPU adapter');
    }
    expect(matchSummaryJson(r).clockWarmup).toEqual(r.clockWarmup);
  });

  it('refuses a warmUpClocks that is not a boolean', async () => {
    await expect(run({ backend: 'auto', warmUpClocks: 'yes' })).rejects.toThrow(/warmUpClocks: got 'yes' \(a string\), expected true or false/);
  });
});
