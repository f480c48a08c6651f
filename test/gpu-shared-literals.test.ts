/**
 * Literals shared between the plans of a solver (gpu/runtime/gpujs/sharedLiterals.ts).
 * The trace's bindings are checked on real solver plans; the buffers on a
 * stand-in WebGPU device that records what it makes (CI has no GPU), with
 * gpu.js's own executor compiling the plans; the solver's results with
 * sharing on and off on gpu.js's cpu backend against BK. That the GPU
 * runs the shared buffers is checked there (--verify, equal energies:
 * BENCHMARKS.md).
 */
import { seededRandom } from '../data/random';
import { WRAPPED_GPU_JS_RELEASE } from '../gpu/runtime/gpujs/release';
import { Input } from 'gpu.js';
import { alphaExpansion } from '../expansion/alphaExpansion';
import { GpuMoveSolver } from '../gpu/move/gpuMoveSolver';
import { GraphMoveSolver } from '../expansion/moveSolver';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { createGpuContext } from '../gpu/runtime/context';
import { bindSharedLiterals, canFillSharedLiteralOnDevice, canRefillSharedLiterals, fillSharedLiteralOnDevice, installSharedLiterals, isSharedLiteral, refillSharedLiteral, releaseSharedLiterals, shareLiterals, sharedLiterals } from '../gpu/runtime/gpujs/sharedLiterals';
import { randomEnergy, randomLabels } from './support/randomEnergy';
import { RecordingDevice, useStandInDevice } from './support/recordingDevice';
import { standInWebGpuContext } from './support/standInContext';
import { gpuJsInternal } from '../gpu/runtime/gpujs/internals';

interface Binding { source: string; value?: unknown }
interface TracedPlan { steps: Array<{ argBindings: Binding[] }> }
interface PipelineInternals { plan: TracedPlan | null; _buildPlan(): TracedPlan; destroy(): Promise<void> }
interface Executor { _compile(args: unknown[]): Promise<void>; destroy(): void }
interface SolverInternals { plans: { get(r: number, b: number, v: boolean): { pipe: { pipeline: PipelineInternals } } }; schedule: { bfs: number }; flowsInOut: boolean; program: { literals: readonly Input[] } }

// Each solver frees its literals on dispose here (no program kept for the next: gpu/move/keptPrograms.ts has its own tests).
// On a stand-in WebGPU context (sharing on unless `sharing` is false: the context's flag sharedLiterals).
function newSolver(W: number, H: number, seed: number, sharing = true): GpuMoveSolver {
  const ctx = standInWebGpuContext({ sharedLiterals: sharing });
  return new GpuMoveSolver(ctx, randomEnergy(seededRandom(seed), W, H, 5, 'linear'), { variant: 'reversed', keepPlans: false });
}

/** A plan of `rounds` rounds of the solver, traced. */
function tracedPlan(solver: GpuMoveSolver, rounds: number): PipelineInternals {
  const s = solver as unknown as SolverInternals;
  const pipeline = s.plans.get(rounds, s.schedule.bfs, false).pipe.pipeline;
  pipeline.plan = pipeline._buildPlan();
  return pipeline;
}

/** The array literals a traced plan binds, one entry per seat. */
const literalSeats = (plan: TracedPlan): unknown[] => plan.steps.flatMap((s) => s.argBindings.filter((b) => b.source === 'literal' && typeof b.value === 'object').map((b) => b.value));

