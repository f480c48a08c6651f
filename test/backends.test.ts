import { FallbackMoveSolver, createMoveSolver } from '../stereo/backends';
import { GraphMoveSolver, type MoveResult, type MoveSolver } from '../expansion/moveSolver';
import { alphaExpansion } from '../expansion/alphaExpansion';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { BACKENDS, fallbackFor, placeBackend, type FallbackCause } from '../gpu/runtime/backends';
import { generateSyntheticScene } from '../data/synthetic';
import { buildStereoEnergy } from '../costs';
import { isWebGpuAvailable } from '../gpu/runtime/context';
import { volumeOf } from '../data/energy';
import { InputError, optionError, VerificationError } from '../data/errors';
import { costOptions, costsLeftToDevice, match, resolveParams, startingLabels } from '../stereo/match';
import { wtaInit } from '../costs';

const scene = generateSyntheticScene({ width: 48, height: 36, ndisp: 8, seed: 3 });
const energy = buildStereoEnergy(scene.left, scene.right, { ndisp: 8, lambda: 20, smoothness: 'linear', truncation: 2 });
const bk = (): MoveSolver => new GraphMoveSolver(energy, new BoykovKolmogorovSolver(), 'reversed');

/** A "device" that solves like BK but dies at its n-th move, after scribbling over the labels. */
class DyingDevice implements MoveSolver {
  readonly backend = 'test-device';
  readonly device = 'a device that fails';
  private calls = 0;
  private readonly inner = bk();
  /** Fails at call `dieAt` with `error` (a message: a device failure; or the typed error a solver throws). */
  constructor(private readonly dieAt: number, private readonly error: string | Error) {}
  async move(alpha: number, labels: Uint16Array): Promise<MoveResult> {
    if (++this.calls === this.dieAt) {
      labels.fill(7);
      throw typeof this.error === 'string' ? new Error(this.error) : this.error;
    }
    return this.inner.move(alpha, labels);
  }
}

describe("'auto' falls back to BK when the device fails mid-run", () => {
  test('the run completes on BK from the last completed move, with the same result as BK alone, and says why', async () => {
    const init = new Uint16Array(48 * 36);
    const reasons: string[] = [];
    const solver = new FallbackMoveSolver(energy, new DyingDevice(5, 'device lost'), bk, (r) => reasons.push(r));
    const withFailure = await alphaExpansion(energy, init, solver, { cycles: 2 });
    const reference = await alphaExpansion(energy, init, bk(), { cycles: 2 });
    expect(Array.from(withFailure.labels)).toEqual(Array.from(reference.labels));
    expect(withFailure.finalEnergy).toEqual(reference.finalEnergy);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/the GPU failed during α=\d+ \(device lost\); continuing on BK/);
    expect(solver.backend).toMatch(/after a device failure/);
  });

  test('a --verify difference is never swallowed', async () => {
    const solver = new FallbackMoveSolver(energy, new DyingDevice(2, new VerificationError('verify: cut 2: mismatch')), bk);
    await expect(alphaExpansion(energy, new Uint16Array(48 * 36), solver, { cycles: 1 })).rejects.toThrow(/^verify: cut 2: mismatch$/);
  });
});

test("without a GPU, 'auto' runs BK and says why; 'gpu' is a clear error", async () => {
  if (await isWebGpuAvailable()) return; // this machine has a GPU: the no-GPU behaviour cannot be observed here
  const reasons: string[] = [];
  const s = await createMoveSolver(energy, { backend: 'auto', graph: 'reversed', verify: false, onFallback: (r) => reasons.push(r) });
  expect(s.backend).toBe('bk');
  expect(reasons[0]).toMatch(/no WebGPU adapter answered/);
  await expect(createMoveSolver(energy, { backend: 'gpu', graph: 'reversed', verify: false })).rejects.toThrow(/WebGPU requested but unavailable/);
});

describe('costs on demand (no cost volume)', () => {
  test('the device kernels computing costs per label from the images give BK-on-the-volume energies and labels', async () => {
    const small = generateSyntheticScene({ width: 40, height: 30, ndisp: 6, seed: 9 });
    const onDemand = await match(small.left, small.right, { ndisp: 6, backend: 'gpujs-cpu', costs: 'on-demand', cycles: 2 });
    const volume = await match(small.left, small.right, { ndisp: 6, backend: 'bk', costs: 'volume', cycles: 2 });
    expect(onDemand.backend).toMatch(/webasm/);
    expect(onDemand.initialEnergy).toEqual(volume.initialEnergy);
    expect(onDemand.cycles.map((c) => c.energy.total)).toEqual(volume.cycles.map((c) => c.energy.total));
    expect(Array.from(onDemand.disparity)).toEqual(Array.from(volume.disparity));
  }, 300_000);

  test('BK cannot run without the volume: a clear error naming costs, before any work', async () => {
    const small = generateSyntheticScene({ width: 40, height: 30, ndisp: 6, seed: 9 });
    await expect(match(small.left, small.right, { ndisp: 6, backend: 'bk', costs: 'on-demand' })).rejects.toThrow(/^match: costs: got 'on-demand' \(a string\), expected 'auto' or 'volume' with backend 'bk' \(only the device backends compute costs per label\)$/);
    await expect(match(small.left, small.right, { ndisp: 6, backend: 'bk', costs: 'sometimes' as never })).rejects.toThrow(/^match: costs: got 'sometimes' \(a string\), expected one of 'auto', 'volume', 'on-demand'$/);
  });
});

