import type { Raster } from '../data/raster';
import type { BandedTerm, EnergyBreakdown, MrfEnergy } from '../data/energy';
import { bandedTerm } from '../costs/bandedTerm';
import * as path from 'path';
import { Worker } from 'worker_threads';
import { buildStereoEnergy, mirroredSwappedEnergy, type StereoEnergyOptions } from '../costs';
import { workerEntry } from '../data/sourceLoader';
import { alphaExpansion, type CycleReport, type ExpansionResult, type MoveProgress } from '../expansion/alphaExpansion';
import { BandedMoveSolver } from '../expansion/bandedMoves';
import type { MatchParams } from './params';

/**
 * Coarse to fine: the pair is matched at a reduced pyramid level, where the
 * default parameters were chosen and the graph is small, and every finer
 * level (each twice the size of the one below) refines that map with the
 * labels of each pixel confined to a band around the coarser disparity
 * (search-space reduction). A finer level's energy is the full-size
 * energy with D_p(l) = +∞ outside p's band (data/energy.ts BandedTerm): its
 * moves are solved exactly (expansion/bandedMoves.ts), and the work and
 * memory of a level grow with its pixels times the band, not times the
 * labels.
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
  costsMs: number;
  expansionMs: number;
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

/** The raster at half size (rounded up): each sample the rounded mean of its 2×2 block (the last row and column repeated where the size is odd). */
export function halfSize(r: Raster): Raster {
  const { width: W, height: H, channels: C } = r;
  const w = Math.ceil(W / 2);
  const h = Math.ceil(H / 2);
  const data = new Float32Array(w * h * C);
  const integral = r.maxval > 1;
  for (let y = 0; y < h; y++) {
    const y0 = 2 * y;
    const y1 = Math.min(y0 + 1, H - 1);
    for (let x = 0; x < w; x++) {
      const x0 = 2 * x;
      const x1 = Math.min(x0 + 1, W - 1);
      for (let c = 0; c < C; c++) {
        const s = r.data[(y0 * W + x0) * C + c] + r.data[(y0 * W + x1) * C + c] + r.data[(y1 * W + x0) * C + c] + r.data[(y1 * W + x1) * C + c];
        data[(y * w + x) * C + c] = integral ? Math.round(s / 4) : s / 4;
      }
    }
  }
  return { width: w, height: h, channels: C, data, maxval: r.maxval };
}

/**
 * Bands and starting labels of a level from the coarser level's disparity
 * map (disparities, not labels): see the module comment. Labels are
 * disparities − shape.minDisp.
 */
export function bandsFromCoarse(coarse: Uint16Array, cw: number, ch: number, shape: LevelShape, radius = BAND_RADIUS): { lo: Uint16Array; hi: Uint16Array; start: Uint16Array } {
  const { width: W, height: H, minDisp, maxDisp } = shape;
  if (coarse.length !== cw * ch) throw new Error(`coarse to fine: a ${cw}×${ch} map has ${cw * ch} pixels, not ${coarse.length}`);
  const n = W * H;
  const lo = new Uint16Array(n);
  const hi = new Uint16Array(n);
  const start = new Uint16Array(n);
  // 3×3 minimum and maximum of the coarse map.
  const mn = new Int32Array(cw * ch);
  const mx = new Int32Array(cw * ch);
  for (let y = 0; y < ch; y++) {
    for (let x = 0; x < cw; x++) {
      let a = Infinity;
      let b = -Infinity;
      for (let yy = Math.max(0, y - 1); yy <= Math.min(ch - 1, y + 1); yy++) {
        for (let xx = Math.max(0, x - 1); xx <= Math.min(cw - 1, x + 1); xx++) {
          const d = coarse[yy * cw + xx];
          if (d < a) a = d;
          if (d > b) b = d;
        }
      }
      mn[y * cw + x] = a;
      mx[y * cw + x] = b;
    }
  }
  const clamp = (d: number): number => (d < minDisp ? minDisp : d > maxDisp ? maxDisp : d);
  for (let y = 0; y < H; y++) {
    const cy = Math.min(ch - 1, y >> 1);
    for (let x = 0; x < W; x++) {
      const c = cy * cw + Math.min(cw - 1, x >> 1);
      const p = y * W + x;
      const l = clamp(2 * mn[c] - radius);
      const h = clamp(2 * mx[c] + radius);
      lo[p] = l - minDisp;
      hi[p] = h - minDisp;
      start[p] = Math.min(h, Math.max(l, 2 * coarse[c])) - minDisp;
    }
  }
  return { lo, hi, start };
}

