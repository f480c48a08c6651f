import { checkBlockSettings } from '../gpu/maxflow/blockWorkgroup';
import { blockPushShift, blockPushWgsl } from '../gpu/maxflow/blockPushKernels';
import { blockBfsWgsl } from '../gpu/maxflow/blockBfsKernels';
import { BLOCK_CHECK_SPAN, blockCheckWgsl } from '../gpu/maxflow/blockCheckKernel';
import { createGpuContext } from '../gpu/runtime/context';
import { withRaisedLimits } from '../gpu/runtime/context';
import { parseWorkgroupEntry, withWorkgroupEntry, workgroupEntryMarker } from '../gpu/runtime/gpujs/workgroupEntry';
import { iterationPasses, globalRelabelPasses } from '../gpu/maxflow/pushRelabelKernels';
import { BLOCK_BFS, BLOCK_PUSH } from '../gpu/maxflow/kernelFamilies';
import { resolveGpuMoveOptions } from '../gpu/move/moveSettings';

/*
 * What CI can check of the block kernels without WebGPU: their workgroup
 * entry, dispatch and settings. Their flows and cuts against BK run on
 * WebGPU in headless Chromium (gpu-browser-webgpu.test.ts).
 */

describe('workgroup entry', () => {
  test('a marked routine gets an entry that calls it with its local and workgroup ids, and a dispatch of its own groups', () => {
    const e = { name: 'blockPush_x', threads: [16, 8] as const, groups: [25, 37] as const };
    expect(parseWorkgroupEntry(`${workgroupEntryMarker(e)}\nfn blockPush_x(lid : vec3<u32>, wid : vec3<u32>) {}`)).toEqual({ name: 'blockPush_x', threads: [16, 8], groups: [25, 37] });
    expect(parseWorkgroupEntry('fn f() {}')).toBeNull();
    const gpuJs = 'struct Params {}\n@compute @workgroup_size(8, 8, 1)\nfn main(@builtin(global_invocation_id) gid : vec3<u32>) {\n  if (gid.x >= params.outputX) { return; }\n}';
    const wgsl = withWorkgroupEntry(gpuJs, e);
    expect(wgsl).toContain('@compute @workgroup_size(16, 8, 1)');
    expect(wgsl).toContain('blockPush_x(lid, wid);');
    expect(wgsl).not.toContain('return; }');
    expect(() => withWorkgroupEntry('fn main() {}', e)).toThrow(/exactly one gpu.js entry/);
  });

  test('the block sources cover the grid in both push tilings (one pipeline, the shift its arguments), with at most one idle workgroup column and row', () => {
    for (const [W, H] of [[384, 288], [17, 9], [450, 375]]) {
      const tile = { width: 16, height: 16 };
      expect(blockPushShift(tile)).toEqual([8, 8]);
      const wgsl = blockPushWgsl('p', W, H, tile, 8, null);
      expect(wgsl).toContain('i32(params.user_OX)');
      expect(wgsl).toContain('i32(params.user_OY)');
      const e = parseWorkgroupEntry(wgsl)!;
      for (const [ox, oy] of [[0, 0], [8, 8]]) {
        // The last tile's end reaches past the grid; the one before it does not, or (unshifted) the one before that.
        expect(e.groups[0] * 16 - ox).toBeGreaterThanOrEqual(W);
        expect(e.groups[1] * 16 - oy).toBeGreaterThanOrEqual(H);
        expect((e.groups[0] - (ox === 0 ? 2 : 1)) * 16 - ox).toBeLessThan(W);
        expect((e.groups[1] - (oy === 0 ? 2 : 1)) * 16 - oy).toBeLessThan(H);
      }
      for (const from of ['distances', 'scratch', 'heights'] as const) {
        for (const toState of [false, true]) {
          const b = parseWorkgroupEntry(blockBfsWgsl('b', W, H, tile, { wgsl: 'get_user_G(0, 0, 2) == 0.0' }, from, toState))!;
          expect(b.groups).toEqual([Math.ceil(W / 16), Math.ceil(H / 16)]);
        }
      }
      // A check workgroup covers a BLOCK_CHECK_SPAN square: as many as the grid needs, one code each.
      const c = parseWorkgroupEntry(blockCheckWgsl('c', W, H, null))!;
      expect(c.groups).toEqual([Math.ceil(W / BLOCK_CHECK_SPAN), Math.ceil(H / BLOCK_CHECK_SPAN)]);
      expect(c.threads[0] * c.threads[1]).toBeLessThanOrEqual(256);
    }
  });

  test('block settings out of range are one-line errors naming the option', () => {
    expect(() => checkBlockSettings('gpu expansion', { width: 64, height: 32 }, 8)).toThrow(/^gpu expansion option block\.tile: .*got 64x32$/);
    expect(() => checkBlockSettings('gpu expansion', { width: 16, height: 1 }, 8)).toThrow(/block\.tile/);
    expect(() => checkBlockSettings('gpu expansion', { width: 16, height: 16 }, 0)).toThrow(/^gpu expansion option block\.iterations: .*got 0$/);
  });
});

