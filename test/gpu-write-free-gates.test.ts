/**
 * Gated passes that write nothing once their gate holds
 * (graphcut/gpuWriteFreeGates.ts). The rules are checked on small plans
 * and, against a simulation of what a pass that wrote nothing leaves
 * behind, on random ones; the WGSL of real solver plans built by gpu.js on
 * a stand-in WebGPU device (CI has no GPU); and, on gpu.js's CPU backend,
 * where a gated pass writes its marker value, that the solver's results
 * and calls are those of BK and of copying gates. That the GPU computes
 * the same is checked there (--verify, equal energies: BENCHMARKS.md).
 */
import { GPU, Input, type IGPUKernelSettings } from 'gpu.js';
import { alphaExpansion } from '../expansion/alphaExpansion';
import { MOVE_DONE_GATE } from '../expansion/gpuMoveKernels';
import { GpuMoveSolver } from '../expansion/gpuMoveSolver';
import { GraphMoveSolver } from '../expansion/moveSolver';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { createGpuContext } from '../graphcut/gpuBackend';
import { analyseGates, installWriteFreeGates, writeFreeGates, WRITE_FREE_VALUE, withoutMarkerWrites, type GateRole, type PlanStepLike } from '../graphcut/gpuWriteFreeGates';
import { gatedKernel, UNCHANGED_STATE } from '../graphcut/pushRelabelKernels';
import { createRng } from '../graphcut/randomGraphs';
import { randomEnergy, randomLabels } from './randomEnergy';
import { RecordingDevice, useStandInDevice } from './recordingDevice';

type Arg = number | 'arg';
const step = (kernel: number, ...args: Arg[]): PlanStepLike => ({ kernel, argBindings: args.map((a) => (a === 'arg' ? { source: 'pipelineArg', index: 0 } : { source: 'step', step: a })) });
const PLAIN = 0;
const FREE = 1;
const FOLLOW = 2;
const AWARE = 3;
const ROLES: Array<GateRole | undefined> = [undefined, { kind: 'write-free' }, { kind: 'follower' }, { kind: 'gate-aware' }];

/** Two rounds of a move, as the solver records them: passes on the tally, a check's reduction, the tally and the round's merge (gate-aware). */
function twoRounds(): PlanStepLike[] {
  return [
    step(PLAIN, 'arg'), // 0: the move's start (a gate)
    step(PLAIN, 'arg'), // 1: the state the move starts from
    step(FREE, 1, 0), // 2: a pass
    step(FREE, 2, 0), // 3: a pass
    step(FOLLOW, 3), // 4: a reduction
    step(AWARE, 4, 0), // 5: the tally (a gate)
    step(AWARE, 3, 1, 0), // 6: the merge, carrying the state the round began with
    step(FREE, 6, 5), // 7
    step(AWARE, 7, 6, 5), // 8
  ];
}