describe('costs left to the device (--costs auto with the moves on a GPU)', () => {
  test('only with --costs auto, the gpu backend (or auto with an adapter), a metric smoothness term and no --verify', async () => {
    const p = resolveParams({});
    const at = Object.fromEntries(await Promise.all(BACKENDS.map(async (b) => [b, await placeBackend(b)] as const)));
    expect(costsLeftToDevice(p, 8, at['gpu'], false)).toBe(true);
    expect(costsLeftToDevice(p, 8, at['auto'], false)).toBe(await isWebGpuAvailable());
    expect(costsLeftToDevice(p, 8, at['bk'], false)).toBe(false);
    expect(costsLeftToDevice(p, 8, at['gpujs-cpu'], false)).toBe(false);
    expect(costsLeftToDevice(p, 8, at['gpu'], true)).toBe(false);
    expect(costsLeftToDevice(resolveParams({ costs: 'volume' }), 8, at['gpu'], false)).toBe(false);
    expect(costsLeftToDevice(resolveParams({ costs: 'on-demand' }), 8, at['gpu'], false)).toBe(false);
    // Quadratic truncated at 3: V(0,2) = min(4, 3) = 3 > V(0,1) + V(1,2) = 2, not a metric (its graphs are built on the host).
    expect(costsLeftToDevice(resolveParams({ smoothness: 'quadratic', truncation: 3 }), 8, at['gpu'], false)).toBe(false);
    expect(costsLeftToDevice(resolveParams({ smoothness: 'potts' }), 8, at['gpu'], false)).toBe(true);
  });

  test('a host solver taking over builds the volume in place: BK then gives the energies and labels of the volume run', async () => {
    const onDemand = buildStereoEnergy(scene.left, scene.right, { ndisp: 8, lambda: 20, smoothness: 'linear', truncation: 2, onDemand: true });
    expect(onDemand.data.kind).toBe('images');
    // A volume energy needs nothing; an energy without one gets the images, and the builder only when leaving the costs was a choice.
    expect(costOptions(energy, true)).toEqual({});
    expect(Object.keys(costOptions(onDemand, false))).toEqual([]);
    // Without the builder a host solver is refused, in the library's names.
    await expect(createMoveSolver(onDemand, { backend: 'bk', graph: 'reversed', verify: false })).rejects.toThrow(/^createMoveSolver: the 48×36×8 energy has no cost volume \(its costs are computed per label\), and backend 'bk' solves here on the host, which reads a volume; use backend 'gpu'[^-]*$/);
    const options = costOptions(onDemand, true);
    expect(Object.keys(options)).toEqual(['buildVolume']);
    const reasons: string[] = [];
    const solver = await createMoveSolver(onDemand, { backend: 'bk', graph: 'reversed', verify: false, onFallback: (r) => reasons.push(r), ...options });
    expect(solver.backend).toBe('bk');
    expect(Array.from(volumeOf(onDemand))).toEqual(Array.from(volumeOf(energy)));
    const init = wtaInit(volumeOf(energy), 48, 36, 8, 5);
    const got = await alphaExpansion(onDemand, init, solver, { cycles: 2 });
    const reference = await alphaExpansion(energy, init, bk(), { cycles: 2 });
    expect(got.cycles.map((c) => c.energy.total)).toEqual(reference.cycles.map((c) => c.energy.total));
    expect(Array.from(got.labels)).toEqual(Array.from(reference.labels));
  });

  test("'auto' on a device whose WTA fails: BK takes over and the host computes the WTA; a bad window is the caller's error", async () => {
    class WtaFailing extends DyingDevice {
      async initialWta(window: number): Promise<Uint16Array | undefined> {
        if (window % 2 === 0) throw optionError('range', 'WTA', 'window', window, 'an odd integer ≥ 1');
        throw new Error('device lost');
      }
    }
    const reasons: string[] = [];
    const solver = new FallbackMoveSolver(energy, new WtaFailing(1000, 'unused'), bk, (r) => reasons.push(r));
    await expect(solver.initialWta(4)).rejects.toThrow(/^WTA: window: got 4, expected an odd integer ≥ 1$/);
    expect(reasons).toEqual([]);
    expect(await solver.initialWta(5)).toBeUndefined();
    expect(reasons).toEqual(['the GPU failed during the WTA initial labeling (device lost); continuing on BK']);
    expect(solver.backend).toMatch(/^bk \(after a device failure\)$/);
    expect(await solver.initialWta(5)).toBeUndefined();
  });

  test("startingLabels takes the solver's WTA when it gives one, the host's when it gives none, and never asks for a given map or init zero", async () => {
    const p = resolveParams({ window: 5 });
    const host = wtaInit(volumeOf(energy), 48, 36, 8, 5);
    const asked: number[] = [];
    const offering = (labels: Uint16Array | undefined): MoveSolver => Object.assign(bk(), { initialWta: async (w: number) => { asked.push(w); return labels; } });
    const mark = new Uint16Array(48 * 36).fill(3);
    expect(await startingLabels(energy, p, offering(mark))).toBe(mark);
    expect(Array.from(await startingLabels(energy, p, offering(undefined)))).toEqual(Array.from(host));
    expect(Array.from(await startingLabels(energy, p, bk()))).toEqual(Array.from(host));
    expect(asked).toEqual([5, 5]);
    const given = new Uint16Array(48 * 36).fill(2);
    expect(Array.from(await startingLabels(energy, p, offering(mark), given))).toEqual(Array.from(given));
    expect(Array.from(await startingLabels(energy, resolveParams({ init: 'zero' }), offering(mark)))).toEqual(Array.from(new Uint16Array(48 * 36)));
    expect(asked).toEqual([5, 5]);
  });

  test('match() reports the solver setup apart: costs, setup, init and moves add up to the total', async () => {
    // One view: the left–right check adds its own time (times.checkMs).
    const r = await match(scene.left, scene.right, { ndisp: 8, backend: 'bk', cycles: 1, lrCheck: false });
    const t = r.times;
    expect(t.setupMs).toBeGreaterThanOrEqual(0);
    expect(t.costsMs + t.setupMs + t.initMs + t.expansionMs).toBeCloseTo(t.totalMs, 6);
  });
});

