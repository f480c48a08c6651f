import { gpuJsInternal } from './gpujs/internals';
import * as path from 'path';
import { GPU } from './gpujs/gpuJs';
import { boundsChecksOn, resolveDeviceFlags, type DeviceFlags } from './deviceFlags';
import { describeAdaptations, installGpuJsAdaptations, type GpuJsAdaptations } from './gpujs/install';
import { adaptInstance } from './gpujs/scope';

/**
 * Sets up gpu.js for the push-relabel kernels: WebGPU (Dawn, through the
 * `webgpu` package, or a provider installed with installWebGpuProvider)
 * when an adapter answers, otherwise gpu.js's WebAssembly backend,
 * otherwise its plain JavaScript cpu backend. The same kernels run on all
 * three.
 */

export type GpuMode = 'webgpu' | 'webasm' | 'cpu';
export type GpuPreference = 'auto' | GpuMode;
export const GPU_PREFERENCES: readonly GpuPreference[] = ['auto', 'webgpu', 'webasm', 'cpu'];

export interface GpuContext {
  readonly gpu: GPU;
  readonly mode: GpuMode;
  /** Human-readable description of what runs the kernels; names the gpu.js adaptations that are off, if any. */
  readonly device: string;
  /** The gpu.js adaptations' status (WebGPU only: the other backends use none). */
  readonly adaptations?: GpuJsAdaptations;
  /** Uncaptured WebGPU errors reported by the device since creation (empty on other backends). */
  readonly deviceErrors: string[];
  /** The device path's switches this context was made with (createGpuContext; whole and frozen): everything that runs for it reads them here or through its gpu.js instance (gpujs/scope.ts). */
  readonly flags: DeviceFlags;
  /** Whether destroy() was called: the gpu.js instance and everything made with it are gone. */
  readonly destroyed: boolean;
  destroy(): void;
}

/* Minimal structural types for the parts of the WebGPU API touched here (no DOM lib in this project). */
export interface AdapterInfoLike { vendor?: string; architecture?: string; device?: string; description?: string }
export interface DeviceLike {
  addEventListener?: (type: string, fn: (ev: { error?: { message?: string } }) => void) => void;
}
export interface AdapterLike {
  info?: AdapterInfoLike;
  limits?: Record<string, number>;
  requestDevice(descriptor?: unknown): Promise<DeviceLike>;
}

/** Limits the block kernels (gpu/maxflow/blockWorkgroup.ts) may use beyond WebGPU's defaults: requested at what the adapter offers. */
const RAISED_LIMITS = ['maxComputeWorkgroupStorageSize', 'maxComputeInvocationsPerWorkgroup', 'maxComputeWorkgroupSizeX', 'maxComputeWorkgroupSizeY'] as const;

/** `descriptor` with RAISED_LIMITS required at the adapter's values (a limit the descriptor already asks for keeps the larger of the two). */
export function withRaisedLimits(descriptor: unknown, adapterLimits: Record<string, number> | undefined): unknown {
  if (!adapterLimits) return descriptor;
  const d = (descriptor && typeof descriptor === 'object' ? descriptor : {}) as { requiredLimits?: Record<string, number> };
  const required: Record<string, number> = { ...(d.requiredLimits ?? {}) };
  for (const name of RAISED_LIMITS) {
    const offered = adapterLimits[name];
    if (typeof offered === 'number' && Number.isFinite(offered)) required[name] = Math.max(required[name] ?? 0, offered);
  }
  return { ...d, requiredLimits: required };
}
/** What this module asks of `navigator.gpu`. */
export interface NavigatorGpuLike { requestAdapter(options?: unknown): Promise<AdapterLike | null> }
interface DawnModule { create(flags: string[]): NavigatorGpuLike }

/**
 * A WebGPU implementation other than Dawn's Node binding: a `navigator.gpu`
 * and the name device descriptions give it (e.g. a test's bridge to a
 * browser's WebGPU, or an embedder's own binding).
 */