describe('which outputs a plan may read', () => {
  test('a plan as the solver records it: passes and reductions are leftovers on their gate, tallies and merges are not', () => {
    const a = analyseGates(twoRounds(), ROLES, [8, 5]);
    expect('refused' in a ? a.refused : a.leftoversOn).toEqual(['', '', 'step 0', 'step 0', 'step 0', '', '', 'step 5', '']);
  });

  test('refused, with a reason, when anything but a gate-aware kernel on the same gate reads leftovers', () => {
    const cases: Array<[PlanStepLike[], number[], RegExp]> = [
      [[...twoRounds(), step(PLAIN, 3)], [8], /step 9 reads step 3/],
      [[...twoRounds(), step(AWARE, 7, 0)], [8], /step 9 reads step 7/],
      [twoRounds(), [8, 3], /returns step 3/],
      [[...twoRounds(), step(FREE, 3, 5)], [8], /step 9 reads step 3/],
      [[step(PLAIN, 'arg'), step(FREE, 'arg', 0), step(FREE, 'arg', 1)], [], /gated on leftovers/],
      [[step(PLAIN, 'arg'), step(FREE, 'arg', 0), step(AWARE, 'arg', 1)], [], /step 2 reads step 1/],
      [[step(PLAIN, 'arg'), step(PLAIN, 'arg'), step(FREE, 'arg', 0), step(FREE, 'arg', 1), step(FOLLOW, 2, 3)], [], /step 4 reads step 2/],
      // A pass gated on an argument is leftovers on that argument: a chain of them may not be read by a plain pass.
      [[step(FREE, 'arg', 'arg'), step(PLAIN, 0)], [], /step 1 reads step 0, whose output is leftovers while argument 0 holds/],
    ];
    for (const [steps, results, reason] of cases) {
      const a = analyseGates(steps, ROLES, results);
      expect('refused' in a ? a.refused : 'accepted').toMatch(reason);
    }
  });

  test('500 random plans: whenever the check accepts, no result and no gate ever holds leftovers, whichever gates hold', () => {
    const rng = createRng(5);
    const pick = (k: number): number => Math.floor(rng() * k);
    let accepted = 0;
    let withLeftovers = 0;
    for (let trial = 0; trial < 500; trial++) {
      const n = 2 + pick(14);
      const steps: PlanStepLike[] = [];
      for (let i = 0; i < n; i++) {
        const args: Arg[] = Array.from({ length: 1 + pick(3) }, () => (i === 0 || rng() < 0.2 ? 'arg' : pick(i)));
        steps.push(step(pick(ROLES.length), ...args));
      }
      const results = Array.from({ length: pick(3) }, () => pick(n));
      const a = analyseGates(steps, ROLES, results);
      if ('refused' in a) continue;
      accepted++;
      if (a.leftoversOn.some((g) => g !== '')) withLeftovers++;
      const gateOf = (s: PlanStepLike): string => {
        const last = s.argBindings[s.argBindings.length - 1];
        return last.source === 'step' ? `step ${last.step!}` : 'argument 0';
      };
      for (let world = 0; world < 8; world++) {
        const holds = new Map<string, boolean>();
        const held = (g: string): boolean => {
          if (!holds.has(g)) holds.set(g, rng() < 0.5);
          return holds.get(g)!;
        };
        // Whether each step's output is leftovers: a write-free pass whose gate holds, or a pass that reads leftovers it does not ignore.
        const stale: boolean[] = [];
        steps.forEach((s) => {
          const role = ROLES[s.kernel];
          const gated = (role?.kind === 'write-free' || role?.kind === 'gate-aware') && held(gateOf(s));
          if (role?.kind === 'write-free' && gated) { stale.push(true); return; }
          const last = s.argBindings[s.argBindings.length - 1];
          const readsOnlyGate = role?.kind === 'gate-aware' && gated;
          stale.push(s.argBindings.some((b) => b.source === 'step' && (!readsOnlyGate || b === last) && stale[b.step!]));
        });
        for (const r of results) expect(stale[r]).toBe(false);
        steps.forEach((s, i) => {
          const role = ROLES[s.kernel];
          const last = s.argBindings[s.argBindings.length - 1];
          if ((role?.kind === 'write-free' || role?.kind === 'gate-aware') && last.source === 'step') expect([i, stale[last.step!]]).toEqual([i, false]);
        });
      }
    }
    expect(accepted).toBeGreaterThan(50);
    expect(withLeftovers).toBeGreaterThan(10);
  });

  test('the WGSL rewrite drops exactly the marker\'s writes', () => {
    const wgsl = `if (g) {\nresult[data_index] = ${WRITE_FREE_VALUE};return;}\nresult[data_index] = x + ${WRITE_FREE_VALUE};return;\n`;
    expect(withoutMarkerWrites(wgsl)).toBe(`if (g) {\nreturn;}\nresult[data_index] = x + ${WRITE_FREE_VALUE};return;\n`);
  });
});

