import * as path from 'path';
import * as fs from 'fs';
import { readCalib, type Calib } from '../data/calib';
import type { PointCloud } from '../data/ply';
import type { Raster } from '../data/raster';
import { INVALID_DISPARITY } from './leftRightCheck';
import { disparityInPixels, type MatchResult } from './match';

/**
 * Depth and point clouds from a disparity map and the rectified pair's
 * calibration (the pinhole model of Middlebury's calib.txt): a left pixel
 * (x, y) of disparity d sees the point
 *
 *   Z = f·B / (d + doffs),  X = (x − cx)·Z / f,  Y = (y − cy)·Z / f
 *
 * in the left camera's frame (x right, y down, z forward), in the unit of
 * the baseline B (mm for calib.txt). doffs is the principal points' offset
 * cx1 − cx0 (0 when both cameras share one). A pixel has no point when its
 * disparity is invalid or d + doffs ≤ 0 (at or beyond infinity).
 */
export interface StereoCalibration {
  /** Focal length in pixels. */
  focal: number;
  /** Distance between the camera centres; depth comes in its unit. */
  baseline: number;
  /** cx1 − cx0 in pixels (default 0). */
  doffs: number;
  /** Principal point of the left camera in pixels. */
  cx: number;
  cy: number;
}

/** The map to reproject: match()'s result (its sub-pixel map where refined), or disparities in pixels (+inf or INVALID_DISPARITY = none). */
export type DisparitySource = Pick<MatchResult, 'width' | 'height' | 'disparity' | 'subpixel'> | { width: number; height: number; disparity: ArrayLike<number> };

/**
 * The calibration in a calib.txt: f, cx and cy from cam0, the baseline and
 * doffs. `file` names it in errors; every value must be a finite number,
 * f and the baseline positive.
 */
export function calibrationFromCalib(c: Calib, file: string): StereoCalibration {
  if (!c.cam0) throw new Error(`${file}: no cam0 = [f 0 cx; 0 f cy; 0 0 1] to take the focal length from`);
  if (c.baseline === undefined) throw new Error(`${file}: no baseline`);
  return checkCalibration({ focal: c.cam0[0][0], baseline: c.baseline, doffs: c.doffs ?? 0, cx: c.cam0[0][2], cy: c.cam0[1][2] }, file);
}

/** Reads calib.txt (calibrationFromCalib). */
export function readCalibration(file: string): StereoCalibration {
  return calibrationFromCalib(readCalib(file), file);
}

/** The calib.txt beside `image` (in its folder), or undefined. */
export function calibBeside(image: string): string | undefined {
  const f = path.join(path.dirname(image), 'calib.txt');
  return fs.existsSync(f) && fs.statSync(f).isFile() ? f : undefined;
}

/** Throws naming `where` unless f and B are positive and every value finite. */
export function checkCalibration(c: StereoCalibration, where = 'calibration'): StereoCalibration {
  for (const k of ['focal', 'baseline', 'doffs', 'cx', 'cy'] as const) {
    if (typeof c[k] !== 'number' || !Number.isFinite(c[k])) throw new Error(`${where}: ${k} must be a finite number (got ${String(c[k])})`);
  }
  if (!(c.focal > 0)) throw new Error(`${where}: focal must be > 0 (got ${c.focal})`);
  if (!(c.baseline > 0)) throw new Error(`${where}: baseline must be > 0 (got ${c.baseline})`);
  return c;
}

function disparities(r: DisparitySource): ArrayLike<number> {
  return 'subpixel' in r ? disparityInPixels(r as Pick<MatchResult, 'disparity' | 'subpixel'>) : r.disparity;
}

/** Depth per pixel (W·H, the baseline's unit); +Infinity where the pixel has no point (the project's "unknown" in PFM). */
export function toDepth(r: DisparitySource, calib: StereoCalibration): Float32Array {
  checkCalibration(calib);
  const d = disparities(r);
  const n = r.width * r.height;
  if (d.length !== n) throw new Error(`toDepth: the disparity map has ${d.length} values for ${r.width}×${r.height} pixels`);
  const fb = calib.focal * calib.baseline;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const v = d[i];
    const s = v + calib.doffs;
    out[i] = v === INVALID_DISPARITY || !Number.isFinite(v) || !(s > 0) ? Infinity : fb / s;
  }
  return out;
}

/**
 * The points of the pixels with a depth (row by row), coloured from
 * `colors` (the left image: grey is copied to R, G and B; values rounded
 * to 0..255 of its maxval). Pixels without a point are left out.
 */
export function toPointCloud(r: DisparitySource, calib: StereoCalibration, colors?: Raster): PointCloud {
  const { width: W, height: H } = r;
  if (colors && (colors.width !== W || colors.height !== H)) throw new Error(`toPointCloud: the colour image is ${colors.width}×${colors.height}, the map ${W}×${H}`);
  const z = toDepth(r, calib);
  let count = 0;
  for (let i = 0; i < z.length; i++) if (z[i] !== Infinity) count++;
  const xyz = new Float32Array(count * 3);
  const rgb = new Uint8Array(count * 3);
  const level = colors ? 255 / (colors.maxval || 255) : 0;
  let k = 0;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const Z = z[i];
      if (Z === Infinity) continue;
      xyz[k * 3] = ((x - calib.cx) * Z) / calib.focal;
      xyz[k * 3 + 1] = ((y - calib.cy) * Z) / calib.focal;
      xyz[k * 3 + 2] = Z;
      if (colors) {
        const c = colors.channels;
        for (let ch = 0; ch < 3; ch++) rgb[k * 3 + ch] = Math.max(0, Math.min(255, Math.round(colors.data[i * c + (c >= 3 ? ch : 0)] * level)));
      }
      k++;
    }
  }
  return { count, xyz, rgb };
}

/** A 16-bit PNG's samples of a depth map: the depth in millimetres (the depth × `toMm`) rounded, 0 = unknown; `beyond` counts the depths above 65535 mm, written as 0. */
export function depthPngRaster(depth: Float32Array, width: number, height: number, toMm: number): { raster: Raster; beyond: number } {
  const data = new Float32Array(depth.length);
  let beyond = 0;
  for (let i = 0; i < depth.length; i++) {
    const z = depth[i];
    if (z === Infinity) continue;
    const mm = Math.round(z * toMm);
    if (mm > 65535) beyond++;
    else data[i] = mm;
  }
  return { raster: { width, height, channels: 1, data, maxval: 65535 }, beyond };
}
