import pLimit from 'p-limit';
import type { Raster } from '../data/raster';
import { sumEnergy, type EnergyBreakdown, type MrfEnergy } from '../data/energy';
import { bandedTerm } from '../costs/bandedTerm';
import { buildStereoEnergy, mirroredSwappedEnergy, type StereoEnergyOptions } from '../costs';
import type { CycleReport, ExpansionResult, MoveProgress } from '../expansion/alphaExpansion';
import { STRIP_OVERLAP, STRIP_ROWS, stripCrop, stripImages, stripRows, stripSpan, type StripDone, type StripJob, type StripRunner } from './levelStrips';
import type { MatchParams } from './params';
import { levelTerms, termsRows, type LevelTerms } from './levelTerms';
import { isSharedArray } from '../data/sharedStage';

/**
 * Coarse to fine: the pair is matched at a reduced pyramid level, where the
 * default parameters were chosen and the graph is small, and every finer
 * level (each twice the size of the one below) refines that map with the
 * labels of each pixel confined to a band around the coarser disparity
 * (search-space reduction). A finer level's energy is the full-size
 * energy with D_p(l) = +∞ outside p's band (data/energy.ts BandedTerm): its
 * moves are solved exactly (expansion/bandedMoves.ts) on strips of rows
 * that run on every core (stereo/levelStrips.ts), and the work and memory
 * of a level grow with its pixels times the band, not times the labels.
 *
 * Band of pixel (x, y) at a level whose coarser map is c: the disparities
 * 2·min(c) − r .. 2·max(c) + r over the 3×3 coarse pixels around (x/2,
 * y/2), within the level's range: a coarse pixel's disparity is known to
 * about a pixel, i.e. ±2 at the finer level, and a disparity edge that the
 * coarse level placed a pixel off still has both sides in the band.
 */

/** Pixels of the level the pyramid starts from, at most: the size of the benchmark images the defaults were chosen on. */
export const COARSEST_PIXELS = 500_000;
/** r above: how far past the coarse disparities (×2) a finer level looks. */
export const BAND_RADIUS = 2;

/** A pyramid level: its size and disparity range (disparities minDisp..maxDisp, labels 0..maxDisp − minDisp). */
export interface LevelShape {
  width: number;
  height: number;
  minDisp: number;
  maxDisp: number;
}

/** What one finer level did (the coarsest level's account is the match's own). */
export interface LevelReport extends LevelShape {
  level: number;
  /** Mean labels per pixel in the bands (both views). */
  meanBand: number;
  /** Energy of the views at the level's start and end (their sum). */
  initialEnergy: EnergyBreakdown;
  finalEnergy: EnergyBreakdown;
  cuts: number;
  /** Nodes in all the level's move graphs. */
  nodes: number;
  /** Wall time of the level, split between costs and moves as the strips' thread time was. */
  costsMs: number;
  expansionMs: number;
  /** Strip jobs run, and their thread time (costs and moves, all threads). */
  strips: number;
  threadMs: number;
  /** The longest strip's thread time: with a strip and the window after it in turn on one thread, the level's wall time is at least this. */
  longestStripMs: number;
  /** The longest a strip waited from being handed to the runner until it started, and from its end until its result reached this thread (threads busy, or this thread held). */
  longestDispatchMs: number;
  longestReturnMs: number;
}

/**
 * Levels of the pyramid for a W×H pair: 1 (no pyramid) up to the first
 * level of at most COARSEST_PIXELS pixels, for `setting` 'auto'; a number
 * is taken as it is, if the coarsest level it gives keeps at least 16×16
 * pixels and 2 disparities.
 */
export function pyramidLevels(width: number, height: number, setting: number | 'auto'): number {
  if (setting === 'auto') {
    let levels = 1;
    while (Math.ceil(width / 2 ** (levels - 1)) * Math.ceil(height / 2 ** (levels - 1)) > COARSEST_PIXELS) levels++;
    return levels;
  }
  return setting;
}