/** The maps of both views (the second in the mirrored, swapped pair's coordinates, as match() holds it) at one level. */
export interface ViewMaps {
  maps: Uint16Array[];
  width: number;
  height: number;
}

/** One view's refinement at one level, as a worker thread takes it (plain data only). */
export interface ViewJob {
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
  order: MatchParams['order'];
  cycles: MatchParams['cycles'];
  seed: number;
  skipUnchanged: boolean;
}

/** What one view's refinement gives back: its map (disparities) and account. */
export interface ViewDone {
  map: Uint16Array;
  result: Omit<ExpansionResult, 'labels'>;
  bandLabels: number;
  nodes: number;
  costsMs: number;
  expansionMs: number;
}

/**
 * The energy a finer level minimises for one view, and where it starts:
 * the level's stereo energy (data costs and smoothness weights of the
 * level's pair, `job.energy`'s options) with D_p(l) = +∞ outside p's band
 * from the coarser map (a BandedTerm), labels 0..maxDisp − minDisp. Any
 * host solver can minimise it (computeEnergy evaluates it; α-expansion
 * with BandedMoveSolver is what a match runs).
 */
export function levelEnergy(job: ViewJob): { energy: MrfEnergy; start: Uint16Array } {
  const first = buildStereoEnergy(job.left, job.right, job.energy);
  const view = job.view === 0 ? first : mirroredSwappedEnergy(first, job.energy);
  const { lo, hi, start } = bandsFromCoarse(job.coarse, job.coarseWidth, job.coarseHeight, job.shape, job.radius);
  const data = bandedTerm(view.matcher, lo, hi);
  return { energy: { width: view.width, height: view.height, labels: view.labels, data, smoothness: view.smoothness, truncation: view.truncation, wH: view.wH, wV: view.wV }, start };
}

/**
 * One view at one level: its banded energy (costs only inside the bands
 * from the coarser map) minimised by banded α-expansion from the coarse
 * map scaled up.
 */
export async function refineView(job: ViewJob, onMove?: (m: MoveProgress) => void): Promise<ViewDone> {
  const t0 = performance.now();
  const { energy, start } = levelEnergy(job);
  const data = energy.data as BandedTerm;
  const t1 = performance.now();
  const r = await alphaExpansion(energy, start, new BandedMoveSolver(energy), { order: job.order, cycles: job.cycles, seed: job.seed, skipUnchanged: job.skipUnchanged, onMove });
  const { labels, ...result } = r;
  const map = new Uint16Array(labels.length);
  for (let i = 0; i < map.length; i++) map[i] = labels[i] + job.shape.minDisp;
  return { map, result, bandLabels: data.costs.length, nodes: r.cycles.reduce((s, c) => s + (c.stats.nodes ?? 0), 0), costsMs: t1 - t0, expansionMs: performance.now() - t1 };
}

export interface RefineOptions {
  params: MatchParams;
  /** r of the bands (default BAND_RADIUS). */
  radius?: number;
  /** Run the second view on a worker thread while the first runs here (default: when the level has at least PARALLEL_PIXELS pixels). */
  threads?: boolean;
  onMove?: (info: MoveProgress & { level: number }) => void;
  onLevel?: (report: LevelReport) => void;
}

/** Pixels of a level from which its second view runs on a thread of its own (below, starting the thread costs more than it saves). */
export const PARALLEL_PIXELS = 250_000;

/**
 * One finer level of both views (or the first alone): each refined by
 * refineView, the second on a worker thread when that pays. Returns the
 * views' maps and the level's account, the views' expansions summed as
 * one (as match() reports two views matched as one energy).
 */
