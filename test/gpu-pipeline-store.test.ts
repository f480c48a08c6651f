/**
 * The pipelines a program built, remembered on disk for the next process
 * (gpu/runtime/gpujs/pipelineStore.ts), and the warm-up that asks for them when
 * a program of the same shape starts (pipelinePrewarm.ts
 * warmUpPipelineGroup). The store is checked as a file (round trips, bounds,
 * files it must ignore); the warm-up on a stand-in device that records what
 * it is asked for, through two simulated processes: the first records what
 * gpu.js's compile builds, the second asks for exactly those pipelines
 * before its compile, and its compile then creates nothing the warm-up did
 * not ask for and waits for the warm-up instead of compiling again.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Input } from 'gpu.js';
import { seededRandom } from '../data/random';
import {
  beginPipelineGroup, MAX_GROUP_PIPELINES, MAX_PIPELINE_GROUPS, PIPELINE_CACHE_VARIABLE, pipelineStore, pipelineStorePath, recordPipeline, recordTranslation,
  resetPipelineStore, savePipelineStore, type PipelineSource, type StoredTranslation,
} from '../gpu/runtime/gpujs/pipelineStore';
import { WRAPPED_GPU_JS_RELEASE } from '../gpu/runtime/gpujs/release';
import { clearKernelBuildCache, installKernelBuildCache, kernelBuildCache, type CompilingExecutor } from '../gpu/runtime/gpujs/kernelBuildCache';
import { GpuMoveSolver } from '../gpu/move/gpuMoveSolver';
import { randomEnergy } from './support/randomEnergy';
import { RecordingDevice, useStandInDevice } from './support/recordingDevice';
import { standInWebGpuContext } from './support/standInContext';
import { gpuJsInternal } from '../gpu/runtime/gpujs/internals';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-pipelines-'));
const file = path.join(dir, 'nested', 'pipelines.json');
const saved = process.env[PIPELINE_CACHE_VARIABLE];
beforeEach(() => {
  process.env[PIPELINE_CACHE_VARIABLE] = file;
  fs.rmSync(path.join(dir, 'nested'), { recursive: true, force: true });
  resetPipelineStore();
});
afterAll(() => {
  if (saved === undefined) delete process.env[PIPELINE_CACHE_VARIABLE];
  else process.env[PIPELINE_CACHE_VARIABLE] = saved;
  fs.rmSync(dir, { recursive: true, force: true });
});

const source = (i: number): PipelineSource => ({ code: `@compute @workgroup_size(1) fn main() { let x = ${i}; }`, arrays: i % 4, constants: i % 2 });
const translation = (i: number): StoredTranslation => ({ key: `["kernel ${i}"]`, returnType: i % 3 === 0 ? null : 'Number', componentCount: 1 + (i % 4), translatedBody: `let v = ${i};`, translatedFunctions: i % 2 ? '' : `fn f${i}() {}` });
const sources = (key: string): PipelineSource[] => beginPipelineGroup(key).sources;

describe('the pipeline store', () => {
  test('where it lives: the variable (a path, or off), else XDG_CACHE_HOME, else ~/.cache', () => {
    expect(pipelineStorePath({ [PIPELINE_CACHE_VARIABLE]: '/x/p.json' })).toBe('/x/p.json');
    expect(pipelineStorePath({ [PIPELINE_CACHE_VARIABLE]: 'off' })).toBeNull();
    expect(pipelineStorePath({ [PIPELINE_CACHE_VARIABLE]: '0' })).toBeNull();
    expect(pipelineStorePath({ XDG_CACHE_HOME: '/c' })).toBe(path.join('/c', 'stereocut', 'webgpu-pipelines.json'));
    // A relative XDG_CACHE_HOME is invalid by the spec and ignored.
    expect(pipelineStorePath({ XDG_CACHE_HOME: 'rel' })).toBe(path.join(os.homedir(), '.cache', 'stereocut', 'webgpu-pipelines.json'));
  });

  test('random groups recorded over several processes come back as recorded, the most recent MAX_PIPELINE_GROUPS of them', () => {
    const rng = seededRandom(7);
    const truth = new Map<string, PipelineSource[]>();
    const truthT = new Map<string, StoredTranslation[]>();
    const order: string[] = [];
    for (let processRun = 0; processRun < 12; processRun++) {
      resetPipelineStore();
      for (let g = 0; g < 3; g++) {
        const key = `shape ${Math.floor(rng() * 24)}`;
        const before = beginPipelineGroup(key);
        expect(before).toEqual({ sources: truth.get(key) ?? [], translations: truthT.get(key) ?? [] });
        const made = truth.get(key) ?? [];
        const translated = truthT.get(key) ?? [];
        for (let i = 0; i < 1 + Math.floor(rng() * 6); i++) {
          const s = source(Math.floor(rng() * 40));
          recordPipeline(s);
          // Recorded once per group, however often built.
          if (!made.some((t) => t.code === s.code && t.arrays === s.arrays && t.constants === s.constants)) made.push(s);
          const t = translation(Math.floor(rng() * 40));
          recordTranslation(t);
          if (!translated.some((u) => u.key === t.key)) translated.push(t);
        }
        truth.set(key, made);
        truthT.set(key, translated);
        order.splice(order.indexOf(key) >>> 0, order.includes(key) ? 1 : 0);
        order.push(key);
      }
      savePipelineStore();
      expect(pipelineStore.saveError).toBeNull();
      // Beyond the bound, the least recently used groups are gone.
      for (const gone of order.splice(0, Math.max(0, order.length - MAX_PIPELINE_GROUPS))) {
        truth.delete(gone);
        truthT.delete(gone);
      }
    }
    resetPipelineStore();
    const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as { groups: Array<{ key: string }> };
    expect(stored.groups.map((g) => g.key)).toEqual(order);
    for (const [key, made] of truth) expect(beginPipelineGroup(key)).toEqual({ sources: made, translations: truthT.get(key) });
    expect(pipelineStore.loadedFrom).toBe(file);
  });

  test('a group stops growing at MAX_GROUP_PIPELINES; nothing is recorded before a group begins or with the store off', () => {
    recordPipeline(source(1));
    expect(pipelineStore.recorded).toBe(0);
    beginPipelineGroup('big');
    for (let i = 0; i < MAX_GROUP_PIPELINES + 10; i++) recordPipeline(source(i));
    expect(pipelineStore.recorded).toBe(MAX_GROUP_PIPELINES);
    savePipelineStore();
    resetPipelineStore();
    expect(sources('big')).toHaveLength(MAX_GROUP_PIPELINES);
    process.env[PIPELINE_CACHE_VARIABLE] = 'off';
    resetPipelineStore();
    beginPipelineGroup('big');
    recordPipeline(source(1000));
    savePipelineStore();
    expect(pipelineStore.recorded).toBe(0);
    expect(pipelineStore.saves).toBe(0);
  });

  test('a corrupt, foreign or unreadable file is ignored (nothing starts) and replaced by the next save; a save that fails says why and throws nothing', () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const foreign = { format: 2, gpuJs: '0.0.1', groups: [{ key: 'k', sources: [source(1)], translations: [] }] };
    const badSource = { format: 2, gpuJs: WRAPPED_GPU_JS_RELEASE, groups: [{ key: 'k', sources: [{ code: 3, arrays: 1, constants: 0 }], translations: [] }] };
    const badTranslation = { format: 2, gpuJs: WRAPPED_GPU_JS_RELEASE, groups: [{ key: 'k', sources: [], translations: [{ ...translation(1), componentCount: 'one' }] }] };
    for (const text of ['{"format":2,"gpuJs"', JSON.stringify(foreign), JSON.stringify({ ...foreign, format: 1, gpuJs: WRAPPED_GPU_JS_RELEASE }), JSON.stringify(badSource), JSON.stringify(badTranslation), 'null']) {
      fs.writeFileSync(file, text);
      resetPipelineStore();
      expect(beginPipelineGroup('k')).toEqual({ sources: [], translations: [] });
      expect(pipelineStore.loadedFrom).toBeNull();
    }
    expect(pipelineStore.readError).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `));
    recordPipeline(source(5));
    savePipelineStore();
    resetPipelineStore();
    expect(beginPipelineGroup('k')).toEqual({ sources: [source(5)], translations: [] });
    // The file's folder is a file: the save fails quietly.
    process.env[PIPELINE_CACHE_VARIABLE] = path.join(file, 'below.json');
    resetPipelineStore();
    beginPipelineGroup('k');
    recordPipeline(source(6));
    expect(() => savePipelineStore()).not.toThrow();
    expect(pipelineStore.saveError).toMatch(/pipelines\.json/);
  });
});

describe('a program warmed up from the store, on a stand-in device', () => {
  const device = new RecordingDevice();
  useStandInDevice(device);
  beforeAll(() => installKernelBuildCache());

  const settle = async (): Promise<void> => {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  };

  /** A fresh process's solver of W×H (its program begins the store's group) and its plan's executor with the first call's arguments. */
  function freshSolver(W: number, H: number): { executor: CompilingExecutor; args: unknown[] } {
    const ctx = standInWebGpuContext();
    const solver = new GpuMoveSolver(ctx, randomEnergy(seededRandom(W * 31 + H), W, H, 5, 'linear'), { variant: 'reversed', keepPlans: false });
    const internals = solver as unknown as { plans: { get(r: number, b: number, v: boolean): { pipe: { pipeline: { plan: unknown; _buildPlan(): unknown } } } }; flowsInOut: boolean; schedule: { bfs: number } };
    const pipeline = internals.plans.get(3, internals.schedule.bfs, false).pipe.pipeline;
    pipeline.plan = pipeline._buildPlan();
    const args: unknown[] = [new Input(new Float32Array(W * H) as unknown as number[], [W, H]), new Input(new Float32Array(1) as unknown as number[], [1])];
    if (internals.flowsInOut) args.push(new Input(new Float32Array(2 * W * H) as unknown as number[], [W, H, 2]));
    const { WebGPUPipelineExecutor } = gpuJsInternal<{ WebGPUPipelineExecutor: new (p: unknown, plan: unknown) => CompilingExecutor }>('web-gpu/pipeline-executor');
    return { executor: new WebGPUPipelineExecutor(pipeline, pipeline.plan), args };
  }

  /** Compiles the plan, answering every pipeline asked for ahead once all are asked. */
  async function compile(p: { executor: CompilingExecutor; args: unknown[] }): Promise<void> {
    const compiling = p.executor._compile(p.args);
    await settle();
    device.pending.splice(0).forEach((answer) => answer());
    await compiling;
  }

  test('the second process asks for every pipeline the first built, all before its compile builds any, and its compile makes no other', async () => {
    for (const [W, H] of [[13, 9], [20, 6]]) {
      // First process: nothing stored for this shape; the compile's pipelines are recorded.
      resetPipelineStore();
      clearKernelBuildCache();
      device.made.length = 0;
      device.ahead.length = 0;
      await compile(freshSolver(W, H));
      const builtFirst = new Set(device.made);
      expect(builtFirst.size).toBeGreaterThanOrEqual(10);
      expect(pipelineStore.recorded).toBe(builtFirst.size);
      expect(pipelineStore.recordedTranslations).toBeGreaterThan(5);
      savePipelineStore();

      // Second process: the solver's program asks for them at once, before any compile.
      resetPipelineStore();
      clearKernelBuildCache();
      device.made.length = 0;
      device.ahead.length = 0;
      const warmedBefore = kernelBuildCache.warmedUpPipelines;
      const missesBefore = kernelBuildCache.translationMisses;
      const second = freshSolver(W, H);
      await settle();
      expect(new Set(device.ahead)).toEqual(builtFirst);
      expect(device.ahead).toHaveLength(builtFirst.size);
      expect(kernelBuildCache.warmedUpPipelines - warmedBefore).toBe(builtFirst.size);
      const asked = device.ahead.length;
      // The compile asks for nothing more ahead and builds nothing while the warm-up's creations are in flight.
      const compiling = second.executor._compile(second.args);
      await settle();
      expect(device.ahead).toHaveLength(asked);
      expect(device.made).toHaveLength(0);
      device.pending.splice(0).forEach((answer) => answer());
      await compiling;
      expect(new Set(device.made)).toEqual(builtFirst);
      // Every translation the first process made came from the store: none was made again.
      expect(kernelBuildCache.translationMisses).toBe(missesBefore);
      // Nothing new: no save is due.
      expect(pipelineStore.recorded).toBe(0);
      expect(pipelineStore.recordedTranslations).toBe(0);
    }
  });

  test('a stale store (pipelines the program never builds) costs only their creation: the compile builds what it needs as without it', async () => {
    resetPipelineStore();
    clearKernelBuildCache();
    const [W, H] = [11, 7];
    // Record a program of this shape, then replace its sources by foreign ones.
    await compile(freshSolver(W, H));
    savePipelineStore();
    const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as { groups: Array<{ key: string; sources: PipelineSource[]; translations: StoredTranslation[] }> };
    for (const g of stored.groups) {
      g.sources = [source(1), source(2)];
      g.translations = [translation(1)];
    }
    fs.writeFileSync(file, JSON.stringify(stored));
    resetPipelineStore();
    clearKernelBuildCache();
    device.made.length = 0;
    device.ahead.length = 0;
    const p = freshSolver(W, H);
    await settle();
    expect(device.ahead).toHaveLength(2);
    device.pending.splice(0).forEach((answer) => answer());
    await compile(p);
    expect(device.made.length).toBeGreaterThanOrEqual(10);
    // The sources it did build are recorded beside the stale ones.
    expect(pipelineStore.recorded).toBe(new Set(device.made).size);
  });
});
