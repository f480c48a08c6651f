import type { GPU, IGPUKernelSettings } from 'gpu.js';

/**
 * gpu.js kernel sources for lockstep push-relabel on a 4-connected grid.
 *
 * The sources are generated as strings, not written as TypeScript functions,
 * because gpu.js parses a kernel's JavaScript text: compiling through tsc or
 * instrumenting for coverage would change that text under it.
 *
 * Layout (every kernel reads and writes the same [W, H, 4] state S):
 *   S[0] v(p) = e(p) − rt(p): the excess where positive, minus the residual
 *        capacity p → sink where negative   S[1] height h(p)
 *   S[2] fR(p): signed flow on p → p+1     S[3] fD(p): signed flow on p → p+W
 * and reads the constant capacities C [W, H, 4]:
 *   C[0] c(p → p+1)  C[1] c(p+1 → p)  C[2] c(p → p+W)  C[3] c(p+W → p)
 * Residuals: p → right = C0 − fR, p → left = C1(p−1) + fR(p−1),
 *            p → down = C2 − fD, p → up = C3(p−W) + fD(p−W).
 *
 * One signed plane holds both excess and sink residual because flow that
 * reaches a pixel with sink residual goes to the sink first: a push to the
 * sink never breaks the labeling (the sink's height is fixed), so it is
 * done the moment the flow arrives, and a pixel never holds excess and sink
 * residual at once. Every state pass writes four planes instead of five,
 * and the passes are bound by memory traffic.
 *
 * gpu.js threads write only their own output element and have no barriers or
 * atomics, so every step is a gather: a thread recomputes the push decisions
 * of the pixels around it (they depend only on the previous state) instead of
 * receiving them. thread.z selects which of the four fields the thread writes.
 */

export const STATE_PLANES = 4;
export const CAPACITY_PLANES = 4;
export const PLANE = { net: 0, height: 1, flowRight: 2, flowDown: 3 } as const;

const W = 'this.constants.W';
const H = 'this.constants.H';
const INF = 'this.constants.INF';

/**
 * Statements computing the push decisions of the pixel at (X, Y) into
 * `${v}r`, `${v}d`, `${v}l`, `${v}u` (to the right, down, left, up
 * neighbour), with `${v}e` its net value v. The pixel pushes only while it
 * has excess (v > 0: its sink residual is spent) and a finite height, to
 * each neighbour q with h(p) = h(q) + 1 in the fixed order right, down,
 * left, up, each push capped by the excess left and the edge's residual. Two
 * neighbours can never push to each other in one pass (h(p) = h(q)+1 and
 * h(q) = h(p)+1 exclude each other), so every decision stays valid when all
 * pixels apply theirs at once.
 */
function decisions(v: string, X: string, Y: string): string {
  return `
    let ${v}e = S[0][${Y}][${X}];
    let ${v}h = S[1][${Y}][${X}];
    let ${v}r = 0.0;
    let ${v}d = 0.0;
    let ${v}l = 0.0;
    let ${v}u = 0.0;
    if (${v}e > 0.0 && ${v}h < ${INF}) {
      let ${v}m = ${v}e;
      if (${X} + 1 < ${W}) {
        if (S[1][${Y}][${X} + 1] + 1.0 === ${v}h) {
          ${v}r = Math.min(${v}m, C[0][${Y}][${X}] - S[2][${Y}][${X}]);
          ${v}m = ${v}m - ${v}r;
        }
      }
      if (${v}m > 0.0 && ${Y} + 1 < ${H}) {
        if (S[1][${Y} + 1][${X}] + 1.0 === ${v}h) {
          ${v}d = Math.min(${v}m, C[2][${Y}][${X}] - S[3][${Y}][${X}]);
          ${v}m = ${v}m - ${v}d;
        }
      }
      if (${v}m > 0.0 && ${X} > 0) {
        if (S[1][${Y}][${X} - 1] + 1.0 === ${v}h) {
          ${v}l = Math.min(${v}m, C[1][${Y}][${X} - 1] + S[2][${Y}][${X} - 1]);
          ${v}m = ${v}m - ${v}l;
        }
      }
      if (${v}m > 0.0 && ${Y} > 0) {
        if (S[1][${Y} - 1][${X}] + 1.0 === ${v}h) {
          ${v}u = Math.min(${v}m, C[3][${Y} - 1][${X}] + S[3][${Y} - 1][${X}]);
        }
      }
    }`;
}

