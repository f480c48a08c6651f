/**
 * What one dispatch costs the host on this machine's WebGPU (the device
 * gpu.js's kernels run on), by what changes between dispatches:
 *
 *   node dist/bench/dispatchCost.js [dispatches]
 *
 * Records `dispatches` (default 2000) dispatches of a trivial kernel with
 * 2 and 6 storage bindings (a move's kernels bind 3 to 9) into one compute
 * pass: with nothing set between them, a new bind group before each (two
 * alternating, as ping-pong steps do), and a new pipeline and bind group
 * before each; then submits them. Prints, per dispatch, the host's
 * recording, its submit, and the wall time until the device is done (all
 * medians of five repetitions after a warm-up).
 */
import { webGpuDevice } from '../gpu/runtime/context';

interface Pass { setPipeline(p: unknown): void; setBindGroup(i: number, g: unknown): void; dispatchWorkgroups(x: number, y: number, z: number): void; end(): void }
interface Device {
  createBuffer(d: { size: number; usage: number }): unknown;
  createShaderModule(d: { code: string }): unknown;
  createComputePipeline(d: unknown): { getBindGroupLayout(i: number): unknown };
  createBindGroup(d: unknown): unknown;
  createCommandEncoder(): { beginComputePass(): Pass; finish(): unknown };
  queue: { submit(c: unknown[]): void; onSubmittedWorkDone(): Promise<void> };
}

const STORAGE = 0x80;
const W = 464;
const H = 752;

const median = (a: number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1];

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 2000);
  if (!Number.isInteger(count) || count < 10) throw new Error('usage: node dist/bench/dispatchCost.js [dispatches ≥ 10]');
  const device = await webGpuDevice<Device>();
  if (!device) throw new Error('dispatchCost: no WebGPU adapter answers on this machine');
  const buffers = Array.from({ length: 12 }, () => device.createBuffer({ size: 4 * W * H, usage: STORAGE }));
  const pipeline = (bindings: number, salt: number): { getBindGroupLayout(i: number): unknown } => {
    let decl = '@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n';
    let sum = `${salt}.0`;
    for (let i = 1; i < bindings; i++) {
      decl += `@group(0) @binding(${i}) var<storage, read> a${i}: array<f32>;\n`;
      sum += ` + a${i}[i]`;
    }
    const code = `${decl}@compute @workgroup_size(16, 16) fn main(@builtin(global_invocation_id) g: vec3u) { let i = g.y * ${W}u + g.x; if (i < ${W * H}u) { o[i] = ${sum}; } }`;
    return device.createComputePipeline({ layout: 'auto', compute: { module: device.createShaderModule({ code }), entryPoint: 'main' } });
  };
  console.log('bindings  between dispatches        recording µs  submit µs  wall µs (per dispatch)');
  for (const bindings of [2, 6]) {
    const pipes = [pipeline(bindings, 1), pipeline(bindings, 2)];
    const group = (p: { getBindGroupLayout(i: number): unknown }, base: number): unknown => device.createBindGroup({
      layout: p.getBindGroupLayout(0),
      entries: Array.from({ length: bindings }, (_, i) => ({ binding: i, resource: { buffer: buffers[(base + i) % buffers.length] } })),
    });
    const groups = [[group(pipes[0], 0), group(pipes[0], 6)], [group(pipes[1], 0), group(pipes[1], 6)]];
    for (const variant of ['nothing', 'bind group', 'pipeline and bind group'] as const) {
      const rec: number[] = [];
      const sub: number[] = [];
      const wall: number[] = [];
      for (let rep = 0; rep < 6; rep++) {
        const t0 = performance.now();
        const encoder = device.createCommandEncoder();
        const pass = encoder.beginComputePass();
        for (let d = 0; d < count; d++) {
          const p = variant === 'pipeline and bind group' ? d & 1 : 0;
          if (d === 0 || variant === 'pipeline and bind group') pass.setPipeline(pipes[p]);
          if (d === 0 || variant !== 'nothing') pass.setBindGroup(0, groups[p][d & 1]);
          pass.dispatchWorkgroups(Math.ceil(W / 16), Math.ceil(H / 16), 1);
        }
        pass.end();
        const commands = encoder.finish();
        const t1 = performance.now();
        device.queue.submit([commands]);
        const t2 = performance.now();
        await device.queue.onSubmittedWorkDone();
        const t3 = performance.now();
        if (rep === 0) continue;
        rec.push((1000 * (t1 - t0)) / count);
        sub.push((1000 * (t2 - t1)) / count);
        wall.push((1000 * (t3 - t0)) / count);
      }
      console.log(`${String(bindings).padStart(8)}  ${variant.padEnd(24)} ${median(rec).toFixed(2).padStart(12)} ${median(sub).toFixed(2).padStart(10)} ${median(wall).toFixed(2).padStart(8)}`);
    }
  }
}

main().then(() => process.exit(0), (e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