describe('where the block schemes run', () => {
  test('on gpu.js backends without WGSL the block schemes refuse with a line naming the scheme', async () => {
    const ctx = await createGpuContext('cpu');
    const settings = (planes: number) => ({ output: planes > 1 ? [8, 8, planes] : [8, 8], constants: { W: 8, H: 8, INF: 65, REACH: 4 } });
    expect(() => iterationPasses(ctx.gpu, BLOCK_PUSH, settings)).toThrow(/^push scheme block: needs WebGPU/);
    expect(() => globalRelabelPasses(ctx.gpu, BLOCK_BFS, settings)).toThrow(/^bfs scheme block: needs WebGPU/);
    ctx.destroy();
  });

  test('the block schemes are the default only where they run, with their own K and B; schemes given keep their own defaults', () => {
    const plain = resolveGpuMoveOptions(384, 288, { variant: 'reversed' });
    expect([plain.push, plain.bfs, plain.iterationsPerRound, plain.bfsPasses, plain.finalBfsFactor]).toEqual(['sweep', 'scan', 24, 16, 2]);
    const blocks = resolveGpuMoveOptions(384, 288, { variant: 'reversed' }, true);
    expect([blocks.push, blocks.bfs, blocks.iterationsPerRound, blocks.bfsPasses, blocks.initialBfsPasses, blocks.finalBfsFactor]).toEqual(['block', 'block', 3, 8, 2, 1]);
    const sweepOnBlocks = resolveGpuMoveOptions(384, 288, { variant: 'reversed', push: 'sweep', bfs: 'scan' }, true);
    expect([sweepOnBlocks.iterationsPerRound, sweepOnBlocks.bfsPasses, sweepOnBlocks.finalBfsFactor]).toEqual([24, 16, 2]);
    expect(resolveGpuMoveOptions(384, 288, { variant: 'reversed', finalBfsFactor: 3 }, true).finalBfsFactor).toBe(3);
    expect(resolveGpuMoveOptions(384, 288, { variant: 'reversed', iterationsPerRound: 5 }, true).iterationsPerRound).toBe(5);
  });

  test('the device is asked for the adapter’s workgroup limits, keeping any larger request', () => {
    const adapter = { maxComputeWorkgroupStorageSize: 49152, maxComputeInvocationsPerWorkgroup: 1024, maxComputeWorkgroupSizeX: 1024, maxComputeWorkgroupSizeY: 1024, maxBufferSize: 1 << 30 };
    expect(withRaisedLimits({ requiredLimits: { maxStorageBufferBindingSize: 1 << 27 } }, adapter)).toEqual({
      requiredLimits: { maxStorageBufferBindingSize: 1 << 27, maxComputeWorkgroupStorageSize: 49152, maxComputeInvocationsPerWorkgroup: 1024, maxComputeWorkgroupSizeX: 1024, maxComputeWorkgroupSizeY: 1024 },
    });
    expect(withRaisedLimits(undefined, undefined)).toBeUndefined();
  });
});
