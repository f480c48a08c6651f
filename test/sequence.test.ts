import { seededRandom } from '../data/random';
import { generateSyntheticScene } from '../data/synthetic';
import { panFrames, cropRaster, type PanFrame } from '../data/panSequence';
import { match } from '../stereo/match';
import { checkMatchOptions } from '../stereo/matchOptions';
import { createSequenceMatcher, MEDIAN_POOL_PIXELS, type FrameResult, type SequenceOptions } from '../stereo/sequence';
import { medianBand } from '../stereo/medianFill';
import * as stripRunner from '../stereo/stripRunner';
import type { StripPool } from '../stereo/matchTypes';
import { chooseStart, imageShift, shiftedLabels } from '../stereo/warmStart';
import type { Raster } from '../data/raster';
import { FULL_TESTS } from './support/testScope';
import { randomRaster } from './support/randomRaster';

/**
 * Sequences (stereo/sequence.ts): warm starts keep every frame at or below
 * its fresh start's energy, fall back on a scene cut, give the same labels
 * on every backend (canonical cuts; on the device moves the flows carried
 * between frames change where push-relabel starts, never the cut), and
 * keyframes every frame guarantee an independent match's energy or lower.
 */

const W = 72;
const H = 48;
const NDISP = 8;
const pan = (seed: number, frames: number, width = W, height = H): PanFrame[] => {
  const s = generateSyntheticScene({ width: width + frames - 1, height, ndisp: NDISP, seed });
  return panFrames({ left: s.left, right: s.right, groundTruth: s.groundTruth }, { frames, width });
};

async function run(frames: PanFrame[], o: Omit<SequenceOptions, 'ndisp'>): Promise<FrameResult[]> {
  const seq = createSequenceMatcher({ ndisp: NDISP, ...o });
  try {
    const out: FrameResult[] = [];
    for (const f of frames) out.push(await seq.compute(f.left, f.right));
    return out;
  } finally {
    await seq.dispose();
  }
}

describe('a slow pan matched warm', () => {
  const frames = pan(3, 5);

  test('each frame after the first starts warm, at the shift of the pan, and ends at or below its fresh start', async () => {
    const warm = await run(frames, { backend: 'bk' });
    expect(warm.map((f) => f.start)).toEqual(['cold', 'warm', 'warm', 'warm', 'warm']);
    for (const f of warm.slice(1)) {
      const w = f.result.warmStart!;
      // The window moves right by a pixel: the previous labels fit best one pixel to the left.
      expect(w.shift).toEqual([-1, 0]);
      expect(w.warmEnergy!).toBeLessThanOrEqual(w.freshEnergy!);
      expect(f.result.initialEnergy.total).toBe(w.warmEnergy);
      expect(f.result.finalEnergy.total).toBeLessThanOrEqual(w.freshEnergy!);
      expect(f.result.cycles.length).toBe(1);
    }
  }, 120000);

  test('keyframes on every frame: no frame ends above an independent match', async () => {
    const kept = await run(frames, { backend: 'bk', keyframe: 1 });
    for (const [k, f] of frames.entries()) {
      const alone = await match(f.left, f.right, { ndisp: NDISP, backend: 'bk' });
      expect(kept[k].result.finalEnergy.total).toBeLessThanOrEqual(alone.finalEnergy.total);
      if (kept[k].keyframe) expect(kept[k].keyframe!.freshEnergy).toBe(alone.finalEnergy.total);
    }
    expect(kept.slice(1).every((f) => f.keyframe !== undefined)).toBe(true);
  }, 120000);

  test('the device moves on gpu.js\'s CPU backend give BK\'s labels, starting warm from the carried flows', async () => {
    // Three frames of the pan above under STEREOCUT_FULL_TESTS=1; by default two frames of a 48×32 pan (the first starts
    // cold, the second warm from the carried flows), as the device moves run on gpu.js's CPU backend here.
    const few = FULL_TESTS ? frames.slice(0, 3) : pan(3, 2, 48, 32);
    const bk = await run(few, { backend: 'bk' });
    const dev = await run(few, { backend: 'gpujs-cpu' });
    for (const [k, f] of dev.entries()) {
      expect(f.start).toBe(bk[k].start);
      expect(f.result.finalEnergy).toEqual(bk[k].result.finalEnergy);
      expect(Buffer.from(f.result.disparity.buffer).equals(Buffer.from(bk[k].result.disparity.buffer))).toBe(true);
    }
    // Frame 0's first moves have no flows of their own α; a later frame's start from the flows its α ended the frame before with.
    expect(dev[0].result.cycles[0].stats.warmMoves ?? 0).toBe(0);
    expect(dev[1].result.cycles[0].stats.warmMoves).toBeGreaterThan(0);
    // The pan moves the image: the labels start shifted, and the carried flows with them (BK's labels all the same).
    expect(dev[1].result.warmStart!.shift).not.toEqual([0, 0]);
    const cold = await run(few.slice(1, 2), { backend: 'gpujs-cpu', warm: false });
    expect(cold[0].result.cycles[0].stats.warmMoves ?? 0).toBe(0);
  }, 300000);
});

