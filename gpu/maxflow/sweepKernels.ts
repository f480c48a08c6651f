import { H, INF, W } from './pushRelabelLayout';

/** The sweep push kernel sources: flow along whole straight runs of admissible edges in one pass (layout: pushRelabelLayout.ts). */

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
