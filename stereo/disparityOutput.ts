import { writePng, writePfm } from '../data/imageIO';
import type { Raster } from '../data/raster';
import { INVALID_DISPARITY } from './leftRightCheck';

/**
 * Scale for an 8-bit disparity PNG: the largest integer that keeps ndisp−1
 * within 255, so the range fills 0–255 (Middlebury's own convention of
 * storing disparity × scale as grey).
 */
export function autoPngScale(ndisp: number): number {
  return Math.max(1, Math.floor(255 / Math.max(1, ndisp - 1)));
}

/** Writes disparity × scale as an 8-bit grey PNG (atomically); an invalid pixel (INVALID_DISPARITY) is 0, Middlebury's "unknown". */
export async function writeDisparityPng(path: string, disparity: ArrayLike<number>, width: number, height: number, scale: number): Promise<void> {
  if (!(scale > 0) || !Number.isFinite(scale)) throw new Error(`--scale: must be a positive number (got ${scale})`);
  const data = new Float32Array(width * height);
  let max = 0;
  for (let i = 0; i < data.length; i++) {
    const v = disparity[i] === INVALID_DISPARITY ? 0 : disparity[i] * scale;
    if (v > max) max = v;
    data[i] = v;
  }
  if (Math.round(max) > 255) throw new Error(`--scale: ${scale} maps the largest disparity to ${Math.round(max)}, beyond 255 in an 8-bit PNG`);
  const raster: Raster = { width, height, channels: 1, data, maxval: 255 };
  await writePng(path, raster);
}

/** Writes the disparity in pixels as a little-endian PFM (atomically); an invalid pixel is inf, as Middlebury's PFMs have it. */
export function writeDisparityPfm(path: string, disparity: ArrayLike<number>, width: number, height: number): void {
  writePfm(path, width, height, Float32Array.from(disparity, (d) => (d === INVALID_DISPARITY ? Infinity : d)));
}
