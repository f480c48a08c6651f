/**
 * Block BFS, the global relabel of the block family (blockWorkgroup.ts).
 *
 * A launch relaxes the distances of a tile to the fixed point of
 * the BFS equations with the distances outside the tile held at the values
 * the launch read (Bellman–Ford inside the tile, one level per step, until
 * a step changes nothing). Every value stays an upper bound of the residual
 * distance to the sink and only decreases, so repeated launches reach the
 * exact distances; a tile whose equations already hold stops after one
 * step. Launches are repeated a fixed number of times per global relabel
 * (a plan cannot branch); the convergence check reports distances that are
 * not yet a fixed point, as it does for the other BFS schemes.
 */
import type { GPU, IGPUKernelSettings } from 'gpu.js';
import { workgroupEntryMarker } from '../runtime/gpujs/workgroupEntry';
import { gateHead, groupsFor, pixelHead, runsWgsl, wgslFloat, workgroupKernel, zeroedAtomics, type BlockTile, type WgslGate } from './blockWorkgroup';

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
  const INF = wgslFloat(W * H + 1);
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
  ${zeroedAtomics(v('changedAtomic'))}
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