export interface WebGpuProvider {
  readonly name: string;
  readonly gpu: NavigatorGpuLike;
}

let provider: WebGpuProvider | null = null;
/** The process's WebGPU, once set up: the adapter's description, the device's errors, and whether Dawn's bounds checks are on (fixed for the process; undefined with a provider, which decides its own). */
interface WebGpuSetup { adapterInfo: string; errors: string[]; boundsChecks: boolean | undefined }
let webgpuSetup: Promise<WebGpuSetup | null> | null = null;

/**
 * Makes this process's WebGPU come from `p` instead of Dawn (null: Dawn
 * again), for tests and embedders. Everything after the adapter is the
 * same code as on Dawn: the device patching below, gpu.js's webgpu mode and
 * every adaptation in gpujs/. Dawn's instance flags (dawnFlags) do not
 * apply: the provider decides its own robustness. gpu.js keeps one device
 * per process, so a provider must be installed before WebGPU is first set
 * up (isWebGpuAvailable, createGpuContext); later it throws.
 */
export function installWebGpuProvider(p: WebGpuProvider | null): void {
  if (webgpuSetup) throw new Error('installWebGpuProvider: WebGPU was already set up in this process (gpu.js keeps its one device)');
  provider = p;
}

/**
 * Dawn's instance flags. By default Dawn's robustness is turned off: it
 * clamps every storage-buffer index in the generated shaders (and asks
 * Vulkan for robust buffer access), and those clamps are a noticeable part
 * of the moves' time. Turning them off is sound only because every kernel this
 * project builds reads inside its arrays: test/gpu-kernels-in-bounds
 * runs the solvers' kernels on gpu.js's cpu backend, which reads the same
 * elements, with every read checked and no read where WGSL's select would
 * make one the cpu backend skips.
 * Dawn's zeroing of workgroup memory goes with them: WGSL promises
 * workgroup variables that start at zero, and Dawn keeps the promise by
 * zeroing every one of them, behind a barrier, at the start of every
 * workgroup of every launch. The block kernels' routines write each
 * workgroup variable before they read it and zero their atomics themselves
 * (gpu/maxflow/blockWorkgroup.ts zeroedAtomics); test/gpu-browser-webgpu
 * runs them with their workgroup memory filled with other values first.
 * The checks stay on where boundsChecksOn says so (the flag boundsChecks of
 * the context that sets WebGPU up, else STEREOCUT_GPU_BOUNDS_CHECKS=1: for a
 * new kernel's first runs on a GPU).
 */
export function dawnFlags(boundsChecks: boolean | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  return boundsChecksOn(boundsChecks, env) ? [] : ['enable-dawn-features=disable_robustness,disable_workgroup_init'];
}

/**
 * Loads Dawn's Node binding directly (the `webgpu` package is an ES module,
 * which CommonJS Node 20 cannot require). Any failure — the binary needs a
 * newer glibc on some machines, or there is no driver — means "no WebGPU".
 */
function loadDawn(): DawnModule | null {
  try {
    const dir = path.dirname(require.resolve('webgpu/package.json'));
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(path.join(dir, 'dist', `${process.platform}-${process.arch}.dawn.node`)) as DawnModule;
  } catch {
    return null;
  }
}

/**
 * gpu.js assigns `device.onuncapturederror = fn`, which this Dawn build
 * rejects ("object is not of the correct interface type") so the first kernel
 * throws. The adapter is wrapped so that every device it hands out has that
 * property redefined as a plain accessor; errors still reach us through the
 * event listener and are kept for the solver to report.
 */
