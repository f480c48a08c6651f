/**
 * The workgroup shape of gpu.js's WebGPU kernels (gpu/runtime/gpujs/workgroupSize.ts).
 * CI has no GPU, so the kernels' WGSL is assembled here the way gpu.js does
 * before it reaches the device (translation and assembly need none), with
 * gpu.js's shape and with the rewrite, and the two are compared; that the
 * device runs the result is checked on the GPU (--verify, equal energies:
 * BENCHMARKS.md).
 */
import { DEFAULT_DEVICE_FLAGS, DEFAULT_WORKGROUP, resolveDeviceFlags } from '../gpu/runtime/deviceFlags';
import { seededRandom } from '../data/random';
import { WRAPPED_GPU_JS_RELEASE } from '../gpu/runtime/gpujs/release';
import { Input } from 'gpu.js';
import { installWorkgroupSize, type WorkgroupShape } from '../gpu/runtime/gpujs/workgroupSize';
import { createGpuContext } from '../gpu/runtime/context';
import { bfsScanSource } from '../gpu/maxflow/bfsKernels';
import { STATE_PLANES } from '../gpu/maxflow/pushRelabelLayout';
import { sweepGatherSource, sweepPushSource } from '../gpu/maxflow/sweepKernels';
import { checkTilesSource } from '../gpu/move/reductionKernels';

/** A one-dimensional kernel of one [4] argument (branches on the thread, as the move tally does). */
const LINE_SOURCE = 'function (T) { const i = this.thread.x; if (i === 2) { return 1.0; } return T[i]; }';
import { assembleWgsl, flaggedInstance, type WgslKernel } from './support/wgslAssembly';
import { gpuJsInternal } from '../gpu/runtime/gpujs/internals';

/** gpu.js's build up to the WGSL, for a kernel of an instance whose flag workgroup is `shape`. */
function assemble(source: string, output: number[], args: unknown[], constants: Record<string, number>, shape: WorkgroupShape): { wgsl: string; kernel: WgslKernel } {
  return assembleWgsl(source, output, args, constants, { gpu: flaggedInstance({ workgroup: shape }) });
}

const planes = (W: number, H: number, k: number): Input => new Input(new Float32Array(W * H * k) as unknown as number[], [W, H, k]);

describe('workgroups of gpu.js WebGPU kernels', () => {
  test('installed for the gpu.js release it rewrites, once; the default has 256 threads', () => {
    expect((require('gpu.js/package.json') as { version: string }).version).toBe(WRAPPED_GPU_JS_RELEASE);
    expect(installWorkgroupSize()).toBe(true);
    const proto = gpuJsInternal<{ WebGPUKernel: { prototype: { assembleWGSL: unknown } } }>('web-gpu/kernel').WebGPUKernel.prototype;
    const installed = proto.assembleWGSL;
    expect(installWorkgroupSize()).toBe(true);
    expect(proto.assembleWGSL).toBe(installed);
    expect(DEFAULT_WORKGROUP[0] * DEFAULT_WORKGROUP[1]).toBe(256);
  });

  test('the move kernels at random sizes and shapes: only the workgroup attribute changes, and the dispatch covers the output with the fewest workgroups', () => {
    installWorkgroupSize();
    const rng = seededRandom(3);
    const pick = (k: number): number => 1 + Math.floor(rng() * k);
    const shapes: WorkgroupShape[] = [[16, 16], [32, 8], [64, 4], [256, 1], [1, 256], [8, 8], [5, 7], [1, 1]];
    for (let trial = 0; trial < 40; trial++) {
      const W = pick(700);
      const H = pick(500);
      const constants = { W, H, INF: W * H + 1, REACH: 16 };
      const kernels: Array<[string, number[], unknown[]]> = [
        [sweepPushSource(trial % 2 ? 'h' : 'v'), [W, H, STATE_PLANES], [planes(W, H, STATE_PLANES), planes(W, H, 4)]],
        [sweepGatherSource('h'), [W, H, 2], [planes(W, H, STATE_PLANES), planes(W, H, 4)]],
        [bfsScanSource(), [W, H], [planes(W, H, STATE_PLANES), planes(W, H, 4), new Input(new Float32Array(W * H) as unknown as number[], [W, H])]],
        [checkTilesSource(), [Math.ceil(W / 8), Math.ceil(H / 8)], [planes(W, H, STATE_PLANES), planes(W, H, 4)]],
      ];
      for (const [source, output, args] of kernels) {
        const shape = shapes[trial % shapes.length];
        const theirs = assemble(source, output, args, constants, [8, 8]);
        const ours = assemble(source, output, args, constants, shape);
        expect(theirs.wgsl).toContain('@workgroup_size(8, 8, 1)');
        expect(ours.wgsl).toBe(theirs.wgsl.replace('@workgroup_size(8, 8, 1)', `@workgroup_size(${shape[0]}, ${shape[1]}, 1)`));
        expect(ours.kernel.workgroupSize).toEqual([shape[0], shape[1], 1]);
        const { groups } = ours.kernel._computeDispatch(ours.kernel.threadDim);
        const dims = [...output, 1].slice(0, 3);
        for (let d = 0; d < 3; d++) {
          const size = ours.kernel.workgroupSize[d];
          expect(groups[d] * size).toBeGreaterThanOrEqual(dims[d]);
          expect((groups[d] - 1) * size).toBeLessThan(dims[d]);
        }
      }
    }
  });

  test('1D kernels keep gpu.js\'s workgroups (their dispatch folds with the width)', () => {
    installWorkgroupSize();
    const T = [new Input(new Float32Array(4) as unknown as number[], [4])];
    const ours = assemble(LINE_SOURCE, [4], T, {}, [16, 16]);
    const theirs = assemble(LINE_SOURCE, [4], T, {}, [8, 8]);
    expect(ours.wgsl).toBe(theirs.wgsl);
    expect(ours.kernel.workgroupSize).toEqual([64, 1, 1]);
  });

  test('shapes other than two positive integers with at most 256 threads are refused, naming the setting', async () => {
    for (const bad of [[16, 32], [0, 8], [8], [8, 8, 1], [2.5, 4], '16x16', null, [-1, -1]]) {
      expect(() => resolveDeviceFlags({ workgroup: bad as never })).toThrow(/workgroup: got .*, expected two positive integers with a product of at most 256/);
      await expect(createGpuContext('cpu', { workgroup: bad as never })).rejects.toThrow(/gpu context flags: workgroup: got .*, expected two positive integers/);
    }
    expect(resolveDeviceFlags({ workgroup: [32, 8] }).workgroup).toEqual([32, 8]);
    // A context's flags are its own: the defaults stay as they are.
    expect(DEFAULT_DEVICE_FLAGS.workgroup).toEqual(DEFAULT_WORKGROUP);
    const ctx = await createGpuContext('cpu', { workgroup: [64, 4] });
    expect(ctx.flags.workgroup).toEqual([64, 4]);
    expect(Object.isFrozen(ctx.flags)).toBe(true);
    ctx.destroy();
  });

  test('a kernel of no instance takes the default shape', () => {
    installWorkgroupSize();
    const W = 40;
    const H = 30;
    const args = [planes(W, H, STATE_PLANES), planes(W, H, 4), new Input(new Float32Array(W * H) as unknown as number[], [W, H])];
    expect(assembleWgsl(bfsScanSource(), [W, H], args, { W, H, INF: W * H + 1, REACH: 16 }).wgsl).toContain(`@workgroup_size(${DEFAULT_WORKGROUP[0]}, ${DEFAULT_WORKGROUP[1]}, 1)`);
  });
});
