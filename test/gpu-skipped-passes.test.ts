/**
 * Passes skipped once their gate holds (graphcut/gpuSkippedPasses.ts).
 * The rules are checked on small plans and, against a simulation of what a
 * skipped pass leaves behind, on random ones; the recording on real solver
 * plans compiled by gpu.js's own executor on a stand-in WebGPU device (CI
 * has no GPU); and what the solver's kernels read, on gpu.js's cpu backend
 * with every gated skippable pass returning a stand-in for leftovers (emulation), against BK.
 * That the GPU skips the same passes is checked there (--verify, equal
 * energies: BENCHMARKS.md).
 */
import { GPU, Input, type IGPUKernelSettings } from 'gpu.js';
import { alphaExpansion } from '../expansion/alphaExpansion';
import { MOVE_DONE_GATE } from '../expansion/gpuMoveKernels';
import { GpuMoveSolver } from '../expansion/gpuMoveSolver';
import { GraphMoveSolver } from '../expansion/moveSolver';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { createGpuContext } from '../graphcut/gpuBackend';
import { callInOnePass, installOnePassCalls, type FusedExecutor } from '../graphcut/gpuOnePassCalls';
import { analyseSkips, countsWriterSource, roleOf, SKIPPED_VALUE, skippedPasses, type PlanStepLike, type SkipRole } from '../graphcut/gpuSkippedPasses';
import { gatedKernel, UNCHANGED_STATE } from '../graphcut/pushRelabelKernels';
import { createRng } from '../graphcut/randomGraphs';
import { randomEnergy, randomLabels } from './randomEnergy';
import { RecordingDevice, useStandInDevice } from './recordingDevice';

type Arg = number | 'arg';
const step = (kernel: number, ...args: Arg[]): PlanStepLike => ({ kernel, argBindings: args.map((a) => (a === 'arg' ? { source: 'pipelineArg' } : { source: 'step', step: a })) });
const PLAIN = 0;
const SKIP = 1;
const FOLLOW = 2;
const AWARE = 3;
const SKIP_OTHER = 4;
const ROLES: Array<SkipRole | undefined> = [undefined, { kind: 'skippable', condition: 'g[0] > 0.0' }, { kind: 'follower' }, { kind: 'gate-aware' }, { kind: 'skippable', condition: 'g[1] > 0.0' }];

/** Two rounds of a move, as the solver records them: passes on the tally, a check's reduction, the tally and the round's merge (gate-aware). */
function twoRounds(): PlanStepLike[] {
  return [
    step(PLAIN, 'arg'), // 0: the move's start (a gate)
    step(SKIP, 'arg', 0), // 1: a pass
    step(SKIP, 1, 0), // 2: a pass
    step(FOLLOW, 2), // 3: a reduction
    step(AWARE, 3, 0), // 4: the tally (a gate)
    step(AWARE, 2, 'arg', 0), // 5: the merge, carrying the state the round began with
    step(SKIP, 5, 4), // 6
    step(AWARE, 6, 5, 4), // 7
  ];
}