describe('the fallback', () => {
  test('a scene cut starts fresh: the frame is the independent match of its pair', async () => {
    const a = pan(3, 2);
    const b = pan(11, 1);
    const frames = [a[0], a[1], b[0]];
    const r = await run(frames, { backend: 'bk' });
    expect(r.map((f) => f.start)).toEqual(['cold', 'warm', 'fallback']);
    const w = r[2].result.warmStart!;
    expect(w.warmEnergy!).toBeGreaterThan(w.freshEnergy!);
    const alone = await match(b[0].left, b[0].right, { ndisp: NDISP, backend: 'bk' });
    expect(r[2].result.finalEnergy).toEqual(alone.finalEnergy);
    expect(Buffer.from(r[2].result.disparity.buffer).equals(Buffer.from(alone.disparity.buffer))).toBe(true);
  }, 120000);

  test('a frame of another size starts cold', async () => {
    const a = pan(3, 2);
    const small = { left: cropRaster(a[1].left, 0, 0, W - 8, H), right: cropRaster(a[1].right, 0, 0, W - 8, H) };
    const r = await run([a[0], small], { backend: 'bk', lrCheck: false });
    expect(r.map((f) => f.start)).toEqual(['cold', 'cold']);
  }, 120000);
});

describe('frames matched coarse to fine', () => {
  test('share the sequence\'s strip pool and equal independent matches, frame for frame', async () => {
    const frames = panFrames((() => { const s = generateSyntheticScene({ width: 130, height: 80, ndisp: 12, seed: 4 }); return { left: s.left, right: s.right, groundTruth: s.groundTruth }; })(), { frames: 2, width: 128 });
    const r = await run(frames, { ndisp: 12, backend: 'bk', levels: 2 } as Omit<SequenceOptions, 'ndisp'>);
    expect(r.map((f) => f.start)).toEqual(['cold', 'cold']);
    for (const [k, f] of frames.entries()) {
      const alone = await match(f.left, f.right, { ndisp: 12, backend: 'bk', levels: 2 });
      expect(r[k].result.pyramid?.levels.length).toBe(1);
      expect(Buffer.from(r[k].result.disparity.buffer).equals(Buffer.from(alone.disparity.buffer))).toBe(true);
    }
  }, 120000);
});

