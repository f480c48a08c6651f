/**
 * A binary s-t graph on a 4-connected W×H grid, stored as flat typed arrays so
 * that any backend (the CPU Boykov–Kolmogorov solver, gpu.js kernels) can take
 * it without per-node objects or callbacks.
 *
 * Pixel p = y·W + x. Every capacity is a non-negative integer (Int32Array):
 * integer capacities make every max-flow value exact, and the f32 storage of a
 * GPU backend stays exact below 2^24 (see MAX_GPU_EXACT_CAPACITY).
 */
export interface GridGraph {
  readonly width: number;
  readonly height: number;
  /** c(s → p): capacity from the source to pixel p. */
  readonly source: Int32Array;
  /** c(p → t): capacity from pixel p to the sink. */
  readonly sink: Int32Array;
  /** c(p → p+1): to the right neighbour; 0 in the last column. */
  readonly right: Int32Array;
  /** c(p+1 → p): from the right neighbour back to p; 0 in the last column. */
  readonly rightRev: Int32Array;
  /** c(p → p+W): to the neighbour below; 0 in the last row. */
  readonly down: Int32Array;
  /** c(p+W → p): from the neighbour below back to p; 0 in the last row. */
  readonly downRev: Int32Array;
}

/**
 * Largest capacity a builder may put on one edge. A residual capacity can
 * grow to c(p→q) + c(q→p), which must still fit an int32.
 */
export const MAX_CAPACITY = 2 ** 30 - 1;

/** f32 represents every integer up to 2^24 exactly; beyond it sums round. */
export const MAX_GPU_EXACT_CAPACITY = 2 ** 24;

export function createGridGraph(width: number, height: number): GridGraph {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0) {
    throw new Error(`grid graph: width and height must be positive integers (got ${width}×${height})`);
  }
  const n = width * height;
  return {
    width,
    height,
    source: new Int32Array(n),
    sink: new Int32Array(n),
    right: new Int32Array(n),
    rightRev: new Int32Array(n),
    down: new Int32Array(n),
    downRev: new Int32Array(n),
  };
}

/** Deep copy, for solvers that must not touch the caller's capacities. */
export function cloneGridGraph(g: GridGraph): GridGraph {
  return {
    width: g.width,
    height: g.height,
    source: g.source.slice(),
    sink: g.sink.slice(),
    right: g.right.slice(),
    rightRev: g.rightRev.slice(),
    down: g.down.slice(),
    downRev: g.downRev.slice(),
  };
}

/**
 * Checks the invariants every solver relies on: non-negative capacities no
 * larger than MAX_CAPACITY, and no edges leaving the grid. Throws naming the
 * array and pixel of the first violation.
 */
export function validateGridGraph(g: GridGraph): void {
  const { width: W, height: H } = g;
  const n = W * H;
  const arrays: Array<[string, Int32Array]> = [
    ['source', g.source], ['sink', g.sink], ['right', g.right],
    ['rightRev', g.rightRev], ['down', g.down], ['downRev', g.downRev],
  ];
  for (const [name, a] of arrays) {
    if (a.length !== n) throw new Error(`grid graph: ${name} has ${a.length} entries, expected ${n} (${W}×${H})`);
    for (let p = 0; p < n; p++) {
      const c = a[p];
      if (c < 0 || c > MAX_CAPACITY) {
        throw new Error(`grid graph: ${name}[${p}] = ${c} is outside 0..${MAX_CAPACITY}`);
      }
    }
  }
  for (let y = 0; y < H; y++) {
    const p = y * W + W - 1;
    if (g.right[p] !== 0 || g.rightRev[p] !== 0) throw new Error(`grid graph: right edge out of the grid at pixel ${p} (last column)`);
  }
  for (let p = (H - 1) * W; p < n; p++) {
    if (g.down[p] !== 0 || g.downRev[p] !== 0) throw new Error(`grid graph: down edge out of the grid at pixel ${p} (last row)`);
  }
}

/** Largest single capacity in the graph (for the f32 exactness check of GPU backends). */
export function maxCapacity(g: GridGraph): number {
  let m = 0;
  for (const a of [g.source, g.sink, g.right, g.rightRev, g.down, g.downRev]) {
    for (let p = 0; p < a.length; p++) if (a[p] > m) m = a[p];
  }
  return m;
}

/**
 * Capacity of the cut given by `sinkSide` (1 = pixel on the sink side):
 * Σ c(s→p) over sink-side p, Σ c(p→t) over source-side p, and every grid edge
 * from a source-side pixel to a sink-side one. Exact in double arithmetic.
 */
export function cutCapacity(g: GridGraph, sinkSide: Uint8Array): number {
  const { width: W, height: H } = g;
  let cut = 0;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      const sp = sinkSide[p];
      cut += sp ? g.source[p] : g.sink[p];
      if (x + 1 < W) {
        const sq = sinkSide[p + 1];
        if (!sp && sq) cut += g.right[p];
        else if (sp && !sq) cut += g.rightRev[p];
      }
      if (y + 1 < H) {
        const sq = sinkSide[p + W];
        if (!sp && sq) cut += g.down[p];
        else if (sp && !sq) cut += g.downRev[p];
      }
    }
  }
  return cut;
}
