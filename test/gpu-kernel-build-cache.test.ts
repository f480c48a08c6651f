/**
 * Kernel builds shared between plans (gpu/runtime/gpujs/kernelBuildCache.ts).
 * CI has no GPU, so translations are checked by assembling the move
 * kernels' WGSL the way gpu.js does before it reaches the device: with the
 * cache, every build must give the WGSL a build without it gives, over
 * random kernels, sizes, constants and settings that repeat (so the cache is
 * hit). Shader modules, and the pipelines created ahead of a plan's compile,
 * are checked on a stand-in device that records what it is asked for; that
 * the GPU runs the shared builds is checked there (--verify, equal
 * energies: BENCHMARKS.md).
 */
import { DEFAULT_DEVICE_FLAGS, resolveDeviceFlags, type DeviceFlags } from '../gpu/runtime/deviceFlags';
import { seededRandom } from '../data/random';
import { WRAPPED_GPU_JS_RELEASE } from '../gpu/runtime/gpujs/release';
import { Input } from 'gpu.js';
import {
  claimShaderModule, clearKernelBuildCache, installKernelBuildCache, keptPipelines, kernelBuildCache, kernelLayoutEntries, MAX_SHARED_MODULES, prewarmPipelines, shareShaderModules, translationKey,
  type CompilingExecutor, type ModuleDevice, type PipelineDevice, type TranslatingKernel,
} from '../gpu/runtime/gpujs/kernelBuildCache';
import { GpuMoveSolver } from '../gpu/move/gpuMoveSolver';
import { randomEnergy } from './support/randomEnergy';
import { gatedSource, UNCHANGED_STATE } from '../gpu/maxflow/pushRelabelKernels';
import { bfsScanSource } from '../gpu/maxflow/bfsKernels';
import { STATE_PLANES } from '../gpu/maxflow/pushRelabelLayout';
import { sweepGatherSource, sweepPushSource } from '../gpu/maxflow/sweepKernels';
import { checkTilesSource, MOVE_DONE_GATE } from '../gpu/move/reductionKernels';

/** A one-dimensional kernel of one [4] argument (branches on the thread, as the move tally does). */
const LINE_SOURCE = 'function (T) { const i = this.thread.x; if (i === 2) { return 1.0; } return T[i]; }';
import { assembleWgsl, flaggedInstance } from './support/wgslAssembly';
import { standInWebGpuContext } from './support/standInContext';
import { blockCheckWgsl } from '../gpu/maxflow/blockCheckKernel';
import { RecordingDevice, useStandInDevice } from './support/recordingDevice';
import { gpuJsInternal } from '../gpu/runtime/gpujs/internals';

const planes = (W: number, H: number, k: number): Input => new Input(new Float32Array(W * H * k) as unknown as number[], [W, H, k]);

interface Case { source: string; output: number[]; args: unknown[]; constants: Record<string, unknown>; settings: object }

