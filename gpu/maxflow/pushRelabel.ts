import { Input } from '../runtime/gpujs/gpuJs';
import type { IGPUKernelSettings, IPipelineRunShortcut, KernelOutput } from 'gpu.js';
import { MAX_GPU_EXACT_CAPACITY, validateGridGraph, type GridGraph } from '../../graphcut/gridGraph';
import type { MaxFlowResult, MaxFlowSolver } from '../../graphcut/maxflow';
import type { GpuContext } from '../runtime/context';
import { DEFAULT_BLOCK, globalRelabelPasses, iterationPasses, type BlockSettings, type GlobalRelabel, type KernelFamilies, type StatePass } from './pushRelabelKernels';
import { kernelFamiliesOf, NO_FAMILIES, type BfsScheme, type PushScheme } from './kernelFamilies';
import { CAPACITY_PLANES, PLANE, STATE_PLANES } from './pushRelabelLayout';

/**
 * Exact push-relabel max-flow on gpu.js kernels (WebGPU on a real GPU, or
 * gpu.js's webasm / cpu backends, which run the very same kernels).
 *
 * Scheme: the source edges are saturated up front (terminal capacities net
 * out first), then pipeline calls alternate K push-relabel iterations
 * (segmented sweeps by default, or another push family) with a global
 * relabel (reverse BFS from the sink as scans along straight runs by
 * default, or another BFS family), all chained in one gpu.js pipeline so a
 * call is one submission and one readback. After every readback the host checks, in one
 * linear sweep, that the heights are a fixed point of the BFS equations
 * (which makes them the exact residual distances to the sink) and then that
 * no pixel with excess has a finite distance. Only then does the solver stop
 * (the convergence test of JF-Cut): the flow is maximum and the pixels with a
 * finite distance are exactly the canonical sink side.
 */

export type GlobalRelabelMode = 'pipeline' | 'perPass';

export interface PushRelabelOptions {
  /** K: push-relabel iterations between two global relabels (default 16; the device moves have their own K, GpuMoveOptions.iterationsPerRound). */
  iterationsPerRelabel?: number;
  /**
   * 'pipeline' (default): the K iterations and the BFS levels of the next
   * global relabel run in one pipeline call. 'perPass': push iterations in
   * one call, then every BFS level as its own call with a readback, the
   * unfused baseline for ablations.
   */
  globalRelabel?: GlobalRelabelMode;
  /** BFS passes chained after the iterations in one call (default 64). */
  bfsPassesPerCall?: number;
  /** BFS passes per follow-up call when the first ones did not reach the fixed point (default 256). */
  bfsContinuePasses?: number;
  /** Safety limit on push-relabel iterations per solve; exceeding it throws (default 4·10^6). */
  maxIterations?: number;
  /** The push family (kernelFamilies.ts): 'sweep' (default), an iteration a horizontal and a vertical segmented sweep; 'split-sweep', the same sweeps, each as a gather pass that walks the runs once per pixel and a loop-free apply pass; 'block' (WebGPU); or one of `families`. */
  push?: PushScheme;
  /** The BFS family: 'scan' (default), a BFS pass relaxes along straight residual runs; 'block' (WebGPU); or one of `families`. */
  bfs?: BfsScheme;
  /** Push and BFS families besides the product's, which `push` and `bfs` may name (the benchmarks' lockstep push and level BFS); default none. */
  families?: KernelFamilies;
  /** Segment length of the sweeps and longest run of a BFS scan (default 16). */
  reach?: number;
  /** Tile and local iterations of the block schemes (default DEFAULT_BLOCK). */
  block?: BlockSettings;
}

const DEFAULTS: Required<PushRelabelOptions> = {
  iterationsPerRelabel: 16,
  globalRelabel: 'pipeline',
  bfsPassesPerCall: 64,
  bfsContinuePasses: 256,
  maxIterations: 4_000_000,
  push: 'sweep',
  bfs: 'scan',
  reach: 16,
  block: DEFAULT_BLOCK,
  families: NO_FAMILIES,
};

/** Resolves and checks options; throws a one-line error naming the bad option. */
export function resolvePushRelabelOptions(options: PushRelabelOptions = {}): Required<PushRelabelOptions> {
  const o = { ...DEFAULTS, ...options };
  const positive: Array<keyof PushRelabelOptions> = ['iterationsPerRelabel', 'bfsPassesPerCall', 'bfsContinuePasses', 'maxIterations'];
  for (const k of positive) {
    const v = o[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) {
      throw new Error(`push-relabel option ${k}: expected a positive integer, got ${String(v)}`);
    }
  }
  if (o.globalRelabel !== 'pipeline' && o.globalRelabel !== 'perPass') {
    throw new Error(`push-relabel option globalRelabel: expected 'pipeline' or 'perPass', got '${String(o.globalRelabel)}'`);
  }
  kernelFamiliesOf('push-relabel', o);
  return o;
}

