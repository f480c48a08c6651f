/**
 * The gpu.js release whose internals the WebGPU wrappers were written
 * against and checked on: one-pass calls (gpuOnePassCalls.ts), the
 * workgroup rewrite (gpuWorkgroupSize.ts), shared kernel builds
 * (gpuKernelBuildCache.ts) and shared literals (gpuSharedLiterals.ts).
 * Each leaves any other release alone.
 */
export const WRAPPED_GPU_JS_RELEASE = '2.24.1';

/** Whether the installed gpu.js is WRAPPED_GPU_JS_RELEASE (false when its package cannot be read). */
export function isWrappedGpuJsRelease(): boolean {
  try {
    return (require('gpu.js/package.json') as { version: string }).version === WRAPPED_GPU_JS_RELEASE;
  } catch {
    return false;
  }
}