/** A random move kernel: its source (gated or not), size, constants and a setting that changes its translation. */
function randomCase(rng: () => number): Case {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rng() * xs.length)];
  const W = pick([3, 17, 64]);
  const H = pick([5, 17]);
  const constants = { W, H, INF: W * H + 1, REACH: pick([8, 16]) };
  const S = planes(W, H, STATE_PLANES);
  const C = planes(W, H, 4);
  const G = new Input(new Float32Array(4) as unknown as number[], [4]);
  const kernels: Array<() => Case> = [
    () => ({ source: sweepPushSource(pick(['h', 'v'])), output: [W, H, STATE_PLANES], args: [S, C], constants, settings: {} }),
    () => ({ source: gatedSource(sweepPushSource('h'), MOVE_DONE_GATE, UNCHANGED_STATE), output: [W, H, STATE_PLANES], args: [S, C, G], constants, settings: {} }),
    () => ({ source: sweepGatherSource(pick(['h', 'v'])), output: [W, H, 2], args: [S, C], constants, settings: {} }),
    () => ({ source: bfsScanSource(), output: [W, H], args: [S, C, new Input(new Float32Array(W * H) as unknown as number[], [W, H])], constants, settings: {} }),
    () => ({ source: checkTilesSource(), output: [Math.ceil(W / 8), Math.ceil(H / 8)], args: [S, C], constants, settings: {} }),
    // The plain array and the Input of the same values: different argument types.
    () => ({ source: LINE_SOURCE, output: [4], args: [pick([G, [0, 0, 0, 0]])], constants, settings: {} }),
    // A workgroup kernel: its work a native WGSL routine, which differs with the grid.
    () => ({
      source: 'function (S, C) { return blockCheck_t(0.0); }', output: [Math.ceil(W / 32), Math.ceil(H / 32)], args: [S, C], constants,
      settings: { nativeFunctions: [{ name: 'blockCheck_t', source: blockCheckWgsl('blockCheck_t', W, H, null), argumentTypes: { x: 'Number' }, returnType: 'Number' }] },
    }),
  ];
  const c = pick(kernels)();
  c.settings = { ...c.settings, ...pick([{}, { loopMaxIterations: 1000 }, { strictIntegers: true }, { fixIntegerDivisionAccuracy: true }, { pipeline: true, immutable: true, dynamicArguments: true }]) };
  return c;
}

/** Instances adapted with the cache on and off (the flag kernelBuildCache of their contexts). */
const withCache = flaggedInstance({ kernelBuildCache: true });
const withoutCache = flaggedInstance({ kernelBuildCache: false });

/** The kernel's WGSL, built for an instance with the cache on (`shared`) or off. */
function build(c: Case, shared: boolean): string {
  return assembleWgsl(c.source, c.output, c.args, c.constants, { ...c.settings, gpu: shared ? withCache : withoutCache }).wgsl;
}

/** A device class whose createShaderModule makes a numbered module, counting them; a class per test, since a test wraps its prototype. */
function moduleDeviceClass(): { Device: { new (): ModuleDevice; prototype: ModuleDevice }; made: () => number } {
  let made = 0;
  class FakeDevice implements ModuleDevice {
    createShaderModule(descriptor: { code: string }): unknown {
      made++;
      return { code: descriptor.code, serial: made };
    }
  }
  return { Device: FakeDevice, made: () => made };
}

