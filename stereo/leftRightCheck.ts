import { mirrorSamples } from '../data/raster';

/**
 * Left–right consistency (the check of OpenCV's disp12MaxDiff, libSGM and
 * the Middlebury SDK's occlusion handling): a left pixel x with disparity d
 * is consistent when the right view's disparity at x − d is within
 * `maxDiff` of d; elsewhere it is occluded or mismatched, and marked
 * invalid. Invalid pixels are then filled along their row from the nearest
 * valid pixels on either side, taking the smaller disparity of the two
 * (the farther surface: an occluded strip belongs to the background, which
 * the foreground hides in the other view).
 */

/** Value of an invalid pixel in an integer disparity map. */
export const INVALID_DISPARITY = 0xffff;

/** A row-mirrored copy of a W×H map. */
export function mirrorRows<T extends Uint16Array | Float32Array>(m: T, width: number, height: number): T {
  return mirrorSamples(m, width, height, 1);
}

/**
 * Marks inconsistent left pixels: true where x − d falls outside the image
 * or |dR(x − d) − d| > maxDiff.
 */
export function inconsistentPixels(dispLeft: Uint16Array, dispRight: Uint16Array, width: number, height: number, maxDiff = 1): Uint8Array {
  const bad = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) {
      const d = dispLeft[row + x];
      const xr = x - d;
      if (xr < 0 || Math.abs(dispRight[row + xr] - d) > maxDiff) bad[row + x] = 1;
    }
  }
  return bad;
}

/**
 * Fills the marked pixels of each row from the nearest unmarked pixels left
 * and right of them: the smaller of the two disparities, or the one that
 * exists at a row end. A row without an unmarked pixel keeps its values.
 */
export function fillAlongRows(disp: Uint16Array, marked: Uint8Array, width: number, height: number): Uint16Array {
  const out = disp.slice();
  for (let y = 0; y < height; y++) {
    const row = y * width;
    let x = 0;
    while (x < width) {
      if (!marked[row + x]) { x++; continue; }
      let e = x;
      while (e < width && marked[row + e]) e++;
      const a = x > 0 ? disp[row + x - 1] : -1;
      const b = e < width ? disp[row + e] : -1;
      if (a >= 0 || b >= 0) {
        const v = a < 0 ? b : b < 0 ? a : Math.min(a, b);
        for (let k = x; k < e; k++) out[row + k] = v;
      }
      x = e;
    }
  }
  return out;
}

/** Consistent pixels kept, the rest filled (fill) or set to INVALID_DISPARITY; `invalid` counts the marked pixels. */
export function leftRightCheck(
  dispLeft: Uint16Array, dispRight: Uint16Array, width: number, height: number, fill: boolean, maxDiff = 1,
): { disparity: Uint16Array; invalid: number; marked: Uint8Array } {
  const marked = inconsistentPixels(dispLeft, dispRight, width, height, maxDiff);
  const invalid = countMarked(marked);
  if (fill) return { disparity: fillAlongRows(dispLeft, marked, width, height), invalid, marked };
  const disparity = dispLeft.slice();
  for (let i = 0; i < marked.length; i++) if (marked[i]) disparity[i] = INVALID_DISPARITY;
  return { disparity, invalid, marked };
}

/**
 * The marked pixels. A function of the loop alone: code that V8 optimizes
 * while a loop runs is thrown away at the first call after the loop that
 * never ran before, so a loop inside leftRightCheck would start slow on
 * every check.
 */
function countMarked(marked: Uint8Array): number {
  let invalid = 0;
  for (let i = 0; i < marked.length; i++) invalid += marked[i];
  return invalid;
}
