import type { Raster } from './raster';
import type { SceneMasks } from './sceneTypes';

/**
 * Middlebury-style scores of a disparity map against ground truth.
 *
 * A pixel is bad at threshold t when |d − d_gt| > t (the v2 table's rule).
 * Regions: 'known' (every pixel with finite ground truth) and, where the
 * scene has them, the v2 masks nonocc / all / disc (intersected with known
 * ground truth, so an unknown pixel never counts).
 */
export type RegionName = 'known' | 'nonocc' | 'all' | 'disc';

export interface RegionScore {
  /** A RegionName, or the name of a custom mask. */
  region: string;
  /** Pixels evaluated. */
  pixels: number;
  /** Bad-pixel percentage per threshold, in the order of Evaluation.thresholds. */
  bad: number[];
  /** Mean |d − d_gt|. */
  avgError: number;
  /** sqrt(mean (d − d_gt)²). */
  rms: number;
}

export interface Evaluation {
  thresholds: number[];
  regions: RegionScore[];
  /** Set when the nonocc mask was derived from left-right consistency of two ground truths. */
  note?: string;
}

export interface EvaluateOptions {
  thresholds?: number[];
  masks?: SceneMasks;
  nonoccDerived?: boolean;
  /** Regions to report (default: known plus every mask present). */
  regions?: RegionName[];
  /** Further regions from mask images (non-zero = evaluated), reported under their names. */
  customMasks?: { name: string; mask: Uint8Array }[];
}

function checkThresholds(t: number[]): void {
  if (t.length === 0) throw new Error('--threshold: give at least one threshold');
  for (const v of t) if (!Number.isFinite(v) || v < 0) throw new Error(`--threshold: must be a finite number ≥ 0 (got ${v})`);
}

export function evaluateDisparity(
  disparity: ArrayLike<number>,
  groundTruth: Float32Array,
  width: number,
  height: number,
  options: EvaluateOptions = {},
): Evaluation {
  const n = width * height;
  if (disparity.length !== n) throw new Error(`evaluation: the disparity map has ${disparity.length} pixels, the ground truth ${width}×${height} = ${n}`);
  if (groundTruth.length !== n) throw new Error(`evaluation: the ground truth has ${groundTruth.length} pixels, expected ${n}`);
  const thresholds = options.thresholds ?? [1];
  checkThresholds(thresholds);
  const masks = options.masks ?? {};
  const wanted = options.regions ?? (['known', 'nonocc', 'all', 'disc'] as RegionName[]).filter((r) => r === 'known' || masks[r]);
  const regions: RegionScore[] = [];
  const todo: { region: string; mask?: Uint8Array }[] = wanted.map((region) => {
    const mask = region === 'known' ? undefined : masks[region];
    if (region !== 'known' && !mask) throw new Error(`--mask: this scene has no ${region} mask`);
    return { region, mask };
  });
  for (const c of options.customMasks ?? []) todo.push({ region: c.name, mask: c.mask });
  for (const { region, mask } of todo) {
    if (mask && mask.length !== n) throw new Error(`evaluation: the ${region} mask has ${mask.length} pixels, expected ${n}`);
    const badCounts = new Float64Array(thresholds.length);
    let pixels = 0;
    let sumAbs = 0;
    let sumSq = 0;
    for (let p = 0; p < n; p++) {
      const g = groundTruth[p];
      if (!Number.isFinite(g) || (mask && !mask[p])) continue;
      const e = Math.abs(disparity[p] - g);
      pixels++;
      sumAbs += e;
      sumSq += e * e;
      for (let i = 0; i < thresholds.length; i++) if (!(e <= thresholds[i])) badCounts[i]++;
    }
    regions.push({
      region,
      pixels,
      bad: Array.from(badCounts, (b) => (pixels ? (100 * b) / pixels : 0)),
      avgError: pixels ? sumAbs / pixels : 0,
      rms: pixels ? Math.sqrt(sumSq / pixels) : 0,
    });
  }
  const note = options.nonoccDerived ? 'nonocc derived from left-right consistency of the two ground-truth maps' : undefined;
  return { thresholds, regions, note };
}

/** One region's score by name, or undefined. */
export function regionScore(e: Evaluation, region: RegionName): RegionScore | undefined {
  return e.regions.find((r) => r.region === region);
}

/**
 * The error image: the left image in grey, bad pixels (|d − gt| > threshold,
 * inside the mask when one is given) in red, unknown ground truth (or outside
 * the mask) dimmed to half brightness.
 */
export function errorImage(left: Raster, disparity: ArrayLike<number>, groundTruth: Float32Array, threshold: number, mask?: Uint8Array): Raster {
  const { width: W, height: H, channels: C } = left;
  const out = new Float32Array(W * H * 3);
  const s = 255 / left.maxval;
  for (let p = 0; p < W * H; p++) {
    let grey = 0;
    for (let c = 0; c < C; c++) grey += left.data[p * C + c];
    grey = (grey / C) * s;
    const g = groundTruth[p];
    const evaluated = Number.isFinite(g) && (!mask || mask[p] !== 0);
    if (evaluated && !(Math.abs(disparity[p] - g) <= threshold)) {
      out[p * 3] = 255; out[p * 3 + 1] = 0; out[p * 3 + 2] = 0;
    } else {
      const v = evaluated ? grey : grey * 0.5;
      out[p * 3] = v; out[p * 3 + 1] = v; out[p * 3 + 2] = v;
    }
  }
  return { width: W, height: H, channels: 3, data: out, maxval: 255 };
}

/** Turbo-like colour ramp (polynomial fit of Google's Turbo map), t in [0, 1]. */
function turbo(t: number): [number, number, number] {
  const r = 34.61 + t * (1172.33 - t * (10793.56 - t * (33300.12 - t * (38394.49 - t * 14825.05))));
  const g = 23.31 + t * (557.33 + t * (1225.33 - t * (3574.96 - t * (1073.77 + t * 707.56))));
  const b = 27.2 + t * (3211.1 - t * (15327.97 - t * (27814.0 - t * (22569.18 - t * 6838.66))));
  const clamp = (v: number): number => Math.max(0, Math.min(255, v));
  return [clamp(r), clamp(g), clamp(b)];
}

/** Colour-mapped disparity (blue far … red near); non-finite values black. */
export function colorizeDisparity(disparity: ArrayLike<number>, width: number, height: number, maxDisparity: number): Raster {
  const out = new Float32Array(width * height * 3);
  const m = maxDisparity > 0 ? maxDisparity : 1;
  for (let p = 0; p < width * height; p++) {
    const d = disparity[p];
    if (!Number.isFinite(d)) continue;
    const [r, g, b] = turbo(Math.max(0, Math.min(1, d / m)));
    out[p * 3] = r; out[p * 3 + 1] = g; out[p * 3 + 2] = b;
  }
  return { width, height, channels: 3, data: out, maxval: 255 };
}
