/**
 * gpu.js kernel sources of what is read from a labeling on the device
 * (gpu/move/readouts.ts): the energy terms and their exact partial sums, the
 * pixels of each label, one disparity's data costs, and the WTA initial
 * labeling. Generated as strings, as gpu/move/moveKernels.ts is (its comment
 * gives the arguments).
 */

import { dataArg, dataCost, type DataSourceKind, type ImageCostSpec } from './costKernels';

const W = 'this.constants.W';
const H = 'this.constants.H';

/**
 * Energy terms per pixel, [W, H, 2]: z = 0 the data term D_p(l_p), z = 1
 * the smoothness terms of p's right and down edges.
 */
export function energyTermsSource(source: DataSourceKind, spec: ImageCostSpec | null): string {
  return `function (LB, ${dataArg(source)}, WT, VT) {
    const x = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    const lp = LB[y][x];
    if (z === 0) {
      ${dataCost(source, spec, 'dL', 'x', 'y', 'lp')}
      return dL;
    }
    let s = 0.0;
    if (x + 1 < ${W}) { s = s + WT[0][y][x] * VT[lp][LB[y][x + 1]]; }
    if (y + 1 < ${H}) { s = s + WT[1][y][x] * VT[lp][LB[y + 1][x]]; }
    return s;
  }`;
}

/**
 * Partial sums of the energy terms over runs of CH pixels of a row,
 * [ceil(W / CH), H, 2]; CH is chosen so that every partial sum stays below
 * 2^24 (exact), and the host adds them in double precision.
 */
export function energyChunksSource(): string {
  return `function (E) {
    const cx = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    let s = 0.0;
    for (let i = 0; i < this.constants.CH; i++) {
      const x = cx * this.constants.CH + i;
      if (x < ${W}) { s = s + E[z][y][x]; }
    }
    return s;
  }`;
}

/**
 * Pixels of each label per row, [L, H]: thread (l, y) counts row y's
 * pixels labelled l (at most W: exact in f32).
 */
export function labelRowCountsSource(): string {
  return `function (LB) {
    const l = this.thread.x;
    const y = this.thread.y;
    let n = 0.0;
    for (let x = 0; x < ${W}; x++) {
      if (LB[y][x] === l) { n = n + 1.0; }
    }
    return n;
  }`;
}

/** Pixels of each label, [L]: the row counts added up (at most W·H < 2^24: exact in f32). */
export function labelCountsSource(): string {
  return `function (RC) {
    const l = this.thread.x;
    let n = 0.0;
    for (let y = 0; y < ${H}; y++) { n = n + RC[y][l]; }
    return n;
  }`;
}

/** D_p(d) for every pixel of one disparity, [W, H] (tests compare it with DataCostMatcher.slice). */
export function dataSliceSource(source: DataSourceKind, spec: ImageCostSpec | null): string {
  return `function (${dataArg(source)}, d) {
    const x = this.thread.x;
    const y = this.thread.y;
    ${dataCost(source, spec, 'c', 'x', 'y', 'd')}
    return c;
  }`;
}

/*
 * The WTA initial labeling on the device (costs/wta.ts's, label for label):
 * each label's costs summed over a window × window box clipped at the
 * borders, the smallest sum winning with ties to the smaller label. The
 * labels are taken in chunks of NC (D0 .. D0 + NC − 1), so that the
 * [W, H, NC] intermediates stay small whatever L is; a chunk's costs, their
 * row sums, then the column sums compared against the running best. Every
 * sum is of at most window² costs below 2^24 / window², so f32 holds it
 * exactly (the solver checks that bound first).
 */

/** The data costs of labels D0 + z, [W, H, NC]; 0 for labels ≥ L (the last chunk's unused slots). */
export function wtaCostsSource(source: DataSourceKind, spec: ImageCostSpec | null): string {
  return `function (${dataArg(source)}, D0) {
    const x = this.thread.x;
    const y = this.thread.y;
    const d = D0 + this.thread.z;
    if (d >= this.constants.L) { return 0.0; }
    ${dataCost(source, spec, 'c', 'x', 'y', 'd')}
    return c;
  }`;
}

/** Each cost summed over the row segment x − R .. x + R clipped at the borders, [W, H, NC]. */
export function wtaRowSumsSource(): string {
  return `function (CS) {
    const x = this.thread.x;
    const y = this.thread.y;
    const z = this.thread.z;
    let s = 0.0;
    for (let i = 0; i < this.constants.WIN; i++) {
      const xx = x - this.constants.R + i;
      if (xx >= 0 && xx < ${W}) { s = s + CS[z][y][xx]; }
    }
    return s;
  }`;
}

/**
 * The box sums of the chunk's labels (row sums summed over y − R .. y + R,
 * clipped at the borders of the pixel's band of BH rows: MrfEnergy.bandHeight)
 * compared with the best so far: [W, H, 2], the best sum (z = 0) and its
 * label (z = 1), or with `last` just the label, [W, H]. The first chunk
 * starts from nothing and takes no BL; a later one takes the last chunk's.
 * A label wins only with a strictly smaller sum, so ties keep the smaller
 * label, as costs/wta.ts's pass over increasing labels does.
 */
export function wtaPickSource(first: boolean, last: boolean): string {
  const start = first
    ? `let best = 0.0;
    let label = 0.0;
    let have = 0.0;`
    : `let best = BL[0][y][x];
    let label = BL[1][y][x];
    let have = 1.0;`;
  const result = last ? 'return label;' : `if (z === 0) { return best; }
    return label;`;
  return `function (RS, ${first ? '' : 'BL, '}D0) {
    const x = this.thread.x;
    const y = this.thread.y;
    ${last ? '' : 'const z = this.thread.z;'}
    const b0 = Math.floor(y / this.constants.BH) * this.constants.BH;
    ${start}
    for (let k = 0; k < this.constants.NC; k++) {
      const d = D0 + k;
      if (d < this.constants.L) {
        let s = 0.0;
        for (let i = 0; i < this.constants.WIN; i++) {
          const yy = y - this.constants.R + i;
          if (yy >= b0 && yy < b0 + this.constants.BH) { s = s + RS[k][yy][x]; }
        }
        if (have === 0.0) {
          best = s;
          label = d;
          have = 1.0;
        } else {
          if (s < best) {
            best = s;
            label = d;
          }
        }
      }
    }
    ${result}
  }`;
}