describe('which passes may be skipped', () => {
  test('a plan as the solver records it: every gated pass and its reduction on its gate, the tallies and merges run', () => {
    const a = analyseSkips(twoRounds(), ROLES, [7, 4]);
    expect('refused' in a).toBe(false);
    if ('refused' in a) return;
    expect(Array.from(a.gateOf)).toEqual([-1, 0, 0, 0, -1, -1, 4, -1]);
    expect([...a.conditions.entries()]).toEqual([[0, 'g[0] > 0.0'], [4, 'g[0] > 0.0']]);
  });

  test('refused, with a reason, when a step that runs reads a skipped output it does not ignore', () => {
    const cases: Array<[string, PlanStepLike[], number[], RegExp]> = [
      ['a plain reader', [...twoRounds(), step(PLAIN, 2)], [7], /step 8 runs and reads step 2/],
      ['a gate-aware reader on another gate', [...twoRounds(), step(AWARE, 6, 0)], [7], /step 8 runs and reads step 6/],
      ['a result', twoRounds(), [7, 2], /returns step 2/],
      ['two conditions on one gate', [...twoRounds(), step(SKIP_OTHER, 5, 4)], [7], /second condition/],
      ['a skipped gate', [step(PLAIN, 'arg'), step(SKIP, 'arg', 0), step(SKIP, 'arg', 1)], [], /gate step 1 is itself skipped/],
      // A reduction of outputs skipped on two gates is not skipped, so it reads them while it runs.
      ['a reduction over two gates', [step(PLAIN, 'arg'), step(PLAIN, 'arg'), step(SKIP, 'arg', 0), step(SKIP, 'arg', 1), step(FOLLOW, 2, 3)], [], /step 4 runs and reads step 2/],
    ];
    for (const [, steps, results, reason] of cases) {
      const a = analyseSkips(steps, ROLES, results);
      expect('refused' in a ? a.refused : 'accepted').toMatch(reason);
    }
  });

  test('a reduction after its gate\'s last reader is not skipped (its gate\'s counts may be rewritten by then)', () => {
    // 0: gate; 1: pass; 2: a gate-aware reader of the gate, its last; 3: a reduction of 1.
    const a = analyseSkips([step(PLAIN, 'arg'), step(SKIP, 'arg', 0), step(AWARE, 1, 0), step(FOLLOW, 1)], ROLES, []);
    expect('refused' in a ? a.refused : 'accepted').toMatch(/step 3 runs and reads step 1/);
  });

  test('500 random plans: whenever the analysis accepts, no result and no gate ever holds a skipped pass\'s leftovers, whichever gates hold', () => {
    const rng = createRng(5);
    const pick = (k: number): number => Math.floor(rng() * k);
    let accepted = 0;
    let skipping = 0;
    for (let trial = 0; trial < 500; trial++) {
      const n = 2 + pick(14);
      const steps: PlanStepLike[] = [];
      for (let i = 0; i < n; i++) {
        const kernel = pick(ROLES.length);
        const args: Arg[] = Array.from({ length: 1 + pick(3) }, () => (i === 0 || rng() < 0.2 ? 'arg' : pick(i)));
        steps.push(step(kernel, ...args));
      }
      const results = Array.from({ length: pick(3) }, () => pick(n));
      const a = analyseSkips(steps, ROLES, results);
      if ('refused' in a) continue;
      accepted++;
      if (a.gateOf.some((g) => g >= 0)) skipping++;
      for (let world = 0; world < 8; world++) {
        const holds = new Map([...a.conditions.keys()].map((g) => [g, rng() < 0.5]));
        // Whether each step's output is leftovers: skipped, or computed from leftovers it does not ignore.
        const stale: boolean[] = [];
        steps.forEach((s, i) => {
          const g = a.gateOf[i];
          if (g >= 0 && holds.get(g)) { stale.push(true); return; }
          const role = ROLES[s.kernel];
          const last = s.argBindings[s.argBindings.length - 1];
          const gate = last?.source === 'step' ? last.step! : -1;
          // A gate-aware kernel whose gate holds reads nothing but the gate; a gate that is a step output holds when its gate step's condition does (the simulation reads the skip decision the writer made).
          const ignoring = role?.kind === 'gate-aware' && gate >= 0 && holds.get(gate) === true;
          stale.push(s.argBindings.some((b) => b.source === 'step' && (!ignoring || b.step === gate) && stale[b.step!]));
        });
        for (const r of results) expect(stale[r]).toBe(false);
        for (const g of a.conditions.keys()) expect(stale[g]).toBe(false);
      }
    }
    expect(accepted).toBeGreaterThan(50);
    expect(skipping).toBeGreaterThan(10);
  });

  test('the counts writer reads the gate and zeroes x where the condition holds', () => {
    const code = countsWriterSource('g[2] == 0.0 || g[0] > 0.0');
    expect(code).toContain('let skip = g[2] == 0.0 || g[0] > 0.0;');
    expect(code).toContain('counts[k] = select(shapes[k], 0u, skip);');
  });
});

interface SolverInternals { plan(m: number, r: number, b: number, v: boolean): { pipe: { pipeline: { plan: unknown; _buildPlan(): unknown } } }; bfs: number; flowsInOut: boolean; W: number; H: number }
interface Executor extends FusedExecutor { _compile(args: unknown[]): Promise<void> }

