import type { GridGraph } from './gridGraph';

/*
 * What a Boykov–Kolmogorov run on a grid (bkCore.ts, whose comment gives
 * the layout: padded rows, four residuals and a signed terminal residual per
 * node) works in, and what it counts.
 */

/** Counters of one run. */
export interface BkRunStats {
  flow: number;
  augmentations: number;
  /** Orphans processed (each either adopted by a new parent or freed). */
  orphans: number;
  /** Orphans that found a new parent in their own tree. */
  adopted: number;
  /** Nodes taken from the active queue and grown from. */
  growths: number;
}

/**
 * Every array one solve needs, allocated once per grid size so that
 * α-expansion can run hundreds of solves on the same size with no
 * allocation.
 */
export class BkWorkspace {
  readonly width: number;
  readonly height: number;
  /** rc[4i + d]: residual capacity from node i to its neighbour in direction d. */
  readonly rc: Int32Array;
  /** Signed terminal residual: > 0 from the source, < 0 to the sink. */
  readonly tr: Int32Array;
  readonly tree: Uint8Array;
  readonly parent: Uint8Array;
  /** Distance to the terminal, valid when ts[i] is recent (the 2004 paper's adoption heuristic). */
  readonly dist: Int32Array;
  readonly ts: Int32Array;
  /** 1 while the node sits in the active queue (or is the node being grown from). */
  readonly queued: Uint8Array;
  /** Ring buffer of active nodes; each node is in it at most once, so n slots suffice. */
  readonly active: Int32Array;
  /** Double-ended ring buffer of orphans; each node is an orphan at most once at a time. */
  readonly orphans: Int32Array;

  constructor(width: number, height: number) {
    if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0) {
      throw new Error(`bk: workspace size must be positive integers (got ${width}×${height})`);
    }
    this.width = width;
    this.height = height;
    const n = width * height;
    const padded = n + 2 * width;
    this.rc = new Int32Array(4 * padded);
    this.tr = new Int32Array(padded);
    this.tree = new Uint8Array(padded);
    this.parent = new Uint8Array(padded);
    this.dist = new Int32Array(padded);
    this.ts = new Int32Array(padded);
    this.queued = new Uint8Array(padded);
    this.active = new Int32Array(n);
    this.orphans = new Int32Array(n);
  }

  fits(g: GridGraph): boolean {
    return g.width === this.width && g.height === this.height;
  }
}
