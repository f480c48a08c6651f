import type { Raster } from '../data/raster';
import { match, disparityInPixels } from '../stereo/match';
import { seededRandom as rng } from '../data/random';

/** A textured slanted plane: right(x) = left(x + d(x)) with d = 3 + 0.06·x, sampled linearly from a smooth texture. */
function slantedPlane(W: number, H: number): { left: Raster; right: Raster; gt: Float32Array } {
  const rand = rng(7);
  const tex = new Float64Array((W + 40) * H);
  for (let i = 0; i < tex.length; i++) tex[i] = rand();
  // Smooth the texture along rows so linear sampling is meaningful.
  const sm = new Float64Array(tex.length);
  const TW = W + 40;
  for (let y = 0; y < H; y++) for (let x = 0; x < TW; x++) {
    let s = 0;
    let n = 0;
    for (let k = -2; k <= 2; k++) if (x + k >= 0 && x + k < TW) { s += tex[y * TW + x + k]; n++; }
    sm[y * TW + x] = (255 * s) / n;
  }
  const at = (y: number, u: number): number => {
    const i = Math.floor(u);
    const f = u - i;
    return sm[y * TW + i] * (1 - f) + sm[y * TW + i + 1] * f;
  };
  const left = new Float32Array(W * H);
  const right = new Float32Array(W * H);
  const gt = new Float32Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) {
    const d = 3 + 0.06 * x;
    gt[y * W + x] = d;
    left[y * W + x] = Math.round(at(y, x + 20));
  }
  // Right pixel xr shows the surface point of left x with x − d(x) = xr: x = (xr + 3) / 0.94.
  for (let y = 0; y < H; y++) for (let xr = 0; xr < W; xr++) right[y * W + xr] = Math.round(at(y, (xr + 3) / 0.94 + 20));
  return { left: { width: W, height: H, channels: 1, data: left, maxval: 255 }, right: { width: W, height: H, channels: 1, data: right, maxval: 255 }, gt };
}

test('sub-pixel refinement lowers the mean error on a slanted plane and stays within half a pixel of the integer disparity', async () => {
  const W = 120;
  const H = 40;
  const { left, right, gt } = slantedPlane(W, H);
  // A grey pair: its SAD costs count three times (costs/costOptions.ts channelWeight), so λ 6 here is λ 2 on the one-channel scale.
  const p = { ndisp: 14, backend: 'bk' as const, lrCheck: false, cost: 'sad' as const, lambda: 6 };
  const integer = await match(left, right, { ...p, subpixel: false });
  const refined = await match(left, right, { ...p, subpixel: true });
  expect(integer.subpixel).toBeUndefined();
  expect(Array.from(refined.disparity)).toEqual(Array.from(integer.disparity));
  const sub = refined.subpixel!;
  let eInt = 0;
  let eSub = 0;
  let n = 0;
  for (let y = 4; y < H - 4; y++) for (let x = 20; x < W - 6; x++) {
    const i = y * W + x;
    expect(Math.abs(sub[i] - refined.disparity[i])).toBeLessThanOrEqual(0.5);
    eInt += Math.abs(integer.disparity[i] - gt[i]);
    eSub += Math.abs(sub[i] - gt[i]);
    n++;
  }
  console.log(`mean |error|: integer ${(eInt / n).toFixed(3)}, sub-pixel ${(eSub / n).toFixed(3)}`);
  expect(eSub / n).toBeLessThan(0.8 * (eInt / n));
  expect(disparityInPixels(refined)).toBe(sub);
});
