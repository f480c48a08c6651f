import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as zlib from 'zlib';
import { types } from 'util';
import { seededRandom } from '../data/random';
import { bandedCost, computeEnergy, type BandedTerm, type EnergyBreakdown } from '../data/energy';
import { buildStereoEnergy, weightsOfStereoCues, COST_KINDS, DataCostMatcher, DEFAULT_CENSUS_WINDOW, mirroredSwappedEnergy, type CostKind, type StereoEnergyOptions } from '../costs';
import { generateSyntheticScene } from '../data/synthetic';
import { evaluateDisparity } from '../data/metrics';
import { readImage, writePng } from '../data/imageIO';
import { sharedSamples, type Raster } from '../data/raster';
import { halfSize, mirrorRaster } from '../data/raster';
import { bandsFromCoarse, levelEnergy, levelShapes, pyramidLevels, refineLevel, type LevelShape } from '../stereo/coarseToFine';
import { stripCrop, stripEnergy, stripImages, stripRows as stripsOf, stripSpan } from '../stereo/levelStrips';
import { runStripsHere, stripPool } from '../stereo/stripRunner';
import { levelTerms, makeTermsBand, termsRows, type LevelTerms, type TermsArrays, type TermsBand } from '../stereo/levelTerms';
import { isShared, SharedStage } from '../data/sharedStage';
import { warmUpStrips } from '../stereo/stripWarmup';
import { BandedMoveScratch } from '../expansion/bandedMoves';
import { ScratchArrays } from '../data/scratchArrays';
import { solveStrip } from '../stereo/levelStrips';
import { cropRows } from '../stereo/levelStrips';
import type { StripPool } from '../stereo/matchTypes';
import { createMatcher, levelTruncation, match, resolveParams, type MatchEvent } from '../stereo/match';
import { createSequenceMatcher } from '../stereo/sequence';
import { estimateMatchMemory } from '../stereo/memoryPlan';
import { main } from '../app/cli';
import { scaled } from './support/testScope';
import { randomRaster } from './support/randomRaster';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-c2f-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const f = (name: string): string => path.join(tmp, name);

