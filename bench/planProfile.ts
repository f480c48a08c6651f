/**
 * Where a move's call spends its time on the device, plan by plan:
 *
 *   node dist/bench/planProfile.js SCENE_FOLDER [runs] [cycles]
 *
 * Runs the scene `runs` times (default 3) as `stereocut run` matches it
 * (with `cycles` cycles when given), counting the resident calls and the
 * host's time in their submit (argument writes, the passes recorded, the
 * submit), and for the last run, cycle by cycle: the moves, those that
 * changed a pixel, the calls, their passes (dispatches), the rounds the
 * moves needed and the host's time in the submits. Then, for every plan
 * those runs used, replays its recorded passes on the device: the
 * arguments of the plan's last call are still in its buffers, so a replay
 * is that call's move again. Printed: the host's recording time, the
 * device's time for one call alone and for ten back to back, and per
 * kernel (pipeline) the device time of one dispatch when only its own
 * dispatches run, back to back. Those read what the last replay left in
 * their inputs, the final gate included, so a kernel's figure is the cost
 * of its dispatches in the call only roughly (its gated dispatches may
 * count as full ones); the call's own times are exact. Last, the round
 * trip of reading one flag back from the device (a copy to a mappable
 * buffer, its mapping): what a host loop that asked the device after every
 * round whether the move had converged would pay per round.
 */
import { ResidentBuffers } from '../gpu/runtime/gpujs/residentCalls';
import { encodePasses, type FusedExecutor } from '../gpu/runtime/gpujs/onePassCalls';
import { matchScene } from '../stereo/sceneMatch';

/** The parts of a WebGPU device and compute pass the replay uses (the webgpu package's types are not a dependency). */
interface ReplayPass { setPipeline(p: unknown): void; setBindGroup(i: number, g: unknown): void; dispatchWorkgroups(x: number, y: number, z: number): void; end(): void }
interface FlagBuffer { mapAsync(mode: number): Promise<void>; getMappedRange(): ArrayBuffer; unmap(): void; destroy(): void }
interface ReplayDevice {
  createCommandEncoder(): { beginComputePass(): ReplayPass; copyBufferToBuffer(a: unknown, ao: number, b: unknown, bo: number, n: number): void; finish(): unknown };
  createBuffer(d: { size: number; usage: number }): FlagBuffer;
  queue: { submit(c: unknown[]): void; onSubmittedWorkDone(): Promise<void> };
}