/** The shapes of `levels` levels, finest first: each level half the size (rounded up) and half the disparities (outward) of the one above. */
export function levelShapes(width: number, height: number, minDisp: number, maxDisp: number, levels: number): LevelShape[] {
  const shapes: LevelShape[] = [{ width, height, minDisp, maxDisp }];
  for (let k = 1; k < levels; k++) {
    const s = shapes[k - 1];
    shapes.push({ width: Math.ceil(s.width / 2), height: Math.ceil(s.height / 2), minDisp: Math.floor(s.minDisp / 2), maxDisp: Math.ceil(s.maxDisp / 2) });
  }
  return shapes;
}

/** A level's bands (labels lo..hi of each pixel) and starting labels. */
export type LevelBands = Record<'lo' | 'hi' | 'start', Uint16Array>;

/**
 * Bands and starting labels of a level from the coarser level's disparity
 * map (disparities, not labels): see the module comment. Labels are
 * disparities − shape.minDisp. Into `into` when given (a SharedStage's
 * arrays, which the strip jobs then carry as views).
 */
export function bandsFromCoarse(coarse: Uint16Array, cw: number, ch: number, shape: LevelShape, radius = BAND_RADIUS, into?: LevelBands): LevelBands {
  const { width: W, height: H, minDisp, maxDisp } = shape;
  if (coarse.length !== cw * ch) throw new Error(`coarse to fine: a ${cw}×${ch} map has ${cw * ch} pixels, not ${coarse.length}`);
  const n = W * H;
  if (into && (into.lo.length !== n || into.hi.length !== n || into.start.length !== n)) throw new Error(`coarse to fine: bands of ${into.lo.length}, ${into.hi.length} and ${into.start.length} pixels given for a ${W}×${H} level`);
  const { lo, hi, start } = into ?? { lo: new Uint16Array(n), hi: new Uint16Array(n), start: new Uint16Array(n) };
  // 3×3 minimum and maximum of the coarse map, separably: over each pixel's row neighbours, then over those of the rows above and below.
  const rowMn = new Uint16Array(cw * ch);
  const rowMx = new Uint16Array(cw * ch);
  for (let y = 0; y < ch; y++) {
    for (let x = 0, i = y * cw; x < cw; x++, i++) {
      let a = coarse[i];
      let b = a;
      if (x > 0) { const d = coarse[i - 1]; if (d < a) a = d; if (d > b) b = d; }
      if (x + 1 < cw) { const d = coarse[i + 1]; if (d < a) a = d; if (d > b) b = d; }
      rowMn[i] = a;
      rowMx[i] = b;
    }
  }
  const mn = new Uint16Array(cw * ch);
  const mx = new Uint16Array(cw * ch);
  for (let y = 0; y < ch; y++) {
    const up = (y > 0 ? y - 1 : y) * cw;
    const down = (y + 1 < ch ? y + 1 : y) * cw;
    for (let x = 0, i = y * cw; x < cw; x++, i++) {
      let a = rowMn[i];
      let b = rowMx[i];
      if (rowMn[up + x] < a) a = rowMn[up + x];
      if (rowMn[down + x] < a) a = rowMn[down + x];
      if (rowMx[up + x] > b) b = rowMx[up + x];
      if (rowMx[down + x] > b) b = rowMx[down + x];
      mn[i] = a;
      mx[i] = b;
    }
  }
  for (let y = 0, lastCy = -1; y < H; y++) {
    const row = y * W;
    const cy = y >> 1 < ch ? y >> 1 : ch - 1;
    // Two rows of a level read one coarse row: the second is the first's copy.
    if (cy === lastCy) {
      lo.copyWithin(row, row - W, row);
      hi.copyWithin(row, row - W, row);
      start.copyWithin(row, row - W, row);
      continue;
    }
    lastCy = cy;
    const crow = cy * cw;
    for (let x = 0; x < W; x++) {
      const c = crow + (x >> 1 < cw ? x >> 1 : cw - 1);
      let l = 2 * mn[c] - radius;
      if (l < minDisp) l = minDisp; else if (l > maxDisp) l = maxDisp;
      let h = 2 * mx[c] + radius;
      if (h < minDisp) h = minDisp; else if (h > maxDisp) h = maxDisp;
      let st = 2 * coarse[c];
      if (st < l) st = l;
      if (st > h) st = h;
      lo[row + x] = l - minDisp;
      hi[row + x] = h - minDisp;
      start[row + x] = st - minDisp;
    }
  }
  return { lo, hi, start };
}