describe('kernel builds shared between plans', () => {
  beforeEach(() => clearKernelBuildCache());

  test('installed for the gpu.js release it wraps, once', () => {
    expect((require('gpu.js/package.json') as { version: string }).version).toBe(WRAPPED_GPU_JS_RELEASE);
    expect(installKernelBuildCache()).toBe(true);
    const proto = gpuJsInternal<{ WebGPUKernel: { prototype: { translateSource: unknown; _buildAsync: unknown } } }>('web-gpu/kernel').WebGPUKernel.prototype;
    const [translate, buildAsync] = [proto.translateSource, proto._buildAsync];
    expect(installKernelBuildCache()).toBe(true);
    expect(proto.translateSource).toBe(translate);
    expect(proto._buildAsync).toBe(buildAsync);
  });

  test('400 random builds that repeat: with the cache, every WGSL is the one built without it', () => {
    installKernelBuildCache();
    const rng = seededRandom(11);
    const cases = Array.from({ length: 60 }, () => randomCase(rng));
    const before = { ...kernelBuildCache };
    const used = new Set<Case>();
    for (let i = 0; i < 400; i++) {
      const c = cases[Math.floor(rng() * cases.length)];
      expect(build(c, true)).toBe(build(c, false));
      used.add(c);
    }
    const hits = kernelBuildCache.translationHits - before.translationHits;
    const misses = kernelBuildCache.translationMisses - before.translationMisses;
    expect(hits + misses).toBe(400);
    expect(hits).toBeGreaterThan(200);
    // One miss per distinct kernel at most: the first build of each.
    expect(misses).toBeLessThanOrEqual(used.size);
  });

  test('kernels that differ in a constant, the source or a setting are translated apart', () => {
    installKernelBuildCache();
    const W = 16;
    const H = 9;
    const S = planes(W, H, STATE_PLANES);
    const C = planes(W, H, 4);
    const base: Case = { source: sweepPushSource('h'), output: [W, H, STATE_PLANES], args: [S, C], constants: { W, H, INF: W * H + 1, REACH: 16 }, settings: {} };
    // These translate differently on their own, so a key without their field would hand them the base's WGSL.
    const apart: Case[] = [
      { ...base, constants: { ...base.constants, REACH: 8 } },
      { ...base, constants: { ...base.constants, W: 17 } },
      { ...base, source: sweepPushSource('v') },
      { ...base, settings: { strictIntegers: true } },
    ];
    // These give the base's WGSL or nearly; they are in the key all the same.
    const near: Case[] = [
      { ...base, output: [W, H, 4] },
      { ...base, args: [new Float32Array(W * H * STATE_PLANES), C] },
      { ...base, settings: { loopMaxIterations: 7 } },
      { ...base, settings: { fixIntegerDivisionAccuracy: true } },
      { ...base, settings: { dynamicArguments: true } },
    ];
    const all = [base, ...apart, ...near];
    const fresh = all.map((c) => build(c, false));
    for (let i = 1; i <= apart.length; i++) expect(fresh[i]).not.toBe(fresh[0]);
    for (let round = 0; round < 2; round++) {
      all.forEach((c, i) => expect(build(c, true)).toBe(fresh[i]));
    }
  });

  test('kernels with helper functions, plugins or array constants are not shared; native functions are part of the key', () => {
    const kernel = (over: Partial<TranslatingKernel>): TranslatingKernel => ({
      source: 'function () { return 1; }', argumentNames: [], argumentTypes: [], argumentSizes: [], argumentBitRatios: [], kernelArguments: [], kernelConstants: [], constants: { W: 3 }, constantTypes: {}, constantBitRatios: {},
      output: [4], debug: false, loopMaxIterations: 0, precision: 'single', optimizeFloatMemory: false, strictIntegers: false, fixIntegerDivisionAccuracy: false, leadingReturnStatement: null, followingReturnStatement: null,
      dynamicArguments: false, dynamicOutput: false, graphical: false, functions: null, nativeFunctions: null, injectedNative: null, subKernels: null, plugins: [], returnType: null, componentCount: 1,
      translatedBody: '', translatedFunctions: '', translateSource: () => undefined, ...over,
    });
    expect(translationKey(kernel({}))).not.toBeNull();
    expect(translationKey(kernel({ functions: [{ source: 'function f() { return 1; }' }] }))).toBeNull();
    // As gpu.js keeps them (addNativeFunction): name, source, argument names and types, return type.
    const native = (source: string): unknown => [{ name: 'f', source, settings: {}, argumentNames: ['x'], argumentTypes: ['Number'], returnType: 'Number' }];
    const withF = translationKey(kernel({ nativeFunctions: native('fn f(x : f32) -> f32 { return x; }') }));
    expect(withF).not.toBeNull();
    expect(withF).not.toBe(translationKey(kernel({})));
    expect(translationKey(kernel({ nativeFunctions: native('fn f(x : f32) -> f32 { return 2.0 * x; }') }))).not.toBe(withF);
    expect(translationKey(kernel({ nativeFunctions: native('fn f(x : f32) -> f32 { return x; }') }))).toBe(withF);
    expect(translationKey(kernel({ nativeFunctions: [{ name: 'f' }] }))).toBeNull();
    expect(translationKey(kernel({ nativeFunctions: 'fn f() {}' }))).toBeNull();
    expect(translationKey(kernel({ injectedNative: 'fn g() {}' }))).toBeNull();
    expect(translationKey(kernel({ subKernels: [{ name: 's' }] }))).toBeNull();
    expect(translationKey(kernel({ plugins: [{ name: 'p' }] }))).toBeNull();
    expect(translationKey(kernel({ constants: { T: [1, 2, 3] } }))).toBeNull();
    expect(translationKey(kernel({ source: { functionNodes: [] } }))).toBeNull();
  });

  test('shader modules: one per WGSL code and device, made by the device class; other descriptors, and the cache switched off, pass through', () => {
    const { Device: FakeDevice, made } = moduleDeviceClass();
    const device = new FakeDevice();
    const other = new FakeDevice();
    shareShaderModules(device);
    shareShaderModules(device);
    shareShaderModules(other);
    const a = device.createShaderModule({ code: 'A' });
    expect(device.createShaderModule({ code: 'A' })).toBe(a);
    expect(device.createShaderModule({ code: 'B' })).not.toBe(a);
    expect(other.createShaderModule({ code: 'A' })).not.toBe(a);
    expect(made()).toBe(3);
    expect(device.createShaderModule({ code: 'A', label: 'x' } as { code: string })).not.toBe(a);
    // A build whose context has the cache off says so before it asks (claimShaderModule, as the adapted build does): its call makes a module.
    const release = claimShaderModule(device, 'A', resolveDeviceFlags({ kernelBuildCache: false }));
    expect(device.createShaderModule({ code: 'A' })).not.toBe(a);
    release();
    expect(device.createShaderModule({ code: 'A' })).toBe(a);
    expect(made()).toBe(5);
    // A wrapper of the device class (a profiler) sees the modules made, not those shared.
    let seen = 0;
    const original = FakeDevice.prototype.createShaderModule;
    FakeDevice.prototype.createShaderModule = function (this: ModuleDevice, d: { code: string }) {
      seen++;
      return original.call(this, d);
    };
    try {
      device.createShaderModule({ code: 'A' });
      device.createShaderModule({ code: 'C' });
      expect(seen).toBe(1);
    } finally {
      FakeDevice.prototype.createShaderModule = original;
    }
    // Emptied by clearKernelBuildCache; bounded.
    clearKernelBuildCache();
    expect(device.createShaderModule({ code: 'A' })).not.toBe(a);
    const first = device.createShaderModule({ code: 'code 0' });
    for (let i = 1; i <= MAX_SHARED_MODULES; i++) device.createShaderModule({ code: `code ${i}` });
    expect(device.createShaderModule({ code: `code ${MAX_SHARED_MODULES}` })).toBe(device.createShaderModule({ code: `code ${MAX_SHARED_MODULES}` }));
    expect(device.createShaderModule({ code: 'code 0' })).not.toBe(first);
  });

  test('shader modules per flags: builds claim in the order they start and each call takes the oldest claim of its code; contexts of other flags share none', () => {
    const { Device: FakeDevice } = moduleDeviceClass();
    const device = new FakeDevice();
    shareShaderModules(device);
    const on: DeviceFlags = DEFAULT_DEVICE_FLAGS;
    const off = resolveDeviceFlags({ kernelBuildCache: false });
    const other = resolveDeviceFlags({ keepPipelines: false });
    const a = device.createShaderModule({ code: 'A' });
    // Two builds of one code in flight, the one with the cache off first: the first call makes its own, the second shares.
    const releases = [claimShaderModule(device, 'A', off), claimShaderModule(device, 'A', on)];
    const first = device.createShaderModule({ code: 'A' });
    const second = device.createShaderModule({ code: 'A' });
    releases.forEach((r) => r());
    expect(first).not.toBe(a);
    expect(second).toBe(a);
    // Other flags (equal otherwise): modules of their own, shared between builds of those flags.
    const r1 = claimShaderModule(device, 'A', other);
    const ofOther = device.createShaderModule({ code: 'A' });
    r1();
    expect(ofOther).not.toBe(a);
    const r2 = claimShaderModule(device, 'A', resolveDeviceFlags({ keepPipelines: false }));
    expect(device.createShaderModule({ code: 'A' })).toBe(ofOther);
    r2();
    // A claim released without its call (the build failed first) is dropped: the next call takes the defaults.
    claimShaderModule(device, 'A', off)();
    expect(device.createShaderModule({ code: 'A' })).toBe(a);
    // Claims are per code: one for B leaves A's calls alone.
    const rB = claimShaderModule(device, 'B', off);
    expect(device.createShaderModule({ code: 'A' })).toBe(a);
    rB();
  });

  test('a device that takes no new property is left as it is', () => {
    const device = Object.freeze({ createShaderModule: (d: { code: string }) => ({ code: d.code }) });
    shareShaderModules(device);
    expect(device.createShaderModule({ code: 'A' })).not.toBe(device.createShaderModule({ code: 'A' }));
  });
});

