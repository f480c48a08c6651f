/**
 * The gpu.js release whose internals the adaptations of this folder mirror
 * (package.json pins it exactly). Every adaptation checks it before it
 * replaces anything, and leaves any other release alone.
 */
export const WRAPPED_GPU_JS_RELEASE = '2.24.1';

/** The installed gpu.js release, or null when its package cannot be read. */
export function installedGpuJsRelease(): string | null {
  try {
    return (require('gpu.js/package.json') as { version: string }).version;
  } catch {
    return null;
  }
}

/** Whether the installed gpu.js is WRAPPED_GPU_JS_RELEASE. */
export function isWrappedGpuJsRelease(): boolean {
  return installedGpuJsRelease() === WRAPPED_GPU_JS_RELEASE;
}