describe('literals shared between the plans of a solver', () => {
  const device = new RecordingDevice();
  useStandInDevice(device);
  beforeAll(() => installSharedLiterals());

  test('installed for the gpu.js release it wraps, once', () => {
    expect((require('gpu.js/package.json') as { version: string }).version).toBe(WRAPPED_GPU_JS_RELEASE);
    const proto = gpuJsInternal<{ WebGPUPipelineExecutor: { prototype: Executor } }>('web-gpu/pipeline-executor').WebGPUPipelineExecutor.prototype;
    const compile = proto._compile;
    expect(installSharedLiterals()).toBe(true);
    expect(proto._compile).toBe(compile);
  });

  test('the trace binds each of the solver\'s literals as itself in every plan and seat; with its context\'s sharing off gpu.js copies it per seat', () => {
    for (const [W, H, seed] of [[7, 5, 1], [12, 9, 2], [3, 16, 3]]) {
      const solver = newSolver(W, H, seed);
      const own = (solver as unknown as SolverInternals).program.literals;
      expect(own).toHaveLength(4);
      for (const rounds of [1, 3]) {
        const seats = literalSeats(tracedPlan(solver, rounds).plan!);
        expect(seats.length).toBeGreaterThan(own.length);
        expect(seats.every((v) => own.includes(v as Input))).toBe(true);
        expect(new Set(seats).size).toBe(own.length);
      }
      const unshared = newSolver(W, H, seed, false);
      const its = (unshared as unknown as SolverInternals).program.literals;
      expect(its.some((v) => isSharedLiteral(v))).toBe(false);
      const copies = literalSeats(tracedPlan(unshared, 2).plan!);
      expect(copies.some((v) => own.includes(v as Input) || its.includes(v as Input))).toBe(false);
      expect(new Set(copies).size).toBe(copies.length);
      solver.dispose();
      unshared.dispose();
    }
  });

  test('outside a trace, and for values never registered, binding does nothing', () => {
    const stranger = new Input(new Float32Array(4) as unknown as number[], [4]);
    expect(isSharedLiteral(stranger)).toBe(false);
    expect(() => bindSharedLiterals([stranger])).not.toThrow();
    shareLiterals([stranger]);
    expect(isSharedLiteral(stranger)).toBe(true);
    releaseSharedLiterals([stranger]);
    expect(isSharedLiteral(stranger)).toBe(false);
  });

  /** Compiles a plan of the solver with gpu.js's WebGPU executor on the stand-in device; returns it and the literal buffers it made. */
  async function compiled(solver: GpuMoveSolver, rounds: number): Promise<{ executor: Executor; made: typeof device.buffers }> {
    const pipeline = tracedPlan(solver, rounds);
    const s = solver as unknown as SolverInternals;
    const W = (solver as unknown as { W: number }).W;
    const H = (solver as unknown as { H: number }).H;
    const args: unknown[] = [new Input(new Float32Array(W * H) as unknown as number[], [W, H]), new Input(new Float32Array(1) as unknown as number[], [1])];
    if (s.flowsInOut) args.push(new Input(new Float32Array(2 * W * H) as unknown as number[], [W, H, 2]));
    const { WebGPUPipelineExecutor } = gpuJsInternal<{ WebGPUPipelineExecutor: new (p: unknown, plan: unknown) => Executor }>('web-gpu/pipeline-executor');
    const executor = new WebGPUPipelineExecutor(pipeline, pipeline.plan);
    const before = device.buffers.length;
    await executor._compile(args);
    return { executor, made: device.buffers.slice(before).filter((b) => b.mappedAtCreation) };
  }

  test('the first plan on the device makes one buffer per literal, holding its values; later plans make none and destroy none; the solver frees them once', async () => {
    for (const [W, H, seed] of [[9, 7, 4], [16, 5, 5]]) {
      const solver = newSolver(W, H, seed);
      const own = (solver as unknown as SolverInternals).program.literals;
      const hits = sharedLiterals.hits;
      const first = await compiled(solver, 2);
      expect(first.made).toHaveLength(own.length);
      // Each literal's values, as gpu.js lays them out (a flat copy of the Input's array).
      const contents = first.made.map((b) => Array.from(new Float32Array(b.data!)));
      for (const lit of own) expect(contents).toContainEqual(Array.from(lit.value as unknown as Float32Array));
      const later = [await compiled(solver, 3), await compiled(solver, 1)];
      for (const p of later) expect(p.made).toHaveLength(0);
      expect(sharedLiterals.hits - hits).toBeGreaterThanOrEqual(2 * own.length);
      for (const p of [first, ...later]) p.executor.destroy();
      expect(first.made.map((b) => b.destroyed)).toEqual(own.map(() => 0));
      // A solver of the same size has literals of its own.
      const other = newSolver(W, H, seed + 100);
      const third = await compiled(other, 2);
      expect(third.made).toHaveLength(own.length);
      third.executor.destroy();
      solver.dispose();
      other.dispose();
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      expect(first.made.map((b) => b.destroyed)).toEqual(own.map(() => 1));
      expect(third.made.map((b) => b.destroyed)).toEqual(own.map(() => 1));
    }
  });

  test('literal buffers take queue writes: a refill replaces a literal\'s values on the host and in its device buffer, and refuses another length', async () => {
    const solver = newSolver(10, 6, 31);
    const own = (solver as unknown as SolverInternals).program.literals;
    const first = await compiled(solver, 2);
    const COPY_DST = 0x08;
    const STORAGE = 0x80;
    expect(first.made).toHaveLength(own.length);
    for (const b of first.made) expect(b.usage).toBe(STORAGE | COPY_DST);
    expect(canRefillSharedLiterals(own)).toBe(true);
    const weights = own[1];
    const fresh = Float32Array.from((weights.value as unknown as Float32Array), (v, i) => v + 1 + (i % 3));
    const writes = device.written.length;
    refillSharedLiteral(weights, fresh);
    expect(Array.from(weights.value as unknown as Float32Array)).toEqual(Array.from(fresh));
    const written = device.written.slice(writes);
    expect(written).toHaveLength(1);
    // The buffer that held the old weights now gets the new ones.
    expect(first.made).toContain(written[0].buffer);
    expect(Array.from(new Float32Array(written[0].data))).toEqual(Array.from(fresh));
    expect(() => refillSharedLiteral(weights, new Float32Array(3))).toThrow(/expected \d+ values, got 3/);
    // A solver whose context has sharing off registers none: its literals cannot be refilled.
    const unshared = newSolver(10, 6, 31, false);
    expect(canRefillSharedLiterals((unshared as unknown as SolverInternals).program.literals)).toBe(false);
    unshared.dispose();
    const stranger = new Input(new Float32Array(4) as unknown as number[], [4]);
    expect(canRefillSharedLiterals([stranger])).toBe(false);
    first.executor.destroy();
    solver.dispose();
  });

  test('a literal filled from a device buffer: its buffer made at once, unmapped, and the source copied in; no compile fills it from the host', async () => {
    const solver = newSolver(10, 6, 32);
    const own = (solver as unknown as SolverInternals).program.literals;
    const data = own[0];
    const bytes = 4 * (data.value as unknown as Float32Array).length;
    const source = { buffer: { name: 'codes' }, bytes };
    expect(canFillSharedLiteralOnDevice(data)).toBe(true);
    const copies = device.copies.length;
    const buffers = device.buffers.length;
    fillSharedLiteralOnDevice(data, device, source);
    // No buffer of it on the device yet: one made now as gpu.js sizes a literal's, unmapped and writable, the source copied into it.
    const made = device.buffers.slice(buffers);
    expect(made.map((b) => [b.size, b.usage, b.mappedAtCreation])).toEqual([[bytes, 0x80 | 0x08, false]]);
    const madeCopies = device.copies.slice(copies);
    expect(madeCopies).toEqual([{ source: source.buffer, sourceOffset: 0, target: made[0], targetOffset: 0, bytes }]);
    expect(canRefillSharedLiterals(own)).toBe(true);
    // The compile binds it: it makes and fills the other literals' buffers only, and copies nothing.
    const first = await compiled(solver, 2);
    expect(first.made).toHaveLength(own.length - 1);
    expect(device.copies.length).toBe(copies + 1);
    const bound = (first.executor as unknown as { _literalBuffers: Map<unknown, { buffer: unknown; dims: number[] }> })._literalBuffers.get(data);
    expect(bound?.buffer).toBe(made[0]);
    expect(bound?.dims).toEqual([...(data.size as number[]), 1, 1].slice(0, 3));
    // A new source is copied at once into the buffer made; a plan compiled later copies nothing.
    const next = { buffer: { name: 'codes 2' }, bytes };
    fillSharedLiteralOnDevice(data, device, next);
    expect(device.copies.slice(copies + 1)).toEqual([{ ...madeCopies[0], source: next.buffer }]);
    const later = await compiled(solver, 3);
    expect(device.copies.length).toBe(copies + 2);
    const stranger = new Input(new Float32Array(4) as unknown as number[], [4]);
    expect(canFillSharedLiteralOnDevice(stranger)).toBe(false);
    expect(() => fillSharedLiteralOnDevice(stranger, device, next)).toThrow(/not shared/);
    const unshared = newSolver(10, 6, 32, false);
    expect(canFillSharedLiteralOnDevice((unshared as unknown as SolverInternals).program.literals[0])).toBe(false);
    unshared.dispose();
    first.executor.destroy();
    later.executor.destroy();
    solver.dispose();
  });

  test('with the context\'s sharing off, every plan makes a buffer per seat and destroys it with its executor, as gpu.js does', async () => {
    const solver = newSolver(8, 6, 9, false);
    const seats = literalSeats(tracedPlan(solver, 2).plan!).length;
    try {
      for (const rounds of [2, 3]) {
        const p = await compiled(solver, rounds);
        expect(p.made).toHaveLength(seats);
        p.executor.destroy();
        expect(p.made.every((b) => b.destroyed === 1)).toBe(true);
      }
    } finally {
      solver.dispose();
    }
  });
});