async function cli(...args: (string | number)[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args.map(String), { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe('pyramid', () => {
  test('levels: one up to 0.5 megapixels, then one more for each halving needed; shapes halve with the disparities rounded outward', () => {
    expect(pyramidLevels(718, 496, 'auto')).toBe(1);
    expect(pyramidLevels(1436, 992, 'auto')).toBe(2);
    expect(pyramidLevels(2872, 1984, 'auto')).toBe(3);
    expect(pyramidLevels(2872, 1984, 1)).toBe(1);
    expect(levelShapes(1437, 993, 17, 131, 3)).toEqual([
      { width: 1437, height: 993, minDisp: 17, maxDisp: 131 },
      { width: 719, height: 497, minDisp: 8, maxDisp: 66 },
      { width: 360, height: 249, minDisp: 4, maxDisp: 33 },
    ]);
  });

  test('halfSize: each sample the rounded mean of its 2×2 block, the last row and column repeated on odd sizes (random rasters)', () => {
    const rand = seededRandom(5);
    for (let t = 0; t < 50; t++) {
      const W = 1 + Math.floor(rand() * 9);
      const H = 1 + Math.floor(rand() * 9);
      const C = rand() < 0.5 ? 1 : 3;
      const r: Raster = { width: W, height: H, channels: C, maxval: 255, data: Float32Array.from({ length: W * H * C }, () => Math.floor(rand() * 256)) };
      const h = halfSize(r);
      expect([h.width, h.height]).toEqual([Math.ceil(W / 2), Math.ceil(H / 2)]);
      const at = (x: number, y: number, c: number): number => r.data[(Math.min(y, H - 1) * W + Math.min(x, W - 1)) * C + c];
      for (let y = 0; y < h.height; y++) for (let x = 0; x < h.width; x++) for (let c = 0; c < C; c++) {
        const s = at(2 * x, 2 * y, c) + at(2 * x + 1, 2 * y, c) + at(2 * x, 2 * y + 1, c) + at(2 * x + 1, 2 * y + 1, c);
        expect(h.data[(y * h.width + x) * C + c]).toBe(Math.round(s / 4));
      }
    }
  });

  test('bands: 2·min − r .. 2·max + r of the 3×3 coarse pixels around, within the range; the start is 2× the coarse disparity inside it (random maps)', () => {
    const rand = seededRandom(9);
    for (let t = 0; t < 40; t++) {
      const cw = 2 + Math.floor(rand() * 6);
      const ch = 2 + Math.floor(rand() * 6);
      const shape = { width: 2 * cw - (rand() < 0.5 ? 1 : 0), height: 2 * ch - (rand() < 0.5 ? 1 : 0), minDisp: 3, maxDisp: 40 };
      const coarse = Uint16Array.from({ length: cw * ch }, () => 1 + Math.floor(rand() * 20));
      const r = 1 + Math.floor(rand() * 3);
      const { lo, hi, start } = bandsFromCoarse(coarse, cw, ch, shape, r);
      for (let y = 0; y < shape.height; y++) for (let x = 0; x < shape.width; x++) {
        const p = y * shape.width + x;
        let mn = Infinity;
        let mx = -Infinity;
        for (let yy = Math.max(0, (y >> 1) - 1); yy <= Math.min(ch - 1, (y >> 1) + 1); yy++) for (let xx = Math.max(0, (x >> 1) - 1); xx <= Math.min(cw - 1, (x >> 1) + 1); xx++) {
          mn = Math.min(mn, coarse[yy * cw + xx]);
          mx = Math.max(mx, coarse[yy * cw + xx]);
        }
        const clamp = (d: number): number => Math.min(40, Math.max(3, d));
        expect(lo[p] + 3).toBe(clamp(2 * mn - r));
        expect(hi[p] + 3).toBe(clamp(2 * mx + r));
        expect(start[p] + 3).toBe(Math.min(clamp(2 * mx + r), Math.max(clamp(2 * mn - r), 2 * coarse[(y >> 1) * cw + (x >> 1)])));
      }
    }
  });
});

describe('a finer level in strips', () => {
  const p = resolveParams({});
  const energyOf = (kind: CostKind, ndisp: number, censusWindow?: { width: number; height: number }): StereoEnergyOptions => ({
    ndisp, minDisp: 0, kind, border: p.border, lambda: p.lambda, cueThreshold: p.cueThreshold, cueFactor: p.cueFactor, smoothness: p.smoothness, truncation: 4, onDemand: true,
    ...(censusWindow ? { censusWindow } : {}),
  });
  const shapeOf = (r: Raster, ndisp: number): LevelShape => ({ width: r.width, height: r.height, minDisp: 0, maxDisp: ndisp - 1 });
  /** A finer level of a 14-label scene and its census energy, with the coarse maps of both views: the half-size pair's BK match. */
  const censusLevel = async (s: ReturnType<typeof generateSyntheticScene>): Promise<{ shape: LevelShape; energy: StereoEnergyOptions; coarse: { maps: Uint16Array[]; width: number; height: number } }> => {
    const half = { left: halfSize(s.left), right: halfSize(s.right) };
    const c = await match(half.left, half.right, { ndisp: 7, backend: 'bk', levels: 1 });
    return { shape: shapeOf(s.left, 14), energy: energyOf('census', 14), coarse: { maps: [c.disparity, c.disparity], width: half.left.width, height: half.left.height } };
  };
  /** Samples with fractions (not 8-bit) or whole 0..255, three channels. */
  const noisy = (s: ReturnType<typeof generateSyntheticScene>, rand: () => number, whole: boolean): { left: Raster; right: Raster } => {
    const jitter = (r: Raster): Raster => ({ ...r, data: r.data.map((v) => Math.min(255, Math.max(0, whole ? Math.round(v + (rand() - 0.5) * 6) : v + (rand() - 0.5) * 6))) });
    return { left: jitter(s.left), right: jitter(s.right) };
  };

  // The scenes' widths (first + a random part below the second): narrower by default, the same heights (the strips run down the rows).
  const [STRIP_W0, STRIP_WR] = [scaled(40, 24), scaled(30, 16)];
  const [LEVEL_W0, LEVEL_WR] = [scaled(64, 32), scaled(40, 20)];

  test('a strip\'s energy is the level energy\'s rows: the same costs in each band, the same weights, held rows at their labels (every cost kind, census windows to 15×15, both views; the level\'s terms made in 1–5 bands; census from its own codes and from the level\'s, with the one image the view\'s weights read); the job\'s arrays only read', async () => {
    const rand = seededRandom(11);
    for (let trial = 0; trial < 24; trial++) {
      const kind = COST_KINDS[trial % COST_KINDS.length];
      const side = 1 + 2 * Math.floor(rand() * 8);
      const window = kind === 'census' ? { width: Math.max(3, side), height: side } : undefined;
      const ndisp = 6 + Math.floor(rand() * 8);
      const s = generateSyntheticScene({ width: STRIP_W0 + Math.floor(rand() * STRIP_WR), height: 30 + Math.floor(rand() * 40), ndisp, seed: trial });
      const pair = noisy(s, rand, trial % 2 === 0);
      const shape = shapeOf(pair.left, ndisp);
      const coarse = halfSize(pair.left);
      const coarseMap = Uint16Array.from({ length: coarse.width * coarse.height }, () => Math.floor(rand() * (ndisp / 2)));
      const energy = energyOf(kind, ndisp, window);
      const view = (trial % 3 === 0 ? 1 : 0) as 0 | 1;
      const whole = levelEnergy({ view, left: pair.left, right: pair.right, energy, shape, coarse: coarseMap, coarseWidth: coarse.width, coarseHeight: coarse.height, radius: 2 });
      const { lo, hi } = bandsFromCoarse(coarseMap, coarse.width, coarse.height, shape);
      const W = shape.width;
      const H = shape.height;
      const y0 = Math.floor(rand() * (H - 2));
      const y1 = y0 + 1 + Math.floor(rand() * (H - y0 - 1));
      const { a, b } = stripSpan(y0, y1, H);
      const { top, bottom } = stripCrop(y0, y1, H, energy);
      const labels = whole.start.slice(a * W, b * W);
      const slo = lo.slice(a * W, b * W);
      const shi = hi.slice(a * W, b * W);
      const terms = await levelTerms(pair, energy, 2, async (bands) => bands.map((b) => makeTermsBand(b)), 1 + (trial % 5));
      const rows = termsRows(terms, view, top, bottom);
      expect(rows.codes !== undefined).toBe(kind === 'census');
      for (const codes of rows.codes ? [undefined, rows.codes] : [undefined]) {
        // With the level's codes a job carries one crop for both images, as refineLevel makes it.
        const images = stripImages(pair, view, top, bottom, codes !== undefined);
        if (codes) expect(images.right).toBe(images.left);
        const before = [slo, shi, labels, rows.cues].map((x) => x.slice());
        const strip = stripEnergy({
          view, ...images, top, energy, height: H, y0, y1, own0: y0, own1: y1, lo: slo, hi: shi, labels, cues: rows.cues,
          order: 'frequent', cycles: 1, seed: 1, skipUnchanged: true, ...(codes ? { codes } : {}),
        });
        expect([slo, shi, labels, rows.cues].every((x, i) => Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(before[i].buffer)))).toBe(true);
        const band = whole.energy.data as BandedTerm;
        const sband = strip.data as BandedTerm;
        for (let y = a; y < b; y++) {
          for (let x = 0; x < W; x++) {
            const q = (y - a) * W + x;
            const held = y < y0 || y >= y1;
            for (let l = 0; l < ndisp; l++) {
              const want = held ? (l === labels[q] ? bandedCost(band, y * W + x, l) : -1) : bandedCost(band, y * W + x, l);
              if (bandedCost(sband, q, l) !== want) throw new Error(`trial ${trial} (${kind} ${window?.width}×${window?.height}, view ${view}, ${codes ? 'the level\'s codes' : 'its own codes'}): pixel (${x}, ${y}) label ${l}: ${bandedCost(sband, q, l)}, not ${want}`);
            }
            const [wH, wV] = [whole.energy.wH[y * W + x], y === b - 1 ? 0 : whole.energy.wV[y * W + x]];
            if (!Object.is(strip.wH[q], wH) || !Object.is(strip.wV[q], wV)) throw new Error(`trial ${trial} (${kind}, view ${view}): pixel (${x}, ${y}): weights ${strip.wH[q]}, ${strip.wV[q]}, not ${wH}, ${wV}`);
          }
        }
      }
    }
  });

  test('the level\'s energies are the banded energy of its maps, both views, strip heights and overlaps; labels stay in their bands; the energy never rises', async () => {
    const rand = seededRandom(5);
    for (let trial = 0; trial < 8; trial++) {
      const ndisp = 8 + Math.floor(rand() * 8);
      const s = generateSyntheticScene({ width: LEVEL_W0 + Math.floor(rand() * LEVEL_WR), height: 40 + Math.floor(rand() * 50), ndisp, seed: 20 + trial });
      const pair = noisy(s, rand, true);
      const shape = shapeOf(pair.left, ndisp);
      const coarse = halfSize(pair.left);
      const maps = [0, 1].map(() => Uint16Array.from({ length: coarse.width * coarse.height }, () => Math.floor(rand() * (ndisp / 2))));
      const energy = energyOf('census', ndisp);
      const [rows, overlap] = [[1, 0], [2, 0], [7, 3], [16, 7], [64, 8], [9, 1], [20, 0], [64, 31]][trial];
      const done = await refineLevel(0, shape, pair, energy, 2, { maps, width: coarse.width, height: coarse.height }, { params: { ...p, levelCycles: 1 + (trial % 2) }, run: runStripsHere, stripRows: rows, overlap });
      let initial = 0;
      let final = 0;
      for (const view of [0, 1] as const) {
        const whole = levelEnergy({ view, left: pair.left, right: pair.right, energy, shape, coarse: maps[view], coarseWidth: coarse.width, coarseHeight: coarse.height, radius: 2 });
        const labels = done.maps[view].map((d) => d - shape.minDisp);
        const band = whole.energy.data as BandedTerm;
        const outside = labels.findIndex((l, q) => !(bandedCost(band, q, l) >= 0));
        expect([trial, view, outside]).toEqual([trial, view, -1]);
        initial += computeEnergy(whole.energy, whole.start).total;
        final += computeEnergy(whole.energy, labels).total;
      }
      expect(done.result.initialEnergy.total).toBe(initial);
      expect(done.result.finalEnergy.total).toBe(final);
      expect(done.result.cycles[done.result.cycles.length - 1].energy.total).toBe(final);
      expect(final).toBeLessThanOrEqual(initial);
      expect(done.report.strips).toBe(2 * Math.ceil(shape.height / rows));
      // The longest strip is one of the strips whose thread times make up the level's.
      expect(done.report.longestStripMs).toBeGreaterThan(0);
      expect(done.report.longestStripMs).toBeLessThanOrEqual(done.report.threadMs);
      expect(done.report.longestStripMs * done.report.strips).toBeGreaterThanOrEqual(done.report.threadMs);
      // The waits before a strip starts and after it ends lie within the level's wall time (clocks of one process: a ms of rounding).
      for (const wait of [done.report.longestDispatchMs, done.report.longestReturnMs]) {
        expect(wait).toBeGreaterThanOrEqual(-1);
        expect(wait).toBeLessThanOrEqual(done.report.costsMs + done.report.expansionMs + 1);
      }
    }
  });

  test('strips finishing in any order, at most inFlight built at once: a window starts only after the strips it reads are done, and the labels and energies are those of one strip at a time', async () => {
    const rand = seededRandom(77);
    for (let trial = 0; trial < 6; trial++) {
      const ndisp = 10;
      const s = generateSyntheticScene({ width: 48 + Math.floor(rand() * 30), height: 30 + Math.floor(rand() * 60), ndisp, seed: 40 + trial });
      const shape = shapeOf(s.left, ndisp);
      const coarse = halfSize(s.left);
      const maps = [0, 1].map(() => Uint16Array.from({ length: coarse.width * coarse.height }, () => Math.floor(rand() * (ndisp / 2))));
      const [rows, overlap] = [[8, 3], [5, 2], [16, 7], [9, 0], [3, 1], [12, 4]][trial];
      const options = { params: p, stripRows: rows, overlap };
      const serial = await refineLevel(0, shape, s, energyOf('census', ndisp), 2, { maps, width: coarse.width, height: coarse.height }, { ...options, run: runStripsHere });
      // Rows a strip's job reads (its span with the held rows) and rows it writes, per view; every write must precede the reads that cover it.
      const finished: Array<{ view: number; y0: number; y1: number }> = [];
      // Jobs handed to the runner and not yet done: a job is built just before it is handed over.
      const inFlight = [1, 2, 3, undefined, 5, 2][trial];
      let active = 0;
      let most = 0;
      const shuffled: typeof runStripsHere = async (jobs, onDone) => {
        active += jobs.length;
        most = Math.max(most, active);
        await new Promise((r) => setTimeout(r, Math.floor(rand() * 4)));
        for (const j of jobs) {
          const { a, b } = stripSpan(j.y0, j.y1, j.height);
          // Every strip whose rows this one reads and which writes them must be done: a window reads the even strips beside it.
          if (j.y0 !== j.own0 || j.y1 !== j.own1) {
            const needed = stripsOf(shape.height, rows).filter(([y0, y1], k) => k % 2 === 0 && y0 < b && y1 > a);
            for (const [y0, y1] of needed) expect(finished.some((f) => f.view === j.view && f.y0 === y0 && f.y1 === y1)).toBe(true);
          }
        }
        const out = await runStripsHere(jobs, onDone);
        for (const d of out) finished.push({ view: d.view, y0: d.y0, y1: d.y1 });
        active -= jobs.length;
        return out;
      };
      const any = await refineLevel(0, shape, s, energyOf('census', ndisp), 2, { maps, width: coarse.width, height: coarse.height }, { ...options, run: shuffled, inFlight });
      const strips = Math.ceil(shape.height / rows);
      // Every even strip of both views at once without a limit.
      expect(most).toBe(inFlight === undefined ? 2 * Math.ceil(strips / 2) : Math.min(inFlight, 2 * Math.ceil(strips / 2)));
      expect(any.maps).toEqual(serial.maps);
      expect(any.result.initialEnergy).toEqual(serial.result.initialEnergy);
      expect(any.result.finalEnergy).toEqual(serial.result.finalEnergy);
      expect(finished.length).toBe(2 * Math.ceil(shape.height / rows));
    }
  });

  test('a strip thread\'s warm-up leaves its scratch fit for the strips after it: the same labels and energies as strips on fresh scratches', async () => {
    const s = generateSyntheticScene({ width: 140, height: 90, ndisp: 14, seed: 21 });
    const { shape, energy, coarse } = await censusLevel(s);
    const terms = await levelTerms(s, energy, 2);
    const options = { params: p, stripRows: 16, overlap: 4, terms };
    const fresh = await refineLevel(0, shape, s, energy, 2, coarse, { ...options, run: runStripsHere });
    const scratch = new BandedMoveScratch();
    await warmUpStrips(scratch);
    const warmed = await refineLevel(0, shape, s, energy, 2, coarse, {
      // One strip at a time through the one scratch, as a thread runs them.
      ...options, inFlight: 1, run: async (jobs, onDone) => { const out = []; for (const j of jobs) { const d = await solveStrip(j, scratch); onDone?.(d); out.push(d); } return out; },
    });
    expect(warmed.maps).toEqual(fresh.maps);
    expect(warmed.result.finalEnergy).toEqual(fresh.result.finalEnergy);
  });

  test('a level\'s terms made in bands into shared memory are those of the whole pair: census codes (windows to 15×15, bands of fewer rows than the window\'s half) and both views\' weights as cues (every cost kind, cue factors 2 and 1); threads: the test below', async () => {
    const rand = seededRandom(19);
    const arrays = new ScratchArrays();
    for (let trial = 0; trial < 16; trial++) {
      const W = 5 + Math.floor(rand() * 30);
      const H = 2 + Math.floor(rand() * 40);
      const channels = trial % 3 === 0 ? 1 : 3;
      const crop = { left: randomRaster(W, H, channels, 12, rand), right: randomRaster(W, H, channels, 12, rand) };
      const kind = trial % 4 === 3 ? COST_KINDS[trial % COST_KINDS.length] : 'census';
      const window = { width: 1 + 2 * Math.floor(1 + rand() * 7), height: 1 + 2 * Math.floor(rand() * 8) };
      // A cue factor of 1 sometimes: cued and plain edges then weigh the same.
      const energy = { ...energyOf(kind, 4, kind === 'census' ? window : undefined), ...(trial % 5 === 4 ? { cueFactor: 1 } : {}) };
      const views = (1 + (trial % 2)) as 1 | 2;
      // The oracle: the codes of a matcher of the whole pair, and the weights of each view's energy.
      const whole = new DataCostMatcher(crop.left, crop.right, { kind: 'census', censusWindow: window }).censusCodes();
      const first = buildStereoEnergy(crop.left, crop.right, energy);
      const energies = [first, mirroredSwappedEnergy(first, energy)];
      const bands = 1 + Math.floor(rand() * Math.min(9, H));
      const check = (made: LevelTerms): void => {
        expect(made.codes !== undefined).toBe(kind === 'census');
        if (made.codes) expect({ trial, bands, words: made.codes.words, left: Array.from(made.codes.left), right: Array.from(made.codes.right) }).toEqual({ trial, bands, words: whole.words, left: Array.from(whole.left), right: Array.from(whole.right) });
        expect(made.cues.length).toBe(views);
        made.cues.forEach((c, v) => {
          const w = weightsOfStereoCues(c, W, H, energy);
          expect({ trial, v, wH: Array.from(w.wH), wV: Array.from(w.wV) }).toEqual({ trial, v, wH: Array.from(energies[v].wH), wV: Array.from(energies[v].wV) });
        });
      };
      // One thread's working arrays for every band, as a strip thread keeps them (grown and reused across trials).
      const made = await levelTerms(crop, energy, views, async (b) => b.map((band) => makeTermsBand(band, arrays)), bands);
      if (bands > 1) expect(made.cues.every((c) => types.isSharedArrayBuffer(c.buffer))).toBe(true);
      check(made);
      // Into given arrays (a stage's, holding another level's terms before): the same terms, in them.
      const n = W * H;
      const words = whole.words;
      const filled = (length: number, v: number): Int32Array => new Int32Array(new SharedArrayBuffer(4 * length)).fill(v);
      const given: TermsArrays = {
        ...(kind === 'census' ? { codes: { words, left: filled(n * words, -1), right: filled(n * words, 7) } } : {}),
        cues: Array.from({ length: views }, () => new Uint8Array(new SharedArrayBuffer(n)).fill(255)),
      };
      const into = await levelTerms(crop, energy, views, async (b) => b.map((band) => makeTermsBand(band, arrays)), bands, given);
      expect(into.cues.every((c, v) => c === given.cues[v]) && into.codes?.left === given.codes?.left).toBe(true);
      check(into);
      await expect(levelTerms(crop, energy, views, undefined, 1, { ...given, cues: [new Uint8Array(n + 1)] })).rejects.toThrow(/levelTerms: arrays of/);
    }
  });

  test('threads give the labels this thread gives (the strip pool, its threads loading the sources)', async () => {
    const s = generateSyntheticScene({ width: 120, height: 150, ndisp: 14, seed: 9 });
    const { shape, energy, coarse } = await censusLevel(s);
    const here = await refineLevel(0, shape, s, energy, 2, coarse, { params: p, run: runStripsHere, stripRows: 16, overlap: 4 });
    const pool = stripPool(2);
    try {
      expect(pool.threads).toBe(2);
      // There with the level's terms made on the threads (here on this thread): the same terms.
      expect(pool.terms).toBeDefined();
      const terms = await levelTerms(s, energy, 2, pool.terms, 3);
      const mine = await levelTerms(s, energy, 2);
      const same = (x: Int32Array, y: Int32Array): boolean => Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(y.buffer, y.byteOffset, y.byteLength));
      expect(same(terms.codes!.left, mine.codes!.left) && same(terms.codes!.right, mine.codes!.right)).toBe(true);
      expect(terms.cues.every((c, v) => Buffer.from(c.buffer, c.byteOffset, c.byteLength).equals(Buffer.from(mine.cues[v].buffer, mine.cues[v].byteOffset, mine.cues[v].byteLength)))).toBe(true);
      const there = await refineLevel(0, shape, s, energy, 2, coarse, { params: p, run: pool.run, stripRows: 16, overlap: 4, terms });
      expect(Buffer.from(there.maps[0].buffer).equals(Buffer.from(here.maps[0].buffer))).toBe(true);
      expect(Buffer.from(there.maps[1].buffer).equals(Buffer.from(here.maps[1].buffer))).toBe(true);
      expect(there.result.finalEnergy).toEqual(here.result.finalEnergy);
    } finally {
      await pool.close();
    }
  });
});

describe('match() coarse to fine', () => {
  test('a caller\'s strip pool, kept across matches, gives the labels and energies a match\'s own threads give, the coarsest level\'s right view matched on one of its threads (compiled build)', async () => {
    const dist = path.join(__dirname, '..', 'dist', 'stereo');
    if (!fs.existsSync(path.join(dist, 'stripWorker.js'))) throw new Error('dist/ is missing: run npm run build (npm ci does it through the prepare script)');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const lib = require(path.join(dist, 'index.js')) as { match: typeof match; stripPool: (n: number) => { threads: number; close(): Promise<void> } };
    const s = generateSyntheticScene({ width: 200, height: 150, ndisp: 16, seed: 8 });
    const options = { ndisp: s.ndisp, backend: 'bk' as const, levels: 2 };
    const here = await match(s.left, s.right, options);
    const pool = lib.stripPool(2);
    try {
      for (let k = 0; k < 2; k++) {
        const there = await lib.match(s.left, s.right, { ...options, stripPool: pool as never });
        expect(Buffer.from(there.disparity.buffer).equals(Buffer.from(here.disparity.buffer))).toBe(true);
        expect(there.finalEnergy).toEqual(here.finalEnergy);
        // Here both views of the coarsest level ran on this thread; there the right one on a pool thread.
        const [a, b] = [there.pyramid!.coarsest, here.pyramid!.coarsest];
        expect([a.initialEnergy, a.finalEnergy, a.cuts]).toEqual([b.initialEnergy, b.finalEnergy, b.cuts]);
      }
    } finally {
      await pool.close();
    }
    await expect(match(s.left, s.right, { ...options, stripPool: {} as never })).rejects.toThrow(/stripPool.*a pool from stripPool\(threads\)/);
  });


  test('a pool\'s pair stage: the finer levels\' strips and term bands read views of shared memory (pairs, terms, bands and labels; a pair read into shared memory without a copy), the labels and energies are those without it, the caller\'s pair is untouched, and the stage is released', async () => {
    const s = generateSyntheticScene({ width: 150, height: 130, ndisp: 24, seed: 12 });
    const options = { ndisp: s.ndisp, backend: 'bk' as const, levels: 3 };
    const plain = await match(s.left, s.right, options);
    const before = [Float32Array.from(s.left.data), Float32Array.from(s.right.data)];
    const stage = new SharedStage();
    const seen = { strips: 0, shared: 0, bands: 0, sharedBands: 0 };
    const pool: StripPool = {
      threads: 0, pairStage: stage, close: async () => undefined,
      run: (jobs, onDone) => {
        for (const j of jobs) {
          seen.strips++;
          // Every array a job carries: its rows of the pair, the level's terms, bands and labels.
          const arrays = [j.left.data, j.right.data, j.cues, j.lo, j.hi, j.labels, ...(j.codes ? [j.codes.left, j.codes.right] : [])];
          if (arrays.every((a) => types.isSharedArrayBuffer(a.buffer))) seen.shared++;
          for (const a of [j.lo, j.hi, j.labels]) bandBuffers.add(a.buffer);
        }
        return runStripsHere(jobs, onDone);
      },
      terms: async (bands: TermsBand[]) => bands.map((b) => {
        seen.bands++;
        if (isShared(b.left) && isShared(b.right)) seen.sharedBands++;
        for (const a of [b.into.codes!.left, b.into.codes!.right, ...b.into.cues]) termsBuffers.add(a.buffer);
        return makeTermsBand(b);
      }),
    };
    // The levels' terms, bands and labels are written into the stage's shared arrays, the same ones in every match.
    const termsBuffers = new Set<ArrayBufferLike>();
    const bandBuffers = new Set<ArrayBufferLike>();
    for (let k = 0; k < 2; k++) {
      const staged = await match(s.left, s.right, { ...options, stripPool: pool });
      expect(Buffer.from(staged.disparity.buffer).equals(Buffer.from(plain.disparity.buffer))).toBe(true);
      expect(staged.finalEnergy).toEqual(plain.finalEnergy);
      expect([Array.from(s.left.data), Array.from(s.right.data)]).toEqual(before.map((b) => Array.from(b)));
      // Released: the next hold gets the arrays.
      const next = stage.hold();
      expect(next).not.toBeNull();
      next!.release();
    }
    expect(seen.strips).toBeGreaterThan(0);
    expect(seen.shared).toBe(seen.strips);
    expect(seen.bands).toBeGreaterThan(0);
    expect(seen.sharedBands).toBe(seen.bands);
    // Two finer levels, over both matches: two images' codes and two views' cues each; two views' bands and labels.
    expect(termsBuffers.size).toBe(2 * (2 + 2));
    expect(bandBuffers.size).toBe(2 * 2 * 3);
    expect([...termsBuffers, ...bandBuffers].every((b) => types.isSharedArrayBuffer(b))).toBe(true);
    // A pair already in shared memory (one read for matching) is read there: the finest level's jobs carry views of its samples.
    const shared = [s.left, s.right].map((r) => ({ ...r, data: sharedSamples(r.data.length) }));
    shared.forEach((r, i) => r.data.set([s.left, s.right][i].data));
    const buffers = new Set<ArrayBufferLike>();
    const viewing: StripPool = { ...pool, run: (jobs, onDone) => { for (const j of jobs) buffers.add(j.left.data.buffer).add(j.right.data.buffer); return runStripsHere(jobs, onDone); } };
    const fromShared = await match(shared[0], shared[1], { ...options, stripPool: viewing });
    expect(Buffer.from(fromShared.disparity.buffer).equals(Buffer.from(plain.disparity.buffer))).toBe(true);
    expect(fromShared.finalEnergy).toEqual(plain.finalEnergy);
    expect(buffers.has(shared[0].data.buffer) || buffers.has(shared[1].data.buffer)).toBe(true);
  });

  test('cropRows a view of shared samples and a copy of others; halfSize into a stage\'s array as without one', () => {
    const stage = new SharedStage();
    const rand = seededRandom(3);
    for (let trial = 0; trial < 20; trial++) {
      const r = randomRaster(1 + Math.floor(rand() * 9), 1 + Math.floor(rand() * 9), trial % 2 === 0 ? 1 : 3, 255, rand);
      const held = stage.hold()!;
      const shared = held.raster(0, r);
      expect(isShared(shared) && !isShared(r)).toBe(true);
      const top = Math.floor(rand() * r.height);
      const bottom = top + 1 + Math.floor(rand() * (r.height - top));
      const [view, copy] = [cropRows(shared, top, bottom), cropRows(r, top, bottom)];
      expect(Array.from(view.data)).toEqual(Array.from(copy.data));
      expect(view.data.buffer).toBe(shared.data.buffer);
      expect(copy.data.buffer).not.toBe(r.data.buffer);
      const half = held.array(1, Float32Array, Math.ceil(r.width / 2) * Math.ceil(r.height / 2) * r.channels);
      const into = halfSize(r, half);
      expect(into.data).toBe(half);
      expect(Array.from(into.data)).toEqual(Array.from(halfSize(r).data));
      held.release();
    }
    const r = randomRaster(5, 5, 1, 255, rand);
    expect(() => halfSize(r, new Float32Array(4))).toThrow(/halfSize: 4 samples given for a 3×3×1 raster/);
  });

  test('two levels on a synthetic scene: a banded finest level, scores near one level\'s, energies of the finest level', async () => {
    const s = generateSyntheticScene({ width: 192, height: 144, ndisp: 16, seed: 6 });
    const one = await match(s.left, s.right, { ndisp: s.ndisp, backend: 'bk', levels: 1 });
    const two = await match(s.left, s.right, { ndisp: s.ndisp, backend: 'bk', levels: 2 });
    expect(two.pyramid?.shapes.map((sh) => sh.width)).toEqual([96, 192]);
    expect(two.pyramid?.levels[0].meanBand).toBeLessThan(12);
    const bad = (d: Uint16Array): number => evaluateDisparity(d, s.groundTruth!, 192, 144, { thresholds: [1], masks: s.masks, regions: ['nonocc'] }).regions[0].bad[0];
    expect(bad(two.disparity)).toBeLessThan(bad(one.disparity) + 3);
    expect(two.finalEnergy.total).toBeLessThanOrEqual(two.initialEnergy.total);
    expect(two.disparity.length).toBe(192 * 144);
  });

  test('the finest level\'s reported energies are its banded energy recomputed from the labels, with the level\'s truncation (levelTruncation)', async () => {
    const s = generateSyntheticScene({ width: 160, height: 120, ndisp: 16, seed: 11 });
    const options = { ndisp: s.ndisp, backend: 'bk' as const, lrCheck: false };
    const two = await match(s.left, s.right, { ...options, levels: 2 });
    const coarse = await match(halfSize(s.left), halfSize(s.right), { ...options, ndisp: 8, levels: 1 });
    const p = two.params;
    expect(levelTruncation(p, 2)).toBe(p.smoothness === 'linear' ? 6 * p.truncation : p.truncation);
    expect(levelTruncation({ smoothness: 'quadratic', truncation: 3 }, 4)).toBe(48);
    expect(levelTruncation({ smoothness: 'potts', truncation: 1 }, 4)).toBe(1);
    const energy: StereoEnergyOptions = {
      ndisp: 16, minDisp: 0, kind: p.cost, tau: p.tau, border: p.border, censusWindow: p.censusWindow, lambda: p.lambda, cueThreshold: p.cueThreshold,
      cueFactor: p.cueFactor, smoothness: p.smoothness, truncation: levelTruncation(p, 2), onDemand: true,
    };
    const { energy: level, start } = levelEnergy({ view: 0, left: s.left, right: s.right, energy, shape: { width: 160, height: 120, minDisp: 0, maxDisp: 15 }, coarse: coarse.disparity, coarseWidth: 80, coarseHeight: 60, radius: 2 });
    expect(two.initialEnergy).toEqual(computeEnergy(level, start));
    expect(two.finalEnergy).toEqual(computeEnergy(level, two.disparity));
  });

  test('the coarsest level matches its views apart, the right view beside the next level\'s left strips: its energies and cuts are those of each view matched alone (the left pair; the mirrored, swapped pair), and its lines say which view', async () => {
    const s = generateSyntheticScene({ width: 160, height: 120, ndisp: 16, seed: 12 });
    const events: MatchEvent[] = [];
    const two = await match(s.left, s.right, { ndisp: s.ndisp, backend: 'bk', levels: 2, onEvent: (e) => events.push(e) });
    // The coarsest level's disparities 0..8: 15 halved, rounded outward.
    const alone = { ndisp: 9, backend: 'bk' as const, levels: 1, lrCheck: false };
    const [l, r] = [halfSize(s.left), halfSize(s.right)];
    const left = await match(l, r, alone);
    const right = await match(mirrorRaster(r), mirrorRaster(l), alone);
    const sum = (a: EnergyBreakdown, b: EnergyBreakdown): EnergyBreakdown => ({ data: a.data + b.data, smoothness: a.smoothness + b.smoothness, total: a.total + b.total });
    const coarsest = two.pyramid!.coarsest;
    expect(coarsest.initialEnergy).toEqual(sum(left.initialEnergy, right.initialEnergy));
    expect(coarsest.finalEnergy).toEqual(sum(left.finalEnergy, right.finalEnergy));
    expect(coarsest.cuts).toBe(left.cuts + right.cuts);
    // Each view's cycles in order, told as that view's; the finer level's lines untagged.
    for (const view of [0, 1] as const) {
      const cycles = events.filter((e): e is Extract<MatchEvent, { kind: 'cycle' }> => e.kind === 'cycle' && e.view === view);
      expect(cycles.map((e) => e.report.cycle)).toEqual((view === 0 ? left : right).cycles.map((c) => c.cycle));
      expect(cycles.map((e) => e.report.energy.total)).toEqual((view === 0 ? left : right).cycles.map((c) => c.energy.total));
    }
    expect(events.filter((e) => e.kind === 'cycle' && e.view === undefined)).toEqual([]);
    expect(events.filter((e) => e.kind === 'solver')).toHaveLength(1);
  });

  test('coarse to fine with the coarsest level\'s views apart gives the same maps and energies on the device kernels (gpujs-cpu) as on BK', async () => {
    const s = generateSyntheticScene({ width: 96, height: 72, ndisp: 12, seed: 13 });
    const options = { ndisp: s.ndisp, levels: 2, cycles: 1 };
    const bk = await match(s.left, s.right, { ...options, backend: 'bk' });
    const kernels = await match(s.left, s.right, { ...options, backend: 'gpujs-cpu' });
    expect(kernels.backend).toMatch(/^gpu-expansion/);
    expect(Buffer.from(kernels.disparity.buffer).equals(Buffer.from(bk.disparity.buffer))).toBe(true);
    expect([kernels.finalEnergy, kernels.pyramid!.coarsest.finalEnergy, kernels.pyramid!.coarsest.cuts]).toEqual([bk.finalEnergy, bk.pyramid!.coarsest.finalEnergy, bk.pyramid!.coarsest.cuts]);
  });

  test('the memory estimate of a run grows with the pixels × the band at the finer levels, not with the labels', () => {
    const p = resolveParams({});
    const a = estimateMatchMemory(2872, 1984, 3, 229, 32, p, false).bytes;
    const b = estimateMatchMemory(2872, 1984, 3, 458, 32, p, false).bytes;
    expect(b / a).toBeLessThan(1.1);
    const volume = estimateMatchMemory(4000, 3000, 3, 256, 0, { ...p, levels: 1, costs: 'volume' }, false);
    expect(volume.bytes).toBeGreaterThan(4000 * 3000 * 256 * 4 * 2);
  });

  test('a matcher gives its pairs\' memory estimate from its own options, and refuses a pair beyond its maxMemory in the library\'s words', async () => {
    const m = createMatcher({ ndisp: 16, levels: 1, costs: 'volume' }, { backend: 'bk', maxMemory: 1e5 });
    expect(m.params).toEqual(resolveParams({ levels: 1, costs: 'volume' }));
    expect(m.memoryEstimate(2872, 1984, 3)).toEqual(estimateMatchMemory(2872, 1984, 3, 16, 0, m.params, false));
    const s = generateSyntheticScene({ width: 64, height: 48, ndisp: 16, seed: 1 });
    await expect(m.compute(s.left, s.right)).rejects.toThrow(/^match: the 64×48 pair with 16 disparities: matching needs about .* \(maxMemory\); give costs 'on-demand', levels 'auto' or fewer disparities, or a larger maxMemory$/);
    await m.dispose();
    // A sequence's frames the same way, on the backend it names.
    const seq = createSequenceMatcher({ ndisp: 62, minDisp: 3, cost: 'sad', levels: 1, backend: 'gpu' });
    expect(seq.memoryEstimate(718, 496, 3)).toEqual(estimateMatchMemory(718, 496, 3, 62, 3, resolveParams({ cost: 'sad', levels: 1 }), true));
    // On the device the costs need no host volume: a host backend's estimate is larger.
    expect(seq.memoryEstimate(718, 496, 3).bytes).toBeLessThan(createMatcher({ ndisp: 62, minDisp: 3, cost: 'sad', levels: 1 }, { backend: 'bk' }).memoryEstimate(718, 496, 3).bytes);
    await seq.dispose();
  });
});

describe('match command on large pairs', () => {
  test('a disparity above 255 goes to a 16-bit PNG at a scale that fits, stated; -o is optional with --pfm', async () => {
    const W = 320;
    const H = 8;
    const rand = seededRandom(4);
    const right = Float32Array.from({ length: W * H }, () => Math.floor(rand() * 256));
    const left = new Float32Array(W * H);
    // left(x) = right(x − 256): disparity 256 wherever x ≥ 256.
    for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) left[y * W + x] = right[y * W + Math.max(0, x - 256)];
    await writePng(f('l.png'), { width: W, height: H, channels: 1, data: left, maxval: 255 });
    await writePng(f('r.png'), { width: W, height: H, channels: 1, data: right, maxval: 255 });
    const r = await cli('match', f('l.png'), f('r.png'), '--min-disp', 250, '--max-disp', 265, '-o', f('d.png'), '--backend', 'bk', '--no-lr-check');
    expect(r.code).toBe(0);
    expect(r.out.join('\n')).toMatch(/d\.png \(disparity × 247, 16-bit\)/);
    const d = await readImage(f('d.png'));
    expect(d.maxval).toBe(65535);
    expect(d.data[4 * W + 300]).toBe(256 * 247);
    const pfmOnly = await cli('match', f('l.png'), f('r.png'), '--min-disp', 250, '--max-disp', 265, '--pfm', f('d.pfm'), '--backend', 'bk', '--no-lr-check', '--cycles', 1);
    expect(pfmOnly.code).toBe(0);
    expect(fs.existsSync(f('d.pfm'))).toBe(true);
    const neither = await cli('match', f('l.png'), f('r.png'), '--ndisp', 8);
    expect(neither.code).toBe(1);
    expect(neither.err).toEqual([expect.stringMatching(/--output/)]);
  });

  test('a PNG whose header claims 20000×20000 is refused from its header, one line naming the file and the memory needed, nothing written', async () => {
    const chunk = (type: string, data: Buffer): Buffer => {
      const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
      const out = Buffer.alloc(8 + data.length + 4);
      out.writeUInt32BE(data.length, 0);
      body.copy(out, 4);
      out.writeUInt32BE(zlib.crc32 ? zlib.crc32(body) : 0, 8 + data.length);
      return out;
    };
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(20000, 0);
    ihdr.writeUInt32BE(20000, 4);
    ihdr[8] = 8;
    ihdr[9] = 2;
    fs.writeFileSync(f('huge.png'), Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IEND', Buffer.alloc(0))]));
    const r = await cli('match', f('huge.png'), f('huge.png'), '--ndisp', 256, '-o', f('never.png'));
    expect(r.code).toBe(1);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(/huge\.png.*20000×20000.*needs about [\d.]+ GB/);
    expect(fs.existsSync(f('never.png'))).toBe(false);
  });
});