/**
 * Checks that every value the kernels store per pixel stays an exact f32
 * integer: excess (at most its initial excess plus all capacity into it),
 * residuals of each grid edge pair and of the sink edge, and heights. Returns
 * null when the graph fits, or a one-line reason naming the first pixel that
 * does not.
 */
export function f32ExactnessViolation(g: GridGraph): string | null {
  const { width: W, height: H } = g;
  const n = W * H;
  const bound = MAX_GPU_EXACT_CAPACITY;
  if (n + 2 > bound) return `grid has ${n} pixels; heights up to ${n + 1} exceed the f32-exact bound 2^24 = ${bound}`;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      const excess0 = Math.max(0, g.source[p] - g.sink[p]);
      let reach = excess0;
      if (x > 0) reach += g.right[p - 1];
      if (x + 1 < W) reach += g.rightRev[p];
      if (y > 0) reach += g.down[p - W];
      if (y + 1 < H) reach += g.downRev[p];
      if (reach > bound) return `pixel ${p} (x=${x}, y=${y}) can hold excess up to ${reach}, above the f32-exact bound 2^24 = ${bound}`;
      if (g.sink[p] > bound) return `sink[${p}] = ${g.sink[p]} is above the f32-exact bound 2^24 = ${bound}`;
      if (g.right[p] + g.rightRev[p] > bound) return `right/rightRev at pixel ${p} sum to ${g.right[p] + g.rightRev[p]}, above the f32-exact bound 2^24 = ${bound}`;
      if (g.down[p] + g.downRev[p] > bound) return `down/downRev at pixel ${p} sum to ${g.down[p] + g.downRev[p]}, above the f32-exact bound 2^24 = ${bound}`;
    }
  }
  return null;
}

/** Error thrown for graphs the f32 kernels cannot solve exactly; callers may fall back to an exact CPU solver. */
export class GpuPrecisionError extends Error {
  constructor(reason: string) {
    super(`push-relabel: graph refused, ${reason}; scaling capacities down would not be exact, use the bk backend`);
    this.name = 'GpuPrecisionError';
  }
}

interface SizedPipelines {
  steps: StatePass[];
  relabel: GlobalRelabel;
  pipelines: Map<string, IPipelineRunShortcut>;
}

interface CallStats {
  pipelineCalls: number;
  readbacks: number;
  iterations: number;
  globalRelabels: number;
  bfsPasses: number;
  pushRelabelMs: number;
  globalRelabelMs: number;
  fusedMs: number;
  hostMs: number;
}

export class PushRelabelSolver implements MaxFlowSolver {
  readonly name: string;
  readonly device: string;
  readonly options: Required<PushRelabelOptions>;
  private readonly sized = new Map<string, SizedPipelines>();

  constructor(private readonly ctx: GpuContext, options: PushRelabelOptions = {}) {
    this.options = resolvePushRelabelOptions(options);
    this.name = `pushrelabel-${ctx.mode}`;
    this.device = ctx.device;
  }

  /** Executor gpu.js chose for the last pipeline built (e.g. 'fused-encoder' on WebGPU); for reports. */
  executorKinds(): string[] {
    const kinds = new Set<string>();
    for (const s of this.sized.values()) for (const p of s.pipelines.values()) if (p.executorKind) kinds.add(p.executorKind);
    return [...kinds];
  }

