import { bandedCost, pairwise, type BandedTerm, type EnergyBreakdown, type MrfEnergy } from '../data/energy';
import { bandedTerm } from '../costs/bandedTerm';
import { DEFAULT_CENSUS_WINDOW, viewEnergy, weightsOfStereoCues, type StereoEnergyOptions } from '../costs';
import type { Raster } from '../data/raster';
import { alphaExpansion, type CycleReport } from '../expansion/alphaExpansion';
import { BandedMoveScratch, BandedMoveSolver } from '../expansion/bandedMoves';
import type { MatchParams } from './params';
import { isShared } from '../data/sharedStage';

/**
 * A finer pyramid level solved in strips of rows, so that its moves run on
 * every core. A strip's moves are the level's banded α-expansion moves
 * restricted to the strip's rows, with the rows just above and below held
 * at their labels: each is the exact optimal expansion of α over the
 * strip for the level's banded energy (the held rows enter as the unary
 * terms of the rows beside them), so no strip raises the level's energy.
 *
 * The level runs in two passes: the even strips, then windows around the
 * odd strips, each reaching OVERLAP rows into the even strips beside it so
 * that the rows along every seam are moved again beside their final
 * neighbours. The windows of one pass share no term of the energy (rows
 * that neither moves lie between any two), so they run at once and the
 * level's energy falls by the sum of their changes. The strips are
 * STRIP_ROWS rows whatever the machine, so the labels do not depend on the
 * threads.
 *
 * A strip job carries the rows of the level's pair it needs (its rows, the
 * held rows and haloRows more on each side, enough for every cost's
 * window), so a thread builds the costs of its own strip: those rows'
 * costs are the ones the whole level's energy has. Its weights, and its
 * census codes, are the level's (stereo/levelTerms.ts), made once. With a
 * pool, every array a job carries is a view of shared memory and a thread
 * builds its strip in arrays it keeps (data/scratchArrays.ts), so that a
 * strip leaves no garbage on its thread.
 */

/** Rows of a strip (the last strip of a level may have fewer). */
export const STRIP_ROWS = 64;
/** Rows of the even strips that the window around an odd strip moves again, on each side (less than half a strip, so that windows stay apart). */
export const STRIP_OVERLAP = 8;

/** Rows of the pair beyond a strip's held rows that its costs and weights may read: half the census window's height, the gradients' row, and one to spare. */
export function haloRows(energy: StereoEnergyOptions): number {
  return Math.floor((energy.censusWindow ?? DEFAULT_CENSUS_WINDOW).height / 2) + 2;
}

/** The strips of a level of `height` rows: [y0, y1) each, top to bottom. */
export function stripRows(height: number, rows = STRIP_ROWS): Array<[number, number]> {
  const strips: Array<[number, number]> = [];
  for (let y = 0; y < height; y += rows) strips.push([y, Math.min(height, y + rows)]);
  return strips;
}

/** One strip of one view, as a thread takes it (plain data only). */
export interface StripJob {
  /** 0: the pair; 1: the pair mirrored and swapped (the left–right check's second view). */
  view: 0 | 1;
  /** Rows top .. top + left.height − 1 of the level's pair; with `codes`, one crop for both, the image the view's weights read (stripImages). */
  left: Raster;
  right: Raster;
  top: number;
  /** The level's energy options (ndisp and minDisp the level's). */
  energy: StereoEnergyOptions;
  /** The level's height. */
  height: number;
  /** Rows moved: y0 .. y1 − 1 of the level. */
  y0: number;
  y1: number;
  /** The strip's own rows (within y0..y1): their terms at the start count towards the level's initial energy. */
  own0: number;
  own1: number;
  /** The level's bands (labels lo..hi) and labels of rows a .. b − 1, a = max(0, y0 − 1), b = min(height, y1 + 1) (read only: a held row's band is taken as its label alone). */
  lo: Uint16Array;
  hi: Uint16Array;
  labels: Uint16Array;
  /** The level's smoothness weights of the view as cues, rows top .. top + left.height − 1 (stereo/levelTerms.ts). */
  cues: Uint8Array;
  /** Census costs: the level's codes of rows top .. top + left.height − 1, used instead of the strip's own. */
  codes?: { left: Int32Array; right: Int32Array };
  order: MatchParams['order'];
  cycles: MatchParams['cycles'];
  seed: number;
  skipUnchanged: boolean;
}

/** Terms of the energy over a run of rows y0..y1−1. */
export interface StripEnergies {
  /** Data terms of rows y0..y1−1 and the edges between two of those rows. */
  inside: EnergyBreakdown;
  /** The edges between row y0 − 1 and y0 and between y1 − 1 and y1 (those that exist). */
  borders: EnergyBreakdown;
}

