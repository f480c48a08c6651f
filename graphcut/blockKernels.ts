/**
 * Block kernels: push-relabel and the global relabel's BFS run tile by tile
 * in workgroup memory, many iterations per launch (the state layout is
 * pushRelabelLayout.ts's). Written in WGSL, as native functions that a
 * workgroup entry calls (graphcut/gpujs/workgroupEntry.ts), so they run on
 * WebGPU only.
 *
 * Block push-relabel. A workgroup loads a tile of pixels (one per thread)
 * into workgroup memory and runs `iterations` lockstep push-relabel
 * iterations there (the pushes of lockstepKernels.ts, then a relabel from
 * the heights before the pushes) before it writes the tile back. Only the
 * edges inside the tile carry flow in a launch; an edge that crosses the
 * tile's border is frozen: neither side pushes over it, so its flow and the
 * net values of both its ends change in one workgroup at most, and no flow
 * is lost or counted twice without any exchange between workgroups. Two
 * tilings alternate, the second shifted by half a tile in x and y, so every
 * edge is inside a tile of one of them (a border of one tiling is never a
 * border of the other). The heights of pixels outside the tile are read
 * once, when the launch starts; heights only grow, so those readings are
 * lower bounds, and a relabel that uses them keeps the labeling valid
 * (h(p) ≤ h(q) + 1 on every residual edge) just as a relabel from the
 * current heights would. A pixel whose only admissible edge is frozen is
 * not relabelled: it waits for the other tiling.
 *
 * Block BFS. A launch relaxes the distances of a tile to the fixed point of
 * the BFS equations with the distances outside the tile held at the values
 * the launch read (Bellman–Ford inside the tile, one level per step, until
 * a step changes nothing). Every value stays an upper bound of the residual
 * distance to the sink and only decreases, so repeated launches reach the
 * exact distances; a tile whose equations already hold stops after one
 * step. Launches are repeated a fixed number of times per global relabel
 * (a plan cannot branch); the convergence check reports distances that are
 * not yet a fixed point, as it does for the other BFS schemes.
 *
 * Both read the gate's input G (when compiled with a gate) and copy their
 * input unchanged once the gate holds.
 */
import type { GPU, IGPUKernelSettings } from 'gpu.js';
import { workgroupEntryMarker } from './gpujs/workgroupEntry';

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

const f = (v: number): string => `${v}.0`;

/** Workgroups along one axis for a tiling shifted by `offset`: enough to cover 0..len−1. */
function groupsFor(len: number, tile: number, offset: number): number {
  return Math.ceil((len + offset) / tile);
}

/**
 * Position of the thread's pixel and which of its edges exist and lie
 * inside the tile (in*) or cross its border (has* and not in*).
 */