  async solve(graph: GridGraph): Promise<MaxFlowResult> {
    validateGridGraph(graph);
    const violation = f32ExactnessViolation(graph);
    if (violation) throw new GpuPrecisionError(violation);
    const t0 = performance.now();
    const { width: W, height: H } = graph;
    const n = W * H;
    const INF = n + 1;
    const o = this.options;

    const { caps, state, sinkResidual0, baseFlow } = initialKernelState(graph);
    const capsInput = asInput(caps, W, H, CAPACITY_PLANES);
    const stats: CallStats = {
      pipelineCalls: 0, readbacks: 0, iterations: 0, globalRelabels: 0, bfsPasses: 0,
      pushRelabelMs: 0, globalRelabelMs: 0, fusedMs: 0, hostMs: 0,
    };
    let current: Float32Array = state;
    const run = async (iterations: number, init: boolean, bfs: number): Promise<void> => {
      const pipe = this.pipeline(W, H, iterations, init, bfs);
      const t = performance.now();
      const out = await pipe(asInput(current, W, H, STATE_PLANES), capsInput);
      current = flattenState(out as KernelOutput, W, H);
      const dt = performance.now() - t;
      stats.pipelineCalls++;
      stats.readbacks++;
      stats.iterations += iterations;
      stats.bfsPasses += bfs;
      if (init) stats.globalRelabels++;
      if (iterations > 0 && (init || bfs > 0)) stats.fusedMs += dt;
      else if (iterations > 0) stats.pushRelabelMs += dt;
      else stats.globalRelabelMs += dt;
    };
    // One BFS level per call in 'perPass' mode; otherwise many levels chained in the same call.
    const perPass = o.globalRelabel === 'perPass';
    const firstBfs = perPass ? 1 : o.bfsPassesPerCall;
    const moreBfs = perPass ? 1 : o.bfsContinuePasses;

    await run(0, true, firstBfs);
    for (;;) {
      let t = performance.now();
      let fixed = isBfsFixedPoint(current, caps, W, H, INF);
      stats.hostMs += performance.now() - t;
      while (!fixed) {
        await run(0, false, moreBfs);
        t = performance.now();
        fixed = isBfsFixedPoint(current, caps, W, H, INF);
        stats.hostMs += performance.now() - t;
      }
      t = performance.now();
      const active = hasReachableExcess(current, n, INF);
      stats.hostMs += performance.now() - t;
      if (!active) break;
      if (stats.iterations + o.iterationsPerRelabel > o.maxIterations) {
        throw new Error(`push-relabel: no convergence within maxIterations = ${o.maxIterations} on a ${W}×${H} graph`);
      }
      if (perPass) {
        await run(o.iterationsPerRelabel, false, 0);
        await run(0, true, 1);
      } else {
        await run(o.iterationsPerRelabel, true, o.bfsPassesPerCall);
      }
    }

    const sinkSide = new Uint8Array(n);
    let flow = baseFlow;
    const hOff = PLANE.height * n;
    const vOff = PLANE.net * n;
    for (let p = 0; p < n; p++) {
      sinkSide[p] = current[hOff + p] < INF ? 1 : 0;
      flow += sinkResidual0[p] - sinkResidualOf(current[vOff + p]);
    }
    return {
      flow,
      sinkSide,
      stats: { ...stats, totalMs: performance.now() - t0, deviceErrors: this.ctx.deviceErrors.length },
    };
  }

  /** The compiled pipeline for one (size, schedule); gpu.js kernels have a fixed output size, so each size gets its own. */
  private pipeline(W: number, H: number, iterations: number, init: boolean, bfs: number): IPipelineRunShortcut {
    const sizeKey = `${W}x${H}`;
    let sized = this.sized.get(sizeKey);
    if (!sized) {
      const o = this.options;
      const settings = (planes: number): IGPUKernelSettings => pushRelabelKernelSettings(W, H, o.reach, planes);
      const gpu = this.ctx.gpu;
      const families = kernelFamiliesOf('push-relabel', o);
      sized = {
        steps: iterationPasses(gpu, families.push, settings, undefined, o.block),
        relabel: globalRelabelPasses(gpu, families.bfs, settings, undefined, o.block),
        pipelines: new Map(),
      };
      this.sized.set(sizeKey, sized);
    }
    const key = `${iterations}:${init ? 1 : 0}:${bfs}`;
    let pipe = sized.pipelines.get(key);
    if (!pipe) {
      const { steps, relabel } = sized;
      pipe = this.ctx.gpu.createPipeline(function (this: { constants: Record<string, unknown> }, S: unknown, C: unknown) {
        const c = this.constants as { iterations: number; init: number; bfs: number };
        let s = S;
        for (let i = 0; i < c.iterations; i++) for (const step of steps) s = step(s, C);
        s = relabel(s, C, c.bfs, c.init === 1);
        return s;
      }, { constants: { iterations, init: init ? 1 : 0, bfs } });
      sized.pipelines.set(key, pipe);
    }
    return pipe;
  }

  dispose(): void {
    for (const s of this.sized.values()) {
      for (const p of s.pipelines.values()) void p.destroy();
    }
    this.sized.clear();
  }
}

/**
 * Settings of the [W, H, 4] state kernels; loopMaxIterations (a real gpu.js
 * setting missing from its typings) must admit the sweeps' segment walks.
 */
