/**
 * The cost volume and the WTA on worker threads (costs/parallelCosts.ts)
 * against the same computed on one thread: equal values, always, whatever
 * the images, options, sizes and thread counts, and a fallback to one
 * thread that gives the same values when the threads fail. The workers run
 * the TypeScript sources here (compiled as they load), so the thresholds
 * are lowered to small images.
 */
import { seededRandom } from '../data/random';
import * as os from 'os';
import * as path from 'path';
import type { Raster } from '../data/raster';
import { DataCostMatcher, wtaFromMatcher, wtaFromSlices, wtaInit, type CostKind } from '../costs';
import { COST_THREADING, costThreads, runOnThreads, volumeOnThreads, wtaOnThreads, wtaSlicesOnThreads } from '../costs/parallelCosts';

jest.setTimeout(120_000);

/** Threads for every size here (the tests' pairs are small), from the sources. */
const T = { minEntries: 1, minCores: 2, fromSource: true, entriesPerThread: 500 };

function randomRaster(rand: () => number, W: number, H: number, C: number): Raster {
  return { width: W, height: H, channels: C, maxval: 255, data: Float32Array.from({ length: W * H * C }, () => Math.floor(rand() * 256)) };
}

const cores = os.availableParallelism();

describe('costs on worker threads', () => {
  test('the volume on threads equals the volume on one thread, for random pairs, kinds, borders, scales and disparity counts', () => {
    const rand = seededRandom(5);
    const kinds: CostKind[] = ['sad', 'ssd', 'sad+sgrad'];
    for (let trial = 0; trial < 6; trial++) {
      const W = 5 + Math.floor(rand() * 40);
      const H = 3 + Math.floor(rand() * 30);
      const C = rand() < 0.5 ? 1 : 3;
      const left = randomRaster(rand, W, H, C);
      const right = randomRaster(rand, W, H, C);
      const options = { kind: kinds[trial % 3], border: rand() < 0.5 ? ('tau' as const) : ('clamp' as const), scale: 1 + Math.floor(rand() * 3) };
      const ndisp = 1 + Math.floor(rand() * 20);
      const matcher = new DataCostMatcher(left, right, { ...options, threads: T });
      const one = new Int32Array(W * H * ndisp);
      matcher.volumeRows(one, ndisp, 0, H);
      const threaded = volumeOnThreads(left, right, matcher.options, W, H, ndisp);
      // Without the options' threads, code run from the sources stays on this thread.
      expect(volumeOnThreads(left, right, options, W, H, ndisp)).toBeNull();
      if (cores < 2) {
        expect(threaded).toBeNull();
        continue;
      }
      expect(threaded).not.toBeNull();
      expect(threaded!.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(Array.from(threaded!)).toEqual(Array.from(one));
      // And through the matcher, which takes the threads at this size.
      expect(Array.from(matcher.volume(ndisp))).toEqual(Array.from(one));
    }
  });

  test('WTA on threads equals WTA on one thread, ties included (few cost values), for random sizes, windows and label counts', () => {
    const rand = seededRandom(9);
    for (let trial = 0; trial < 8; trial++) {
      const W = 2 + Math.floor(rand() * 30);
      const H = 2 + Math.floor(rand() * 20);
      const L = 1 + Math.floor(rand() * 24);
      const window = 1 + 2 * Math.floor(rand() * 5);
      const volume = Int32Array.from({ length: W * H * L }, () => Math.floor(rand() * 4));
      const threaded = wtaOnThreads(volume, W, H, L, window, T);
      const one = wtaInit(volume, W, H, L, window, { ...T, minEntries: Infinity });
      if (cores < 2) {
        expect(threaded).toBeNull();
        continue;
      }
      expect(threaded).not.toBeNull();
      expect(Array.from(threaded!)).toEqual(Array.from(one));
      expect(Array.from(wtaInit(volume, W, H, L, window, T))).toEqual(Array.from(one));
    }
  });

  test('WTA from cost slices on threads (no volume) equals it on one thread and the volume\'s WTA, for random pairs, kinds, windows and label counts', () => {
    const rand = seededRandom(13);
    const kinds: CostKind[] = ['sad', 'ssd', 'sad+sgrad'];
    for (let trial = 0; trial < 6; trial++) {
      const W = 4 + Math.floor(rand() * 30);
      const H = 3 + Math.floor(rand() * 20);
      const C = rand() < 0.5 ? 1 : 3;
      // Few intensity levels: many ties between disparities.
      const left = { ...randomRaster(rand, W, H, C), maxval: 3 };
      left.data = left.data.map((v) => v % 4);
      const right = { ...randomRaster(rand, W, H, C), maxval: 3 };
      right.data = right.data.map((v) => v % 4);
      const matcher = new DataCostMatcher(left, right, { kind: kinds[trial % 3], border: rand() < 0.5 ? 'tau' : 'clamp', threads: T });
      const L = 1 + Math.floor(rand() * 20);
      const window = 1 + 2 * Math.floor(rand() * 4);
      const one = wtaFromSlices((d, buf) => matcher.slice(d, buf), W, H, L, window);
      const vol = new Int32Array(W * H * L);
      matcher.volumeRows(vol, L, 0, H);
      expect(Array.from(wtaInit(vol, W, H, L, window, { ...T, minEntries: Infinity }))).toEqual(Array.from(one));
      const threaded = wtaSlicesOnThreads(left, right, matcher.options, W, H, L, window);
      if (cores < 2) {
        expect(threaded).toBeNull();
        continue;
      }
      expect(threaded).not.toBeNull();
      expect(Array.from(threaded!)).toEqual(Array.from(one));
      expect(Array.from(wtaFromMatcher(matcher, L, window))).toEqual(Array.from(one));
    }
  });

  test('threads that fail, to load or in a job, report it: the callers then compute on one thread', () => {
    if (cores < 2) return;
    const bad = path.join(__dirname, 'no-such-cost-worker');
    const job = { kind: 'wta' as const, volume: new SharedArrayBuffer(16), width: 2, height: 2, labels: 1, window: 1, from: 0, to: 1, best: new SharedArrayBuffer(32), label: new SharedArrayBuffer(8) };
    expect(runOnThreads([job], bad, T)).toBe(false);
    // A pair of two sizes throws in the worker.
    const rand = seededRandom(2);
    const left = randomRaster(rand, 6, 4, 1);
    const volumeJob = { kind: 'volume' as const, left, right: randomRaster(rand, 7, 4, 1), options: {}, ndisp: 3, y0: 0, y1: 4, out: new SharedArrayBuffer(4 * 6 * 4 * 3) };
    expect(runOnThreads([job, volumeJob], undefined, T)).toBe(false);
    expect(runOnThreads([job, { ...volumeJob, right: randomRaster(rand, 6, 4, 1) }], undefined, T)).toBe(true);
    // Threads that do not answer in time: the matcher computes the volume itself, the same.
    const late = { ...T, timeoutMs: 0 };
    const matcher = new DataCostMatcher(left, randomRaster(rand, 6, 4, 1), { kind: 'sad+sgrad', threads: late });
    const one = new Int32Array(6 * 4 * 5);
    matcher.volumeRows(one, 5, 0, 4);
    const vol = matcher.volume(5);
    expect(vol.buffer.constructor.name).toBe('ArrayBuffer');
    expect(Array.from(vol)).toEqual(Array.from(one));
    expect(Array.from(wtaInit(one, 6, 4, 5, 3))).toEqual(Array.from(wtaInit(vol, 6, 4, 5, 3, late)));
    expect(Array.from(wtaFromMatcher(matcher, 5, 3))).toEqual(Array.from(wtaInit(one, 6, 4, 5, 3)));
  });

  test('one thread below the thresholds of entries and cores; at most maxThreads and the cores', () => {
    const t = { ...T, minEntries: 1000 };
    expect(costThreads(999, undefined, t)).toBe(0);
    if (cores >= 2) expect(costThreads(1000, undefined, t)).toBeGreaterThanOrEqual(2);
    expect(costThreads(10_000_000, 1, t)).toBe(0);
    expect(costThreads(10_000_000, 2, t)).toBe(2);
    expect(costThreads(10_000_000, 3, { ...t, minCores: 4 })).toBe(0);
    expect(costThreads(10_000_000, 16, { ...t, minCores: 4 })).toBe(COST_THREADING.maxThreads);
    // At most maxThreads, and never more than the machine's cores.
    expect(costThreads(1e12, undefined, T)).toBeLessThanOrEqual(Math.min(cores, COST_THREADING.maxThreads));
    // The defaults: code run from the sources (these tests) computes on this thread, and the defaults cannot be changed.
    expect(costThreads(1e12)).toBe(0);
    expect(Object.isFrozen(COST_THREADING)).toBe(true);
    // A caller's thresholds are checked with the other cost options.
    const pair = randomRaster(seededRandom(3), 4, 3, 1);
    expect(() => new DataCostMatcher(pair, pair, { threads: { minEntries: -1 } })).toThrow(/^data costs: threads.minEntries: got -1, expected a number ≥ 0 \(Infinity: never\)$/);
    expect(() => new DataCostMatcher(pair, pair, { threads: { fromSource: 1 as unknown as boolean } })).toThrow(/^data costs: threads.fromSource: got 1, expected true or false$/);
    expect(() => new DataCostMatcher(pair, pair, { threads: { minEntrys: 1 } as Partial<typeof COST_THREADING> })).toThrow(/^data costs: threads.minEntrys: got 1, expected no such field/);
    expect(new DataCostMatcher(pair, pair, { threads: { minEntries: Infinity } }).options.threads).toEqual({ minEntries: Infinity });
  });
});