/**
 * Decisions of the pixel and its four neighbours, then the new net value
 * (what arrives at a pixel with sink residual goes to the sink). What
 * each neighbour pushes into p lands in fromL/fromR/fromU/fromD (zero where
 * the neighbour is off the grid).
 */
function excessAfterPush(): string {
  return `
    ${decisions('p', 'x', 'y')}
    let fromL = 0.0;
    let fromR = 0.0;
    let fromU = 0.0;
    let fromD = 0.0;
    if (x > 0) {
      ${decisions('a', 'x - 1', 'y')}
      fromL = ar;
    }
    if (x + 1 < ${W}) {
      ${decisions('b', 'x + 1', 'y')}
      fromR = bl;
    }
    if (y > 0) {
      ${decisions('c', 'x', 'y - 1')}
      fromU = cd;
    }
    if (y + 1 < ${H}) {
      ${decisions('g', 'x', 'y + 1')}
      fromD = gu;
    }
    let eNew = pe - pr - pd - pl - pu + fromL + fromR + fromU + fromD;`;
}

/**
 * One push-relabel iteration: a push pass followed by a relabel pass, fused
 * into one kernel. This is exact, not an approximation of the two passes: the
 * relabel of p needs p's excess and edge residuals after the push (computable
 * from the decisions of p and its neighbours) and its neighbours' heights,
 * which a push pass never changes. Relabelling all pixels at once from the
 * old heights keeps the labeling valid because heights only grow.
 */
export function pushRelabelSource(): string {
  return `function (S, C) {
    const x = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    if (z === 0) {
      ${excessAfterPush()}
      return eNew;
    }
    if (z === 2) {
      ${decisions('p', 'x', 'y')}
      let back = 0.0;
      if (x + 1 < ${W}) {
        ${decisions('b', 'x + 1', 'y')}
        back = bl;
      }
      return S[2][y][x] + pr - back;
    }
    if (z === 3) {
      ${decisions('p', 'x', 'y')}
      let back = 0.0;
      if (y + 1 < ${H}) {
        ${decisions('g', 'x', 'y + 1')}
        back = gu;
      }
      return S[3][y][x] + pd - back;
    }
    let h0 = S[1][y][x];
    if (h0 >= ${INF}) {
      return h0;
    }
    ${excessAfterPush()}
    if (eNew <= 0.0) {
      return h0;
    }
    let best = ${INF};
    let admissible = 0.0;
    if (x + 1 < ${W}) {
      if (C[0][y][x] - (S[2][y][x] + pr - fromR) > 0.0) {
        let hq = S[1][y][x + 1];
        if (hq + 1.0 === h0) { admissible = 1.0; }
        best = Math.min(best, hq + 1.0);
      }
    }
    if (y + 1 < ${H}) {
      if (C[2][y][x] - (S[3][y][x] + pd - fromD) > 0.0) {
        let hq = S[1][y + 1][x];
        if (hq + 1.0 === h0) { admissible = 1.0; }
        best = Math.min(best, hq + 1.0);
      }
    }
    if (x > 0) {
      if (C[1][y][x - 1] + (S[2][y][x - 1] + fromL - pl) > 0.0) {
        let hq = S[1][y][x - 1];
        if (hq + 1.0 === h0) { admissible = 1.0; }
        best = Math.min(best, hq + 1.0);
      }
    }
    if (y > 0) {
      if (C[3][y - 1][x] + (S[3][y - 1][x] + fromU - pu) > 0.0) {
        let hq = S[1][y - 1][x];
        if (hq + 1.0 === h0) { admissible = 1.0; }
        best = Math.min(best, hq + 1.0);
      }
    }
    if (admissible > 0.0) {
      return h0;
    }
    return Math.min(best, ${INF});
  }`;
}