export interface StripDone {
  view: 0 | 1;
  y0: number;
  y1: number;
  /** Labels of rows y0 .. y1 − 1. */
  labels: Uint16Array;
  /** At the start: the terms inside its own rows (own0..own1), and the edges across the borders of the rows it moves. */
  ownStart: EnergyBreakdown;
  bordersStart: EnergyBreakdown;
  /** The change of the level's energy it made: its energy's, whose other terms are those of held rows. */
  change: EnergyBreakdown;
  cuts: number;
  rejectedMoves: number;
  cycles: CycleReport[];
  /** The strip's change of the level's energy through each of its cycles. */
  changes: EnergyBreakdown[];
  nodes: number;
  bandLabels: number;
  pixelsChanged: number;
  costsMs: number;
  expansionMs: number;
  /** When the strip started and ended on its thread, in ms since the epoch (performance.timeOrigin + now: comparable across threads). */
  startedAt: number;
  endedAt: number;
}

/** What runs a level's strips (stereo/stripRunner.ts): the results in the jobs' order, `onDone` as each finishes. */
export type StripRunner = (jobs: StripJob[], onDone?: (done: StripDone) => void) => Promise<StripDone[]>;

/** The rows a strip's energy covers: its own and the held row on each side. */
export function stripSpan(y0: number, y1: number, height: number): { a: number; b: number } {
  return { a: Math.max(0, y0 - 1), b: Math.min(height, y1 + 1) };
}

/** The rows of a pair a strip job carries: the span and HALO rows on each side, within the level. */
export function stripCrop(y0: number, y1: number, height: number, energy: StereoEnergyOptions): { top: number; bottom: number } {
  const { a, b } = stripSpan(y0, y1, height);
  const halo = haloRows(energy);
  return { top: Math.max(0, a - halo), bottom: Math.min(height, b + halo) };
}

/** Rows top .. bottom − 1 of a raster: a view when its samples are in shared memory (a SharedStage's, read-only on every thread), else a copy (moved to the thread that reads it). */
export function cropRows(r: Raster, top: number, bottom: number): Raster {
  const row = r.width * r.channels;
  return { ...r, height: bottom - top, data: isShared(r) ? r.data.subarray(top * row, bottom * row) : r.data.slice(top * row, bottom * row) };
}

/**
 * Rows top..bottom − 1 of the pair for a strip job of `view`. With the
 * level's census codes the strip's costs read no samples, and its weights
 * read one image: the left image for the first view, the right for the
 * mirrored one (whose weights are the right image's, mirrored). That crop
 * then stands for both images (one array, sent once), and the strip's
 * energy is the same as with both.
 */
export function stripImages(pair: { left: Raster; right: Raster }, view: 0 | 1, top: number, bottom: number, codes: boolean): { left: Raster; right: Raster } {
  if (!codes) return { left: cropRows(pair.left, top, bottom), right: cropRows(pair.right, top, bottom) };
  const weighed = cropRows(view === 0 ? pair.left : pair.right, top, bottom);
  return { left: weighed, right: weighed };
}

/**
 * The banded energy of a strip: rows a..b−1 of the level's banded energy
 * for the job's view, with a held row's band its label alone. Its terms
 * are exactly the level energy's terms over those rows, but for the edges
 * below row b − 1, which it leaves out. It is built in `scratch` (a
 * thread's: valid until its next strip), and the job's arrays are only read.
 */
export function stripEnergy(job: StripJob, scratch = new BandedMoveScratch()): MrfEnergy {
  const W = job.left.width;
  const rows = job.left.height;
  const weights = weightsOfStereoCues(job.cues, W, rows, job.energy, { wH: scratch.array('strip wH', Int32Array, W * rows), wV: scratch.array('strip wV', Int32Array, W * rows) });
  const view = viewEnergy(job.left, job.right, job.energy, job.view, weights);
  if (job.codes) {
    // The second view's pair is the first's mirrored and swapped: its matcher reads the first's codes at the mirrored pixels (DataCostMatcher.useCensusCodes).
    view.matcher.useCensusCodes(job.codes.left, job.codes.right, job.view === 1);
  }
  const { a, b } = stripSpan(job.y0, job.y1, job.height);
  const n = (b - a) * W;
  if (job.lo.length !== n || job.hi.length !== n || job.labels.length !== n) throw new Error(`strip: bands of ${job.lo.length} and ${job.hi.length} pixels and ${job.labels.length} labels for rows ${a}..${b - 1} of ${W}`);
  // The held rows' band is their label.
  const lo = scratch.array('strip lo', Uint16Array, n);
  const hi = scratch.array('strip hi', Uint16Array, n);
  lo.set(job.lo);
  hi.set(job.hi);
  for (const y of [a < job.y0 ? a : -1, b > job.y1 ? b - 1 : -1]) {
    if (y < 0) continue;
    const row = job.labels.subarray((y - a) * W, (y - a + 1) * W);
    lo.set(row, (y - a) * W);
    hi.set(row, (y - a) * W);
  }
  const data: BandedTerm = bandedTerm(view.matcher, lo, hi, a - job.top, scratch);
  const from = (a - job.top) * W;
  // The level's weights of rows a..b − 1 (this strip's own arrays), less the edges below row b − 1, which are not the strip's.
  const wV = weights.wV.subarray(from, from + n);
  wV.fill(0, n - W);
  return { width: W, height: b - a, labels: view.labels, data, smoothness: view.smoothness, truncation: view.truncation, wH: weights.wH.subarray(from, from + n), wV };
}