describe('the options', () => {
  test('a given start or a bad sequence option is refused by name', () => {
    expect(() => createSequenceMatcher({ ndisp: 8, initialLabels: new Uint16Array(4) } as never)).toThrow(/initialLabels/);
    expect(() => createSequenceMatcher({ ndisp: 8, keyframe: -1 })).toThrow(/keyframe/);
    expect(() => createSequenceMatcher({ ndisp: 8, warmCycles: 0 })).toThrow(/warmCycles/);
    const image = { width: 2, height: 1, channels: 1, maxval: 255, data: new Float32Array(2) };
    expect(() => checkMatchOptions({ ndisp: 8, warmStart: { previousLeft: image } })).not.toThrow();
    expect(() => checkMatchOptions({ ndisp: 8, warmStart: { previousLeft: 'left.png' } as never })).toThrow(/warmStart.*previousLeft\?: Raster.*'previousLeft' is not one of them as given/);
  });

  test('shiftedLabels moves each view, the mirrored one the other way, repeating the edges', () => {
    const g = { width: 3, height: 2, views: 2 };
    const l = Uint16Array.from([1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6]);
    expect(Array.from(shiftedLabels(l, g, 1, 0))).toEqual([1, 1, 2, 4, 4, 5, 2, 3, 3, 5, 6, 6]);
    expect(Array.from(shiftedLabels(l, g, 0, 1))).toEqual([1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3]);
  });

  test('shiftedLabels is labels[clamp(x − dx), clamp(y − dy)] in each view (−dx in the mirrored one), on random grids and shifts past the edges', () => {
    const rand = seededRandom(13);
    for (let trial = 0; trial < 200; trial++) {
      const g = { width: 1 + Math.floor(rand() * 8), height: 1 + Math.floor(rand() * 6), views: 1 + Math.floor(rand() * 2) };
      const dx = Math.floor(rand() * 21) - 10;
      const dy = Math.floor(rand() * 15) - 7;
      const n = g.width * g.height;
      const l = Uint16Array.from({ length: n * g.views }, () => Math.floor(rand() * 1000));
      const out = shiftedLabels(l, g, dx, dy);
      const clamp = (v: number, hi: number): number => Math.min(hi - 1, Math.max(0, v));
      for (let v = 0; v < g.views; v++) {
        for (let y = 0; y < g.height; y++) {
          for (let x = 0; x < g.width; x++) {
            const sx = v === 1 ? -dx : dx;
            expect(out[v * n + y * g.width + x]).toBe(l[v * n + clamp(y - dy, g.height) * g.width + clamp(x - sx, g.width)]);
          }
        }
      }
    }
  });
});