function pixelHead(W: number, H: number, t: BlockTile, ox: number | string, oy: number | string): string {
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
 * The gate as a workgroup-uniform flag `gated` (every thread reads the same
 * G, but the uniformity analysis cannot know that of a storage read).
 */
function gateHead(prefix: string, gate: WgslGate | null): string {
  if (!gate) return 'let gated = 0u;';
  return `if (lid.x == 0u && lid.y == 0u) { ${prefix}_gate = select(0u, 1u, ${gate.wgsl}); }
  let gated = workgroupUniformLoad(&${prefix}_gate);`;
}

/**
 * One neighbour's part of a relabel: where the edge to it exists (`has`),
 * with its height `hq` and residual `r`; a residual edge makes the
 * neighbour a candidate (best) and, one level down, an admissible edge.
 */
function relabelFrom(has: string, hq: string, r: string): string {
  return `if (${has} && ${r} > 0.0) {
          if (${hq} + 1.0 == hh) { admissible = true; }
          best = min(best, ${hq} + 1.0);
        }`;
}

/**
 * WGSL of one block push-relabel launch on a W×H grid: tiles of `tile`,
 * shifted by the kernel's scalar arguments (OX, OY) (0 or half a tile:
 * both tilings are one pipeline, so a round's push launches need no
 * pipeline switch, which costs the host about what a dispatch does),
 * `iterations` local iterations. The dispatch covers the shifted tiling;
 * the unshifted one leaves at most its last workgroup column and row
 * without a pixel, which return without a write. `name` must be unique
 * per variant (it names the routine and its workgroup arrays).
 *
 * Each thread keeps its pixel's excess, height and the flows of all four
 * of its edges in registers; the flow of its left (upper) edge is also
 * kept by the left (upper) neighbour, which owns it and writes it back.
 * Both update it with the same operations on the same values (the flow,
 * then the owner's push over it, less the other's), so the two copies
 * stay equal to the bit. Workgroup memory holds only the heights and the
 * pushes, and an iteration needs two barriers: after the pushes, and
 * after the relabel (which uses the heights read for the pushes: they are
 * the heights before the iteration).
 */
export function blockPushWgsl(name: string, W: number, H: number, tile: BlockTile, iterations: number, gate: WgslGate | null): string {
  const N = tile.width * tile.height;
  const TW = tile.width;
  const INF = f(W * H + 1);
  const [ox, oy] = blockPushShift(tile);
  const groups: [number, number] = [groupsFor(W, tile.width, ox), groupsFor(H, tile.height, oy)];
  const v = (s: string): string => `${name}_${s}`;
  const out = (z: number): string => `u32(x + ${W} * (y + ${H} * ${z}))`;
  return `${workgroupEntryMarker({ name, threads: [tile.width, tile.height], groups })}
var<workgroup> ${v('h')} : array<f32, ${N}>;
var<workgroup> ${v('p')} : array<vec4<f32>, ${N}>;
var<workgroup> ${v('gate')} : u32;
var<workgroup> ${v('anyAtomic')} : atomic<u32>;
var<workgroup> ${v('any')} : u32;
fn ${name}(lid : vec3<u32>, wid : vec3<u32>) {
  ${pixelHead(W, H, tile, 'i32(params.user_OX)', 'i32(params.user_OY)')}
  var e = 0.0;
  var h = ${INF};
  var fr = 0.0;
  var fd = 0.0;
  // Flows of the left and upper edges (fL = fr(p−1), fU = fd(p−W)).
  var fL = 0.0;
  var fU = 0.0;
  // Capacities of the pixel's edges (cL = c(p → p−1) = C1(p−1), cU = C3(p−W)); heights
  // of the neighbours across the tile's border, held for the launch.
  var cR = 0.0;
  var cD = 0.0;
  var cL = 0.0;
  var cU = 0.0;
  var hRo = ${INF};
  var hDo = ${INF};
  var hLo = ${INF};
  var hUo = ${INF};
  if (inside) {
    e = get_user_S(0, y, x);
    h = get_user_S(1, y, x);
    fr = get_user_S(2, y, x);
    fd = get_user_S(3, y, x);
    if (hasR) {
      cR = get_user_C(0, y, x);
      if (!inR) { hRo = get_user_S(1, y, x + 1); }
    }
    if (hasD) {
      cD = get_user_C(2, y, x);
      if (!inD) { hDo = get_user_S(1, y + 1, x); }
    }
    if (hasL) {
      cL = get_user_C(1, y, x - 1);
      fL = get_user_S(2, y, x - 1);
      if (!inL) { hLo = get_user_S(1, y, x - 1); }
    }
    if (hasU) {
      cU = get_user_C(3, y - 1, x);
      fU = get_user_S(3, y - 1, x);
      if (!inU) { hUo = get_user_S(1, y - 1, x); }
    }
  }
  ${gateHead(name, gate)}
  if (inside && e > 0.0 && h < ${INF}) { atomicOr(&${v('anyAtomic')}, 1u); }
  workgroupBarrier();
  if (lid.x == 0u && lid.y == 0u) { ${v('any')} = atomicLoad(&${v('anyAtomic')}); }
  let work = workgroupUniformLoad(&${v('any')});
  if (gated == 0u && work != 0u) {
    ${v('h')}[i] = h;
    workgroupBarrier();
    for (var it = 0; it < ${iterations}; it++) {
      let hh = h;
      // The neighbours' heights before the iteration: the pushes and the relabel both use them.
      var hR = hRo;
      var hD = hDo;
      var hL = hLo;
      var hU = hUo;
      if (inR) { hR = ${v('h')}[i + 1]; }
      if (inD) { hD = ${v('h')}[i + ${TW}]; }
      if (inL) { hL = ${v('h')}[i - 1]; }
      if (inU) { hU = ${v('h')}[i - ${TW}]; }
      // Pushes of the pixel, as lockstepKernels.ts decides them, over the tile's own edges only.
      var pr = 0.0;
      var pd = 0.0;
      var pl = 0.0;
      var pu = 0.0;
      if (inside && e > 0.0 && hh < ${INF}) {
        var m = e;
        if (inR && hR + 1.0 == hh) { pr = min(m, cR - fr); m = m - pr; }
        if (m > 0.0 && inD && hD + 1.0 == hh) { pd = min(m, cD - fd); m = m - pd; }
        if (m > 0.0 && inL && hL + 1.0 == hh) { pl = min(m, cL + fL); m = m - pl; }
        if (m > 0.0 && inU && hU + 1.0 == hh) { pu = min(m, cU + fU); }
      }
      ${v('p')}[i] = vec4<f32>(pr, pd, pl, pu);
      workgroupBarrier();
      // Each pixel applies its own pushes and what its tile neighbours pushed to it.
      var inflow = 0.0;
      var frN = fr + pr;
      var fdN = fd + pd;
      var fLN = fL;
      var fUN = fU;
      if (inL) {
        let q = ${v('p')}[i - 1].x;
        inflow = inflow + q;
        fLN = (fL + q) - pl;
      }
      if (inR) {
        let q = ${v('p')}[i + 1].z;
        inflow = inflow + q;
        frN = frN - q;
      }
      if (inU) {
        let q = ${v('p')}[i - ${TW}].y;
        inflow = inflow + q;
        fUN = (fU + q) - pu;
      }
      if (inD) {
        let q = ${v('p')}[i + ${TW}].w;
        inflow = inflow + q;
        fdN = fdN - q;
      }
      let eN = e - pr - pd - pl - pu + inflow;
      // Relabel from the residuals after the pushes and the heights before them.
      var hn = hh;
      if (inside && eN > 0.0 && hh < ${INF}) {
        var best = ${INF};
        var admissible = false;
        ${relabelFrom('hasR', 'hR', 'cR - frN')}
        ${relabelFrom('hasD', 'hD', 'cD - fdN')}
        ${relabelFrom('hasL', 'hL', 'cL + fLN')}
        ${relabelFrom('hasU', 'hU', 'cU + fUN')}
        if (!admissible) { hn = min(best, ${INF}); }
      }
      e = eN;
      fr = frN;
      fd = fdN;
      fL = fLN;
      fU = fUN;
      h = hn;
      // No thread reads heights between the barriers (the relabel used the ones read for the pushes).
      ${v('h')}[i] = hn;
      workgroupBarrier();
    }
  }
  if (inside) {
    result[${out(0)}] = e;
    result[${out(1)}] = h;
    result[${out(2)}] = fr;
    result[${out(3)}] = fd;
  }
}
`;
}

/**
 * Where a block BFS launch takes its distances from: the distances D of
 * the launch before it, or (the first launch of a global relabel) the
 * state itself, so that no pass of its own starts the relabel: from
 * scratch (1 where the pixel has residual to the sink, "unreachable"
 * elsewhere: bfsStartSource) or from the state's heights (bfsHeightsSource).
 */
export type BlockBfsInput = 'distances' | 'scratch' | 'heights';

/** The distance a launch starting from the state gives pixel (X, Y) before relaxing (WGSL). */
function startDistance(from: Exclude<BlockBfsInput, 'distances'>, X: string, Y: string, INF: string): string {
  return from === 'scratch' ? `select(${INF}, 1.0, get_user_S(0, ${Y}, ${X}) < 0.0)` : `get_user_S(1, ${Y}, ${X})`;
}

/**
 * WGSL of one block BFS launch (see the file's comment): the tile's
 * distances relaxed to their fixed point, the distances outside it held.
 * It reads its distances from D or starts them from the state (`from`),
 * and writes the distances [W, H] or, the relabel's last launch
 * (`toState`), the state with its heights replaced by them [W, H, 4]
 * (withHeightsSource). Gated, it writes what the passes it replaces
 * would: the distances it read (the state's heights when it starts from
 * the state), or the state unchanged.
 */
export function blockBfsWgsl(name: string, W: number, H: number, tile: BlockTile, gate: WgslGate | null, from: BlockBfsInput = 'distances', toState = false): string {
  const N = tile.width * tile.height;
  const TW = tile.width;
  const INF = f(W * H + 1);
  const groups: [number, number] = [groupsFor(W, tile.width, 0), groupsFor(H, tile.height, 0)];
  const v = (s: string): string => `${name}_${s}`;
  const dist = (X: string, Y: string): string => (from === 'distances' ? `get_user_D(0, ${Y}, ${X})` : startDistance(from, X, Y, INF));
  const gatedDistance = from === 'distances' ? 'get_user_D(0, y, x)' : 'get_user_S(1, y, x)';
  const write = toState
    ? `result[u32(x + ${W} * y)] = get_user_S(0, y, x);
    result[u32(x + ${W} * (y + ${H}))] = select(get_user_S(1, y, x), d, gated == 0u);
    result[u32(x + ${W} * (y + ${2 * H}))] = get_user_S(2, y, x);
    result[u32(x + ${W} * (y + ${3 * H}))] = get_user_S(3, y, x);`
    : `result[u32(x + ${W} * y)] = select(${gatedDistance}, d, gated == 0u);`;
  return `${workgroupEntryMarker({ name, threads: [tile.width, tile.height], groups })}
var<workgroup> ${v('d')} : array<f32, ${N}>;
var<workgroup> ${v('gate')} : u32;
var<workgroup> ${v('changedAtomic')} : atomic<u32>;
var<workgroup> ${v('changed')} : u32;
fn ${name}(lid : vec3<u32>, wid : vec3<u32>) {
  ${pixelHead(W, H, tile, 0, 0)}
  var d = ${INF};
  var sink = false;
  // Residual edges out of the pixel, and the distances across the tile's border (held).
  var rR = false;
  var rD = false;
  var rL = false;
  var rU = false;
  var dRo = ${INF};
  var dDo = ${INF};
  var dLo = ${INF};
  var dUo = ${INF};
  if (inside) {
    d = ${dist('x', 'y')};
    sink = get_user_S(0, y, x) < 0.0;
    if (hasR) {
      rR = get_user_C(0, y, x) - get_user_S(2, y, x) > 0.0;
      if (rR && !inR) { dRo = ${dist('x + 1', 'y')}; }
    }
    if (hasD) {
      rD = get_user_C(2, y, x) - get_user_S(3, y, x) > 0.0;
      if (rD && !inD) { dDo = ${dist('x', 'y + 1')}; }
    }
    if (hasL) {
      rL = get_user_C(1, y, x - 1) + get_user_S(2, y, x - 1) > 0.0;
      if (rL && !inL) { dLo = ${dist('x - 1', 'y')}; }
    }
    if (hasU) {
      rU = get_user_C(3, y - 1, x) + get_user_S(3, y - 1, x) > 0.0;
      if (rU && !inU) { dUo = ${dist('x', 'y - 1')}; }
    }
  }
  ${gateHead(name, gate)}
  if (gated == 0u) {
    if (sink) { d = 1.0; }
    ${v('d')}[i] = d;
    workgroupBarrier();
    // At most one step per tile pixel: each step that changes anything lowers a distance to its final value's path.
    for (var step = 0; step < ${N + 1}; step++) {
      var m = d;
      if (inside && !sink) {
        if (rR) {
          var q = dRo;
          if (inR) { q = ${v('d')}[i + 1]; }
          m = min(m, q + 1.0);
        }
        if (rD) {
          var q = dDo;
          if (inD) { q = ${v('d')}[i + ${TW}]; }
          m = min(m, q + 1.0);
        }
        if (rL) {
          var q = dLo;
          if (inL) { q = ${v('d')}[i - 1]; }
          m = min(m, q + 1.0);
        }
        if (rU) {
          var q = dUo;
          if (inU) { q = ${v('d')}[i - ${TW}]; }
          m = min(m, q + 1.0);
        }
        m = min(m, ${INF});
      }
      if (m < d) { atomicOr(&${v('changedAtomic')}, 1u); }
      workgroupBarrier();
      ${v('d')}[i] = m;
      d = m;
      if (lid.x == 0u && lid.y == 0u) {
        ${v('changed')} = atomicLoad(&${v('changedAtomic')});
        atomicStore(&${v('changedAtomic')}, 0u);
      }
      if (workgroupUniformLoad(&${v('changed')}) == 0u) { break; }
    }
  }
  if (inside) {
    ${write}
  }
}
`;
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

/**
 * The two block push-relabel passes (the tiling and its half-tile shift),
 * each `iterations` local iterations; a pass takes (S, C) and, with a gate,
 * the gate's input G. `settings` gives the [W, H, 4] state kernel settings.
 */
export function blockPushPasses(gpu: GPU, W: number, H: number, tile: BlockTile, iterations: number, settings: IGPUKernelSettings, gate: WgslGate | null): Array<(S: unknown, C: unknown, G?: unknown) => unknown> {
  if (!runsWgsl(gpu)) throw new Error('push scheme block: needs WebGPU (its kernels are WGSL with workgroup memory)');
  const name = `blockPush_${tile.width}x${tile.height}_${iterations}${gate ? '_g' : ''}`;
  const k = workgroupKernel(gpu, ['S', 'C', 'OX', 'OY'], name, blockPushWgsl(name, W, H, tile, iterations, gate), settings, gate);
  const [sx, sy] = blockPushShift(tile);
  return [[0, 0], [sx, sy]].map(([ox, oy]) => (S: unknown, C: unknown, G?: unknown) => k(S, C, ox, oy, G));
}

/** The shift of the second block push tiling: half a tile in x and y. */
export function blockPushShift(tile: BlockTile): [number, number] {
  return [tile.width >> 1, tile.height >> 1];
}

/**
 * The global relabel of the block BFS: `passes` launches (at least one),
 * the first starting from the state (from scratch or from its heights)
 * and the last writing the state with the new heights, so that the
 * relabel is its launches and nothing else. `dist` and `state` give the
 * [W, H] and [W, H, 4] kernel settings.
 */
export function blockRelabel(gpu: GPU, W: number, H: number, tile: BlockTile, dist: IGPUKernelSettings, state: IGPUKernelSettings, gate: WgslGate | null):
(S: unknown, C: unknown, passes: number, fromScratch: boolean, G?: unknown) => unknown {
  if (!runsWgsl(gpu)) throw new Error('bfs scheme block: needs WebGPU (its kernels are WGSL with workgroup memory)');
  const launch = (from: BlockBfsInput, toState: boolean): ((...a: unknown[]) => unknown) => {
    const name = `blockBfs_${tile.width}x${tile.height}_${from}${toState ? '_state' : ''}${gate ? '_g' : ''}`;
    return workgroupKernel(gpu, from === 'distances' ? ['S', 'C', 'D'] : ['S', 'C'], name, blockBfsWgsl(name, W, H, tile, gate, from, toState), toState ? state : dist, gate);
  };
  const kinds = new Map<string, (...a: unknown[]) => unknown>();
  const kernel = (from: BlockBfsInput, toState: boolean): ((...a: unknown[]) => unknown) => {
    const key = `${from}:${toState}`;
    let k = kinds.get(key);
    if (!k) kinds.set(key, (k = launch(from, toState)));
    return k;
  };
  return (S, C, passes, fromScratch, G) => {
    if (!Number.isInteger(passes) || passes < 1) throw new Error(`bfs scheme block: a global relabel needs at least one launch, got ${passes}`);
    const from: BlockBfsInput = fromScratch ? 'scratch' : 'heights';
    if (passes === 1) return kernel(from, true)(S, C, G);
    let D = kernel(from, false)(S, C, G);
    for (let i = 1; i < passes - 1; i++) D = kernel('distances', false)(S, C, D, G);
    return kernel('distances', true)(S, C, D, G);
  };
}

/** Threads per side of a block check's workgroup, and pixels per side of the square each workgroup checks (2×2 pixels a thread). */
const CHECK_THREADS = 16;
export const BLOCK_CHECK_SPAN = 32;

/**
 * WGSL of the convergence check of a state, one workgroup per 32×32
 * pixels, [ceil(W/32), ceil(H/32)]: the code of expansion/gpuMoveKernels.ts's
 * checkTilesSource (1 when a pixel holds excess at a finite height, plus 2
 * when a height is not a fixed point of the BFS equations), OR-ed over the
 * square in workgroup memory, so that a check needs one launch where the
 * per-pixel gather and its first reduction levels needed several. Gated,
 * it reports 0 (converged), as the gated gather does.
 */
export function blockCheckWgsl(name: string, W: number, H: number, gate: WgslGate | null): string {
  const T = CHECK_THREADS;
  const per = BLOCK_CHECK_SPAN / T;
  const OW = Math.ceil(W / BLOCK_CHECK_SPAN);
  const INF = f(W * H + 1);
  const v = (s: string): string => `${name}_${s}`;
  return `${workgroupEntryMarker({ name, threads: [T, T], groups: [OW, Math.ceil(H / BLOCK_CHECK_SPAN)] })}
var<workgroup> ${v('gate')} : u32;
var<workgroup> ${v('code')} : atomic<u32>;
fn ${name}(lid : vec3<u32>, wid : vec3<u32>) {
  ${gateHead(name, gate)}
  var code = 0u;
  if (gated == 0u) {
    for (var b = 0; b < ${per}; b++) {
      for (var a = 0; a < ${per}; a++) {
        let x = i32(wid.x) * ${BLOCK_CHECK_SPAN} + a * ${T} + i32(lid.x);
        let y = i32(wid.y) * ${BLOCK_CHECK_SPAN} + b * ${T} + i32(lid.y);
        if (x < ${W} && y < ${H}) {
          let e = get_user_S(0, y, x);
          let h = get_user_S(1, y, x);
          if (e > 0.0 && h < ${INF}) { code = code | 1u; }
          var want = 1.0;
          if (e >= 0.0) {
            var m = ${INF} - 1.0;
            if (x + 1 < ${W}) {
              if (get_user_C(0, y, x) - get_user_S(2, y, x) > 0.0) { m = min(m, get_user_S(1, y, x + 1)); }
            }
            if (y + 1 < ${H}) {
              if (get_user_C(2, y, x) - get_user_S(3, y, x) > 0.0) { m = min(m, get_user_S(1, y + 1, x)); }
            }
            if (x > 0) {
              if (get_user_C(1, y, x - 1) + get_user_S(2, y, x - 1) > 0.0) { m = min(m, get_user_S(1, y, x - 1)); }
            }
            if (y > 0) {
              if (get_user_C(3, y - 1, x) + get_user_S(3, y - 1, x) > 0.0) { m = min(m, get_user_S(1, y - 1, x)); }
            }
            want = min(${INF}, m + 1.0);
          }
          if (want != h) { code = code | 2u; }
        }
      }
    }
  }
  if (code != 0u) { atomicOr(&${v('code')}, code); }
  workgroupBarrier();
  if (lid.x == 0u && lid.y == 0u) {
    result[wid.x + ${OW}u * wid.y] = f32(atomicLoad(&${v('code')}));
  }
}
`;
}

/**
 * The block convergence check (blockCheckWgsl): (S, C[, G]) → codes
 * [ceil(W/32), ceil(H/32)]; `settings` must have that output.
 */
export function blockCheck(gpu: GPU, W: number, H: number, settings: IGPUKernelSettings, gate: WgslGate | null): (...a: unknown[]) => unknown {
  if (!runsWgsl(gpu)) throw new Error('bfs scheme block: needs WebGPU (its kernels are WGSL with workgroup memory)');
  const name = `blockCheck${gate ? '_g' : ''}`;
  return workgroupKernel(gpu, ['S', 'C'], name, blockCheckWgsl(name, W, H, gate), settings, gate);
}
