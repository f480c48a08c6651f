import { seededRandom } from '../data/random';
import { flowShiftMoves } from '../gpu/move/flowStores';
import { shiftedLabels } from '../stereo/warmStart';

/**
 * Flows carried to a warm frame move with its labels (gpu/move/flowStores.ts
 * flowShiftMoves): checked against the pixel-by-pixel shift of shiftedLabels,
 * on random grids, views and shifts.
 */
describe('flow shift', () => {
  test('every edge whose source pixel is in its view takes that pixel\'s flow, in both planes and views (the mirrored one by −dx); the rest keep a flow of their own plane and view', () => {
    const rand = seededRandom(5);
    for (let trial = 0; trial < 300; trial++) {
      const W = 1 + Math.floor(rand() * 9);
      const H = 1 + Math.floor(rand() * 7);
      const views = 1 + Math.floor(rand() * 2);
      const dx = Math.floor(rand() * 7) - 3;
      const dy = Math.floor(rand() * 5) - 2;
      const n = W * H;
      const flows = Float32Array.from({ length: 2 * views * n }, (_, i) => i + 1);
      const moved = flows.slice();
      for (const m of flowShiftMoves(W, H, views, dx, dy)) moved.copyWithin(m.to, m.from, m.from + m.length);
      for (let plane = 0; plane < 2; plane++) {
        const base = plane * views * n;
        // Where each pixel's value comes from, by the labels' own shift: a label grid of pixel indices.
        const index = Uint16Array.from({ length: views * n }, (_, i) => i);
        const source = shiftedLabels(index, { width: W, height: H, views }, dx, dy);
        for (let v = 0; v < views; v++) {
          const sx = v === 1 ? -dx : dx;
          for (let y = 0; y < H; y++) {
            for (let x = 0; x < W; x++) {
              const p = v * n + y * W + x;
              const inside = x - sx >= 0 && x - sx < W && y - dy >= 0 && y - dy < H;
              // Thrown, not expected, pixel by pixel: an expect per edge would cost seconds over the trials.
              if (inside) {
                if (!Object.is(moved[base + p], flows[base + source[p]])) throw new Error(`trial ${trial}, plane ${plane}, view ${v}, (${x}, ${y}): flow ${moved[base + p]}, not its source's ${flows[base + source[p]]}`);
              } else {
                const from = moved[base + p] - 1 - base;
                if (!(from >= v * n && from < (v + 1) * n)) throw new Error(`trial ${trial}, plane ${plane}, view ${v}, (${x}, ${y}): a flow from ${from}, outside its view`);
              }
            }
          }
        }
      }
    }
  });

  test('no shift, no moves; a shift as large as a view moves nothing into it', () => {
    expect(flowShiftMoves(5, 4, 2, 0, 0).every((m) => m.from === m.to)).toBe(true);
    expect(flowShiftMoves(5, 4, 1, 0, 4)).toEqual([]);
  });
});
