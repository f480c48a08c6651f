/**
 * The gpu.js adaptations as one install (gpu/runtime/gpujs/install.ts): the
 * installed release is the one they mirror and package.json pins it; a
 * different release (stubbed) applies nothing and says so, and the device
 * description names what is off; the adapted prototypes run gpu.js's own
 * code for gpu.js instances the project did not make.
 */
import { DEFAULT_DEVICE_FLAGS, resolveDeviceFlags } from '../gpu/runtime/deviceFlags';
import * as fs from 'fs';
import * as path from 'path';
import { Input } from 'gpu.js';
import { ADAPTATIONS, describeAdaptations, installGpuJsAdaptations } from '../gpu/runtime/gpujs/install';
import { installedGpuJsRelease, WRAPPED_GPU_JS_RELEASE } from '../gpu/runtime/gpujs/release';
import { adaptInstance, adaptsFor, flagsFor } from '../gpu/runtime/gpujs/scope';
import { webGpuDeviceDescription } from '../gpu/runtime/context';
import { bfsScanSource } from '../gpu/maxflow/bfsKernels';
import { STATE_PLANES } from '../gpu/maxflow/pushRelabelLayout';
import { assembleWgsl } from './support/wgslAssembly';

describe('gpu.js adaptations', () => {
  test('the installed gpu.js is the release the adaptations mirror, and package.json pins it exactly', () => {
    expect(installedGpuJsRelease()).toBe(WRAPPED_GPU_JS_RELEASE);
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies['gpu.js']).toBe(WRAPPED_GPU_JS_RELEASE);
  });

  test('installed together on the mirrored release: every adaptation on, and the device description is the adapter alone', () => {
    const status = installGpuJsAdaptations();
    expect(status).toEqual({ release: WRAPPED_GPU_JS_RELEASE, mirrors: WRAPPED_GPU_JS_RELEASE, adaptations: Object.fromEntries(ADAPTATIONS.map((a) => [a, true])) });
    expect(describeAdaptations(status)).toBe('');
    expect(webGpuDeviceDescription('NVIDIA H100', status)).toBe('WebGPU (Dawn): NVIDIA H100');
  });

  test('another release (stubbed): nothing is applied, every adaptation says why, and the device description names them', () => {
    const status = installGpuJsAdaptations('2.24.2');
    expect(status.release).toBe('2.24.2');
    const why = `gpu.js 2.24.2 is installed, the adaptations mirror ${WRAPPED_GPU_JS_RELEASE}`;
    expect(status.adaptations).toEqual(Object.fromEntries(ADAPTATIONS.map((a) => [a, why])));
    expect(webGpuDeviceDescription('NVIDIA H100', status)).toBe(
      `WebGPU (Dawn): NVIDIA H100; gpu.js adaptations off (onePassCalls, workgroupSize, workgroupEntry, kernelBuildCache, sharedLiterals): ${why}`,
    );
    expect(describeAdaptations(installGpuJsAdaptations(null))).toBe(
      'gpu.js adaptations off (onePassCalls, workgroupSize, workgroupEntry, kernelBuildCache, sharedLiterals): the gpu.js package cannot be read',
    );
  });

  test('scoped to the instances the project made: a kernel of another gpu.js instance keeps gpu.js\'s workgroup shape', () => {
    installGpuJsAdaptations();
    const ours = {};
    const flags = resolveDeviceFlags({ workgroup: [32, 8] });
    adaptInstance(ours, flags);
    const theirs = {};
    expect([adaptsFor({ gpu: ours }), adaptsFor({ gpu: theirs }), adaptsFor({ gpu: null }), adaptsFor({})]).toEqual([true, false, true, true]);
    // Each owner runs with its instance's flags; one of no instance with the defaults; another instance's with none (gpu.js's own code).
    expect([flagsFor({ gpu: ours }), flagsFor({ gpu: theirs }), flagsFor({})]).toEqual([flags, undefined, DEFAULT_DEVICE_FLAGS]);
    const W = 40;
    const H = 30;
    const args = [
      new Input(new Float32Array(W * H * STATE_PLANES) as unknown as number[], [W, H, STATE_PLANES]),
      new Input(new Float32Array(W * H * 4) as unknown as number[], [W, H, 4]),
      new Input(new Float32Array(W * H) as unknown as number[], [W, H]),
    ];
    const constants = { W, H, INF: W * H + 1, REACH: 16 };
    expect(assembleWgsl(bfsScanSource(), [W, H], args, constants, { gpu: ours }).wgsl).toContain('@workgroup_size(32, 8, 1)');
    expect(assembleWgsl(bfsScanSource(), [W, H], args, constants, { gpu: theirs }).wgsl).toContain('@workgroup_size(8, 8, 1)');
  });
});
