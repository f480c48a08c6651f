import { createHash } from 'crypto';
import { seededRandom } from '../data/random';
import { alphaExpansion } from '../expansion/alphaExpansion';
import { GraphMoveSolver } from '../expansion/moveSolver';
import { BoykovKolmogorovSolver } from '../graphcut/bk';
import { GpuMoveSolver } from '../gpu/move/gpuMoveSolver';
import { createGpuContext, type GpuContext } from '../gpu/runtime/context';
import { gpuJsInternal } from '../gpu/runtime/gpujs/internals';
import { kernelBuildCache } from '../gpu/runtime/gpujs/kernelBuildCache';
import { randomEnergy, randomLabels } from './support/randomEnergy';

/**
 * The webasm backend's modules assembled once per kernel and memory layout
 * (gpu/runtime/gpujs/webAssemblyModules.ts): a context with the cache hands
 * plans kept modules, and every module a plan gets is, byte for byte, the one
 * a context without the cache assembles for the same run.
 */
type Assembled = { bytes: Uint8Array };
const proto = gpuJsInternal<{ WebAssemblyKernel: { prototype: { _assembleModule(...a: unknown[]): Assembled; gpu?: unknown } } }>('web-assembly/kernel').WebAssemblyKernel.prototype;

let shared: GpuContext;
let alone: GpuContext;
beforeAll(async () => {
  shared = await createGpuContext('webasm');
  alone = await createGpuContext('webasm', { kernelBuildCache: false });
});
afterAll(() => {
  shared?.destroy();
  alone?.destroy();
});

test('random energies on both graphs: each context\'s plans get the same modules, the cached context mostly kept ones, and BK\'s labels and energies', async () => {
  expect(shared.adaptations?.adaptations.kernelBuildCache).toBe(true);
  const got = new Map<unknown, string[]>([[shared.gpu, []], [alone.gpu, []]]);
  const assemble = proto._assembleModule;
  const spy = jest.spyOn(proto, '_assembleModule').mockImplementation(function (this: { gpu?: unknown }, ...a: unknown[]) {
    const made = assemble.apply(this, a);
    got.get(this.gpu)?.push(createHash('sha256').update(made.bytes).digest('hex'));
    return made;
  });
  const hits = kernelBuildCache.assemblyHits;
  try {
    const rand = seededRandom(20261206);
    for (let trial = 0; trial < 6; trial++) {
      const [W, H, L] = [4 + Math.floor(rand() * 10), 3 + Math.floor(rand() * 8), 2 + Math.floor(rand() * 4)];
      const energy = randomEnergy(rand, W, H, L, trial % 2 ? 'potts' : 'linear');
      const init = randomLabels(rand, W * H, L);
      const variant = trial % 3 === 2 ? 'classic' : 'reversed';
      const ref = await alphaExpansion(energy, init, new GraphMoveSolver(energy, new BoykovKolmogorovSolver(), variant), { cycles: 2 });
      for (const ctx of [shared, alone]) {
        const solver = new GpuMoveSolver(ctx, energy, { variant, iterationsPerRound: 2, bfsPasses: 4, initialRounds: 1, reach: 2 });
        try {
          const res = await alphaExpansion(energy, init, solver, { cycles: 2 });
          const where = `trial ${trial} (${W}×${H}, ${L} labels, ${variant}), kernelBuildCache ${ctx.flags.kernelBuildCache}`;
          expect([where, res.cycles.map((c) => c.energy.total), Array.from(res.labels)]).toEqual([where, ref.cycles.map((c) => c.energy.total), Array.from(ref.labels)]);
        } finally {
          solver.dispose();
        }
      }
    }
  } finally {
    spy.mockRestore();
  }
  const [kept, fresh] = [got.get(shared.gpu)!, got.get(alone.gpu)!];
  expect(fresh.length).toBeGreaterThan(50);
  expect([...kept].sort()).toEqual([...fresh].sort());
  // Most of a run's assemblies repeat one made before.
  expect(kernelBuildCache.assemblyHits - hits).toBeGreaterThan(kept.length / 2);
});
