/**
 * Block kernels: push-relabel and the global relabel's BFS run tile by tile
 * in workgroup memory, many iterations per launch (the state layout is
 * pushRelabelLayout.ts's), and the convergence check a square per
 * workgroup. Written in WGSL, as native functions that a workgroup entry
 * calls (gpu/runtime/gpujs/workgroupEntry.ts), so they run on WebGPU only.
 * Each family has its file (blockPushKernels.ts, blockBfsKernels.ts,
 * blockCheckKernel.ts); this one holds what they share: the tile and its
 * settings, the WGSL head that places a thread's pixel and reads the gate,
 * and the kernel that runs a WGSL routine.
 *
 * All read the gate's input G (when compiled with a gate); once it holds,
 * push and BFS copy their input unchanged and the check reports 0.
 */
import type { GPU, IGPUKernelSettings } from 'gpu.js';

/** The tile of a block kernel: threads (= pixels) per workgroup along x and y. */
export interface BlockTile {
  width: number;
  height: number;
}

/** Default tile: 16×16 = 256 threads, the largest workgroup every WebGPU device must support. */
export const DEFAULT_BLOCK_TILE: BlockTile = { width: 16, height: 16 };

/** Default local push-relabel iterations per block launch. */
export const DEFAULT_BLOCK_ITERATIONS = 32;

/** Checks a block tile and iteration count; throws a one-line error naming the setting. */
export function checkBlockSettings(owner: string, tile: BlockTile, iterations: number): void {
  const ok = (v: number): boolean => Number.isInteger(v) && v >= 2;
  if (!ok(tile.width) || !ok(tile.height) || tile.width * tile.height > 1024) {
    throw new Error(`${owner} option block.tile: expected two integers of at least 2 with a product of at most 1024, got ${tile.width}x${tile.height}`);
  }
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > 4096) throw new Error(`${owner} option block.iterations: expected an integer in 1..4096, got ${String(iterations)}`);
}

/** A gate as WGSL over the gate input's accessor (a KernelGate's WGSL twin of its JavaScript condition). */
export interface WgslGate {
  wgsl: string;
}

/** A number as a WGSL f32 literal. */
export const wgslFloat = (v: number): string => `${v}.0`;

/** Workgroups along one axis for a tiling shifted by `offset`: enough to cover 0..len−1. */
export function groupsFor(len: number, tile: number, offset: number): number {
  return Math.ceil((len + offset) / tile);
}

/**
 * Position of the thread's pixel and which of its edges exist and lie
 * inside the tile (in*) or cross its border (has* and not in*).
 */
export function pixelHead(W: number, H: number, t: BlockTile, ox: number | string, oy: number | string): string {
  return `
  let lx = i32(lid.x);
  let ly = i32(lid.y);
  let i = ly * ${t.width} + lx;
  let x = i32(wid.x) * ${t.width} - ${ox} + lx;
  let y = i32(wid.y) * ${t.height} - ${oy} + ly;
  let inside = x >= 0 && x < ${W} && y >= 0 && y < ${H};
  let hasR = inside && x + 1 < ${W};
  let hasD = inside && y + 1 < ${H};
  let hasL = inside && x > 0;
  let hasU = inside && y > 0;
  let inR = hasR && lx + 1 < ${t.width};
  let inD = hasD && ly + 1 < ${t.height};
  let inL = hasL && lx > 0;
  let inU = hasU && ly > 0;`;
}

/**
 * Zeroes the routine's workgroup atomics before any thread adds to them. WGSL
 * promises zeroed workgroup memory, but Dawn keeps that promise by zeroing
 * every workgroup variable at each workgroup's start, which the device
 * context turns off (gpu/runtime/context.ts dawnFlags): every other
 * workgroup variable of these routines is written before it is read, and an
 * atomic that is only OR-ed or added to is zeroed here, once, by one thread.
 */
export function zeroedAtomics(...names: string[]): string {
  return `if (lid.x == 0u && lid.y == 0u) { ${names.map((n) => `atomicStore(&${n}, 0u);`).join(' ')} }
  workgroupBarrier();`;
}

/**
 * The gate as a workgroup-uniform flag `gated` (every thread reads the same
 * G, but the uniformity analysis cannot know that of a storage read).
 */
export function gateHead(prefix: string, gate: WgslGate | null): string {
  if (!gate) return 'let gated = 0u;';
  return `if (lid.x == 0u && lid.y == 0u) { ${prefix}_gate = select(0u, 1u, ${gate.wgsl}); }
  let gated = workgroupUniformLoad(&${prefix}_gate);`;
}

/** A kernel whose work is the WGSL routine `name` (its JavaScript body only names it for gpu.js's translation). */
export function workgroupKernel(gpu: GPU, params: readonly string[], name: string, wgsl: string, settings: IGPUKernelSettings, gate: WgslGate | null): (...a: unknown[]) => unknown {
  const nativeFunctions = [{ name, source: wgsl, argumentTypes: { x: 'Number' }, returnType: 'Number' }];
  const source = `function (${[...params, ...(gate ? ['G'] : [])].join(', ')}) { return ${name}(0.0); }`;
  const k = gpu.createKernel(source, { ...settings, nativeFunctions } as IGPUKernelSettings) as unknown as (...a: unknown[]) => unknown;
  // The gate's input is always passed last, and dropped when the kernel is compiled without a gate.
  return gate ? k : (...a: unknown[]) => k(...a.slice(0, -1));
}

/** Whether a gpu.js instance runs WGSL (the block kernels exist on WebGPU only). */
export function runsWgsl(gpu: GPU): boolean {
  return (gpu as unknown as { mode?: string }).mode === 'webgpu';
}
