import * as fs from 'fs';
import * as path from 'path';
import { seededRandom } from '../data/random';
import { loadScene } from '../data/scene';
import type { Raster } from '../data/raster';
import { generateSyntheticScene } from '../data/synthetic';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { createGpuContext, installWebGpuProvider, type GpuContext } from '../gpu/runtime/context';
import { ADAPTATIONS } from '../gpu/runtime/gpujs/install';
import { ResidentBuffers } from '../gpu/runtime/gpujs/residentCalls';
import { DeviceReadouts } from '../gpu/move/readouts';
import { ProgramStore } from '../gpu/move/keptPrograms';
import { GpuMoveSolver } from '../gpu/move/gpuMoveSolver';
import * as moveBlockKernels from '../gpu/move/moveBlockKernels';
import { blockTally, changedSquares } from '../gpu/move/moveBlockKernels';
import * as blockWorkgroup from '../gpu/maxflow/blockWorkgroup';
import { withPoisonedWorkgroupMemory } from './support/poisonedWorkgroupMemory';
import * as pairKernels from '../gpu/costs/pairKernel';
import { buildStereoEnergy, mirroredSwappedEnergy, stackEnergies, type StereoEnergyOptions } from '../costs';
import type { MrfEnergy } from '../data/energy';
import { randomRaster } from './support/randomRaster';
import { Input } from '../gpu/runtime/gpujs/gpuJs';
import type { IGPUKernelSettings } from 'gpu.js';
import { cutCapacity, type GridGraph } from '../graphcut/gridGraph';
import { PushRelabelSolver } from '../gpu/maxflow/pushRelabel';
import { runFamilies } from '../gpu/maxflow/kernelFamilies';
import { ABLATION_FAMILIES } from '../bench/kernels/ablationFamilies';
import { createMaxFlowSolver } from '../stereo/maxFlowFactory';
import { match, type MatchEvent, type MatchOptions } from '../stereo/match';
import { findChromium, openBrowserWebGpu, type BrowserWebGpu } from './support/browserWebGpu';
import type { BridgeDevice } from './support/browserWebGpuObjects';
import { expansionLikeGraph, randomGridGraph } from './support/randomGraphs';
import { FULL_TESTS, fullTest, sample, scaled } from './support/testScope';

/**
 * The project's real WGSL on a real WebGPU implementation, on machines
 * without a GPU: headless Chromium's WebGPU (SwiftShader) through the bridge
 * in test/support/browserWebGpu.ts, installed as the process's WebGPU
 * provider. Everything after the adapter is the code that runs on a GPU:
 * gpu/runtime/context's device set-up, gpu.js's webgpu mode, every adaptation in
 * gpu/runtime/gpujs/, the device moves. SwiftShader is a CPU, so the cases are
 * small.
 */
jest.setTimeout(120_000);

const chromium = findChromium();
const SKIP = 'chromium not installed (apt-get install chromium)';


let browser: BrowserWebGpu | undefined;
let ctx: GpuContext;

beforeAll(async () => {
  if (!chromium) return;
  browser = await openBrowserWebGpu(chromium);
  installWebGpuProvider(browser.provider);
  ctx = await createGpuContext('webgpu');
}, 60_000);

/**
 * The device runs of match() keep their program here, as a Matcher does between pairs: a later run of the same shape
 * (energy size, costs, device options) takes it, refilled with its own energy, instead of creating its pipelines again,
 * which costs SwiftShader about a tenth of a second each.
 */
const programs = new ProgramStore();

afterAll(async () => {
  programs.release();
  ctx?.destroy();
  await browser?.close();
});

const bk = new BoykovKolmogorovSolver();

/** Same flow as BK, a cut of that capacity, and BK's canonical cut (the source side: pixels that cannot reach the sink). */
function expectSameAsBk(g: GridGraph, r: { flow: number; sinkSide: Uint8Array }, label: string): void {
  const ref = bk.solveSync(g);
  if (r.flow !== ref.flow) throw new Error(`${label}: flow ${r.flow}, BK ${ref.flow}`);
  expect(cutCapacity(g, r.sinkSide)).toBe(r.flow);
  const diff = r.sinkSide.findIndex((v, p) => v !== ref.sinkSide[p]);
  if (diff >= 0) throw new Error(`${label}: source side differs from BK's at pixel ${diff}`);
}

