import type { Raster } from '../data/raster';
import type { EnergyBreakdown, MrfEnergy } from '../data/energy';
import { bandedTerm } from '../costs/bandedTerm';
import type { StereoEnergy } from '../costs';
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

export interface RefineOptions {
  params: MatchParams;
  /** r of the bands (default BAND_RADIUS). */
  radius?: number;
  onMove?: (info: MoveProgress & { level: number }) => void;
  onLevel?: (report: LevelReport) => void;
}

/**
 * One finer level: each view's banded energy (the level's energy `views[i]`,
 * costs only inside the bands from the coarser maps) minimised by banded
 * α-expansion from the coarse map scaled up. Returns the views' maps
 * (disparities) and the level's account, with the expansion of the views
 * summed as one (as match() reports two views matched as one energy).
 */
export async function refineLevel(level: number, shape: LevelShape, views: readonly StereoEnergy[], coarse: ViewMaps, o: RefineOptions): Promise<{ maps: Uint16Array[]; result: ExpansionResult; report: LevelReport }> {
  const p = o.params;
  const maps: Uint16Array[] = [];
  const results: ExpansionResult[] = [];
  let costsMs = 0;
  let expansionMs = 0;
  let bandLabels = 0;
  let nodes = 0;
  const viewCount = views.length;
  for (let v = 0; v < viewCount; v++) {
    const t0 = performance.now();
    const view = views[v];
    const { lo, hi, start } = bandsFromCoarse(coarse.maps[v], coarse.width, coarse.height, shape, o.radius);
    const data = bandedTerm(view.matcher, lo, hi);
    bandLabels += data.costs.length;
    const energy: MrfEnergy = { width: view.width, height: view.height, labels: view.labels, data, smoothness: view.smoothness, truncation: view.truncation, wH: view.wH, wV: view.wV };
    const t1 = performance.now();
    const solver = new BandedMoveSolver(energy);
    const r = await alphaExpansion(energy, start, solver, {
      order: p.order, cycles: p.cycles, seed: p.seed, skipUnchanged: p.skipUnchanged,
      onMove: o.onMove ? (m) => o.onMove!({ ...m, level }) : undefined,
    });
    for (const c of r.cycles) nodes += c.stats.nodes ?? 0;
    costsMs += t1 - t0;
    expansionMs += performance.now() - t1;
    results.push(r);
    const out = new Uint16Array(r.labels.length);
    for (let i = 0; i < out.length; i++) out[i] = r.labels[i] + shape.minDisp;
    maps.push(out);
  }
  const result = sumViews(results);
  const report: LevelReport = {
    level, ...shape, meanBand: bandLabels / (viewCount * shape.width * shape.height), initialEnergy: result.initialEnergy, finalEnergy: result.finalEnergy,
    cuts: result.cuts, nodes, costsMs, expansionMs,
  };
  o.onLevel?.(report);
  return { maps, result, report };
}

const sumEnergy = (a: EnergyBreakdown, b: EnergyBreakdown): EnergyBreakdown => ({ data: a.data + b.data, smoothness: a.smoothness + b.smoothness, total: a.total + b.total });

/** The expansions of the views as one: energies and counts summed cycle by cycle (labels: the first view's). */
function sumViews(rs: ExpansionResult[]): ExpansionResult {
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