/** StripEnergies of labels on a strip's energy (rows a..b−1 of the level; the strip's rows y0..y1−1). */
export function stripEnergies(e: MrfEnergy, labels: Uint16Array, a: number, y0: number, y1: number): StripEnergies {
  const W = e.width;
  const band = e.data as BandedTerm;
  // pairwise called directly: a closure made per call here was a new call target at every strip, which undid the optimised code.
  const { smoothness: kind, truncation: T } = e;
  let data = 0;
  let inside = 0;
  for (let y = y0 - a; y < y1 - a; y++) {
    for (let x = 0; x < W; x++) {
      const p = y * W + x;
      data += bandedCost(band, p, labels[p]);
      if (x + 1 < W) inside += e.wH[p] * pairwise(kind, T, labels[p], labels[p + 1]);
      if (y + 1 < y1 - a) inside += e.wV[p] * pairwise(kind, T, labels[p], labels[p + W]);
    }
  }
  let borders = 0;
  for (let x = 0; x < W; x++) {
    if (y0 > a) borders += e.wV[x] * pairwise(kind, T, labels[x], labels[x + W]);
    const last = (y1 - 1 - a) * W + x;
    if (y1 - a < e.height) borders += e.wV[last] * pairwise(kind, T, labels[last], labels[last + W]);
  }
  return { inside: { data, smoothness: inside, total: data + inside }, borders: { data: 0, smoothness: borders, total: borders } };
}

/** A strip's moves (one job, on whatever thread runs it), built in `scratch` (a thread keeps one for the strips it runs in turn). */
export async function solveStrip(job: StripJob, scratch = new BandedMoveScratch()): Promise<StripDone> {
  const t0 = performance.now();
  const startedAt = performance.timeOrigin + t0;
  const energy = stripEnergy(job, scratch);
  const t1 = performance.now();
  const { a } = stripSpan(job.y0, job.y1, job.height);
  const moved = stripEnergies(energy, job.labels, a, job.y0, job.y1);
  const ownStart = job.own0 === job.y0 && job.own1 === job.y1 ? moved.inside : stripEnergies(energy, job.labels, a, job.own0, job.own1).inside;
  const bordersStart = moved.borders;
  const r = await alphaExpansion(energy, job.labels, new BandedMoveSolver(energy, scratch), { order: job.order, cycles: job.cycles, seed: job.seed, skipUnchanged: job.skipUnchanged });
  const W = energy.width;
  const labels = r.labels.slice((job.y0 - a) * W, (job.y1 - a) * W);
  const e0 = r.initialEnergy;
  // The held rows' data terms and the edges among them are in the strip's energy but never change.
  const band = energy.data as BandedTerm;
  return {
    view: job.view, y0: job.y0, y1: job.y1, labels, ownStart, bordersStart, change: difference(r.finalEnergy, e0), cuts: r.cuts, rejectedMoves: r.rejectedMoves, cycles: r.cycles,
    changes: r.cycles.map((c) => difference(c.energy, e0)),
    nodes: r.cycles.reduce((s, c) => s + (c.stats.nodes ?? 0), 0), bandLabels: band.offset[(job.own1 - a) * W] - band.offset[(job.own0 - a) * W],
    pixelsChanged: r.cycles.reduce((s, c) => s + c.pixelsChanged, 0), costsMs: t1 - t0, expansionMs: performance.now() - t1,
    startedAt, endedAt: performance.timeOrigin + performance.now(),
  };
}

function difference(a: EnergyBreakdown, b: EnergyBreakdown): EnergyBreakdown {
  return { data: a.data - b.data, smoothness: a.smoothness - b.smoothness, total: a.total - b.total };
}