async function main(): Promise<void> {
  const [folder, runsArg, cyclesArg] = process.argv.slice(2);
  const runs = Number(runsArg ?? 3);
  const cycles = cyclesArg === undefined ? undefined : Number(cyclesArg);
  if (!folder || !Number.isInteger(runs) || runs < 1 || (cycles !== undefined && !(Number.isInteger(cycles) && cycles >= 1))) {
    throw new Error('usage: node dist/bench/planProfile.js SCENE_FOLDER [runs] [cycles]');
  }
  const used = new Map<FusedExecutor, number>();
  // Per cycle of the run in progress (the cycle a submit belongs to is the one whose moves are being reported).
  interface CycleCalls { moves: number; changed: number; calls: number; passes: number; rounds: number; submitMs: number }
  let perCycle: CycleCalls[] = [];
  let cycle = 0;
  const at = (c: number): CycleCalls => (perCycle[c] ??= { moves: 0, changed: 0, calls: 0, passes: 0, rounds: 0, submitMs: 0 });
  const submit = ResidentBuffers.prototype.submit;
  ResidentBuffers.prototype.submit = function (this: ResidentBuffers, ex, call) {
    const t = performance.now();
    const results = submit.call(this, ex, call);
    const c = at(cycle);
    c.submitMs += performance.now() - t;
    c.calls++;
    c.passes += ex._passes.length;
    used.set(ex, (used.get(ex) ?? 0) + 1);
    return results;
  };
  console.log('run  match ms  resident calls  submit ms per call (host)');
  for (let r = 0; r < runs; r++) {
    perCycle = [];
    cycle = 0;
    const m = await matchScene(folder, cycles === undefined ? {} : { cycles }, {
      backend: 'gpu', thresholds: [1],
      onMove: (i) => {
        const c = at(i.cycle - 1);
        if (i.stats) {
          c.moves++;
          c.rounds += i.stats.rounds ?? 0;
          if (i.changed > 0) c.changed++;
        }
        // A look-ahead call may be submitted before its cycle's first move is reported: calls go to the cycle whose last report came in.
        if (i.index === i.count - 1) cycle = i.cycle;
      },
    });
    const calls = perCycle.reduce((n, c) => n + c.calls, 0);
    const submitMs = perCycle.reduce((n, c) => n + c.submitMs, 0);
    console.log(`${String(r).padStart(3)} ${m.result.times.totalMs.toFixed(0).padStart(9)} ${String(calls).padStart(15)} ${(calls > 0 ? submitMs / calls : NaN).toFixed(3).padStart(10)}`);
  }
  ResidentBuffers.prototype.submit = submit;
  // A cycle's end (its energy and label counts, one more call) is submitted after its last move is reported: it counts with the next cycle's row, the last cycle's on a row of its own.
  console.log('\nthe last run by cycle: moves that ran a cut, moves that changed a pixel, calls, passes (dispatches), rounds the moves needed, host ms in the submits (µs a pass)');
  perCycle.forEach((c, i) => {
    console.log(`  ${i < perCycle.length - 1 || c.moves > 0 ? `cycle ${i + 1}` : 'the end'}: ${c.moves} moves, ${c.changed} changed, ${c.calls} calls, ${c.passes} passes (${(c.passes / Math.max(c.calls, 1)).toFixed(1)} a call), ${c.rounds} rounds, ${c.submitMs.toFixed(1)} ms (${((1000 * c.submitMs) / Math.max(c.passes, 1)).toFixed(2)} µs a pass)`);
  });
  const timeDevice = async (device: ReplayDevice, commands: unknown[]): Promise<number> => {
    const t = performance.now();
    for (const c of commands) device.queue.submit([c]);
    await device.queue.onSubmittedWorkDone();
    return performance.now() - t;
  };
  let lastDevice: ReplayDevice | undefined;
  for (const [ex, n] of used) {
    if (ex.destroyed) continue;
    const device = ex._device as unknown as ReplayDevice;
    lastDevice = device;
    const passes = ex._passes;
    const encode = (): unknown => {
      const encoder = device.createCommandEncoder();
      encodePasses(encoder as unknown as Parameters<typeof encodePasses>[0], ex);
      return encoder.finish();
    };
    let record = Infinity;
    let alone = Infinity;
    let backToBack = Infinity;
    for (let rep = 0; rep < 8; rep++) {
      const t = performance.now();
      const commands = encode();
      record = Math.min(record, performance.now() - t);
      alone = Math.min(alone, await timeDevice(device, [commands]));
    }
    for (let rep = 0; rep < 3; rep++) backToBack = Math.min(backToBack, (await timeDevice(device, Array.from({ length: 10 }, encode))) / 10);
    console.log(`\nplan of ${n} calls, ${passes.length} passes: recording ${record.toFixed(3)} ms on the host (${((1000 * record) / passes.length).toFixed(2)} µs a pass); device ${alone.toFixed(3)} ms alone, ${backToBack.toFixed(3)} ms back to back (${((1000 * backToBack) / passes.length).toFixed(2)} µs a pass)`);
    console.log('  kernel  dispatches  workgroups  µs per dispatch (its dispatches back to back, five times)');
    const byPipeline = new Map<unknown, typeof passes>();
    for (const p of passes) {
      const list = byPipeline.get(p.pipeline) ?? [];
      list.push(p);
      byPipeline.set(p.pipeline, list);
    }
    let k = 0;
    for (const [pipeline, list] of byPipeline) {
      let best = Infinity;
      for (let rep = 0; rep < 3; rep++) {
        const encoder = device.createCommandEncoder();
        const pass = encoder.beginComputePass();
        pass.setPipeline(pipeline);
        for (let i = 0; i < 5; i++) {
          for (const p of list) {
            pass.setBindGroup(0, p.bindGroup);
            pass.dispatchWorkgroups(p.groups[0], p.groups[1], p.groups[2]);
          }
        }
        pass.end();
        best = Math.min(best, (await timeDevice(device, [encoder.finish()])) / (5 * list.length));
      }
      console.log(`  ${String(k++).padStart(6)} ${String(list.length).padStart(11)} ${list[0].groups.join('×').padStart(11)} ${(1000 * best).toFixed(1).padStart(8)}`);
    }
  }
  const device = lastDevice;
  if (device) {
    // STORAGE | COPY_SRC for the flag, MAP_READ | COPY_DST for its readback.
    const flag = device.createBuffer({ size: 16, usage: 128 | 4 });
    const staging = device.createBuffer({ size: 16, usage: 1 | 8 });
    const trips: number[] = [];
    for (let rep = 0; rep < 20; rep++) {
      const t = performance.now();
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(flag, 0, staging, 0, 16);
      device.queue.submit([encoder.finish()]);
      await staging.mapAsync(1);
      new Float32Array(staging.getMappedRange().slice(0));
      staging.unmap();
      trips.push(performance.now() - t);
    }
    trips.sort((a, b) => a - b);
    console.log(`\nreading one flag back from the device: ${trips[0].toFixed(3)} ms at best, ${trips[trips.length >> 1].toFixed(3)} ms median (20 round trips)`);
    flag.destroy();
    staging.destroy();
  }
}

// The WebGPU device keeps the process alive: leave once the tables are out.
main().then(() => process.exit(0), (e: unknown) => {
  console.error(e instanceof Error ? e.stack ?? e.message : String(e));
  process.exit(1);
});