export function pushRelabelKernelSettings(W: number, H: number, reach: number, planes: number = STATE_PLANES): IGPUKernelSettings {
  return {
    output: planes === 1 ? [W, H] : [W, H, planes], constants: { W, H, INF: W * H + 1, REACH: reach }, precision: 'single', loopMaxIterations: Math.max(1000, reach + 1),
  } as IGPUKernelSettings;
}

/**
 * The kernels' starting arrays for a graph: terminal capacities netted
 * (min(c_s, c_t) goes straight through p and counts as flow; the rest is
 * excess or sink residual, the net value c_s − c_t), heights and flows 0,
 * and the capacity planes.
 */
export function initialKernelState(graph: GridGraph): { caps: Float32Array; state: Float32Array; sinkResidual0: Float64Array; baseFlow: number } {
  const n = graph.width * graph.height;
  const caps = new Float32Array(CAPACITY_PLANES * n);
  const state = new Float32Array(STATE_PLANES * n);
  const sinkResidual0 = new Float64Array(n);
  let baseFlow = 0;
  for (let p = 0; p < n; p++) {
    const cs = graph.source[p];
    const ct = graph.sink[p];
    const through = Math.min(cs, ct);
    baseFlow += through;
    state[PLANE.net * n + p] = cs - ct;
    sinkResidual0[p] = ct - through;
    caps[p] = graph.right[p];
    caps[n + p] = graph.rightRev[p];
    caps[2 * n + p] = graph.down[p];
    caps[3 * n + p] = graph.downRev[p];
  }
  return { caps, state, sinkResidual0, baseFlow };
}

/** gpu.js reads typed arrays through Input although its typings only name number[]. */
function asInput(values: Float32Array, W: number, H: number, planes: number): Input {
  return new Input(values as unknown as number[], [W, H, planes]);
}

/**
 * Planes of a pipeline result for a [W, H, 4] state output, as one flat
 * plane-major array (the layout of an Input of that shape), written into
 * `flat`: all four by default, or the consecutive planes `from`..`to` − 1.
 */
export function flattenState(out: KernelOutput, W: number, H: number, flat: Float32Array = new Float32Array(STATE_PLANES * W * H), from = 0, to = STATE_PLANES): Float32Array {
  const n = W * H;
  if (ArrayBuffer.isView(out)) {
    flat.set((out as unknown as Float32Array).subarray(from * n, to * n));
    return flat;
  }
  const planes = out as unknown as ArrayLike<ArrayLike<ArrayLike<number>>>;
  for (let z = from; z < to; z++) {
    const plane = planes[z];
    for (let y = 0; y < H; y++) flat.set(plane[y], (z - from) * n + y * W);
  }
  return flat;
}

/**
 * True when the heights equal d(p) = 1 for pixels with sink residual and
 * min(INF, 1 + min d(q) over residual edges p → q) for the others. Any
 * fixed point of these equations is the exact BFS distance to the sink (a
 * finite value always has a strictly smaller neighbour, so following them
 * reaches the sink in exactly d(p) steps), whatever passes produced it.
 */
export function isBfsFixedPoint(s: Float32Array, caps: Float32Array, W: number, H: number, INF: number): boolean {
  const n = W * H;
  const h = PLANE.height * n;
  const fR = PLANE.flowRight * n;
  const fD = PLANE.flowDown * n;
  const v = PLANE.net * n;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      let want: number;
      if (s[v + p] < 0) {
        want = 1;
      } else {
        let m = INF - 1;
        if (x + 1 < W && caps[p] - s[fR + p] > 0) m = Math.min(m, s[h + p + 1]);
        if (y + 1 < H && caps[2 * n + p] - s[fD + p] > 0) m = Math.min(m, s[h + p + W]);
        if (x > 0 && caps[n + p - 1] + s[fR + p - 1] > 0) m = Math.min(m, s[h + p - 1]);
        if (y > 0 && caps[3 * n + p - W] + s[fD + p - W] > 0) m = Math.min(m, s[h + p - W]);
        want = Math.min(INF, m + 1);
      }
      if (s[h + p] !== want) return false;
    }
  }
  return true;
}

/** The residual capacity to the sink of a pixel of net value v (the state's plane 0). */
export function sinkResidualOf(v: number): number {
  return v < 0 ? -v : 0;
}

/** True while some pixel with excess still has a finite distance to the sink. */
function hasReachableExcess(s: Float32Array, n: number, INF: number): boolean {
  const v = PLANE.net * n;
  const h = PLANE.height * n;
  for (let p = 0; p < n; p++) if (s[v + p] > 0 && s[h + p] < INF) return true;
  return false;
}