/**
 * Runs `body` with every block routine made in it starting on workgroup memory filled with wrong values (Dawn runs
 * here, as on a GPU, without zeroing it: context.ts dawnFlags); returns how many routines were made.
 */
async function onPoisonedWorkgroupMemory(body: () => Promise<void>): Promise<number> {
  const make = blockWorkgroup.workgroupKernel;
  const spy = jest.spyOn(blockWorkgroup, 'workgroupKernel').mockImplementation((gpu, params, name, wgsl, settings, gate) => make(gpu, params, name, withPoisonedWorkgroupMemory(wgsl, name), settings, gate));
  try {
    await body();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

(chromium ? describe : describe.skip)(`WebGPU in headless Chromium${chromium ? '' : ` (skipped: ${SKIP})`}`, () => {
  test('the project sets WebGPU up through the provider: SwiftShader adapter, every gpu.js adaptation on', () => {
    expect(ctx.mode).toBe('webgpu');
    expect(ctx.device).toMatch(/^WebGPU \(Dawn\): .*swiftshader.*through headless/);
    for (const name of ADAPTATIONS) expect([name, ctx.adaptations?.adaptations[name]]).toEqual([name, true]);
    // gpu.js keeps one device per process: a provider comes before the first set-up or not at all.
    expect(() => installWebGpuProvider(null)).toThrow(/already set up/);
  });

  test('the bridge: required limits clamped to the adapter, workgroup memory and barriers run, WGSL errors come back with their line', async () => {
    const gpu = browser!.provider.gpu;
    const adapter = (await gpu.requestAdapter())!;
    const device = (await adapter.requestDevice({
      requiredLimits: { maxComputeWorkgroupStorageSize: 1 << 20, maxComputeInvocationsPerWorkgroup: 4096 },
    })) as unknown as BridgeDevice;
    try {
      const adapterLimits = (adapter as unknown as { limits: Record<string, number> }).limits;
      expect(device.limits.maxComputeWorkgroupStorageSize).toBe(adapterLimits.maxComputeWorkgroupStorageSize);
      expect(device.limits.maxComputeInvocationsPerWorkgroup).toBe(adapterLimits.maxComputeInvocationsPerWorkgroup);
      expect(device.limits.maxComputeWorkgroupStorageSize).toBeGreaterThanOrEqual(16384);
      // Each thread writes its slot of a workgroup array, waits at the barrier, and reads the mirror slot.
      const n = 256;
      const module = device.createShaderModule({
        code: `@group(0) @binding(0) var<storage, read_write> out: array<u32>;
var<workgroup> tile: array<u32, ${n}>;
@compute @workgroup_size(${n}) fn main(@builtin(local_invocation_index) i: u32) {
  tile[i] = i * 3u; workgroupBarrier(); out[i] = tile[${n - 1}u - i];
}`,
      });
      expect((await module.getCompilationInfo()).messages.filter((m) => m.type === 'error')).toEqual([]);
      const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
      const out = device.createBuffer({ size: 4 * n, usage: 0x80 | 0x04 }); // STORAGE | COPY_SRC
      const staging = device.createBuffer({ size: 4 * n, usage: 0x01 | 0x08 }); // MAP_READ | COPY_DST
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: out } }] }));
      pass.dispatchWorkgroups(1);
      pass.end();
      encoder.copyBufferToBuffer(out, 0, staging, 0, 4 * n);
      device.queue.submit([encoder.finish()]);
      await staging.mapAsync(1);
      const got = new Uint32Array(staging.getMappedRange().slice(0));
      staging.unmap();
      expect(Array.from(got)).toEqual(Array.from({ length: n }, (_, i) => 3 * (n - 1 - i)));

      // A validation error (MAP_READ goes only with COPY_DST) reaches the device's listeners, as the browser reports it.
      const seen: string[] = [];
      device.addEventListener('uncapturederror', (ev) => { seen.push(ev.error.message); });
      device.createBuffer({ size: 16, usage: 0x01 | 0x80 });
      expect(await browser!.until(() => seen.length > 0)).toBe(true);
      expect(seen[0]).toMatch(/usage/i);
      expect(() => device.createTexture()).toThrow(/GPUDevice.createTexture is not supported/);

      const broken = device.createShaderModule({ code: '@compute @workgroup_size(1) fn main() {\n  let x: u32 = undefinedName;\n}' });
      const errors = (await broken.getCompilationInfo()).messages.filter((m) => m.type === 'error');
      expect(errors.length).toBeGreaterThan(0);
      expect(errors[0]).toMatchObject({ lineNum: 2, message: expect.stringMatching(/undefinedName/) });
    } finally {
      device.destroy();
    }
  });

  test('the bridge: bytes written at creation, through a MAP_WRITE mapping and by queue writes reach the page; ranges detach at unmap', async () => {
    const device = (await (await browser!.provider.gpu.requestAdapter())!.requestDevice()) as unknown as BridgeDevice;
    try {
      const [MAP_READ, MAP_WRITE, COPY_SRC, COPY_DST] = [0x01, 0x02, 0x04, 0x08];
      /** The first `n` u32 of `source`, as the page's buffer holds them. */
      const read = async (source: ReturnType<BridgeDevice['createBuffer']>, n: number): Promise<number[]> => {
        const staging = device.createBuffer({ size: 4 * n, usage: MAP_READ | COPY_DST });
        const encoder = device.createCommandEncoder();
        encoder.copyBufferToBuffer(source, 0, staging, 0, 4 * n);
        device.queue.submit([encoder.finish()]);
        await staging.mapAsync(MAP_READ);
        const range = staging.getMappedRange();
        const values = Array.from(new Uint32Array(range));
        staging.unmap();
        expect(range.byteLength).toBe(0); // detached, as WebGPU leaves it
        staging.destroy();
        return values;
      };
      const atCreation = device.createBuffer({ size: 16, usage: COPY_SRC, mappedAtCreation: true });
      new Uint32Array(atCreation.getMappedRange(0, 8)).set([1, 2]);
      new Uint32Array(atCreation.getMappedRange(8, 8)).set([3, 4]);
      atCreation.unmap();
      expect(await read(atCreation, 4)).toEqual([1, 2, 3, 4]);

      const writable = device.createBuffer({ size: 16, usage: MAP_WRITE | COPY_SRC });
      await writable.mapAsync(MAP_WRITE, 8, 8);
      expect(() => writable.getMappedRange(0, 8)).toThrow(/outside the mapped range/);
      new Uint32Array(writable.getMappedRange(8, 8)).set([7, 8]);
      writable.unmap();
      expect(await read(writable, 4)).toEqual([0, 0, 7, 8]);

      const written = device.createBuffer({ size: 16, usage: COPY_SRC | COPY_DST });
      const data = new Uint32Array([9, 10, 11, 12]);
      device.queue.writeBuffer(written, 4, data, 1, 2);
      data.fill(0); // writeBuffer copied the data at the call
      expect(await read(written, 4)).toEqual([0, 10, 11, 0]);
    } finally {
      device.destroy();
    }
  });

  test('a WGSL compile error of a gpu.js kernel reaches the build with the compiler\'s message, and the device\'s uncaptured error the context', async () => {
    const gpu = (await createGpuContext('webgpu')).gpu;
    // gpu.js logs the device's uncaptured errors; this one is expected.
    const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      gpu.addNativeFunction('broken', 'fn fn_broken(v: f32) -> f32 { return v * notDeclared; }', { argumentTypes: { v: 'Number' }, returnType: 'Number' });
      const kernel = gpu.createKernel('function (a) { return broken(a[this.thread.x]); }').setOutput([4]);
      await expect(Promise.resolve().then(() => kernel([1, 2, 3, 4]))).rejects.toThrow(/Error compiling WGSL compute shader[\s\S]*notDeclared/);
      const reported = (): boolean => ctx.deviceErrors.some((e) => /notDeclared/.test(e));
      expect(await browser!.until(reported)).toBe(true);
      expect(logged).toHaveBeenCalledWith(expect.stringMatching(/notDeclared/));
    } finally {
      logged.mockRestore();
      void gpu.destroy();
    }
  });

  /** Fails when the device reported an uncaptured error (a validation error of the project's WebGPU use) since `from`. */
  async function expectNoDeviceErrorsSince(from: number): Promise<void> {
    await browser!.settle();
    expect(ctx.deviceErrors.slice(from)).toEqual([]);
  }

  // One size per scheme: each new size compiles its kernels again, which SwiftShader does slowly. Every family: the product's and the benchmarks' (the lockstep push, the level BFS), given to the solver.
  // Every pairing of a push family with a BFS family under STEREOCUT_FULL_TESTS=1; by default four pairings that run
  // each push family once and each BFS family at least once (a pairing runs the kernels of its two families, compiled
  // for this size, in one fused encoder).
  const families = runFamilies('test', ABLATION_FAMILIES);
  const allSchemes = families.push.flatMap((push) => families.bfs.map((bfs) => [push.name, bfs.name] as [string, string]));
  const defaultSchemes = ([['sweep', 'scan'], ['split-sweep', 'block'], ['block', 'level'], ['lockstep', 'scan']] as const).map(([push, bfs]) => allSchemes.findIndex(([p, b]) => p === push && b === bfs));
  test('the default pairings of push and BFS families run every family', () => {
    expect(defaultSchemes).not.toContain(-1);
    const kept = defaultSchemes.map((i) => allSchemes[i]);
    expect(new Set(kept.map(([p]) => p))).toEqual(new Set(families.push.map((f) => f.name)));
    expect(new Set(kept.map(([, b]) => b))).toEqual(new Set(families.bfs.map((f) => f.name)));
  });
  const schemes = sample(allSchemes, defaultSchemes);
  test.each(schemes)('push-relabel, %s push and %s BFS: the flow and the minimum cut of BK on random 13×10 grids of each kind (three seeds under STEREOCUT_FULL_TESTS=1, one by default)', async (push, bfs) => {
    const errors = ctx.deviceErrors.length;
    const solver = await createMaxFlowSolver('gpu', { push, bfs, families: ABLATION_FAMILIES, reach: 4, iterationsPerRelabel: 4, bfsPassesPerCall: 4, bfsContinuePasses: 8, fallbackToBk: false });
    try {
      expect(solver.device).toMatch(/swiftshader/);
      for (let seed = 1; seed <= scaled(3, 1); seed++) {
        const rng = seededRandom(seed * 7919 + push.length * 31 + bfs.length);
        const graphs: Array<[string, GridGraph]> = [
          ['uniform', randomGridGraph(rng, 13, 10, 'uniform')],
          ['tiny', randomGridGraph(rng, 13, 10, 'tiny')],
          ['expansion', expansionLikeGraph(rng, 13, 10, { reversed: seed % 2 === 0 })],
        ];
        for (const [kind, g] of graphs) expectSameAsBk(g, await solver.solve(g), `${push}/${bfs} ${kind} seed ${seed}`);
      }
      expect((solver as PushRelabelSolver).executorKinds()).toContain('fused-encoder');
      await expectNoDeviceErrorsSince(errors);
    } finally {
      solver.dispose?.();
    }
  });

  // The block kernels with tiles smaller than the grid, so that flow crosses tile borders in both tilings and BFS distances cross tiles.
  // Each grid size and tiling compiles the kernels again: by default two tilings (a wide and a tall one, several local
  // iterations and one), each on one of the two grids (both grids still run); every tiling on both grids under STEREOCUT_FULL_TESTS=1.
  const blockGrids = [[40, 30, 1], [37, 45, 2]];
  // The 16×4 tiling's kernels start on workgroup memory filled with wrong values (onPoisonedWorkgroupMemory).
  test.each(sample([[8, 8, 4, 0], [16, 4, 7, 1], [4, 8, 1, 0]], [1, 2]))('block push and block BFS with %ix%i tiles and %i local iterations: the flow and cut of BK on 40×30 and 37×45 grids (by default only the grid at index %i)', async (tw, th, iterations, grid) => {
    const errors = ctx.deviceErrors.length;
    const run = async (): Promise<void> => {
      const solver = await createMaxFlowSolver('gpu', { push: 'block', bfs: 'block', block: { tile: { width: tw, height: th }, iterations }, iterationsPerRelabel: 2, bfsPassesPerCall: 4, bfsContinuePasses: 8, fallbackToBk: false });
      try {
        for (const [W, H, seed] of FULL_TESTS ? blockGrids : [blockGrids[grid]]) {
          const rng = seededRandom(seed * 104729 + tw * 31 + th);
          for (const [kind, g] of [['uniform', randomGridGraph(rng, W, H, 'uniform')], ['expansion', expansionLikeGraph(rng, W, H, { reversed: seed % 2 === 0 })]] as Array<[string, GridGraph]>) {
            expectSameAsBk(g, await solver.solve(g), `block ${tw}x${th} ${kind} ${W}x${H}`);
          }
        }
      } finally {
        solver.dispose?.();
      }
    };
    if (tw === 16) expect(await onPoisonedWorkgroupMemory(run)).toBeGreaterThanOrEqual(3); // push, BFS and check routines
    else await run();
    await expectNoDeviceErrorsSince(errors);
  });

  test('the move tally and the changed-pixel count as one-launch workgroup kernels, on workgroup memory filled with wrong values: the values of their direct definitions on random codes and labelings over several 32×32 squares', async () => {
    expect(await onPoisonedWorkgroupMemory(tallyAndCount)).toBe(3 * 2 + 3);
  });
  async function tallyAndCount(): Promise<void> {
    const errors = ctx.deviceErrors.length;
    const gpu = ctx.gpu;
    const rng = seededRandom(4099);
    const line = { output: [4], precision: 'single' } as IGPUKernelSettings;
    for (const [CW, CH] of [[1, 1], [3, 2], [9, 14]]) {
      const tallies = [blockTally(gpu, CW, CH, true, line), blockTally(gpu, CW, CH, false, line)];
      for (let trial = 0; trial < 6; trial++) {
        // Mostly converged squares, as a check finds them: zeros with a few codes 1, 2 or 3 (none at all in some trials).
        const codes = Float32Array.from({ length: CW * CH }, () => (rng() < 0.15 * (trial % 3) ? 1 + Math.floor(rng() * 3) : 0));
        const T = Float32Array.of(Math.floor(rng() * 2), Math.floor(rng() * 5), 1, Math.floor(rng() * 2));
        const active = codes.some((c) => c === 1 || c === 3) ? 1 : 0;
        const unfixed = codes.some((c) => c >= 2) ? 1 : 0;
        const b = Math.max(active, unfixed);
        for (const [afterRounds, tally] of [[true, tallies[0]], [false, tallies[1]]] as const) {
          const out = Array.from(await tally(new Input(codes as unknown as number[], [CW, CH]), new Input(T as unknown as number[], [4])) as Float32Array);
          expect({ CW, CH, trial, afterRounds, out }).toEqual({ CW, CH, trial, afterRounds, out: [T[0], T[1] + b, b, afterRounds ? Math.max(T[3], unfixed) : T[3]] });
        }
      }
    }
    for (const [W, H] of [[5, 3], [70, 40], [96, 65]]) {
      const count = changedSquares(gpu, W, H, { output: [Math.ceil(W / 32), Math.ceil(H / 32)], precision: 'single' } as IGPUKernelSettings);
      for (const p of [0, 0.01, 0.5, 1]) {
        const A = Float32Array.from({ length: W * H }, () => Math.floor(rng() * 7));
        const B = A.map((v) => (rng() < p ? v + 1 + Math.floor(rng() * 3) : v));
        const rows = await count(new Input(A as unknown as number[], [W, H]), new Input(B as unknown as number[], [W, H])) as Float32Array[];
        for (let sy = 0; sy < Math.ceil(H / 32); sy++) {
          for (let sx = 0; sx < Math.ceil(W / 32); sx++) {
            let expected = 0;
            for (let y = sy * 32; y < Math.min(H, sy * 32 + 32); y++) for (let x = sx * 32; x < Math.min(W, sx * 32 + 32); x++) if (A[y * W + x] !== B[y * W + x]) expected++;
            expect({ W, H, p, sx, sy, n: rows[sy][sx] }).toEqual({ W, H, p, sx, sy, n: expected });
          }
        }
      }
    }
    await expectNoDeviceErrorsSince(errors);
  }

  /** K and B for grids this small: the defaults' passes per call are sized for Middlebury scenes, and each pass costs SwiftShader about a millisecond. */
  const SMALL_GRID_SCHEDULE = { iterationsPerRound: 4, bfsPasses: 8 };

  /**
   * match() on the device and with BK: the same disparities and energy; the device run really ran here. `kept`: whether
   * the device run must take the program an earlier run of its shape left in `programs` (true), must build its own
   * (false), or may do either.
   */
  async function expectMatchLikeBk(left: Raster, right: Raster, options: MatchOptions, label: string, kept?: boolean): Promise<void> {
    const events: MatchEvent[] = [];
    const errors = ctx.deviceErrors.length;
    const take = jest.spyOn(ProgramStore.prototype, 'take');
    let dev: Awaited<ReturnType<typeof match>>;
    try {
      // The clock warm-up's spin dispatches are for a GPU's clock; SwiftShader would spend minutes on them.
      dev = await match(left, right, {
        ...options, backend: 'gpu', programs, gpu: { ...SMALL_GRID_SCHEDULE, ...options.gpu, device: { clockWarmupDispatches: 0, ...options.gpu?.device } }, onEvent: (e) => { events.push(e); },
      });
      if (kept !== undefined) expect([label, take.mock.results.some((r) => r.type === 'return' && r.value !== undefined)]).toEqual([label, kept]);
    } finally {
      take.mockRestore();
    }
    const ref = await match(left, right, { ...options, gpu: undefined, backend: 'bk' });
    const solver = events.find((e): e is Extract<MatchEvent, { kind: 'solver' }> => e.kind === 'solver');
    expect(solver?.device).toMatch(/swiftshader/);
    expect(dev.fallbacks).toEqual([]);
    expect(dev.cycles.map((c) => c.energy.total)).toEqual(ref.cycles.map((c) => c.energy.total));
    // A program made afresh compiles its plans as its moves first need them: some move's call counts a compile.
    if (kept === false) expect(dev.cycles.reduce((n, c) => n + (c.stats.compiledCalls ?? 0), 0)).toBeGreaterThan(0);
    const diff = dev.disparity.findIndex((d, p) => d !== ref.disparity[p]);
    if (diff >= 0) throw new Error(`${label}: disparity ${dev.disparity[diff]} at pixel ${diff}, BK ${ref.disparity[diff]}`);
    await expectNoDeviceErrorsSince(errors);
  }

  const scene = generateSyntheticScene({ width: 32, height: 24, ndisp: 6, seed: 11 });
  // Each cycle after the first repeats the kernels of the first on warm flows, which the look-ahead test below checks on the
  // device (census costs, two cycles). This run, under STEREOCUT_FULL_TESTS=1 only: by default the look-ahead run below
  // builds the program of this shape (census costs from the pair on the device) and the tsukuba crop runs it with the
  // default look-ahead, as this one does.
  fullTest('α-expansion on the device, synthetic 32×24, 6 labels, census costs (auto), 2 cycles: the labels and energy of BK', async () => {
    await expectMatchLikeBk(scene.left, scene.right, { ndisp: 6, cost: 'census', costs: 'auto', cycles: 2, lrCheck: false }, 'synthetic census', false);
  });

  // The next two runs have one shape (32×24, 6 labels, census costs from an 8-bit colour pair, the same device options):
  // each takes the program the run before it kept (the first, by default, builds it), as a Matcher's next pair of that
  // size does.
  test('α-expansion on the device with three resident calls submitted ahead (each taking the labels of the one before it on the device): the labels and energy of BK', async () => {
    // Calls in flight at once, counted at the resident submit.
    let inFlight = 0;
    let most = 0;
    const submit = ResidentBuffers.prototype.submit;
    const spy = jest.spyOn(ResidentBuffers.prototype, 'submit').mockImplementation(function (this: ResidentBuffers, ...a: Parameters<ResidentBuffers['submit']>) {
      most = Math.max(most, ++inFlight);
      const done = (): void => { inFlight--; };
      const results = submit.apply(this, a);
      results.then(done, done);
      return results;
    });
    // Each cycle's end (energy, label counts) computed from the labels on the device; the driver's own energy only for the initial labels.
    const ends: Array<Awaited<ReturnType<DeviceReadouts['cycleEnd']>>> = [];
    const cycleEnd = DeviceReadouts.prototype.cycleEnd;
    const endSpy = jest.spyOn(DeviceReadouts.prototype, 'cycleEnd').mockImplementation(async function (this: DeviceReadouts, ...a: Parameters<DeviceReadouts['cycleEnd']>) {
      const end = await cycleEnd.apply(this, a);
      ends.push(end);
      return end;
    });
    let energyOfCalls = 0;
    const energyOf = GpuMoveSolver.prototype.energyOf;
    const energySpy = jest.spyOn(GpuMoveSolver.prototype, 'energyOf').mockImplementation(function (this: GpuMoveSolver, labels: Uint16Array) {
      energyOfCalls++;
      return energyOf.call(this, labels);
    });
    try {
      await expectMatchLikeBk(scene.left, scene.right, { ndisp: 6, cost: 'census', cycles: 2, lrCheck: false, gpu: { lookAhead: 3 } }, 'synthetic, look-ahead 3', FULL_TESTS);
    } finally {
      spy.mockRestore();
      endSpy.mockRestore();
      energySpy.mockRestore();
    }
    expect(most).toBe(4);
    expect(ends.length).toBe(2);
    for (const end of ends) expect(end!.labelCounts.reduce((a, b) => a + b, 0)).toBe(32 * 24);
    expect(energyOfCalls).toBe(1);
  });

  const dataRoot = process.env.STEREO_DATA ?? path.join(__dirname, '..', '..', 'shared', 'data', 'middlebury');
  const tsukuba = path.join(dataRoot, 'tsukuba');
  // 48×40 and 8 labels under STEREOCUT_FULL_TESTS=1 (a program of its own), 32×24 and 6 labels by default (the look-ahead run's program).
  const [cropW, cropH, cropLabels] = [scaled(48, 32), scaled(40, 24), scaled(8, 6)];
  (fs.existsSync(tsukuba) ? test : test.skip)(`α-expansion on the device, a ${cropW}×${cropH} tsukuba crop, census costs: the labels and energy of BK${fs.existsSync(tsukuba) ? '' : ` (skipped: no scene at ${tsukuba})`}`, async () => {
    const s = await loadScene(tsukuba);
    const crop = (r: Raster): Raster => {
      const [x0, y0, w, h, C] = [200, 150, cropW, cropH, r.channels];
      const data = new Float32Array(w * h * C);
      for (let y = 0; y < h; y++) data.set(r.data.subarray(((y0 + y) * r.width + x0) * C, ((y0 + y) * r.width + x0 + w) * C), y * w * C);
      return { ...r, width: w, height: h, data };
    };
    await expectMatchLikeBk(crop(s.left), crop(s.right), { ndisp: cropLabels, cost: 'census', cycles: 1, lrCheck: false }, 'tsukuba crop', !FULL_TESTS);
  });
  test.each([
    ['sad', 'auto', scaled(2, 1)],
    ['sad', 'volume', scaled(2, 1)],
  ] as const)('α-expansion on the device, synthetic 32×24, 6 labels, %s costs (%s), %i cycles: the labels and energy of BK', async (cost, costs, cycles) => {
    await expectMatchLikeBk(scene.left, scene.right, { ndisp: 6, cost, costs, cycles, lrCheck: false }, `synthetic ${cost}`);
  });

  // A 34×17 pair by default, 40×24 under STEREOCUT_FULL_TESTS=1: its two views stacked make a 34×34 (40×48) grid, 2×2
  // squares of 32×32 with the last column and row of squares partly outside it, so this run also checks convergence over
  // several squares (the test of a wider single view below runs under STEREOCUT_FULL_TESTS=1).
  const [checkW, checkH] = [scaled(40, 34), scaled(24, 17)];
  const checkScene = generateSyntheticScene({ width: checkW, height: checkH, ndisp: 6, seed: 11 });
  test(`α-expansion on the device with the left–right check (both views as one energy, in two bands: census codes and WTA per band; grey images and weights made on the device from the pair), census costs, ${checkW}×${checkH} (convergence checks over 2×2 squares of the stacked ${checkW}×${2 * checkH} grid, the last column and row partly outside it): the maps and energies of BK`, async () => {
    const made = jest.spyOn(pairKernels, 'createPairKernel');
    const tallies = jest.spyOn(moveBlockKernels, 'blockTally');
    const counts = jest.spyOn(moveBlockKernels, 'changedSquares');
    try {
      // One cycle by default (the two views' bands and the check are the same in every cycle), two under STEREOCUT_FULL_TESTS=1.
      await expectMatchLikeBk(checkScene.left, checkScene.right, { ndisp: 6, cost: 'census', cycles: scaled(2, 1), lrCheck: true }, 'synthetic, left–right check');
      expect(made).toHaveBeenCalledTimes(1);
      expect(made.mock.calls[0][3].views).toEqual(['pair', 'mirrored']);
      // The device program's checks and changed-pixel counts ran over the stacked grid's squares.
      expect(tallies.mock.calls.map((c) => [c[1], c[2]])).toContainEqual([2, 2]);
      expect(counts.mock.calls.map((c) => [c[1], c[2]])).toContainEqual([checkW, 2 * checkH]);
    } finally {
      made.mockRestore();
      tallies.mockRestore();
      counts.mockRestore();
    }
  });

  test('α-expansion on the device from a 16-bit pair (no pair source: the host’s grey images uploaded for the census codes, its weights from the host), census costs: the labels and energy of BK', async () => {
    const made = jest.spyOn(pairKernels, 'createPairKernel');
    try {
      const wide = (r: Raster): Raster => ({ ...r, data: r.data.map((v) => v * 257), maxval: 65535 });
      await expectMatchLikeBk(wide(scene.left), wide(scene.right), { ndisp: 6, cost: 'census', cycles: 1, lrCheck: false }, 'synthetic, 16-bit');
      expect(made).not.toHaveBeenCalled();
    } finally {
      made.mockRestore();
    }
  });

  test('an energy’s grey images and weights made from its pair (one view, and the check’s two; grey and colour; the first pair as inputs, three more of the size through one PairUpload): the host’s, value for value', async () => {
    const errors = ctx.deviceErrors.length;
    const rng = seededRandom(31);
    for (const [W, H, channels, views] of [[7, 5, 3, 1], [33, 9, 3, 2], [20, 6, 1, 2]] as const) {
      const o: StereoEnergyOptions = { ndisp: 4, kind: 'census', lambda: 4, cueThreshold: 14, cueFactor: 3, smoothness: 'linear', truncation: 2, onDemand: true, pairOnDevice: true };
      const energyOf = (): MrfEnergy => {
        const first = buildStereoEnergy(randomRaster(W, H, channels, 20, rng), randomRaster(W, H, channels, 20, rng), o);
        return views === 1 ? first : stackEnergies([first, mirroredSwappedEnergy(first, o)]);
      };
      const e0 = energyOf();
      const k = pairKernels.createPairKernel(ctx.gpu, e0.width, e0.height, e0.pairSource!, true);
      let upload: pairKernels.PairUpload | undefined;
      try {
        for (let pair = 0; pair < 4; pair++) {
          const e = pair === 0 ? e0 : energyOf();
          const result = await (k(...(upload ? upload.arguments(e.pairSource!) : pairKernels.pairArguments(e.pairSource!))) as unknown as Promise<{ context: { device: unknown }; toArray(): Promise<Float32Array[][]> }>);
          upload ??= new pairKernels.PairUpload(result.context, W, H);
          const out = await result.toArray();
          const images = e.data as Extract<MrfEnergy['data'], { kind: 'images' }>;
          const planes = [images.left.data, images.right.data, e.wH, e.wV];
          for (let z = 0; z < 4; z++) {
            const got = out[z].flatMap((row) => Array.from(row));
            expect({ W, H, channels, views, pair, z, got }).toEqual({ W, H, channels, views, pair, z, got: Array.from(planes[z]) });
          }
        }
      } finally {
        upload?.destroy();
        k.destroy();
      }
    }
    await expectNoDeviceErrorsSince(errors);
  });

  // A single view over 4×2 squares, under STEREOCUT_FULL_TESTS=1: by default the left–right check's run above covers
  // convergence checks over several squares (2×2, partly outside its grid), which a run of its own would compile again.
  const [wideW, wideH] = [100, 40];
  fullTest(`α-expansion on the device, synthetic ${wideW}×${wideH} (convergence checks over several 32×32 squares), census costs: the labels and energy of BK`, async () => {
    const wide = generateSyntheticScene({ width: wideW, height: wideH, ndisp: 5, seed: 5 });
    await expectMatchLikeBk(wide.left, wide.right, { ndisp: 5, cost: 'census', cycles: 1, lrCheck: false }, `synthetic ${wideW}×${wideH}`);
  });

});