/*
 * Global relabel. The BFS passes change only the heights, so they work on a
 * distance array D [W, H] of their own, one thread per pixel, instead of the
 * [W, H, 4] state, whose three other planes every pass would copy (a copy
 * of the state costs about as much as a BFS scan: both are bound by memory
 * traffic). bfsStart or
 * bfsHeights begin D, the passes relax it, and withHeights writes it back.
 */

/** Start of a global relabel from scratch, [W, H]: distance 1 for pixels with residual to the sink (v < 0), "unreachable" (INF) elsewhere. */
export function bfsStartSource(): string {
  return `function (S) {
    const x = this.thread.x;
    const y = this.thread.y;
    if (S[0][y][x] < 0.0) {
      return 1.0;
    }
    return ${INF};
  }`;
}

/** The state's heights as a distance array, [W, H] (a BFS that continues from them). */
export function bfsHeightsSource(): string {
  return `function (S) {
    return S[1][this.thread.y][this.thread.x];
  }`;
}

/** The state with its heights replaced by the distances D, [W, H, 4]. */
export function withHeightsSource(): string {
  return `function (S, D) {
    const x = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    if (z === 1) {
      return D[y][x];
    }
    return S[z][y][x];
  }`;
}

/**
 * Start of both BFS passes: a pixel with sink residual (v < 0) is at distance 1,
 * and m starts from the current upper bound D.
 */
function bfsHead(): string {
  return `const x = this.thread.x;
    const y = this.thread.y;
    if (S[0][y][x] < 0.0) {
      return 1.0;
    }
    let m = D[y][x];`;
}

/**
 * One level of the reverse BFS from the sink, as a gather over the
 * distances D, [W, H]:
 * h(p) ← min(h(p), 1 + min h(q) over residual edges p → q), clamped to INF.
 * Starting from bfsStart, the values only decrease and stay upper bounds of
 * the residual distance to the sink; at a fixed point they equal it.
 */
export function bfsPassSource(): string {
  return `function (S, C, D) {
    ${bfsHead()}
    if (x + 1 < ${W}) {
      if (C[0][y][x] - S[2][y][x] > 0.0) { m = Math.min(m, D[y][x + 1] + 1.0); }
    }
    if (y + 1 < ${H}) {
      if (C[2][y][x] - S[3][y][x] > 0.0) { m = Math.min(m, D[y + 1][x] + 1.0); }
    }
    if (x > 0) {
      if (C[1][y][x - 1] + S[2][y][x - 1] > 0.0) { m = Math.min(m, D[y][x - 1] + 1.0); }
    }
    if (y > 0) {
      if (C[3][y - 1][x] + S[3][y - 1][x] > 0.0) { m = Math.min(m, D[y - 1][x] + 1.0); }
    }
    return Math.min(m, ${INF});
  }`;
}

/**
 * Kernel schemes. 'lockstep' moves flow one edge per pass and lowers BFS
 * distances one level per pass (the kernels above). 'sweep' pushes flow
 * along whole straight runs of admissible edges in one pass and lets the BFS
 * relax along straight residual runs: the number of passes then follows the
 * number of turns of the paths flow and distances travel, not their length.
 */
export type PushScheme = 'lockstep' | 'sweep' | 'split-sweep';
export const PUSH_SCHEMES: readonly PushScheme[] = ['sweep', 'split-sweep', 'lockstep'];
export type BfsScheme = 'level' | 'scan';

/** Longest reach a scheme accepts (the walks are loops of that many steps per thread). */
export const MAX_REACH = 4096;

/** Checks a kernel scheme's settings; throws a one-line error naming the option, prefixed by `owner`. */
export function checkKernelScheme(owner: string, o: { push: PushScheme; bfs: BfsScheme; reach: number }): void {
  if (!PUSH_SCHEMES.includes(o.push)) throw new Error(`${owner} option push: expected ${PUSH_SCHEMES.map((p) => `'${p}'`).join(', ')}, got '${String(o.push)}'`);
  if (o.bfs !== 'scan' && o.bfs !== 'level') throw new Error(`${owner} option bfs: expected 'scan' or 'level', got '${String(o.bfs)}'`);
  if (!Number.isInteger(o.reach) || o.reach < 1 || o.reach > MAX_REACH) throw new Error(`${owner} option reach: expected an integer in 1..${MAX_REACH}, got ${String(o.reach)}`);
}