interface TracedPlan { steps: PlanStepLike[] }
interface SolverInternals { plan(m: number, r: number, b: number, v: boolean): { pipe: { pipeline: { plan: unknown; _buildPlan(): TracedPlan } } }; bfs: number; flowsInOut: boolean; W: number; H: number }
interface Executor { _compile(args: unknown[]): Promise<void>; destroy(): void }

const MARKER_WRITE = `result[data_index] = ${WRITE_FREE_VALUE};return;`;

describe('real solver plans built for WebGPU on a stand-in device', () => {
  const device = new RecordingDevice();
  useStandInDevice(device);
  beforeAll(() => installWriteFreeGates());
  const ctx = (): ConstructorParameters<typeof GpuMoveSolver>[0] => ({ gpu: new GPU({ mode: 'webgpu' }), mode: 'webgpu' as const, device: 'stand-in', deviceErrors: [], destroy: () => undefined });

  /** Traces (checked) and compiles a plan of the solver with gpu.js's executor; returns the WGSL of the pipelines it made. */
  async function compiledWgsl(solver: GpuMoveSolver, moves: number, rounds: number): Promise<string[]> {
    const s = solver as unknown as SolverInternals;
    const pipeline = s.plan(moves, rounds, s.bfs, false).pipe.pipeline;
    pipeline.plan = pipeline._buildPlan();
    const args: unknown[] = [new Input(new Float32Array(s.W * s.H) as unknown as number[], [s.W, s.H]), new Input(new Float32Array(moves) as unknown as number[], [moves])];
    if (s.flowsInOut) args.push(new Input(new Float32Array(2 * s.W * s.H) as unknown as number[], [s.W, s.H, 2]));
    const { WebGPUPipelineExecutor } = require('gpu.js/src/backend/web-gpu/pipeline-executor.js') as { WebGPUPipelineExecutor: new (p: unknown, plan: unknown) => Executor };
    const ex = new WebGPUPipelineExecutor(pipeline, pipeline.plan);
    const from = device.made.length;
    await ex._compile(args);
    ex.destroy();
    return device.made.slice(from).map((d) => (JSON.parse(d) as [string, unknown, string])[2]);
  }

  test('every plan shape passes the check when traced; the gated passes\' WGSL returns without writing, the merges still write what they carry', async () => {
    for (const [W, H, moves, rounds, seed, push] of [[9, 7, 1, 1, 1, 'sweep'], [16, 5, 1, 3, 2, 'split-sweep'], [12, 12, 3, 2, 3, 'lockstep']] as const) {
      const solver = new GpuMoveSolver(ctx(), randomEnergy(createRng(seed), W, H, 5, 'linear'), { variant: 'reversed', movesPerCall: moves, push });
      const checked = writeFreeGates.plansChecked;
      const rewrites = writeFreeGates.rewrites;
      const wgsl = await compiledWgsl(solver, moves, rounds);
      expect(writeFreeGates.plansChecked).toBe(checked + 1);
      expect(wgsl.length).toBeGreaterThan(5);
      expect(wgsl.some((c) => c.includes(MARKER_WRITE))).toBe(false);
      // The sweeps (or lockstep pass), the BFS start and scans, and the check's tiles.
      expect(writeFreeGates.rewrites - rewrites).toBeGreaterThanOrEqual(push === 'lockstep' ? 4 : 5);
      // The merges (one program per argument types) return what they carry when gated.
      expect(wgsl.filter((c) => /get_user_R\(/.test(c)).length).toBeGreaterThanOrEqual(1);
      solver.dispose();
    }
  });

  test('with the rewrite off, the gated passes write the marker', async () => {
    const solver = new GpuMoveSolver(ctx(), randomEnergy(createRng(8), 10, 6, 4, 'potts'), { variant: 'classic' });
    writeFreeGates.enabled = false;
    try {
      const wgsl = await compiledWgsl(solver, 1, 2);
      expect(wgsl.filter((c) => c.includes(MARKER_WRITE)).length).toBeGreaterThanOrEqual(5);
    } finally {
      writeFreeGates.enabled = true;
      solver.dispose();
    }
  });

  test('a plan that reads a write-free pass\'s output throws when traced, naming the step', () => {
    const gpu = new GPU({ mode: 'webgpu' });
    const settings: IGPUKernelSettings = { output: [4, 3], precision: 'single' };
    const pass = gatedKernel(gpu, `function (S) { return S[this.thread.y][this.thread.x] + 1.0; }`, settings, MOVE_DONE_GATE, 'S[this.thread.y][this.thread.x]');
    const pipe = gpu.createPipeline(function (S: unknown, G: unknown) { return pass(pass(S, G), G); }) as unknown as { pipeline: { _buildPlan(): unknown } };
    expect(() => pipe.pipeline._buildPlan()).toThrow(/gpu pipeline: the plan returns step 1, whose output is leftovers while argument 1 holds/);
    gpu.destroy();
  });
});

describe('the solver with write-free gates, on gpu.js\'s cpu backend', () => {
  test('a gated write-free kernel returns the marker, an open one computes, a gate-aware one returns what it carries', () => {
    const gpu = new GPU({ mode: 'cpu' });
    try {
      const settings: IGPUKernelSettings = { output: [3, 2, 4], precision: 'single' };
      const shut = gatedKernel(gpu, `function (S) { return S[this.thread.z][this.thread.y][this.thread.x] + 1.0; }`, settings, MOVE_DONE_GATE, UNCHANGED_STATE);
      const carry = gatedKernel(gpu, `function (S, R) { return S[this.thread.z][this.thread.y][this.thread.x] + 1.0; }`, settings, MOVE_DONE_GATE, 'R[this.thread.z][this.thread.y][this.thread.x]', true);
      const S = new Input(new Float32Array(24).fill(2) as unknown as number[], [3, 2, 4]);
      const R = new Input(new Float32Array(24).fill(7) as unknown as number[], [3, 2, 4]);
      const done = [0, 0, 0, 0];
      const open = [0, 0, 1, 0];
      const flat = (o: unknown): number[] => (o as number[][][]).flatMap((p) => p.flatMap((r) => Array.from(r)));
      expect(flat(shut(S, done))).toEqual(new Array(24).fill(Number(WRITE_FREE_VALUE)));
      expect(flat(shut(S, open))).toEqual(new Array(24).fill(3));
      expect(flat(carry(S, R, done))).toEqual(new Array(24).fill(7));
    } finally {
      gpu.destroy();
    }
  });

  test('random energies: BK\'s labels and energies, and the same calls as without the gate, one move per call (fresh, warm, continued) and three chained', async () => {
    const ctx = await createGpuContext('cpu');
    const rng = createRng(31);
    // Calls whose move converged before their last round, so that later passes were gated and left the marker.
    let gatedCalls = 0;
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
        // A tally that read a gated check would only make its move fail checks and continue: the results would hold, the calls would not.
        const calls: unknown[][][] = [];
        for (const gate of [true, false]) {
          const solver = new GpuMoveSolver(ctx, energy, { variant, gate, ...options });
          const res = await alphaExpansion(energy, init, solver, { cycles: 2 });
          solver.dispose();
          expect(res.cycles.map((c) => c.energy.total)).toEqual(ref.cycles.map((c) => c.energy.total));
          expect(Array.from(res.labels)).toEqual(Array.from(ref.labels));
          calls.push(solver.calls.map((c) => [c.rounds, c.bfs, c.moves, c.resumed, c.warm, c.failedChecks, c.converged]));
        }
        expect(calls[0]).toEqual(calls[1]);
        gatedCalls += calls[0].filter((c) => c[6] === true && (c[5] as number) < (c[0] as number)).length;
      }
      expect(gatedCalls).toBeGreaterThanOrEqual(10);
    } finally {
      ctx.destroy();
    }
  });
});