export async function refineLevel(level: number, shape: LevelShape, pair: { left: Raster; right: Raster }, energy: StereoEnergyOptions, views: 1 | 2, coarse: ViewMaps, o: RefineOptions): Promise<{ maps: Uint16Array[]; result: Omit<ExpansionResult, 'labels'>; report: LevelReport }> {
  const p = o.params;
  const job = (view: 0 | 1): ViewJob => ({
    view, left: pair.left, right: pair.right, energy, shape, coarse: coarse.maps[view], coarseWidth: coarse.width, coarseHeight: coarse.height,
    radius: o.radius ?? BAND_RADIUS, order: p.order, cycles: p.levelCycles, seed: p.seed, skipUnchanged: p.skipUnchanged,
  });
  const onMove = o.onMove ? (m: MoveProgress): void => o.onMove!({ ...m, level }) : undefined;
  const threaded = views === 2 && (o.threads ?? shape.width * shape.height >= PARALLEL_PIXELS);
  const second = views === 2 ? (threaded ? refineViewOnThread(job(1)) : undefined) : undefined;
  const done: ViewDone[] = [await refineView(job(0), onMove)];
  if (views === 2) done.push(second ? await second : await refineView(job(1), onMove));
  const result = sumViews(done.map((d) => d.result));
  const report: LevelReport = {
    level, ...shape, meanBand: done.reduce((s, d) => s + d.bandLabels, 0) / (views * shape.width * shape.height),
    initialEnergy: result.initialEnergy, finalEnergy: result.finalEnergy, cuts: result.cuts, nodes: done.reduce((s, d) => s + d.nodes, 0),
    costsMs: done.reduce((s, d) => s + d.costsMs, 0), expansionMs: done.reduce((s, d) => s + d.expansionMs, 0),
  };
  o.onLevel?.(report);
  return { maps: done.map((d) => d.map), result, report };
}

/** refineView on a worker thread of its own (stereo/levelWorker.ts), started for this job and ended after it. */
function refineViewOnThread(job: ViewJob): Promise<ViewDone> {
  const entry = workerEntry(path.join(__dirname, 'levelWorker'));
  return new Promise((resolve, reject) => {
    const w = new Worker(entry.code, { eval: entry.eval, workerData: job });
    let settled = false;
    w.once('message', (m: { done?: ViewDone; error?: string }) => {
      settled = true;
      if (m.done) resolve(m.done);
      else reject(new Error(m.error ?? 'coarse to fine: the view thread failed'));
      void w.terminate();
    });
    w.once('error', (e) => { if (!settled) { settled = true; reject(e); } });
    w.once('exit', (code) => { if (!settled) { settled = true; reject(new Error(`coarse to fine: the view thread exited with code ${code}`)); } });
  });
}

const sumEnergy = (a: EnergyBreakdown, b: EnergyBreakdown): EnergyBreakdown => ({ data: a.data + b.data, smoothness: a.smoothness + b.smoothness, total: a.total + b.total });

/** The expansions of the views as one: energies and counts summed cycle by cycle. */
function sumViews(rs: Array<Omit<ExpansionResult, 'labels'>>): Omit<ExpansionResult, 'labels'> {
  return rs.slice(1).reduce((a, b) => ({
    ...a,
    initialEnergy: sumEnergy(a.initialEnergy, b.initialEnergy),
    finalEnergy: sumEnergy(a.finalEnergy, b.finalEnergy),
    cuts: a.cuts + b.cuts,
    rejectedMoves: a.rejectedMoves + b.rejectedMoves,
    cycles: a.cycles.map((c, i): CycleReport => {
      const d = b.cycles[i] ?? { ...c, energy: b.finalEnergy, labelsChanged: 0, pixelsChanged: 0, cuts: 0, skipped: 0, buildMs: 0, flowMs: 0, stats: {} };
      const stats: Record<string, number> = { ...c.stats };
      for (const [k, v] of Object.entries(d.stats)) stats[k] = (stats[k] ?? 0) + v;
      return {
        cycle: c.cycle, energy: sumEnergy(c.energy, d.energy), labelsChanged: c.labelsChanged + d.labelsChanged, pixelsChanged: c.pixelsChanged + d.pixelsChanged,
        cuts: c.cuts + d.cuts, skipped: c.skipped + d.skipped, buildMs: c.buildMs + d.buildMs, flowMs: c.flowMs + d.flowMs, stats,
      };
    }),
  }), rs[0]);
}