/**
 * One pass of a push-relabel iteration as recorded in a pipeline: the state
 * after it, from the state and the capacities, and from the gate's input G
 * when the passes were compiled with a gate.
 */
export type StatePass = (S: unknown, C: unknown, G?: unknown) => unknown;

/**
 * A gate for state kernels: an extra last argument G and a condition on it
 * under which the kernel returns its input state unchanged. A compiled
 * pipeline cannot branch on the host, so a plan that has reached its goal
 * (a move that has converged) still dispatches every pass it recorded; the
 * gate makes those passes copies, which cost the dispatch and one read and
 * write per value instead of the pass's walks.
 */
export interface KernelGate {
  /** a condition on G (e.g. 'G[2] === 0.0') under which the pass changes nothing */
  skip: string;
}

/**
 * `source` with the gate: G appended to its parameters and, first thing, a
 * return of `unchanged` when the gate's condition holds.
 */
export function gatedSource(source: string, gate: KernelGate, unchanged: string): string {
  const head = /^function \(([^)]*)\) \{/.exec(source);
  if (!head) throw new Error('gatedSource: not a kernel source of the form function (…) {');
  return `function (${head[1]}, G) {
    if (${gate.skip}) { return ${unchanged}; }${source.slice(head[0].length)}`;
}

/** A state kernel's return when gated: its own element of the input state. */
export const UNCHANGED_STATE = 'S[this.thread.z][this.thread.y][this.thread.x]';

/**
 * Compiles `source`, with the gate when one is given (returning `unchanged`
 * when it holds). The pass always takes the gate's input as its last
 * argument and drops it when compiled without a gate.
 */
export function gatedKernel(gpu: GPU, source: string, settings: IGPUKernelSettings, gate: KernelGate | undefined, unchanged: string): (...a: unknown[]) => unknown {
  const k = gpu.createKernel(gate ? gatedSource(source, gate, unchanged) : source, settings);
  return (...a: unknown[]) => (gate ? k(...a) : k(...a.slice(0, -1)));
}

/**
 * Compiles the passes of one push-relabel iteration of a scheme with `gpu`;
 * `settings(planes)` gives the kernel settings for an output of that many
 * [W, H] planes (the state has STATE_PLANES, a split sweep's gather 2).
 * With a gate, every pass takes the gate's input as its third argument.
 */
export function iterationPasses(gpu: GPU, push: PushScheme, settings: (planes: number) => IGPUKernelSettings, gate?: KernelGate): StatePass[] {
  const state = (source: string): ((...a: unknown[]) => unknown) => gatedKernel(gpu, source, settings(STATE_PLANES), gate, UNCHANGED_STATE);
  if (push === 'lockstep') {
    const k = state(pushRelabelSource());
    return [(S, C, G) => k(S, C, G)];
  }
  return (['h', 'v'] as const).map((axis): StatePass => {
    if (push === 'sweep') {
      const k = state(sweepPushSource(axis));
      return (S, C, G) => k(S, C, G);
    }
    // A gated gather returns zeros: the gated apply that reads them returns its input anyway.
    const gather = gatedKernel(gpu, sweepGatherSource(axis), settings(2), gate, '0.0');
    const apply = state(sweepApplySource(axis));
    return (S, C, G) => apply(S, C, gather(S, C, G), G);
  });
}

/** Source of one global-relabel pass of a BFS scheme. */
export function bfsPassSourceOf(bfs: BfsScheme): string {
  return bfs === 'scan' ? bfsScanSource() : bfsPassSource();
}

/**
 * A global relabel as recorded in a pipeline: the state with its heights
 * replaced by `passes` BFS passes, started from scratch (bfsStart) or from
 * the state's heights; G is the gate's input when compiled with a gate.
 */
export type GlobalRelabel = (S: unknown, C: unknown, passes: number, fromScratch: boolean, G?: unknown) => unknown;

/**
 * Compiles the global relabel of a BFS scheme with `gpu`; `settings(planes)`
 * as for iterationPasses (1 plane: the [W, H] distances). Gated, the
 * distance kernels return the distances they were given and withHeights
 * its input state.
 */