/** The maps of both views (the second in the mirrored, swapped pair's coordinates, as match() holds it) at one level. */
export interface ViewMaps {
  /** Each view's map; one still being matched (the coarsest level's right view, beside this level's left strips) as a promise. */
  maps: Array<Uint16Array | Promise<Uint16Array>>;
  width: number;
  height: number;
}

/** One view of a finer level: what its banded energy (levelEnergy) is made of. */
export interface LevelView {
  /** 0: the pair; 1: the pair mirrored and swapped (the left–right check's right view). */
  view: 0 | 1;
  left: Raster;
  right: Raster;
  /** The level's energy options (ndisp and minDisp the level's). */
  energy: StereoEnergyOptions;
  shape: LevelShape;
  coarse: Uint16Array;
  coarseWidth: number;
  coarseHeight: number;
  radius: number;
}

/**
 * The energy a finer level minimises for one view, and where it starts:
 * the level's stereo energy (data costs and smoothness weights of the
 * level's pair, `job.energy`'s options) with D_p(l) = +∞ outside p's band
 * from the coarser map (a BandedTerm), labels 0..maxDisp − minDisp. Any
 * host solver can minimise it (computeEnergy evaluates it); a match runs
 * α-expansion moves with BandedMoveSolver on strips of it (refineLevel).
 */
export function levelEnergy(job: LevelView): { energy: MrfEnergy; start: Uint16Array } {
  const first = buildStereoEnergy(job.left, job.right, job.energy);
  const view = job.view === 0 ? first : mirroredSwappedEnergy(first, job.energy);
  const { lo, hi, start } = bandsFromCoarse(job.coarse, job.coarseWidth, job.coarseHeight, job.shape, job.radius);
  const data = bandedTerm(view.matcher, lo, hi);
  return { energy: { width: view.width, height: view.height, labels: view.labels, data, smoothness: view.smoothness, truncation: view.truncation, wH: view.wH, wV: view.wV }, start };
}

export interface RefineOptions {
  params: MatchParams;
  /** r of the bands (default BAND_RADIUS). */
  radius?: number;
  /** Rows of a strip (default STRIP_ROWS), and of the even strips that the windows around the odd ones move again (default STRIP_OVERLAP). */
  stripRows?: number;
  overlap?: number;
  /** What runs the strips: threads, or this thread. */
  run: StripRunner;
  /**
   * The most strip jobs built and not yet done (default: no limit). A job
   * holds its bands and labels (and copies of its rows of the pair, unless
   * they are views of a pair stage) until its thread is done with it; with
   * the threads' count here, only the jobs being run hold them, not the
   * level's whole queue.
   */
  inFlight?: number;
  /** The level's terms (stereo/levelTerms.ts) for its views, which the strips read instead of making their own; absent: made here, on this thread. */
  terms?: LevelTerms;
  /** Arrays for a view's bands and labels (shared memory, which the strip jobs then carry as views); absent: this thread's own. */
  bands?: (view: 0 | 1) => LevelBands | undefined;
  /** Called as each strip finishes: `index` strips of `count` done, `changed` pixels changed by this one. */
  onMove?: (info: MoveProgress & { level: number }) => void;
  onLevel?: (report: LevelReport) => void;
}

const ZERO: EnergyBreakdown = { data: 0, smoothness: 0, total: 0 };

/**
 * One finer level of both views (or the first alone), in strips
 * (stereo/levelStrips.ts): the even strips of every view, and the window
 * around each odd strip once the even strips beside it are done. Returns
 * the views' maps and the level's account, the views summed as one energy
 * (as match() reports two views matched as one). The level's initial energy is exact: the even strips'
 * own terms and borders at the start, plus the odd strips' own terms,
 * which the even strips leave as they were; its final energy is that plus
 * every job's change (the jobs of a pass share no term).
 */
