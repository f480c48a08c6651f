/**
 * Kernels with a workgroup entry: a WebGPU kernel whose work is done by a
 * WGSL routine that uses workgroup memory and barriers (gpu/maxflow/blockWorkgroup.ts),
 * with one workgroup per tile of pixels.
 *
 * gpu.js 2.24.1 emits a native function's WGSL verbatim at module scope
 * when it is added with explicit argument and return types, so the routine
 * can declare `var<workgroup>` arrays and call `workgroupBarrier()`. Two
 * things of the kernel gpu.js generates stand in the way, and this
 * adaptation replaces them for kernels that ask for it:
 *  - its `main` returns early for threads outside the output before the
 *    body, so a barrier in the body would be in non-uniform control flow;
 *    the adapted `main` calls the routine with the thread's local and
 *    workgroup ids and nothing else (the routine checks its own bounds and
 *    keeps every barrier in uniform control flow);
 *  - its dispatch is one thread per output element in 8×8 workgroups; the
 *    adapted kernel dispatches the routine's own grid of workgroups.
 * A kernel asks for it with a marker line in its native function's WGSL
 * (workgroupEntryMarker); every other kernel is left as gpu.js builds it.
 * The routine reads the kernel's inputs through gpu.js's accessors
 * (get_user_<name>) and writes gpu.js's output array `result` directly,
 * with the same flat layout as every other kernel, so its output binds
 * like any kernel's wherever a plan passes it on.
 */
import { wrappedKernelPrototype } from './internals';
import { adaptsFor } from './scope';

/** What a workgroup-entry kernel's WGSL asks for. */
export interface WorkgroupEntry {
  /** the WGSL function the entry calls: fn <name>(lid : vec3<u32>, wid : vec3<u32>) */
  name: string;
  /** threads per workgroup along x and y */
  threads: readonly [number, number];
  /** workgroups dispatched along x and y */
  groups: readonly [number, number];
}

const MARKER = /^\/\/ workgroup-entry (\w+) threads (\d+)x(\d+) groups (\d+)x(\d+)$/m;

/** The marker line a native function's WGSL starts with to be given a workgroup entry. */
export function workgroupEntryMarker(e: WorkgroupEntry): string {
  return `// workgroup-entry ${e.name} threads ${e.threads[0]}x${e.threads[1]} groups ${e.groups[0]}x${e.groups[1]}`;
}

/** The entry a marked kernel's WGSL asks for, or null for any other WGSL. */
export function parseWorkgroupEntry(wgsl: string): WorkgroupEntry | null {
  const m = MARKER.exec(wgsl);
  if (!m) return null;
  const [tx, ty, gx, gy] = m.slice(2).map(Number);
  return { name: m[1], threads: [tx, ty], groups: [gx, gy] };
}

const GPU_JS_ENTRY = '\n@compute @workgroup_size(';

/**
 * `wgsl` (a kernel gpu.js assembled) with its entry replaced by one that
 * calls the marked routine; throws when the WGSL does not have exactly one
 * gpu.js entry, which would mean another gpu.js release.
 */
export function withWorkgroupEntry(wgsl: string, e: WorkgroupEntry): string {
  const at = wgsl.indexOf(GPU_JS_ENTRY);
  if (at < 0 || wgsl.indexOf(GPU_JS_ENTRY, at + 1) >= 0) throw new Error(`workgroup entry ${e.name}: the kernel's WGSL does not have exactly one gpu.js entry`);
  return `${wgsl.slice(0, at)}
@compute @workgroup_size(${e.threads[0]}, ${e.threads[1]}, 1)
fn main(@builtin(local_invocation_id) lid : vec3<u32>, @builtin(workgroup_id) wid : vec3<u32>, @builtin(global_invocation_id) gid : vec3<u32>) {
  threadGid = gid;
  ${e.name}(lid, wid);
}
`;
}

interface EntryKernel {
  workgroupSize: number[];
  compiledSource?: string;
  workgroupEntry?: WorkgroupEntry;
  assembleWGSL(): string;
  _computeDispatch(threadDim: number[]): { groups: number[]; dispatchWidth: number };
}

/** Whether the adaptation is installed (kernels built from now on get their entries). */
export const workgroupEntries: { readonly installed: boolean } = { installed: false };

/**
 * Gives marked kernels their workgroup entry and dispatch (idempotent).
 * Returns false, changing nothing, when gpu.js is not the release this was
 * written for or its kernel class lacks the members replaced.
 */
export function installWorkgroupEntry(): boolean {
  if (workgroupEntries.installed) return true;
  const proto = wrappedKernelPrototype<EntryKernel>(['assembleWGSL', '_computeDispatch']);
  if (!proto) return false;
  const assemble = proto.assembleWGSL;
  proto.assembleWGSL = function (this: EntryKernel) {
    const wgsl = assemble.call(this);
    if (!adaptsFor(this)) return wgsl;
    const entry = parseWorkgroupEntry(wgsl);
    if (!entry) return wgsl;
    this.workgroupEntry = entry;
    this.workgroupSize = [entry.threads[0], entry.threads[1], 1];
    return withWorkgroupEntry(wgsl, entry);
  };
  const dispatch = proto._computeDispatch;
  proto._computeDispatch = function (this: EntryKernel, threadDim: number[]) {
    // A kernel whose build was shared has the WGSL but may not have assembled it itself.
    const entry = this.workgroupEntry ?? (typeof this.compiledSource === 'string' ? parseWorkgroupEntry(this.compiledSource) : null);
    if (!entry) return dispatch.call(this, threadDim);
    return { groups: [entry.groups[0], entry.groups[1], 1], dispatchWidth: 0 };
  };
  (workgroupEntries as { installed: boolean }).installed = true;
  return true;
}
