import { installKernelBuildCache } from './kernelBuildCache';
import { installOnePassCalls } from './onePassCalls';
import { installedGpuJsRelease, WRAPPED_GPU_JS_RELEASE } from './release';
import { installSharedLiterals } from './sharedLiterals';
import { installWorkgroupEntry } from './workgroupEntry';
import { installWorkgroupSize } from './workgroupSize';

/**
 * The adaptations of gpu.js's WebGPU backend, applied together:
 *  - onePassCalls     a pipeline call recorded in one compute pass, and the
 *                     resident calls built on it (residentCalls.ts); without
 *                     it the device moves run host-driven only;
 *  - workgroupSize    the kernels' workgroup shape;
 *  - workgroupEntry   kernels whose WGSL routine uses workgroup memory and
 *                     barriers get an entry and dispatch of their own (the
 *                     block schemes need it);
 *  - kernelBuildCache translations and shader modules shared between builds,
 *                     and on the webasm backend the assembled WebAssembly
 *                     modules (webAssemblyModules.ts);
 *  - sharedLiterals   constant inputs bound once per device, refillable; the
 *                     programs kept between solvers need them.
 * Each is on, or off with the reason, so a run can say what it lacks.
 */
export const ADAPTATIONS = ['onePassCalls', 'workgroupSize', 'workgroupEntry', 'kernelBuildCache', 'sharedLiterals'] as const;
export type AdaptationName = (typeof ADAPTATIONS)[number];

export interface GpuJsAdaptations {
  /** The installed gpu.js release (null when its package cannot be read). */
  release: string | null;
  /** The release the adaptations mirror. */
  mirrors: string;
  /** Each adaptation: true when applied, else why not. */
  adaptations: Record<AdaptationName, true | string>;
}

const INSTALLERS: Record<AdaptationName, () => boolean> = {
  onePassCalls: installOnePassCalls,
  workgroupSize: installWorkgroupSize,
  workgroupEntry: installWorkgroupEntry,
  kernelBuildCache: installKernelBuildCache,
  sharedLiterals: installSharedLiterals,
};

/**
 * Checks the installed gpu.js release and applies every adaptation when it
 * is the one they mirror (idempotent: an adaptation already applied stays).
 * `release` is the installed release; a test passes another to see the
 * status of a release that differs, which applies nothing.
 */
export function installGpuJsAdaptations(release: string | null = installedGpuJsRelease()): GpuJsAdaptations {
  const adaptations = {} as Record<AdaptationName, true | string>;
  for (const name of ADAPTATIONS) {
    if (release !== WRAPPED_GPU_JS_RELEASE) {
      adaptations[name] = release === null ? 'the gpu.js package cannot be read' : `gpu.js ${release} is installed, the adaptations mirror ${WRAPPED_GPU_JS_RELEASE}`;
    } else {
      adaptations[name] = INSTALLERS[name]() ? true : `gpu.js ${release} lacks a member the adaptation replaces`;
    }
  }
  return { release, mirrors: WRAPPED_GPU_JS_RELEASE, adaptations };
}

/** The adaptations that are off, with why, for a device description; '' when all are on. */
export function describeAdaptations(s: GpuJsAdaptations): string {
  const off = ADAPTATIONS.filter((name) => s.adaptations[name] !== true);
  if (off.length === 0) return '';
  const reasons = [...new Set(off.map((name) => s.adaptations[name] as string))];
  return `gpu.js adaptations off (${off.join(', ')}): ${reasons.join('; ')}`;
}