describe('the fallback rule (gpu/runtime/backends.ts fallbackFor)', () => {
  test('auto goes to BK on every cause; a named backend keeps its kernels per graph where they can run and otherwise fails; one graph beyond f32 goes to BK everywhere', () => {
    const causes: FallbackCause[] = [
      { kind: 'no-adapter' }, { kind: 'not-metric', smoothness: 'quadratic' }, { kind: 'f32-energy', message: 'raw costs up to 1e9 exceed 2^24' },
      { kind: 'f32-graph' }, { kind: 'device-failed', during: 'during α=3', message: 'device lost' },
    ];
    const table = Object.fromEntries(BACKENDS.filter((b) => b !== 'bk').map((b) => [b, causes.map((c) => fallbackFor(b, c).to)]));
    expect(table).toEqual({
      auto: ['bk', 'bk', 'bk', 'bk-graph', 'bk'],
      gpu: ['fail', 'graphs', 'graphs', 'bk-graph', 'fail'],
      'gpujs-cpu': ['fail', 'graphs', 'graphs', 'bk-graph', 'fail'],
    });
    // Each reason names its cause.
    expect(fallbackFor('auto', causes[1]).reason).toBe('the quadratic smoothness term is not a metric; using BK');
    expect(fallbackFor('gpu', causes[2]).reason).toMatch(/^raw costs up to 1e9 exceed 2\^24: move graphs built on the CPU/);
    expect(fallbackFor('auto', causes[4]).reason).toBe('the GPU failed during α=3 (device lost); continuing on BK');
  });

  test('a named backend given a non-metric energy says so and solves each move graph on the host, with BK\'s labels', async () => {
    const e = buildStereoEnergy(scene.left, scene.right, { ndisp: 8, lambda: 20, smoothness: 'quadratic', truncation: 3 });
    const reasons: string[] = [];
    const solver = await createMoveSolver(e, { backend: 'gpujs-cpu', graph: 'reversed', verify: false, onFallback: (r) => reasons.push(r) });
    try {
      expect(reasons).toEqual(['the quadratic smoothness term is not a metric: move graphs built on the CPU, each solved by push-relabel']);
      const init = wtaInit(volumeOf(e), 48, 36, 8, 5);
      const got = await alphaExpansion(e, init, solver, { cycles: 1 });
      const ref = await alphaExpansion(e, init, new GraphMoveSolver(e, new BoykovKolmogorovSolver(), 'reversed'), { cycles: 1 });
      expect(got.cycles.map((c) => c.energy.total)).toEqual(ref.cycles.map((c) => c.energy.total));
    } finally {
      solver.dispose?.();
    }
  });
});
