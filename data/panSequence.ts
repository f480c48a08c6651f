import type { Raster } from './raster';
import { optionError } from './errors';

/**
 * A slow camera pan made from one rectified pair: a window of the pair
 * shifted `step` pixels per frame (horizontally, and `stepY` vertically),
 * cut from both images at the same place. Shifting both views alike is
 * what a rectified rig moving parallel to its image plane sees (at the
 * pair's own depth): every surface keeps its disparity, so the window of
 * the ground truth is each frame's ground truth, and what enters or leaves
 * the window changes from frame to frame as it would in a camera's frames.
 * For tests and the sequence benchmark (bench/sequenceBench.ts).
 */
export interface PanOptions {
  frames: number;
  /** The window's size (default: the pair's size less the pan's travel). */
  width?: number;
  height?: number;
  /** Pixels the window moves per frame: right (default 1), down (default 0). */
  step?: number;
  stepY?: number;
}

export interface PanFrame {
  left: Raster;
  right: Raster;
  /** The ground truth's window, when the pair has one. */
  groundTruth?: Float32Array;
}

/** The samples of `r`'s window at (x0, y0) of w × h pixels. */
export function cropRaster(r: Raster, x0: number, y0: number, w: number, h: number): Raster {
  const c = r.channels;
  const data = new Float32Array(w * h * c);
  for (let y = 0; y < h; y++) data.set(r.data.subarray(((y0 + y) * r.width + x0) * c, ((y0 + y) * r.width + x0 + w) * c), y * w * c);
  return { width: w, height: h, channels: c, data, maxval: r.maxval };
}

/** The frames of a pan over the pair (and its ground truth, W·H in pixels, when given). */
export function panFrames(pair: { left: Raster; right: Raster; groundTruth?: Float32Array }, o: PanOptions): PanFrame[] {
  const { frames, step = 1, stepY = 0 } = o;
  const { width: W, height: H } = pair.left;
  if (!(Number.isInteger(frames) && frames >= 1)) throw optionError('range', 'panFrames', 'frames', frames, 'an integer ≥ 1');
  for (const [k, v] of [['step', step], ['stepY', stepY]] as const) {
    if (!(Number.isInteger(v) && v >= 0)) throw optionError('range', 'panFrames', k, v, 'an integer ≥ 0');
  }
  const w = o.width ?? W - (frames - 1) * step;
  const h = o.height ?? H - (frames - 1) * stepY;
  if (!(w >= 1 && h >= 1 && w + (frames - 1) * step <= W && h + (frames - 1) * stepY <= H)) {
    throw optionError('range', 'panFrames', 'width', w, `a ${w}×${h} window moved ${frames - 1} times by (${step}, ${stepY}) inside the ${W}×${H} pair`);
  }
  const out: PanFrame[] = [];
  for (let f = 0; f < frames; f++) {
    const x0 = f * step;
    const y0 = f * stepY;
    const frame: PanFrame = { left: cropRaster(pair.left, x0, y0, w, h), right: cropRaster(pair.right, x0, y0, w, h) };
    if (pair.groundTruth) frame.groundTruth = cropRaster({ width: W, height: H, channels: 1, data: pair.groundTruth, maxval: 1 }, x0, y0, w, h).data;
    out.push(frame);
  }
  return out;
}