export function globalRelabelPasses(gpu: GPU, bfs: BfsScheme, settings: (planes: number) => IGPUKernelSettings, gate?: KernelGate): GlobalRelabel {
  const dist = settings(1);
  const own = 'S[1][this.thread.y][this.thread.x]';
  const start = gatedKernel(gpu, bfsStartSource(), dist, gate, own);
  const heights = gatedKernel(gpu, bfsHeightsSource(), dist, gate, own);
  const pass = gatedKernel(gpu, bfsPassSourceOf(bfs), dist, gate, 'D[this.thread.y][this.thread.x]');
  const merge = gatedKernel(gpu, withHeightsSource(), settings(STATE_PLANES), gate, UNCHANGED_STATE);
  return (S, C, passes, fromScratch, G) => {
    if (passes === 0 && !fromScratch) return S;
    let D = fromScratch ? start(S, G) : heights(S, G);
    for (let i = 0; i < passes; i++) D = pass(S, C, D, G);
    return merge(S, D, G);
  };
}

/** Index expressions for the two axes of a sweep: position k along the axis, the other coordinate fixed to the thread's. */
interface AxisSpec {
  /** the thread's position along the axis */
  pos: string;
  len: string;
  /** [row][column] suffix for a position k on the axis */
  at: (k: string) => string;
  /** state plane of the flow on k → k+1 along the axis, and the capacity planes forward and backward */
  flow: number;
  capFwd: number;
  capBwd: number;
  /** the state plane the sweep leaves alone (flow across the other axis) */
  otherFlow: number;
}

const AXES: Record<'h' | 'v', AxisSpec> = {
  h: { pos: 'x', len: W, at: (k) => `[y][${k}]`, flow: 2, capFwd: 0, capBwd: 1, otherFlow: 3 },
  v: { pos: 'y', len: H, at: (k) => `[${k}][x]`, flow: 3, capFwd: 2, capBwd: 3, otherFlow: 2 },
};

/**
 * One sweep of the segmented push: along one axis, every pixel pushes first
 * to the sink, then forward (k → k+1), then backward (k → k−1), each only
 * over an admissible residual edge (h(k) = h(neighbour) + 1), and the flow it
 * receives from a neighbour inside the same segment of REACH pixels is pushed
 * on in the same pass, in order along the run. It is the sequence of
 * ordinary push operations that walks each run from its top, so the result is
 * a preflow with a valid labeling. Flow that crosses a segment border lands
 * in the next segment's first pixel and waits for the next pass: that bounds
 * what a thread has to recompute to one segment, and it is why every thread
 * that needs an edge's flow computes the same value. Along a run the heights
 * fall by one per edge, so a run cannot be admissible in both directions, and
 * a pixel that receives along the axis can push along it in one direction
 * only. The height plane is a relabel of the pixels that keep excess, from
 * the residuals after the sweep (heights do not change during a push, so this
 * equals a push pass followed by a relabel pass).
 */
export function sweepPushSource(axis: 'h' | 'v'): string {
  const { inFwd, inBwd, head, update } = sweepParts(axis);
  return `function (S, C) {
    ${head}
    ${inFwd}
    ${inBwd}
    ${update}
  }`;
}

/**
 * The segmented sweep of sweepPushSource split in two passes. The gather,
 * [W, H, 2], walks the runs once per pixel: plane 0 the flow that arrives at
 * p over the edge from its predecessor along the axis, plane 1 the flow from
 * its successor. The single-kernel sweep repeats both walks for each of the
 * three state planes it changes, because a gpu.js thread writes one value;
 * here they are walked once, and the apply pass is loop-free.
 */
export function sweepGatherSource(axis: 'h' | 'v'): string {
  const { inFwd, inBwd } = sweepParts(axis);
  return `function (S, C) {
    const x = this.thread.x;
    const y = this.thread.y;
    if (this.thread.z === 0) {
      ${inFwd}
      return inF;
    }
    ${inBwd}
    return inB;
  }`;
}

/** Second pass of the split sweep: sweepPushSource's state update, with the arriving flows read from the gather's output IN. */
export function sweepApplySource(axis: 'h' | 'v'): string {
  const { head, update } = sweepParts(axis);
  return `function (S, C, IN) {
    ${head}
    const inF = IN[0][y][x];
    const inB = IN[1][y][x];
    ${update}
  }`;
}

