import { colorizeDisparity } from '../data/metrics';
import type { Raster } from '../data/raster';
import { INVALID_DISPARITY } from './leftRightCheck';

/**
 * A disparity map in the turbo colour map (data/metrics.ts: perceptually
 * ordered, small disparities blue, large ones red) with its
 * scale drawn beside it: a bar from the smallest disparity (bottom) to the
 * largest (top) and the disparities of round values at their heights, in a
 * 3×5-pixel digit font. Invalid pixels (INVALID_DISPARITY, or not finite)
 * are black; the legend stands on dark grey so that black means invalid
 * only.
 */

/** 3×5 digits, rows top to bottom, bit 2 = left column. */
const DIGIT_FONT: Readonly<Record<string, readonly number[]>> = {
  '0': [7, 5, 5, 5, 7], '1': [2, 6, 2, 2, 7], '2': [7, 1, 7, 4, 7], '3': [7, 1, 7, 1, 7], '4': [5, 5, 7, 1, 1],
  '5': [7, 4, 7, 1, 7], '6': [7, 4, 7, 5, 7], '7': [7, 1, 2, 2, 2], '8': [7, 5, 7, 5, 7], '9': [7, 5, 7, 1, 7],
  '.': [0, 0, 0, 0, 2], '-': [0, 0, 7, 0, 0],
};

/** Grey of the legend's background. */
export const LEGEND_BACKGROUND = 40;

export interface ScaleTick {
  value: number;
  /** Row of the bar whose colour is this value's. */
  row: number;
  /** The label as drawn, and the top-left corner of its first glyph. */
  text: string;
  x: number;
  y: number;
}

export interface ColorScaleImage {
  image: Raster;
  /** Glyph size in pixels (each font pixel drawn as pixel×pixel). */
  pixel: number;
  /** Columns of the bar, first and last inclusive; rows of the bar's top (largest disparity) and bottom (smallest). */
  bar: { x0: number; x1: number; top: number; bottom: number };
  ticks: ScaleTick[];
}

/** Round tick values within lo..hi: a step of 1, 2 or 5 × 10^k giving at most `most` ticks. */
export function tickValues(lo: number, hi: number, most = 6): number[] {
  if (!(hi > lo)) return [lo];
  let step = 1;
  for (let k = Math.floor(Math.log10((hi - lo) / most)) - 1; ; k++) {
    const s = [1, 2, 5].map((m) => m * 10 ** k).find((c) => Math.floor(hi / c) - Math.ceil(lo / c) + 1 <= most);
    if (s !== undefined) { step = s; break; }
  }
  const out: number[] = [];
  for (let i = Math.ceil(lo / step); i * step <= hi + 1e-9; i++) out.push(Number((i * step).toPrecision(12)));
  return out;
}

/**
 * The colour image of `disparity` (W·H, pixels) over minDisp..maxDisp with
 * its scale on the right. The map's pixels are colorizeDisparity's of
 * d − minDisp over maxDisp − minDisp, so the bar's row for a value has that
 * value's colour.
 */
export function colorScaleImage(disparity: ArrayLike<number>, width: number, height: number, minDisp: number, maxDisp: number): ColorScaleImage {
  if (!(maxDisp >= minDisp)) throw new Error(`colour scale: largest disparity ${maxDisp} is below the smallest ${minDisp}`);
  const span = maxDisp - minDisp;
  const pixel = Math.max(1, Math.floor(height / 120));
  const outH = Math.max(height, 24 * pixel);
  const pad = 3 * pixel; // half a glyph above the top label and below the bottom one
  const barTop = pad;
  const barBottom = outH - 1 - pad;
  const ticks = tickValues(minDisp, maxDisp);
  const texts = ticks.map(formatTick);
  const textW = Math.max(...texts.map((t) => t.length)) * 4 * pixel;
  const gap = 4 * pixel;
  const barX0 = width + gap;
  const barX1 = barX0 + 8 * pixel - 1;
  const textX = barX1 + 1 + 3 * pixel;
  const outW = textX + textW + 2 * pixel;

  const values = new Float32Array(width * height);
  for (let i = 0; i < values.length; i++) {
    const d = disparity[i];
    values[i] = d === INVALID_DISPARITY || !Number.isFinite(d) ? Infinity : d - minDisp;
  }
  const map = colorizeDisparity(values, width, height, span);
  const rowValue = (y: number): number => (barBottom === barTop ? span : (span * (barBottom - y)) / (barBottom - barTop));
  const barValues = new Float32Array(outH);
  for (let y = 0; y < outH; y++) barValues[y] = y < barTop || y > barBottom ? Infinity : rowValue(y);
  const bar = colorizeDisparity(barValues, 1, outH, span);

  const data = new Float32Array(outW * outH * 3);
  for (let y = 0; y < outH; y++) {
    for (let x = 0; x < outW; x++) {
      const o = (y * outW + x) * 3;
      if (x < width) {
        if (y < height) for (let c = 0; c < 3; c++) data[o + c] = map.data[(y * width + x) * 3 + c];
        continue;
      }
      const onBar = x >= barX0 && x <= barX1 && y >= barTop && y <= barBottom;
      for (let c = 0; c < 3; c++) data[o + c] = onBar ? bar.data[y * 3 + c] : LEGEND_BACKGROUND;
    }
  }
  const placed: ScaleTick[] = [];
  const glyphH = 5 * pixel;
  for (const [k, value] of ticks.entries()) {
    const row = Math.round(barBottom - (span === 0 ? 0 : ((value - minDisp) / span) * (barBottom - barTop)));
    const y = Math.min(outH - glyphH, Math.max(0, row - Math.floor(glyphH / 2)));
    // Labels never overlap: one too close to the last drawn is left out.
    if (placed.length > 0 && Math.abs(placed[placed.length - 1].y - y) < glyphH + pixel) continue;
    const tick = { value, row, text: texts[k], x: textX, y };
    drawText(data, outW, tick, pixel);
    // A tick mark: the two columns left of the label, on the value's row.
    for (let x = barX1 + 1; x < textX - pixel; x++) for (let c = 0; c < 3; c++) data[(row * outW + x) * 3 + c] = 255;
    placed.push(tick);
  }
  return { image: { width: outW, height: outH, channels: 3, data, maxval: 255 }, pixel, bar: { x0: barX0, x1: barX1, top: barTop, bottom: barBottom }, ticks: placed };
}

function formatTick(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Number(v.toFixed(3)));
}

/** Draws `t.text` in white, glyph after glyph 4 font pixels apart. */
function drawText(data: Float32Array, outW: number, t: ScaleTick, pixel: number): void {
  for (const [i, ch] of [...t.text].entries()) {
    const glyph = DIGIT_FONT[ch];
    for (let gy = 0; gy < 5; gy++) {
      for (let gx = 0; gx < 3; gx++) {
        if (!((glyph[gy] >> (2 - gx)) & 1)) continue;
        for (let py = 0; py < pixel; py++) {
          for (let px = 0; px < pixel; px++) {
            const o = ((t.y + gy * pixel + py) * outW + t.x + (i * 4 + gx) * pixel + px) * 3;
            data[o] = 255; data[o + 1] = 255; data[o + 2] = 255;
          }
        }
      }
    }
  }
}