export async function refineLevel(level: number, shape: LevelShape, pair: { left: Raster; right: Raster }, energy: StereoEnergyOptions, views: 1 | 2, coarse: ViewMaps, o: RefineOptions): Promise<{ maps: Uint16Array[]; result: Omit<ExpansionResult, 'labels'>; report: LevelReport }> {
  const p = o.params;
  const { width: W, height: H } = shape;
  const t0 = performance.now();
  const overlap = o.overlap ?? STRIP_OVERLAP;
  const rows = o.stripRows ?? STRIP_ROWS;
  if (!(Number.isInteger(rows) && rows > 0 && Number.isInteger(overlap) && overlap >= 0 && 2 * overlap < rows)) {
    throw new Error(`coarse to fine: strips of ${rows} rows with ${overlap} rows of overlap (windows would meet; at most ${Math.ceil(rows / 2) - 1})`);
  }
  const terms = o.terms ?? await levelTerms(pair, energy, views);
  if (terms.width !== W || terms.height !== H || terms.cues.length < views) throw new Error(`coarse to fine: terms of ${terms.width}×${terms.height} for ${terms.cues.length} views given for a ${W}×${H} level of ${views}`);
  const strips = stripRows(H, rows);
  // A view's bands are made, and its strips start, as soon as its coarser map is there.
  const bands: LevelBands[] = [];
  const labels: Uint16Array[] = [];
  const ready = coarse.maps.slice(0, views).map(async (m, v) => {
    bands[v] = bandsFromCoarse(await m, coarse.width, coarse.height, shape, o.radius ?? BAND_RADIUS, o.bands?.(v as 0 | 1));
    labels[v] = bands[v].start;
  });
  const job = (view: 0 | 1, own0: number, own1: number, parity: number): StripJob => {
    const y0 = parity === 0 ? own0 : Math.max(0, own0 - overlap);
    const y1 = parity === 0 ? own1 : Math.min(H, own1 + overlap);
    const { a, b } = stripSpan(y0, y1, H);
    // Views of shared memory, read on the strip's thread while no other job writes those rows; else copies, moved there.
    const span = (array: Uint16Array): Uint16Array => (isSharedArray(array) ? array.subarray(a * W, b * W) : array.slice(a * W, b * W));
    const { top, bottom } = stripCrop(y0, y1, H, energy);
    return {
      view, ...stripImages(pair, view, top, bottom, terms.codes !== undefined), top, energy, height: H, y0, y1, own0, own1,
      lo: span(bands[view].lo), hi: span(bands[view].hi), labels: span(labels[view]), ...termsRows(terms, view, top, bottom),
      order: p.order, cycles: p.levelCycles, seed: p.seed, skipUnchanged: p.skipUnchanged,
    };
  };
  const count = views * strips.length;
  let finished = 0;
  const onDone = (d: StripDone): void => {
    finished++;
    o.onMove?.({ cycle: 1, alpha: -1, index: finished - 1, count, changed: d.pixelsChanged, level });
  };
  // Each even strip starts at once; the window around an odd strip starts as soon as the even strips beside it are done
  // (it reads their rows and nothing else that moves), not when every even strip is. The labels are the same as with a
  // pass of even strips, then a pass of windows.
  const results: StripDone[][] = Array.from({ length: views }, () => new Array<StripDone>(strips.length));
  let longestDispatchMs = 0;
  let longestReturnMs = 0;
  // Jobs are built when they start: the labels a job reads are final by then either way (an even strip's held rows
  // belong to odd strips, which move only after it; a window's to even strips that are done), so the limit changes no label.
  const limit = pLimit(Math.max(1, o.inFlight ?? 2 * views * strips.length));
  const solve = (v: 0 | 1, k: number): Promise<void> => limit(async () => {
    const j = job(v, strips[k][0], strips[k][1], k % 2);
    const postedAt = performance.timeOrigin + performance.now();
    const [d] = await o.run([j], onDone);
    longestDispatchMs = Math.max(longestDispatchMs, d.startedAt - postedAt);
    longestReturnMs = Math.max(longestReturnMs, performance.timeOrigin + performance.now() - d.endedAt);
    labels[v].set(d.labels, d.y0 * W);
    results[v][k] = d;
  });
  const tasks: Promise<void>[] = [];
  for (let v = 0; v < views; v++) {
    const view = v as 0 | 1;
    const even = strips.map((_, k) => (k % 2 === 0 ? ready[v].then(() => solve(view, k)) : undefined));
    for (let k = 1; k < strips.length; k += 2) tasks.push(Promise.all([even[k - 1], even[k + 1]]).then(() => solve(view, k)));
    for (const e of even) if (e) tasks.push(e);
  }
  // Every job settles before the level returns, a failed one too: none is left running on rows the caller lets go.
  const settled = await Promise.allSettled([...tasks, ...ready]);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  // Summed in a fixed order (even strips, then windows; by view and row), whatever order the strips finished in.
  const done: StripDone[] = [];
  let initialEnergy = ZERO;
  for (const parity of [0, 1]) {
    for (let v = 0; v < views; v++) {
      results[v].forEach((d, k) => {
        if (k % 2 !== parity) return;
        initialEnergy = sumEnergy(initialEnergy, parity === 0 ? sumEnergy(d.ownStart, d.bordersStart) : d.ownStart);
        done.push(d);
      });
    }
  }
  const finalEnergy = done.reduce((e, d) => sumEnergy(e, d.change), initialEnergy);
  const ms = performance.now() - t0;
  const maps = labels.map((l) => {
    const map = new Uint16Array(l.length);
    for (let i = 0; i < map.length; i++) map[i] = l[i] + shape.minDisp;
    return map;
  });
  // Thread time: the strips' costs and moves (their sum over threads exceeds the level's wall time when threads run them).
  const costsMs = done.reduce((s, d) => s + d.costsMs, 0);
  const movesMs = done.reduce((s, d) => s + d.expansionMs, 0);
  const cycles = levelCycles(done, initialEnergy, finalEnergy);
  // The cycles' build and max-flow times as shares of the level's wall time, as a match reports its times.
  const wall = Math.min(1, ms / Math.max(1e-9, costsMs + movesMs));
  for (const c of cycles) { c.buildMs *= wall; c.flowMs *= wall; }
  const result: Omit<ExpansionResult, 'labels'> = {
    initialEnergy, finalEnergy, cycles, cuts: done.reduce((s, d) => s + d.cuts, 0),
    rejectedMoves: done.reduce((s, d) => s + d.rejectedMoves, 0), backend: 'bk', device: BANDED_DEVICE,
  };
  const report: LevelReport = {
    level, ...shape, meanBand: done.reduce((s, d) => s + d.bandLabels, 0) / (views * W * H),
    initialEnergy, finalEnergy, cuts: result.cuts, nodes: done.reduce((s, d) => s + d.nodes, 0),
    costsMs: ms * costsMs / Math.max(1e-9, costsMs + movesMs), expansionMs: ms * movesMs / Math.max(1e-9, costsMs + movesMs), strips: done.length, threadMs: costsMs + movesMs,
    longestStripMs: done.reduce((m, d) => Math.max(m, d.costsMs + d.expansionMs), 0), longestDispatchMs, longestReturnMs,
  };
  o.onLevel?.(report);
  return { maps, result, report };
}