/** The pieces of a segmented sweep along `axis`: the two walks (defining inF and inB), the kernel head, and the state update that uses them. */
function sweepParts(axis: 'h' | 'v'): { inFwd: string; inBwd: string; head: string; update: string } {
  const a = AXES[axis];
  const R = 'this.constants.REACH';
  const hA = (k: string): string => `S[1]${a.at(k)}`;
  const rFwd = (k: string): string => `(C[${a.capFwd}]${a.at(k)} - S[${a.flow}]${a.at(k)})`;
  const rBwd = (k: string): string => `(C[${a.capBwd}]${a.at(`${k} - 1`)} + S[${a.flow}]${a.at(`${k} - 1`)})`;
  // admissible forward / backward edge at position k (the caller guarantees 0 ≤ k < len)
  const admF = (k: string): string => `(${k} + 1 < ${a.len} && ${hA(k)} < ${INF} && ${hA(`${k} + 1`)} + 1.0 === ${hA(k)} && ${rFwd(k)} > 0.0)`;
  const admB = (k: string): string => `(${k} > 0 && ${hA(k)} < ${INF} && ${hA(`${k} - 1`)} + 1.0 === ${hA(k)} && ${rBwd(k)} > 0.0)`;
  const p = a.pos;
  // Flow pushed forward over the edge (p−1 → p): walk back to the run's top inside the segment, then push down the run.
  const inFwd = `
    let inF = 0.0;
    if (${p} > 0) {
      if (${admF(`${p} - 1`)}) {
        let k0 = ${p} - 1;
        for (let ai = 0; ai < ${R}; ai++) {
          if (k0 % ${R} === 0) { break; }
          if (${admF('k0 - 1')}) { k0 = k0 - 1; } else { break; }
        }
        let af = 0.0;
        for (let aq = 0; aq < ${R}; aq++) {
          const aj = k0 + aq;
          const av = S[0]${a.at('aj')} + af;
          af = Math.min(${rFwd('aj')}, Math.max(av, 0.0));
          if (aj >= ${p} - 1) { break; }
        }
        inF = af;
      }
    }`;
  // Flow pushed backward over the edge (p+1 → p): the mirror walk; the run's top may also push forward first.
  const inBwd = `
    let inB = 0.0;
    if (${p} + 1 < ${a.len}) {
      if (${admB(`${p} + 1`)}) {
        let k1 = ${p} + 1;
        for (let bi = 0; bi < ${R}; bi++) {
          if ((k1 + 1) % ${R} === 0) { break; }
          if (k1 + 1 >= ${a.len}) { break; }
          if (${admB('k1 + 1')}) { k1 = k1 + 1; } else { break; }
        }
        let bf = 0.0;
        for (let bq = 0; bq < ${R}; bq++) {
          const bj = k1 - bq;
          const bv = Math.max(S[0]${a.at('bj')} + bf, 0.0);
          let bfw = 0.0;
          if (${admF('bj')}) { bfw = Math.min(${rFwd('bj')}, bv); }
          bf = Math.min(${rBwd('bj')}, bv - bfw);
          if (bj <= ${p} + 1) { break; }
        }
        inB = bf;
      }
    }`;
  const pHere = a.at(p);
  const head = `const x = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    if (z === ${a.otherFlow}) {
      return S[z][y][x];
    }
    const h0 = S[1]${pHere};
    if (z === 1 && h0 >= ${INF}) {
      return h0;
    }`;
  const update = `let crossed = 0.0;
    let v0 = S[0]${pHere};
    if (${p} % ${R} === 0) { crossed = crossed + inF; } else { v0 = v0 + inF; }
    if ((${p} + 1) % ${R} === 0) { crossed = crossed + inB; } else { v0 = v0 + inB; }
    let fF = 0.0;
    let fB = 0.0;
    if (h0 < ${INF} && v0 > 0.0) {
      if (${admF(p)}) { fF = Math.min(${rFwd(p)}, v0); }
      if (${admB(p)}) { fB = Math.min(${rBwd(p)}, v0 - fF); }
    }
    const eNew = v0 - fF - fB + crossed;
    if (z === 0) {
      return eNew;
    }
    if (z === ${a.flow}) {
      return S[${a.flow}]${pHere} + fF - inB;
    }
    if (eNew <= 0.0) {
      return h0;
    }
    let best = ${INF};
    let admissible = 0.0;
    ${relabelCandidates(axis)}
    if (admissible > 0.0) {
      return h0;
    }
    return Math.min(best, ${INF});`;
  return { inFwd, inBwd, head, update };
}