function wrapAdapter(adapter: AdapterLike, errors: string[]): AdapterLike {
  const requestDevice = adapter.requestDevice.bind(adapter);
  const patched = async (descriptor?: unknown): Promise<DeviceLike> => {
    const device = await requestDevice(withRaisedLimits(descriptor, adapter.limits));
    let handler: unknown = null;
    Object.defineProperty(device, 'onuncapturederror', {
      configurable: true,
      get: () => handler,
      set: (fn: unknown) => { handler = fn; },
    });
    // This Dawn build also rejects JS listeners ("no overload matched"); errors are then only logged by gpu.js's own checks.
    try {
      device.addEventListener?.('uncapturederror', (ev) => {
        errors.push(ev?.error?.message ?? 'unknown WebGPU error');
      });
    } catch {
      /* listener unsupported: nothing to collect */
    }
    return device;
  };
  Object.defineProperty(adapter, 'requestDevice', { configurable: true, value: patched });
  return adapter;
}

/** Dawn's navigator.gpu with `flags`, or null when the binding does not load or refuses them. */
function dawnGpu(flags: string[]): NavigatorGpuLike | null {
  const dawn = loadDawn();
  if (!dawn) return null;
  try {
    return dawn.create(flags);
  } catch {
    return null;
  }
}

/**
 * Installs navigator.gpu (the provider's, else Dawn's) once per process;
 * resolves null when no adapter answers. `boundsChecks` (a context's flag;
 * undefined: the variable decides) is read by the first call only: Dawn's
 * robustness is a property of its instance, made once here.
 */
function setUpWebGpu(boundsChecks?: boolean): Promise<WebGpuSetup | null> {
  if (webgpuSetup) return webgpuSetup;
  const installed = provider;
  webgpuSetup = (async () => {
    const flags = installed ? [] : dawnFlags(boundsChecks);
    const raw = installed ? installed.gpu : dawnGpu(flags);
    if (!raw) return null;
    const errors: string[] = [];
    const gpuApi: NavigatorGpuLike = {
      requestAdapter: async (options?: unknown) => {
        const adapter = await raw.requestAdapter(options);
        return adapter ? wrapAdapter(adapter, errors) : null;
      },
    };
    // Keep the rest of the Dawn (or provider) object (getPreferredCanvasFormat, wgslLanguageFeatures…) reachable.
    Object.setPrototypeOf(gpuApi, raw as object);
    const g = globalThis as { navigator?: Record<string, unknown> };
    Object.defineProperty(globalThis, 'navigator', {
      configurable: true,
      writable: true,
      value: Object.assign(Object.create(g.navigator ?? null) as Record<string, unknown>, { gpu: gpuApi }),
    });
    let adapter: AdapterLike | null;
    try {
      adapter = await gpuApi.requestAdapter();
    } catch {
      adapter = null;
    }
    if (!adapter) return null;
    const info = adapter.info ?? {};
    const adapterInfo = [info.vendor, info.architecture, info.description || info.device].filter((s) => s).join(' ');
    // A run says what ran: the provider, and the checks' state, are part of the device's description.
    const notes = [...(installed ? [`through ${installed.name}`] : []), ...(flags.length > 0 ? ['shader bounds checks off'] : [])];
    return { adapterInfo: `${adapterInfo || 'unknown adapter'}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`, errors, boundsChecks: installed ? undefined : flags.length === 0 };
  })();
  return webgpuSetup;
}

/**
 * Whether setting WebGPU up in this process is still to come and would be
 * done by Dawn, which makes the adapter and device on the calling thread and
 * holds it meanwhile (a good part of a fresh process's start-up); not so
 * with a provider, nor once set up. Loads Dawn's binding to know.
 */
export function webGpuSetUpWouldBlock(): boolean {
  return !webgpuSetup && !provider && loadDawn() !== null;
}

/** True when a WebGPU adapter answers in this process (loads Dawn on first call). */
export async function isWebGpuAvailable(): Promise<boolean> {
  return (await setUpWebGpu()) !== null;
}

/**
 * The device gpu.js's WebGPU kernels run on (one per process, made on the
 * first call), or null without WebGPU. Device creation takes a good part of
 * a fresh process's start-up, so the command line starts it while it reads
 * the scenes and images; the run then finds it made.
 */