describe('pipelines created ahead of a plan\'s compile', () => {
  const device = new RecordingDevice();
  useStandInDevice(device);
  beforeAll(() => installKernelBuildCache());

  /** A solver's plan of `rounds` rounds, traced, with an executor for it and its first call's arguments. */
  function solverPlan(W: number, H: number, rounds: number, given?: GpuMoveSolver, flags: Partial<DeviceFlags> = {}): { executor: CompilingExecutor; args: unknown[]; solver: GpuMoveSolver } {
    // Adapted as createGpuContext's instances are, with `flags`.
    const ctx = standInWebGpuContext(flags);
    const solver = given ?? new GpuMoveSolver(ctx, randomEnergy(seededRandom(W * 31 + H), W, H, 5, 'linear'), { variant: 'reversed' });
    const internals = solver as unknown as { plans: { get(r: number, b: number, v: boolean): { pipe: { pipeline: { plan: unknown; _buildPlan(): unknown } } } }; flowsInOut: boolean; schedule: { bfs: number } };
    const pipeline = internals.plans.get(rounds, internals.schedule.bfs, false).pipe.pipeline;
    pipeline.plan = pipeline._buildPlan();
    const args: unknown[] = [new Input(new Float32Array(W * H) as unknown as number[], [W, H]), new Input(new Float32Array(1) as unknown as number[], [1])];
    if (internals.flowsInOut) args.push(new Input(new Float32Array(2 * W * H) as unknown as number[], [W, H, 2]));
    const { WebGPUPipelineExecutor } = gpuJsInternal<{ WebGPUPipelineExecutor: new (p: unknown, plan: unknown) => CompilingExecutor }>('web-gpu/pipeline-executor');
    return { executor: new WebGPUPipelineExecutor(pipeline, pipeline.plan), args, solver };
  }

  const settle = async (): Promise<void> => {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  };

  test('the pipelines asked for ahead are those gpu.js\'s compile then creates, all asked before any is made', async () => {
    clearKernelBuildCache();
    // Everything asked ahead on this device: a pipeline asked for by an earlier plan is not asked again.
    const everAhead = new Set<string>();
    for (const [W, H, rounds] of [[13, 9, 2], [21, 6, 2], [21, 6, 3]]) {
      device.made.length = 0;
      device.ahead.length = 0;
      const { executor, args } = solverPlan(W, H, rounds);
      const compiling = executor._compile(args);
      await settle();
      // Every pipeline requested is requested before the first one is answered, and none twice.
      const asked = device.ahead.length;
      expect(device.pending.length).toBe(asked);
      // The compile waits for them (a plan whose pipelines were all asked for before waits for none).
      if (asked > 0) expect(device.made.length).toBe(0);
      expect(new Set(device.ahead).size).toBe(asked);
      device.pending.splice(0).forEach((answer) => answer());
      await compiling;
      for (const p of device.ahead) everAhead.add(p);
      const made = new Set(device.made);
      expect(device.ahead.filter((p) => !made.has(p))).toEqual([]);
      expect([...made].filter((p) => !everAhead.has(p))).toEqual([]);
      if (W === 13) expect(asked).toBeGreaterThanOrEqual(10);
    }
  });

  test('a plan\'s compile allocates no output buffer per kernel: every buffer it makes stays, and a clone that runs on its own gets one then', async () => {
    clearKernelBuildCache();
    const { executor, args } = solverPlan(19, 7, 3);
    const before = device.buffers.length;
    const compiling = executor._compile(args);
    await settle();
    device.pending.splice(0).forEach((answer) => answer());
    await compiling;
    const made = device.buffers.slice(before);
    expect(made.length).toBeGreaterThan(0);
    // gpu.js's build made a buffer of each kernel's output size, which the executor destroyed at once.
    expect(made.filter((b) => b.destroyed > 0)).toEqual([]);
    // A kernel of the plan, run directly (what gpu.js's fallback executor does), allocates its output at that run.
    const plan = (executor as unknown as { plan: { kernels: Array<{ clone: { kernel: { outputBuffer: unknown; _ensureOutputBuffer(): void } } }> } }).plan;
    const kernel = plan.kernels[0].clone.kernel;
    expect(kernel.outputBuffer).toBeNull();
    const count = device.buffers.length;
    kernel._ensureOutputBuffer();
    expect(kernel.outputBuffer).not.toBeNull();
    expect(device.buffers.length).toBe(count + 1);
  });

  test('later plans of the same kernels ask for none ahead, and the same solver\'s plan none of its kernels; a refused pipeline is left to the compile', async () => {
    clearKernelBuildCache();
    const first = solverPlan(17, 8, 2);
    device.ahead.length = 0;
    const warming = prewarmPipelines(first.executor, first.args, device as unknown as PipelineDevice, DEFAULT_DEVICE_FLAGS);
    await settle();
    const asked = device.ahead.length;
    expect(asked).toBeGreaterThan(1);
    device.refuse = true;
    device.pending.splice(0).forEach((answer) => answer());
    await expect(warming).resolves.toBeUndefined();
    device.refuse = false;
    // Same size, more rounds, another solver: the same programs, none asked again.
    const second = solverPlan(17, 8, 5);
    await prewarmPipelines(second.executor, second.args, device as unknown as PipelineDevice, DEFAULT_DEVICE_FLAGS);
    expect(device.ahead.length).toBe(asked);
    // The same solver's next plan: its kernels were planned with these arguments, so no throwaway clone is made.
    const third = solverPlan(17, 8, 7, first.solver);
    const pipeline = (third.executor as unknown as { pipeline: { _cloneKernel: unknown } }).pipeline;
    const clone = jest.spyOn(pipeline as { _cloneKernel(): unknown }, '_cloneKernel');
    await prewarmPipelines(third.executor, third.args, device as unknown as PipelineDevice, DEFAULT_DEVICE_FLAGS);
    expect(clone).not.toHaveBeenCalled();
    expect(device.ahead.length).toBe(asked);
    // Another solver of the same size: its programs are keyed by source, constants and arguments, so none is planned again either.
    const fourth = solverPlan(17, 8, 9);
    const cloneOther = jest.spyOn((fourth.executor as unknown as { pipeline: { _cloneKernel(): unknown } }).pipeline, '_cloneKernel');
    await prewarmPipelines(fourth.executor, fourth.args, device as unknown as PipelineDevice, DEFAULT_DEVICE_FLAGS);
    expect(cloneOther).not.toHaveBeenCalled();
    // A solver of another size has other constants: its programs are planned (and asked for) anew.
    const fifth = solverPlan(13, 8, 2);
    const cloneFifth = jest.spyOn((fifth.executor as unknown as { pipeline: { _cloneKernel(): unknown } }).pipeline, '_cloneKernel');
    const warmingFifth = prewarmPipelines(fifth.executor, fifth.args, device as unknown as PipelineDevice, DEFAULT_DEVICE_FLAGS);
    await settle();
    device.pending.splice(0).forEach((answer) => answer());
    await warmingFifth;
    expect(cloneFifth).toHaveBeenCalled();
    expect(device.ahead.length).toBeGreaterThan(asked);
  });

  test('the pipelines made ahead are kept alive (Dawn shares a pipeline only while it lives), refused ones are not, and a cleared cache asks again', async () => {
    clearKernelBuildCache();
    device.ahead.length = 0;
    const first = solverPlan(11, 7, 2);
    const warming = prewarmPipelines(first.executor, first.args, device as unknown as PipelineDevice, DEFAULT_DEVICE_FLAGS);
    await settle();
    const asked = device.ahead.length;
    expect(asked).toBeGreaterThan(1);
    expect(keptPipelines(device, DEFAULT_DEVICE_FLAGS)).toHaveLength(0);
    // One refused, the rest made.
    const answers = device.pending.splice(0);
    device.refuse = true;
    answers[0]();
    device.refuse = false;
    answers.slice(1).forEach((answer) => answer());
    await warming;
    const kept = keptPipelines(device, DEFAULT_DEVICE_FLAGS);
    expect(kept).toHaveLength(asked - 1);
    expect(new Set(kept).size).toBe(asked - 1);
    // The same programs again: nothing asked, the same pipelines kept.
    const again = solverPlan(11, 7, 3);
    await prewarmPipelines(again.executor, again.args, device as unknown as PipelineDevice, DEFAULT_DEVICE_FLAGS);
    expect(device.ahead).toHaveLength(asked);
    expect(keptPipelines(device, DEFAULT_DEVICE_FLAGS)).toEqual(kept);
    // Cleared: none kept, and the next plan asks for all of them again.
    clearKernelBuildCache();
    expect(keptPipelines(device, DEFAULT_DEVICE_FLAGS)).toHaveLength(0);
    const fresh = solverPlan(11, 7, 2);
    const rewarming = prewarmPipelines(fresh.executor, fresh.args, device as unknown as PipelineDevice, DEFAULT_DEVICE_FLAGS);
    await settle();
    expect(device.ahead).toHaveLength(2 * asked);
    device.pending.splice(0).forEach((answer) => answer());
    await rewarming;
    expect(keptPipelines(device, DEFAULT_DEVICE_FLAGS)).toHaveLength(asked);
  });

  test('contexts of other flags share no pipelines made ahead: their plans ask again, and with keepPipelines off keep none', async () => {
    clearKernelBuildCache();
    device.ahead.length = 0;
    const first = solverPlan(9, 7, 2);
    const warming = prewarmPipelines(first.executor, first.args, device as unknown as PipelineDevice, DEFAULT_DEVICE_FLAGS);
    await settle();
    const asked = device.ahead.length;
    device.pending.splice(0).forEach((answer) => answer());
    await warming;
    expect(keptPipelines(device, DEFAULT_DEVICE_FLAGS)).toHaveLength(asked);
    const unkept = resolveDeviceFlags({ keepPipelines: false });
    const second = solverPlan(9, 7, 2, undefined, { keepPipelines: false });
    const rewarming = prewarmPipelines(second.executor, second.args, device as unknown as PipelineDevice, unkept);
    await settle();
    expect(device.ahead).toHaveLength(2 * asked);
    device.pending.splice(0).forEach((answer) => answer());
    await rewarming;
    expect(keptPipelines(device, unkept)).toHaveLength(0);
    expect(keptPipelines(device, DEFAULT_DEVICE_FLAGS)).toHaveLength(asked);
  });

  test('bind group entries: params, the array arguments, the output, the array constants', () => {
    expect(kernelLayoutEntries(2, 1).map((e) => [e.binding, (e.buffer as { type: string }).type])).toEqual([[0, 'uniform'], [1, 'read-only-storage'], [2, 'read-only-storage'], [3, 'storage'], [4, 'read-only-storage']]);
  });
});