/**
 * The relabel's scan of p's four residual edges after a sweep: along the
 * sweep's axis the residuals include this pass's flows (fF, fB out of p,
 * inF, inB into it); across it they are the state's.
 */
function relabelCandidates(axis: 'h' | 'v'): string {
  const edge = (cond: string, residual: string, hq: string): string => `
    if (${cond}) {
      if (${residual} > 0.0) {
        const hq = ${hq};
        if (hq + 1.0 === h0) { admissible = 1.0; }
        best = Math.min(best, hq + 1.0);
      }
    }`;
  const right = axis === 'h' ? '(C[0][y][x] - S[2][y][x] - fF + inB)' : '(C[0][y][x] - S[2][y][x])';
  const left = axis === 'h' ? '(C[1][y][x - 1] + S[2][y][x - 1] + inF - fB)' : '(C[1][y][x - 1] + S[2][y][x - 1])';
  const down = axis === 'v' ? '(C[2][y][x] - S[3][y][x] - fF + inB)' : '(C[2][y][x] - S[3][y][x])';
  const up = axis === 'v' ? '(C[3][y - 1][x] + S[3][y - 1][x] + inF - fB)' : '(C[3][y - 1][x] + S[3][y - 1][x])';
  return [
    edge(`x + 1 < ${W}`, right, 'S[1][y][x + 1]'),
    edge(`y + 1 < ${H}`, down, 'S[1][y + 1][x]'),
    edge('x > 0', left, 'S[1][y][x - 1]'),
    edge('y > 0', up, 'S[1][y - 1][x]'),
  ].join('');
}

/**
 * One relaxation of the reverse BFS along straight residual runs, over the
 * distances D, [W, H]: h(p) ← min(h(p), h(q) + |p − q|) for every q reached from p over up to
 * REACH consecutive residual edges to the right, left, below or above. Every
 * candidate is the length of a real residual path plus an upper bound of q's
 * distance, so the values stay upper bounds of the residual distance and
 * only decrease; a fixed point is the exact distance (the lockstep level pass
 * is the case REACH = 1). A walk stops once no farther pixel can improve h(p)
 * (heights are at least 1).
 */
export function bfsScanSource(): string {
  const R = 'this.constants.REACH';
  const walk = (i: string, cond: (k: string) => string, residual: (k: string) => string, next: string, hAt: (k: string) => string): string => `
    k = p0;
    d = 0.0;
    for (let ${i} = 0; ${i} < ${R}; ${i}++) {
      if (d + 2.0 >= m) { break; }
      if (!(${cond('k')})) { break; }
      if (${residual('k')} <= 0.0) { break; }
      k = k ${next} 1;
      d = d + 1.0;
      m = Math.min(m, ${hAt('k')} + d);
    }`;
  return `function (S, C, D) {
    ${bfsHead()}
    let k = 0;
    let d = 0.0;
    let p0 = x;
    ${walk('i0', (k) => `${k} + 1 < ${W}`, (k) => `(C[0][y][${k}] - S[2][y][${k}])`, '+', (k) => `D[y][${k}]`)}
    ${walk('i1', (k) => `${k} > 0`, (k) => `(C[1][y][${k} - 1] + S[2][y][${k} - 1])`, '-', (k) => `D[y][${k}]`)}
    p0 = y;
    ${walk('i2', (k) => `${k} + 1 < ${H}`, (k) => `(C[2][${k}][x] - S[3][${k}][x])`, '+', (k) => `D[${k}][x]`)}
    ${walk('i3', (k) => `${k} > 0`, (k) => `(C[3][${k} - 1][x] + S[3][${k} - 1][x])`, '-', (k) => `D[${k}][x]`)}
    return Math.min(m, ${INF});
  }`;
}