describe('the solver with shared literals, on gpu.js\'s cpu backend', () => {
  test('random energies: the same labels and energies with sharing on and off, and BK\'s', async () => {
    const contexts = { on: await createGpuContext('cpu'), off: await createGpuContext('cpu', { sharedLiterals: false }) };
    try {
      const rng = seededRandom(21);
      for (let t = 0; t < 3; t++) {
        const W = 5 + Math.floor(rng() * 8);
        const H = 4 + Math.floor(rng() * 6);
        const energy = randomEnergy(rng, W, H, 4, t % 2 === 0 ? 'linear' : 'potts');
        const init = randomLabels(rng, W * H, 4);
        const ref = await alphaExpansion(energy, init, new GraphMoveSolver(energy, new BoykovKolmogorovSolver(), 'reversed'), { cycles: 2 });
        for (const ctx of [contexts.on, contexts.off]) {
          const solver = new GpuMoveSolver(ctx, energy, { variant: 'reversed', iterationsPerRound: 8, initialRounds: 2 });
          const res = await alphaExpansion(energy, init, solver, { cycles: 2 });
          solver.dispose();
          expect(res.cycles.map((c) => c.energy.total)).toEqual(ref.cycles.map((c) => c.energy.total));
          expect(Array.from(res.labels)).toEqual(Array.from(ref.labels));
        }
      }
    } finally {
      contexts.on.destroy();
      contexts.off.destroy();
    }
  });
});
