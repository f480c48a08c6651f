import { writeFileAtomic } from '../../data/atomicWrite';
import { encodePngBytes } from '../../data/imageIO';
import { colorizeDisparityInto, errorImageInto } from '../../data/metrics';
import type { Raster } from '../../data/raster';
import { disparityRaster } from '../disparityOutput';

/**
 * One image file of a scene's outputs, as data alone (arrays and numbers),
 * so that it can be drawn and written on this thread or sent to another
 * (outputThreads.ts) and drawn there the same way.
 */
export type ImageJob =
  /** a raster as it is (the left image) */
  | { kind: 'raster'; file: string; image: Raster }
  /** disparities as grey levels, d × scale (writeDisparityPng) */
  | { kind: 'disparity'; file: string; disparity: Uint16Array; width: number; height: number; scale: number }
  /** disparities (or a float map) colour-mapped from 0 to `max` (colorizeDisparityInto) */
  | { kind: 'colorized'; file: string; values: Uint16Array | Float32Array; width: number; height: number; max: number }
  /** the left image with the pixels off the ground truth by more than `threshold` in red (errorImageInto) */
  | { kind: 'errors'; file: string; left: Raster; disparity: Uint16Array; groundTruth: Float32Array; threshold: number; mask?: Uint8Array };

/**
 * Draws `job` and writes its file (atomically: whole or not at all).
 * `rgb`, when given, is the buffer the colour images are drawn into
 * (W·H·3): a fresh one's memory is paid for page by page when first
 * written, so callers that draw several reuse one. It is free again once
 * this returns its promise (the PNG write reads its raster before that:
 * everything up to the compression runs before the first await).
 */
export async function drawImage(job: ImageJob, rgb?: Float32Array): Promise<void> {
  writeImageBytes(job.file, await encodeImage(job, rgb));
}

/**
 * The PNG bytes of `job`'s file, drawn as drawImage draws it (`rgb` as
 * there), for a caller that writes the file later or elsewhere
 * (writeImageBytes). A failure is one line naming the file.
 */
export async function encodeImage(job: ImageJob, rgb?: Float32Array): Promise<Uint8Array> {
  try {
    return await encodePngBytes(jobRaster(job, rgb));
  } catch (err) {
    throw new Error(`cannot write ${job.file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Writes bytes made by encodeImage into its job's file (atomically). */
export function writeImageBytes(file: string, bytes: Uint8Array): void {
  writeFileAtomic(file, bytes);
}

/** What `job` draws: the raster its PNG holds. */
function jobRaster(job: ImageJob, rgb: Float32Array | undefined): Raster {
  switch (job.kind) {
    case 'raster':
      return job.image;
    case 'disparity':
      return disparityRaster(job.disparity, job.width, job.height, job.scale);
    case 'colorized':
      return colorizeDisparityInto(rgbFor(rgb, job.width, job.height), job.values, job.width, job.height, job.max);
    case 'errors':
      return errorImageInto(rgbFor(rgb, job.left.width, job.left.height), job.left, job.disparity, job.groundTruth, job.threshold, job.mask);
  }
}

/** `rgb` when it holds a W×H RGB image, else a new buffer. */
function rgbFor(rgb: Float32Array | undefined, W: number, H: number): Float32Array {
  return rgb && rgb.length === W * H * 3 ? rgb : new Float32Array(W * H * 3);
}