export async function webGpuDevice<T>(): Promise<T | null> {
  if (!(await isWebGpuAvailable())) return null;
  const { WebGPUContext } = gpuJsInternal<{ WebGPUContext: { acquire(): Promise<{ device: T }> } }>('web-gpu/context');
  return (await WebGPUContext.acquire()).device;
}

/**
 * A gpu.js instance on the preferred backend. 'auto' takes WebGPU when an
 * adapter answers, else webasm, else cpu; an explicit 'webgpu' that is not
 * available throws. `flags`: the device path's switches for this context
 * (deviceFlags.ts), checked here (an unknown flag or a value it does not
 * take is refused, naming it) and completed with the defaults; kernels,
 * plans and programs made with the context run as they say, whatever other
 * contexts of the process say. On WebGPU, boundsChecks given against the
 * value the process's device was made with is refused (Dawn's robustness is
 * fixed once the device is made).
 */
export async function createGpuContext(preference: GpuPreference = 'auto', flags?: Partial<DeviceFlags>): Promise<GpuContext> {
  if (!GPU_PREFERENCES.includes(preference)) {
    throw new Error(`gpu backend: unknown preference '${String(preference)}' (expected ${GPU_PREFERENCES.join(', ')})`);
  }
  const resolved = resolveDeviceFlags(flags, 'gpu context flags');
  if (preference === 'auto' || preference === 'webgpu') {
    const webgpu = await setUpWebGpu(resolved.boundsChecks);
    if (webgpu) {
      if (resolved.boundsChecks !== undefined && webgpu.boundsChecks !== undefined && resolved.boundsChecks !== webgpu.boundsChecks) {
        throw new Error(`gpu context flags: boundsChecks ${String(resolved.boundsChecks)}, but this process's WebGPU device was made with Dawn's bounds checks ${webgpu.boundsChecks ? 'on' : 'off'} (fixed for the process; the first WebGPU context, or STEREOCUT_GPU_BOUNDS_CHECKS, decides)`);
      }
      const adaptations = installGpuJsAdaptations();
      const gpu = new GPU({ mode: 'webgpu' });
      return context(gpu, 'webgpu', webGpuDeviceDescription(webgpu.adapterInfo, adaptations), webgpu.errors, resolved, adaptations);
    }
    if (preference === 'webgpu') {
      throw new Error('gpu backend: WebGPU requested but unavailable (the webgpu package did not load or no adapter answered)');
    }
  }
  if ((preference === 'auto' || preference === 'webasm') && GPU.isWebAssemblySupported) {
    // The adaptations' webasm part: modules assembled once for every plan (gpujs/webAssemblyModules.ts).
    const adaptations = installGpuJsAdaptations();
    return context(new GPU({ mode: 'webasm' }), 'webasm', 'gpu.js webasm backend (CPU, WebAssembly SIMD)', [], resolved, adaptations);
  }
  if (preference === 'webasm') throw new Error('gpu backend: webasm requested but WebAssembly is unsupported here');
  return context(new GPU({ mode: 'cpu' }), 'cpu', 'gpu.js cpu backend (JavaScript)', [], resolved);
}

/** What a WebGPU context says it runs on: the adapter, and the gpu.js adaptations that are off (installGpuJsAdaptations). */
export function webGpuDeviceDescription(adapterInfo: string, adaptations: GpuJsAdaptations): string {
  const off = describeAdaptations(adaptations);
  return `WebGPU (Dawn): ${adapterInfo}${off ? `; ${off}` : ''}`;
}

function context(gpu: GPU, mode: GpuMode, device: string, deviceErrors: string[], flags: DeviceFlags, adaptations?: GpuJsAdaptations): GpuContext {
  // Every instance made here is the project's: the adapted gpu.js methods apply to it, with its flags (gpujs/scope.ts).
  adaptInstance(gpu, flags);
  let destroyed = false;
  return {
    gpu,
    mode,
    device,
    deviceErrors,
    flags,
    ...(adaptations ? { adaptations } : {}),
    get destroyed() { return destroyed; },
    destroy: () => {
      destroyed = true;
      void gpu.destroy();
    },
  };
}
