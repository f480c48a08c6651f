import { FallbackMoveSolver, createMoveSolver } from '../stereo/backends';
import { GraphMoveSolver, type MoveResult, type MoveSolver } from '../expansion/moveSolver';
import { alphaExpansion } from '../expansion/alphaExpansion';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { generateSyntheticScene } from '../data/synthetic';
import { buildStereoEnergy } from '../costs';
import { isWebGpuAvailable } from '../graphcut/gpuBackend';
import { match } from '../stereo/match';

const scene = generateSyntheticScene({ width: 48, height: 36, ndisp: 8, seed: 3 });
const energy = buildStereoEnergy(scene.left, scene.right, { ndisp: 8, lambda: 20, smoothness: 'linear', truncation: 2 });
const bk = (): MoveSolver => new GraphMoveSolver(energy, new BoykovKolmogorovSolver(), 'reversed');

/** A "device" that solves like BK but dies at its n-th move, after scribbling over the labels. */
class DyingDevice implements MoveSolver {
  readonly backend = 'test-device';
  readonly device = 'a device that fails';
  private calls = 0;
  private readonly inner = bk();
  constructor(private readonly dieAt: number, private readonly message: string) {}
  async move(alpha: number, labels: Uint16Array): Promise<MoveResult> {
    if (++this.calls === this.dieAt) {
      labels.fill(7);
      throw new Error(this.message);
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
    const solver = new FallbackMoveSolver(energy, new DyingDevice(2, '--verify: cut 2: mismatch'), bk);
    await expect(alphaExpansion(energy, new Uint16Array(48 * 36), solver, { cycles: 1 })).rejects.toThrow(/--verify/);
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

  test('BK cannot run without the volume: a clear error naming --costs', async () => {
    const small = generateSyntheticScene({ width: 40, height: 30, ndisp: 6, seed: 9 });
    await expect(match(small.left, small.right, { ndisp: 6, backend: 'bk', costs: 'on-demand' })).rejects.toThrow(/--costs: .*only the GPU backend/);
    await expect(match(small.left, small.right, { ndisp: 6, backend: 'bk', costs: 'sometimes' as never })).rejects.toThrow(/--costs: unknown value/);
  });
});