describe('the shift of a warm start', () => {
  test('imageShift finds the candidate by which the image moved, on random images and shifts', () => {
    const rand = seededRandom(29);
    for (let trial = 0; trial < 100; trial++) {
      const w = 8 + Math.floor(rand() * 30);
      const h = 8 + Math.floor(rand() * 20);
      const C = rand() < 0.5 ? 1 : 3;
      const around: [number, number] = [Math.floor(rand() * 5) - 2, Math.floor(rand() * 5) - 2];
      const k = Math.floor(rand() * 5);
      const [dx, dy] = [[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]][k].map((d, i) => d + around[i]);
      const previous = randomRaster(w, h, C, 256, rand);
      // current(x, y) = previous(x − dx, y − dy) where that exists, noise where it does not.
      const current: Raster = { ...previous, data: new Float32Array(w * h * C) };
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          for (let c = 0; c < C; c++) {
            const inside = x - dx >= 0 && x - dx < w && y - dy >= 0 && y - dy < h;
            current.data[(y * w + x) * C + c] = inside ? previous.data[((y - dy) * w + x - dx) * C + c] : Math.floor(rand() * 256);
          }
        }
      }
      expect({ trial, shift: imageShift(previous, current, around) }).toEqual({ trial, shift: [dx, dy] });
    }
    const flat: Raster = { width: 6, height: 4, channels: 1, maxval: 255, data: new Float32Array(24).fill(7) };
    // Ties (a flat image) keep the first candidate: the previous frame's shift.
    expect(imageShift(flat, flat, [2, -1])).toEqual([2, -1]);
    expect(() => imageShift(flat, { ...flat, width: 3, height: 8 }, [0, 0])).toThrow(/imageShift: the previous image is 6×4×1, this one 3×8×1/);
  });

  test('given the previous left image, a frame computes the energy of one shifted start and the fresh one, not of five', async () => {
    const g = { width: 5, height: 3, views: 2 };
    const labels = Uint16Array.from({ length: 30 }, (_, i) => i % 4);
    const image: Raster = { width: 5, height: 3, channels: 1, maxval: 255, data: Float32Array.from({ length: 15 }, (_, i) => (i * 37) % 251) };
    const moved: Raster = { ...image, data: Float32Array.from({ length: 15 }, (_, i) => image.data[Math.min(14, i + 1)]) };
    const energies: Uint16Array[] = [];
    const energyOf = async (l: Uint16Array): Promise<{ data: number; smoothness: number; total: number }> => {
      energies.push(l);
      return { data: 0, smoothness: 0, total: 0 };
    };
    const fresh = async (): Promise<Uint16Array> => new Uint16Array(30);
    const byImage = await chooseStart({ labels, previousLeft: image }, g, fresh, energyOf, moved);
    expect(energies.length).toBe(2);
    expect(byImage.record.shift).toEqual([-1, 0]);
    expect(Array.from(byImage.initial)).toEqual(Array.from(shiftedLabels(labels, g, -1, 0)));
    energies.length = 0;
    await chooseStart({ labels }, g, fresh, energyOf, moved);
    expect(energies.length).toBe(6);
    // Shifts as wide as the frame leave nothing of the previous labels: a fresh start, its energy the only one computed.
    energies.length = 0;
    const wide = await chooseStart({ labels, shift: [9, 0] }, g, fresh, energyOf, moved);
    expect(wide.record.start).toBe('fallback');
    expect(energies.length).toBe(1);
  });
});

describe('the median\'s threads', () => {
  test('frames of MEDIAN_POOL_PIXELS or more filter the median in bands on threads the sequence starts once; smaller frames on this thread; the same frames either way', async () => {
    // The threads are stood in for by a pool that filters its bands here and counts them (from the sources no thread starts; the compiled pool's bands: test/stereo-median-fill.test.ts).
    let bands = 0;
    let closed = 0;
    const pool: StripPool = {
      threads: 3, run: stripRunner.runStripsHere, close: async () => { closed++; },
      median: async (b) => { bands += b.length; return b.map(medianBand); },
    };
    const big = panFrames((() => { const s = generateSyntheticScene({ width: 401, height: 250, ndisp: NDISP, seed: 6 }); return { left: s.left, right: s.right, groundTruth: s.groundTruth }; })(), { frames: 2, width: 400 });
    expect(400 * 250).toBe(MEDIAN_POOL_PIXELS);
    const threads = jest.spyOn(stripRunner, 'poolThreads').mockReturnValue(3);
    const start = jest.spyOn(stripRunner, 'stripPool').mockReturnValue(pool);
    let pooled: FrameResult[];
    try {
      // One cycle: the median's bands are what is tested, not the moves.
      pooled = await run(big, { backend: 'bk', cycles: 1 });
      expect(start).toHaveBeenCalledTimes(1);
      expect(start).toHaveBeenCalledWith(3);
      // 250 rows: three bands of at least 64 rows, on each of the two frames; the pool closed with the sequence.
      expect(bands).toBe(6);
      expect(closed).toBe(1);
      // Frames of 72×48: no threads.
      await run(pan(3, 2), { backend: 'bk' });
      expect(start).toHaveBeenCalledTimes(1);
      expect(bands).toBe(6);
    } finally {
      threads.mockRestore();
      start.mockRestore();
    }
    const here = await run(big, { backend: 'bk', cycles: 1 });
    expect(pooled.map((f) => Array.from(f.result.disparity))).toEqual(here.map((f) => Array.from(f.result.disparity)));
  }, 120000);
});
