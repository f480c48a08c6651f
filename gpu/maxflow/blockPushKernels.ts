/**
 * Block push-relabel (the block family: blockWorkgroup.ts).
 *
 * A workgroup loads a tile of pixels (one per thread) into workgroup
 * memory and runs `iterations` lockstep push-relabel iterations there (each
 * pixel with excess and a finite height pushes to the neighbours one level
 * below it, right, down, left, up, each push capped by the excess left and
 * the edge's residual; then a relabel from the heights before the pushes)
 * before it writes the tile back. Only the
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
 */
import type { GPU, IGPUKernelSettings } from 'gpu.js';
import { workgroupEntryMarker } from '../runtime/gpujs/workgroupEntry';
import { gateHead, groupsFor, pixelHead, runsWgsl, wgslFloat, workgroupKernel, zeroedAtomics, type BlockTile, type WgslGate } from './blockWorkgroup';

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
  const INF = wgslFloat(W * H + 1);
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
  ${zeroedAtomics(v('anyAtomic'))}
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
      // Pushes of the pixel, in the order right, down, left, up, over the tile's own edges only.
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