/** Where a finer level's moves run. */
export const BANDED_DEVICE = 'CPU (Boykov–Kolmogorov on the pixels whose band holds α, in strips of rows)';

/**
 * The level's cycles: cycle i's counts summed over the strips that ran it;
 * its energy the level's initial energy plus every strip's change through
 * its cycle i (a strip that ended earlier counts its whole change), which
 * is the level's final energy at the last cycle.
 */
function levelCycles(done: StripDone[], initial: EnergyBreakdown, final: EnergyBreakdown): CycleReport[] {
  const n = done.reduce((m, d) => Math.max(m, d.cycles.length), 0);
  const cycles: CycleReport[] = [];
  for (let i = 0; i < n; i++) {
    let energy = initial;
    const c: CycleReport = { cycle: i + 1, energy, labelsChanged: 0, pixelsChanged: 0, cuts: 0, skipped: 0, buildMs: 0, flowMs: 0, stats: {} };
    for (const d of done) {
      energy = sumEnergy(energy, d.changes[Math.min(i, d.changes.length - 1)] ?? ZERO);
      const own = d.cycles[i];
      if (!own) continue;
      c.labelsChanged += own.labelsChanged;
      c.pixelsChanged += own.pixelsChanged;
      c.cuts += own.cuts;
      c.skipped += own.skipped;
      c.buildMs += own.buildMs;
      c.flowMs += own.flowMs;
      for (const [k, v] of Object.entries(own.stats)) c.stats[k] = (c.stats[k] ?? 0) + v;
    }
    c.energy = i === n - 1 ? final : energy;
    cycles.push(c);
  }
  return cycles;
}