describe('recording on a stand-in WebGPU device, real solver plans', () => {
  const device = new RecordingDevice();
  useStandInDevice(device);
  // Its destroy frees the skips' buffers.
  beforeAll(() => installOnePassCalls());
  const ctx = (): ConstructorParameters<typeof GpuMoveSolver>[0] => ({ gpu: new GPU({ mode: 'webgpu' }), mode: 'webgpu' as const, device: 'stand-in', deviceErrors: [], destroy: () => undefined });

  /** Compiles a plan of `rounds` rounds (and `moves` moves) with gpu.js's executor, makes one call and returns what it encoded. */
  async function recordedCall(solver: GpuMoveSolver, moves: number, rounds: number): Promise<{ ex: Executor; encoded: RecordingDevice['encoded']; steps: number; kernelOfStep: SkipRole[] }> {
    const s = solver as unknown as SolverInternals;
    const pipeline = s.plan(moves, rounds, s.bfs, false).pipe.pipeline;
    pipeline.plan = pipeline._buildPlan();
    const args: unknown[] = [new Input(new Float32Array(s.W * s.H) as unknown as number[], [s.W, s.H]), new Input(new Float32Array(moves) as unknown as number[], [moves])];
    if (s.flowsInOut) args.push(new Input(new Float32Array(2 * s.W * s.H) as unknown as number[], [s.W, s.H, 2]));
    const { WebGPUPipelineExecutor } = require('gpu.js/src/backend/web-gpu/pipeline-executor.js') as { WebGPUPipelineExecutor: new (p: unknown, plan: unknown) => Executor };
    const ex = new WebGPUPipelineExecutor(pipeline, pipeline.plan);
    await ex._compile(args);
    const from = device.encoded.length;
    await callInOnePass(ex, args, (a, t) => t.set(a as Float32Array));
    const plan = ex.plan!;
    return { ex, encoded: device.encoded.slice(from), steps: plan.steps.length, kernelOfStep: plan.steps.map((st) => roleOf(plan.kernels[st.kernel].shortcut)!) };
  }

  test('every gated pass and check reduction is dispatched from the counts, one writer runs after each gate step that precedes them, the rest as before', async () => {
    for (const [W, H, moves, rounds, seed] of [[9, 7, 1, 1, 1], [16, 5, 1, 3, 2], [12, 12, 3, 2, 3]]) {
      const solver = new GpuMoveSolver(ctx(), randomEnergy(createRng(seed), W, H, 5, 'linear'), { variant: 'reversed', movesPerCall: moves, warmStart: false });
      const refused = skippedPasses.refused;
      const { ex, encoded, steps, kernelOfStep } = await recordedCall(solver, moves, rounds);
      expect(skippedPasses.refused).toBe(refused);
      const writers = encoded.filter((e) => e.code.includes('counts[k] = select('));
      const indirect = encoded.filter((e) => e.kind === 'indirect');
      // Gates: each move's start and first tally, and every tally but the move's last.
      expect(writers).toHaveLength(moves * (rounds + 1));
      expect(encoded.length - writers.length).toBe(steps);
      expect(indirect.length).toBe(kernelOfStep.filter((r) => r?.kind === 'skippable' || r?.kind === 'follower').length);
      expect(indirect.length).toBeGreaterThan(steps / 2);
      // The first indirect dispatch follows a writer; every offset lies in the counts buffer, on a multiple of 4.
      expect(encoded.findIndex((e) => e.code.includes('counts[k] = select('))).toBeLessThan(encoded.findIndex((e) => e.kind === 'indirect'));
      const counts = device.buffers.find((b) => b === (indirect[0] as { buffer: unknown }).buffer)!;
      expect(counts.usage & 0x100).toBe(0x100);
      for (const e of indirect) {
        const offset = (e as { offset: number }).offset;
        expect(offset % 4).toBe(0);
        expect(offset + 12).toBeLessThanOrEqual(counts.size);
      }
      // No merge, tally, init or cut is ever skipped.
      expect(indirect.every((e) => !/return R\b|R\[/.test(e.code))).toBe(true);
      ex.destroy();
      expect(counts.destroyed).toBe(1);
      solver.dispose();
    }
  });

  test('with skipping off, every pass is dispatched directly, as before', async () => {
    const solver = new GpuMoveSolver(ctx(), randomEnergy(createRng(8), 10, 6, 4, 'potts'), { variant: 'classic' });
    skippedPasses.enabled = false;
    try {
      const { ex, encoded, steps } = await recordedCall(solver, 1, 2);
      expect(encoded).toHaveLength(steps);
      expect(encoded.every((e) => e.kind === 'direct')).toBe(true);
      ex.destroy();
    } finally {
      skippedPasses.enabled = true;
      solver.dispose();
    }
  });
});

describe('the solver\'s kernels never read a skipped pass\'s output (emulated on gpu.js\'s cpu backend)', () => {
  test('a gated skippable kernel under emulation returns the stand-in, a gate-aware one what it carries', async () => {
    const gpu = new GPU({ mode: 'cpu' });
    skippedPasses.emulate = true;
    try {
      const settings: IGPUKernelSettings = { output: [3, 2, 4], precision: 'single' };
      const shut = gatedKernel(gpu, `function (S) { return S[this.thread.z][this.thread.y][this.thread.x] + 1.0; }`, settings, MOVE_DONE_GATE, UNCHANGED_STATE);
      const carry = gatedKernel(gpu, `function (S, R) { return S[this.thread.z][this.thread.y][this.thread.x] + 1.0; }`, settings, MOVE_DONE_GATE, 'R[this.thread.z][this.thread.y][this.thread.x]', true);
      const S = new Input(new Float32Array(24).fill(2) as unknown as number[], [3, 2, 4]);
      const R = new Input(new Float32Array(24).fill(7) as unknown as number[], [3, 2, 4]);
      const done = [0, 0, 0, 0];
      const open = [0, 0, 1, 0];
      const flat = (o: unknown): number[] => (o as number[][][]).flatMap((p) => p.flatMap((r) => Array.from(r)));
      expect(flat(shut(S, done))).toEqual(new Array(24).fill(Number(SKIPPED_VALUE)));
      expect(flat(shut(S, open))).toEqual(new Array(24).fill(3));
      expect(flat(carry(S, R, done))).toEqual(new Array(24).fill(7));
    } finally {
      skippedPasses.emulate = false;
      gpu.destroy();
    }
  });

  test('random energies: BK\'s labels and energies with every gated pass returning leftovers, one move per call (fresh, warm, continued) and three chained', async () => {
    const ctx = await createGpuContext('cpu');
    const rng = createRng(31);
    // Calls whose move converged before their last round, so that later passes were gated (and read under emulation).
    let gatedCalls = 0;
    const solver0Gated = (calls: unknown[][]): number => calls.filter((c) => c[6] === true && (c[5] as number) < (c[0] as number)).length;
    try {
      for (let t = 0; t < 6; t++) {
        const W = 4 + Math.floor(rng() * 9);
        const H = 3 + Math.floor(rng() * 7);
        const L = 3 + (t % 3);
        const energy = randomEnergy(rng, W, H, L, t % 2 === 0 ? 'linear' : 'potts');
        const init = randomLabels(rng, W * H, L);
        const variant = t % 2 === 0 ? 'reversed' : 'classic';
        const ref = await alphaExpansion(energy, init, new GraphMoveSolver(energy, new BoykovKolmogorovSolver(), variant), { cycles: 2 });
        // One round at first: most moves end in later calls (continued), and the plans' later rounds are gated.
        const options = t < 3 ? { iterationsPerRound: 2, initialRounds: 1 } : { iterationsPerRound: 8, initialRounds: 3, movesPerCall: 3 };
        // The same calls with and without emulation: a move is robust to a tally that reads leftovers (it would only fail its checks and continue), its calls are not.
        const calls: unknown[][][] = [];
        for (const emulate of [true, false]) {
          skippedPasses.emulate = emulate;
          let solver: GpuMoveSolver;
          try {
            solver = new GpuMoveSolver(ctx, energy, { variant, ...options });
          } finally {
            skippedPasses.emulate = false;
          }
          const res = await alphaExpansion(energy, init, solver, { cycles: 2 });
          solver.dispose();
          expect(res.cycles.map((c) => c.energy.total)).toEqual(ref.cycles.map((c) => c.energy.total));
          expect(Array.from(res.labels)).toEqual(Array.from(ref.labels));
          calls.push(solver.calls.map((c) => [c.rounds, c.bfs, c.moves, c.resumed, c.warm, c.failedChecks, c.converged]));
        }
        expect(calls[0]).toEqual(calls[1]);
        gatedCalls += solver0Gated(calls[1]);
      }
      expect(gatedCalls).toBeGreaterThanOrEqual(10);
    } finally {
      ctx.destroy();
    }
  });
});
