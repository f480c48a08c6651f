import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as zlib from 'zlib';
import { seededRandom, type Rng } from '../data/random';
import type { Raster } from '../data/raster';
import type { Scene } from '../data/sceneTypes';
import { colorizeDisparity, colorizeDisparityInto, errorImage, errorImageInto, evaluateDisparity, type EvaluateOptions, type Evaluation, type RegionName, type RegionScore } from '../data/metrics';
import { encodePng, PHOTO_DEFLATE_LEVEL } from '../data/pngEncode';
import { decodePng } from '../data/pngDecode';
import { encodePfm, parsePfm } from '../data/pfm';
import { generateSyntheticScene } from '../data/synthetic';
import { writeDisparityPfm, writeDisparityPng } from '../app/disparityOutput';
import { INVALID_DISPARITY } from '../stereo/leftRightCheck';
import { SceneImagesAhead, writeSceneOutputs } from '../app/report/sceneOutputs';
import { ImageWriters } from '../app/report/outputThreads';
import type { MatchResult } from '../stereo/match';
import { badTable } from '../app/tune/badPixels';
import type { BadTable, MaskName } from '../app/tune/objective';
import { scaled } from './support/testScope';

/*
 * The output writers and the evaluation against the straightforward
 * implementations they replaced, kept here as oracles: every file byte, every
 * float bit and every score must be identical over random inputs (sizes,
 * NaN / ±Infinity / unknown ground truth, masks, threshold lists, sample
 * values at the rounding edges).
 */

// ---------------------------------------------------------------- oracles

function oracleEvaluate(disparity: ArrayLike<number>, groundTruth: Float32Array, width: number, height: number, options: EvaluateOptions = {}): Evaluation {
  const n = width * height;
  const thresholds = options.thresholds ?? [1];
  const masks = options.masks ?? {};
  const wanted = options.regions ?? (['known', 'nonocc', 'all', 'disc'] as RegionName[]).filter((r) => r === 'known' || masks[r]);
  const regions: RegionScore[] = [];
  const todo: { region: string; mask?: Uint8Array }[] = wanted.map((region) => ({ region, mask: region === 'known' ? undefined : masks[region] }));
  for (const c of options.customMasks ?? []) todo.push({ region: c.name, mask: c.mask });
  for (const { region, mask } of todo) {
    const badCounts = new Float64Array(thresholds.length);
    let pixels = 0;
    let sumAbs = 0;
    let sumSq = 0;
    for (let p = 0; p < n; p++) {
      const g = groundTruth[p];
      if (!Number.isFinite(g) || (mask && !mask[p])) continue;
      const e = Math.abs(disparity[p] - g);
      pixels++;
      sumAbs += e;
      sumSq += e * e;
      for (let i = 0; i < thresholds.length; i++) if (!(e <= thresholds[i])) badCounts[i]++;
    }
    regions.push({
      region,
      pixels,
      bad: Array.from(badCounts, (b) => (pixels ? (100 * b) / pixels : 0)),
      avgError: pixels ? sumAbs / pixels : 0,
      rms: pixels ? Math.sqrt(sumSq / pixels) : 0,
    });
  }
  const note = options.nonoccDerived ? 'nonocc derived from left-right consistency of the two ground-truth maps' : undefined;
  return { thresholds, regions, note };
}

function oracleBadTable(scene: Scene, disparity: ArrayLike<number>, thresholds: number[]): BadTable {
  if (!scene.groundTruth) return {};
  const wanted: [MaskName, RegionName][] = [];
  if (scene.masks.nonocc) wanted.push(['nonocc', 'nonocc']);
  wanted.push(['all', scene.masks.all ? 'all' : 'known']);
  if (scene.masks.disc) wanted.push(['disc', 'disc']);
  wanted.push(['scene', scene.masks.nonocc && !scene.nonoccDerived ? 'nonocc' : 'known']);
  const e = oracleEvaluate(disparity, scene.groundTruth, scene.left.width, scene.left.height, {
    thresholds, masks: scene.masks, regions: [...new Set(wanted.map(([, r]) => r))],
  });
  const out: BadTable = {};
  for (const [mask, region] of wanted) {
    const score = e.regions.find((r) => r.region === region)!;
    if (score.pixels === 0) continue;
    out[mask] = Object.fromEntries(thresholds.map((t, i) => [String(t), score.bad[i]]));
  }
  return out;
}

function oracleErrorImage(left: Raster, disparity: ArrayLike<number>, groundTruth: Float32Array, threshold: number, mask?: Uint8Array): Raster {
  const { width: W, height: H, channels: C } = left;
  const out = new Float32Array(W * H * 3);
  const s = 255 / left.maxval;
  for (let p = 0; p < W * H; p++) {
    let grey = 0;
    for (let c = 0; c < C; c++) grey += left.data[p * C + c];
    grey = (grey / C) * s;
    const g = groundTruth[p];
    const evaluated = Number.isFinite(g) && (!mask || mask[p] !== 0);
    if (evaluated && !(Math.abs(disparity[p] - g) <= threshold)) {
      out[p * 3] = 255; out[p * 3 + 1] = 0; out[p * 3 + 2] = 0;
    } else {
      const v = evaluated ? grey : grey * 0.5;
      out[p * 3] = v; out[p * 3 + 1] = v; out[p * 3 + 2] = v;
    }
  }
  return { width: W, height: H, channels: 3, data: out, maxval: 255 };
}

function oracleTurbo(t: number): [number, number, number] {
  const r = 34.61 + t * (1172.33 - t * (10793.56 - t * (33300.12 - t * (38394.49 - t * 14825.05))));
  const g = 23.31 + t * (557.33 + t * (1225.33 - t * (3574.96 - t * (1073.77 + t * 707.56))));
  const b = 27.2 + t * (3211.1 - t * (15327.97 - t * (27814.0 - t * (22569.18 - t * 6838.66))));
  const clamp = (v: number): number => Math.max(0, Math.min(255, v));
  return [clamp(r), clamp(g), clamp(b)];
}

function oracleColorize(disparity: ArrayLike<number>, width: number, height: number, maxDisparity: number): Raster {
  const out = new Float32Array(width * height * 3);
  const m = maxDisparity > 0 ? maxDisparity : 1;
  for (let p = 0; p < width * height; p++) {
    const d = disparity[p];
    if (!Number.isFinite(d)) continue;
    const [r, g, b] = oracleTurbo(Math.max(0, Math.min(1, d / m)));
    out[p * 3] = r; out[p * 3 + 1] = g; out[p * 3 + 2] = b;
  }
  return { width, height, channels: 3, data: out, maxval: 255 };
}

/** The PNG encoder as it was: Math.round per sample, a Set of pixel values, choose-then-filter per row; filtered images deflated at PHOTO_DEFLATE_LEVEL, the others at zlib's default. */
function oracleEncodePng(r: Raster, bitDepth: 8 | 16 = 8): Uint8Array {
  const { width, height, channels } = r;
  const bpp = channels * (bitDepth / 8);
  const n = width * bpp;
  const stride = n + 1;
  const rows = new Uint8Array((height + 1) * stride);
  const spr = width * channels;
  for (let y = 0; y < height; y++) {
    let o = (y + 1) * stride + 1;
    for (let i = y * spr; i < (y + 1) * spr; i++) {
      const x = r.data[i];
      if (bitDepth === 8) {
        rows[o++] = x >= 255 ? 255 : x > 0 ? Math.round(x) : 0;
      } else {
        const v = x >= 65535 ? 65535 : x > 0 ? Math.round(x) : 0;
        rows[o++] = v >> 8;
        rows[o++] = v & 0xff;
      }
    }
  }
  const seen = new Set<number>();
  let few = true;
  for (let y = 0; y < height && few; y++) {
    for (let i = (y + 1) * stride + 1; i < (y + 1) * stride + 1 + n; i += bpp) {
      let key = 0;
      for (let k = 0; k < bpp; k++) key = key * 256 + rows[i + k];
      seen.add(key);
      if (seen.size > 256) { few = false; break; }
    }
  }
  const sm = (v: number): number => Math.abs((v << 24) >> 24);
  const paeth = (a: number, b: number, c: number): number => {
    const p = a + b - c;
    const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
  };
  if (!few) {
    for (let y = height - 1; y >= 0; y--) {
      const p = (y + 1) * stride + 1;
      const q = p - stride;
      const pred = [
        () => 0,
        (i: number) => (i >= bpp ? rows[p + i - bpp] : 0),
        (i: number) => rows[q + i],
        (i: number) => ((i >= bpp ? rows[p + i - bpp] : 0) + rows[q + i]) >> 1,
        (i: number) => paeth(i >= bpp ? rows[p + i - bpp] : 0, rows[q + i], i >= bpp ? rows[q + i - bpp] : 0),
      ];
      const sums = pred.map((f) => { let s = 0; for (let i = 0; i < n; i++) s += sm(rows[p + i] - f(i)); return s; });
      let best = 0;
      for (let f = 1; f < 5; f++) if (sums[f] < sums[best]) best = f;
      const filtered = new Uint8Array(n);
      for (let i = 0; i < n; i++) filtered[i] = rows[p + i] - pred[best](i);
      rows.set(filtered, p);
      rows[p - 1] = best;
    }
  }
  const idat = zlib.deflateSync(rows.subarray(stride), few ? {} : { level: PHOTO_DEFLATE_LEVEL });
  const chunk = (type: string, body: Uint8Array): Buffer => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(body.length, 0);
    head.write(type, 4, 'ascii');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), body])) >>> 0, 0);
    return Buffer.concat([head, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = bitDepth;
  ihdr[9] = channels === 1 ? 0 : 2;
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', new Uint8Array(0))]);
}

function oracleEncodePfm(width: number, height: number, data: Float32Array, channels = 1): Uint8Array {
  const n = width * height * channels;
  const header = Buffer.from(`P${channels === 1 ? 'f' : 'F'}\n${width} ${height}\n-1\n`, 'ascii');
  const out = new Uint8Array(header.length + 4 * n);
  out.set(header, 0);
  const view = new DataView(out.buffer, header.length, 4 * n);
  const rowLen = width * channels;
  for (let fileRow = 0; fileRow < height; fileRow++) {
    const y = height - 1 - fileRow;
    for (let i = 0; i < rowLen; i++) view.setFloat32((fileRow * rowLen + i) * 4, data[y * rowLen + i], true);
  }
  return out;
}

/** The rows of a PFM body read one float at a time in the file's byte order. */
function oracleParsePfmData(bytes: Uint8Array, pos: number, width: number, height: number, channels: number, little: boolean): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset + pos);
  const rowLen = width * channels;
  const data = new Float32Array(width * height * channels);
  for (let fileRow = 0; fileRow < height; fileRow++) {
    const y = height - 1 - fileRow;
    for (let i = 0; i < rowLen; i++) data[y * rowLen + i] = view.getFloat32((fileRow * rowLen + i) * 4, little);
  }
  return data;
}

function oraclePfmValues(disparity: ArrayLike<number>): Float32Array {
  return Float32Array.from(Array.from({ length: disparity.length }, (_, i) => disparity[i]), (d) => (d === INVALID_DISPARITY ? Infinity : d));
}

function oracleDisparityPngRaster(disparity: ArrayLike<number>, width: number, height: number, scale: number): Raster {
  const data = new Float32Array(width * height);
  for (let i = 0; i < data.length; i++) data[i] = disparity[i] === INVALID_DISPARITY ? 0 : disparity[i] * scale;
  return { width, height, channels: 1, data, maxval: 255 };
}

// ---------------------------------------------------------------- generators

const int = (rand: Rng, lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
const pick = <T>(rand: Rng, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];

/** Float bits, NaN payloads and the sign of zero included. */
const bits = (a: Float32Array | Float64Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

const SPECIAL = [NaN, Infinity, -Infinity, -0, 0, 65535];

/** A disparity map of a random kind: integer labels (invalid included), floats with specials, dyadic fractions, a plain array, an array-like object. */
function randomDisparity(rand: Rng, n: number, top: number): ArrayLike<number> {
  switch (int(rand, 0, 5)) {
    case 0: return Uint16Array.from({ length: n }, () => (rand() < 0.05 ? INVALID_DISPARITY : int(rand, 0, top)));
    case 1: return Float32Array.from({ length: n }, () => (rand() < 0.08 ? pick(rand, SPECIAL) : (rand() * 1.2 - 0.1) * top));
    case 2: return Float32Array.from({ length: n }, () => int(rand, 0, 16 * top) / pick(rand, [1, 2, 3, 4, 8, 16]));
    case 3: return Float64Array.from({ length: n }, () => (rand() < 0.05 ? pick(rand, SPECIAL) : rand() * top));
    case 4: return Array.from({ length: n }, () => (rand() < 0.05 ? pick(rand, SPECIAL) : Math.round(rand() * top * 4) / 4));
    default: { // neither an array nor a typed array
      const values = Array.from({ length: n }, () => (rand() < 0.05 ? pick(rand, SPECIAL) : int(rand, 0, top)));
      return Object.assign({ length: n }, values) as ArrayLike<number>;
    }
  }
}

function randomGroundTruth(rand: Rng, n: number, top: number): Float32Array {
  const unknown = rand() * 0.4;
  return Float32Array.from({ length: n }, () => (rand() < unknown ? pick(rand, [Infinity, Infinity, NaN, -Infinity]) : int(rand, 0, 4 * top) / 4 + (rand() < 0.3 ? rand() * 0.01 : 0)));
}

function randomMask(rand: Rng, n: number): Uint8Array {
  const kind = int(rand, 0, 3);
  const p = rand();
  return Uint8Array.from({ length: n }, () => (kind === 0 ? 0 : kind === 1 ? 255 : rand() < p ? int(rand, 1, 255) : 0));
}

function randomThresholds(rand: Rng): number[] {
  return pick(rand, [
    () => [1],
    () => [0.5, 1, 2, 4],
    () => [4, 0.5, 2, 1, 2],
    () => [0],
    () => Array.from({ length: int(rand, 1, 6) }, () => pick(rand, [0, 0.25, 0.5, 1, 1.5, 2, 3, 4, 100, rand() * 5])),
  ])();
}

/** Sample values at every rounding and clamping edge of an 8- or 16-bit encoder, and plain random ones. */
function randomSample(rand: Rng, max: number): number {
  const k = int(rand, 0, max);
  switch (int(rand, 0, 6)) {
    case 0: return k + 0.5; // halves: Math.round goes up
    case 1: return Math.fround(k + 0.5 - 2 ** -12); // just below a half
    case 2: return pick(rand, [NaN, Infinity, -Infinity, -0, 0, -1, -0.5, Math.fround(0.5 - 2 ** -25), 2 ** -30, 1e-40, max, max + 0.4, max + 0.5, max - 0.5, Math.fround(max - 0.5 - 2 ** -8), 1e9]);
    case 3: return k;
    default: return rand() * (max + 2) - 1;
  }
}

function randomRaster(rand: Rng, width: number, height: number, channels: number, max: number): Raster {
  const n = width * height * channels;
  const palette = rand() < 0.5 ? Array.from({ length: int(rand, 1, 300) }, () => Array.from({ length: channels }, () => randomSample(rand, max))) : undefined;
  const data = new Float32Array(n);
  for (let p = 0; p < width * height; p++) {
    const c = palette ? pick(rand, palette) : undefined;
    for (let k = 0; k < channels; k++) data[p * channels + k] = c ? c[k] : randomSample(rand, max);
  }
  return { width, height, channels, data, maxval: max };
}

// ---------------------------------------------------------------- tests

describe('evaluateDisparity and badTable equal the region-by-region loop', () => {
  test('random maps, masks, custom masks, region lists and threshold lists: every number identical', () => {
    const rand = seededRandom(2024);
    for (let t = 0; t < scaled(600, 200); t++) {
      const W = int(rand, 1, 40);
      const H = int(rand, 1, 30);
      const n = W * H;
      const top = int(rand, 1, 80);
      const d = randomDisparity(rand, n, top);
      const gt = randomGroundTruth(rand, n, top);
      const masks: EvaluateOptions['masks'] = {};
      for (const r of ['nonocc', 'all', 'disc'] as const) if (rand() < 0.6) masks[r] = randomMask(rand, n);
      const options: EvaluateOptions = { thresholds: randomThresholds(rand), masks, nonoccDerived: rand() < 0.3 };
      if (rand() < 0.3) options.regions = (['known', 'nonocc', 'all', 'disc'] as RegionName[]).filter((r) => (r === 'known' || masks[r]) && rand() < 0.7);
      if (rand() < 0.3) options.customMasks = Array.from({ length: int(rand, 1, 3) }, (_, i) => ({ name: `custom${i}`, mask: randomMask(rand, n) }));
      expect(evaluateDisparity(d, gt, W, H, options)).toStrictEqual(oracleEvaluate(d, gt, W, H, options));

      const scene = { left: { width: W, height: H, channels: 1, data: new Float32Array(n), maxval: 255 }, groundTruth: gt, masks, nonoccDerived: rand() < 0.5 } as unknown as Scene;
      const thresholds = randomThresholds(rand);
      expect(badTable(scene, d, thresholds)).toStrictEqual(oracleBadTable(scene, d, thresholds));
    }
  });

  test('the checks still come first and name the problem', () => {
    const gt = new Float32Array(4);
    expect(() => evaluateDisparity([0, 0, 0, 0], gt, 2, 2, { masks: { nonocc: new Uint8Array(3) } })).toThrow(/nonocc mask has 3 pixels, expected 4/);
    expect(() => evaluateDisparity([0, 0, 0, 0], gt, 2, 2, { customMasks: [{ name: 'mine', mask: new Uint8Array(5) }] })).toThrow(/mine mask has 5 pixels/);
    expect(() => evaluateDisparity([0, 0, 0, 0], gt, 2, 2, { thresholds: [-1] })).toThrow(/^evaluate: thresholds: got -1, expected finite numbers ≥ 0$/);
  });
});

describe('error image and colour maps equal the per-pixel originals bit for bit', () => {
  test('errorImage: grey or RGB left images of any maxval, with and without a mask', () => {
    const rand = seededRandom(77);
    for (let t = 0; t < scaled(400, 120); t++) {
      const W = int(rand, 1, 40);
      const H = int(rand, 1, 30);
      const n = W * H;
      const maxval = pick(rand, [255, 65535, 1]);
      const left = randomRaster(rand, W, H, pick(rand, [1, 3]), maxval);
      const d = randomDisparity(rand, n, 60);
      const gt = randomGroundTruth(rand, n, 60);
      const mask = rand() < 0.6 ? randomMask(rand, n) : undefined;
      const threshold = pick(rand, [0, 0.5, 1, 2, rand() * 3]);
      const got = errorImage(left, d, gt, threshold, mask);
      const want = oracleErrorImage(left, d, gt, threshold, mask);
      expect({ ...got, data: [] }).toStrictEqual({ ...want, data: [] });
      expect(bits(got.data).equals(bits(want.data))).toBe(true);
      const dirty = Float32Array.from({ length: n * 3 }, () => pick(rand, [NaN, -7, 1e9, rand()]));
      expect(bits(errorImageInto(dirty, left, d, gt, threshold, mask).data).equals(bits(want.data))).toBe(true);
    }
  });

  test('colorizeDisparity: label maps, dyadic and other fractions, specials, any maximum (tables capped or not)', () => {
    const rand = seededRandom(99);
    for (let t = 0; t < scaled(600, 200); t++) {
      const W = int(rand, 1, 40);
      const H = int(rand, 1, 30);
      const top = pick(rand, [1, 7, 59, 255, 5000]);
      const d = randomDisparity(rand, W * H, top);
      const max = pick(rand, [top, top - 1, 0, -3, NaN, Infinity, top / 3, 0.3, 1e6, 4096.5]);
      const got = colorizeDisparity(d, W, H, max);
      const want = oracleColorize(d, W, H, max);
      expect({ ...got, data: [] }).toStrictEqual({ ...want, data: [] });
      expect(bits(got.data).equals(bits(want.data))).toBe(true);
      const dirty = Float32Array.from({ length: W * H * 3 }, () => pick(rand, [NaN, -7, 1e9, rand()]));
      expect(bits(colorizeDisparityInto(dirty, d, W, H, max).data).equals(bits(want.data))).toBe(true);
    }
  });

  test('the Into forms refuse a buffer of the wrong size', () => {
    const left = { width: 3, height: 2, channels: 1, data: new Float32Array(6), maxval: 255 };
    expect(() => errorImageInto(new Float32Array(17), left, new Float32Array(6), new Float32Array(6), 1)).toThrow(/17 samples for a 3×2 RGB image/);
    expect(() => colorizeDisparityInto(new Float32Array(19), new Float32Array(6), 3, 2, 5)).toThrow(/19 samples/);
  });

  test('a ground truth with unknown pixels colours as the NaN-for-unknown copy the report used to make', () => {
    const rand = seededRandom(5);
    for (let t = 0; t < 50; t++) {
      const gt = randomGroundTruth(rand, 300, 40);
      const asNaN = Float32Array.from(gt, (g) => (Number.isFinite(g) ? g : NaN));
      expect(bits(colorizeDisparity(gt, 20, 15, 39).data).equals(bits(oracleColorize(asNaN, 20, 15, 39).data))).toBe(true);
    }
  });
});

describe('encodePng writes the bytes the original encoder wrote', () => {
  test('random grey and RGB images at 8 and 16 bits: palette-like and photographic, samples at the rounding edges', async () => {
    const rand = seededRandom(31);
    for (let t = 0; t < scaled(400, 150); t++) {
      const bitDepth = pick(rand, [8, 8, 16] as const);
      const max = bitDepth === 8 ? 255 : 65535;
      const r = randomRaster(rand, int(rand, 1, 33), int(rand, 1, 21), pick(rand, [1, 3]), max);
      const got = await encodePng(r, bitDepth);
      expect(Buffer.from(got).equals(Buffer.from(oracleEncodePng(r, bitDepth)))).toBe(true);
      const back = decodePng(got, 'test');
      expect(Array.from(back.data)).toEqual(Array.from(r.data, (x) => (x >= max ? max : x > 0 ? Math.round(x) : 0)));
    }
  });

  test('a smaller image after a larger filtered one (the row buffer lent on) comes out as if encoded alone', async () => {
    const rand = seededRandom(3);
    for (let t = 0; t < 20; t++) {
      const photo = { width: 40, height: 30, channels: 3, data: Float32Array.from({ length: 3600 }, () => rand() * 255), maxval: 255 };
      const small = randomRaster(rand, int(rand, 1, 39), int(rand, 1, 29), pick(rand, [1, 3]), 255);
      const smallAlone = Buffer.from(oracleEncodePng(small));
      await encodePng(photo);
      expect(Buffer.from(await encodePng(small)).equals(smallAlone)).toBe(true);
      await encodePng(photo, 16);
      expect(Buffer.from(await encodePng(small)).equals(smallAlone)).toBe(true);
    }
  });

  test('images encoded at once, each raster overwritten as soon as its encode returns, come out as if encoded alone', async () => {
    const rand = seededRandom(8);
    for (let t = 0; t < 20; t++) {
      // One raster drawn over for every image, as a scene's colour outputs are: each encode must have read it before returning.
      const shared = { width: 40, height: 30, channels: 3, data: new Float32Array(3600), maxval: 255 };
      const expected: Buffer[] = [];
      const pending: Promise<Uint8Array>[] = [];
      for (let k = 0; k < 6; k++) {
        const photo = rand() < 0.5;
        for (let i = 0; i < shared.data.length; i++) shared.data[i] = photo ? rand() * 255 : 40 * int(rand, 0, 3);
        const other = randomRaster(rand, int(rand, 1, 45), int(rand, 1, 35), pick(rand, [1, 3]), 255);
        expected.push(Buffer.from(oracleEncodePng(shared)), Buffer.from(oracleEncodePng(other)));
        pending.push(encodePng(shared), encodePng(other));
      }
      shared.data.fill(NaN);
      const got = await Promise.all(pending);
      got.forEach((g, i) => expect(Buffer.from(g).equals(expected[i])).toBe(true));
    }
  });

  test('256 distinct colours stay unfiltered, 257 are filtered, as before (RGB at 8 bits, grey and RGB at 16)', async () => {
    for (const [channels, bitDepth, max] of [[3, 8, 255], [1, 16, 65535], [3, 16, 65535]] as const) {
      for (const count of [255, 256, 257, 300]) {
        const rand = seededRandom(count + channels + bitDepth);
        // Distinct: 131 is odd, so i·131 mod (max + 1) and its quotient tell every i apart.
        const colours = Array.from({ length: count }, (_, i) => [(i * 131) % (max + 1), Math.floor((i * 131) / (max + 1)), 7].slice(0, channels));
        const W = 37;
        const H = Math.ceil((count + 40) / W);
        const data = new Float32Array(W * H * channels);
        for (let p = 0; p < W * H; p++) {
          const c = colours[p < count ? p : int(rand, 0, count - 1)];
          for (let k = 0; k < channels; k++) data[p * channels + k] = c[k];
        }
        const r = { width: W, height: H, channels, data, maxval: max };
        expect(new Set(colours.map((c) => c.join())).size).toBe(count);
        expect(Buffer.from(await encodePng(r, bitDepth)).equals(Buffer.from(oracleEncodePng(r, bitDepth)))).toBe(true);
      }
    }
  });

  test('every float32 from 0 to 256 in steps of 1/64, and the neighbours of each half, round as Math.round does', async () => {
    const xs: number[] = [];
    for (let k = 0; k <= 256 * 64; k++) xs.push(k / 64);
    for (let k = 0; k < 256; k++) for (const x of [k + 0.5, Math.fround(k + 0.5 - 2 ** -16), Math.fround(k + 0.5 + 2 ** -16)]) xs.push(Math.fround(x));
    xs.push(Math.fround(0.5 - 2 ** -25), 2 ** -126, 2 ** -149);
    const r = { width: xs.length, height: 1, channels: 1, data: Float32Array.from(xs), maxval: 255 };
    expect(Array.from(decodePng(await encodePng(r), 'edges').data)).toEqual(Array.from(r.data, (x) => (x >= 255 ? 255 : x > 0 ? Math.round(x) : 0)));
    expect(Buffer.from(await encodePng(r)).equals(Buffer.from(oracleEncodePng(r)))).toBe(true);
  });
});

describe('PFM writing and reading copy float bits', () => {
  /** Random float bits: NaNs with payloads, infinities, zeros of both signs, subnormals. */
  const randomBits = (rand: Rng, n: number): Float32Array => {
    const f = new Float32Array(n);
    const u = new Uint32Array(f.buffer);
    const values = [...SPECIAL, 1.5, 1e-42, 3.25];
    for (let i = 0; i < n; i++) {
      if (rand() < 0.5) u[i] = Math.floor(rand() * 2 ** 32);
      else f[i] = rand() < 0.5 ? rand() * 100 : pick(rand, values);
    }
    return f;
  };

  test('encodePfm equals the per-float DataView writer; parsePfm reads both byte orders as the per-float reader', () => {
    const rand = seededRandom(13);
    for (let t = 0; t < scaled(300, 100); t++) {
      const W = int(rand, 1, 30);
      const H = int(rand, 1, 20);
      const channels = pick(rand, [1, 3]);
      // Quiet NaNs only for the writer comparison: the DataView path may quiet a signalling NaN on its way through a double.
      const quiet = randomBits(rand, W * H * channels + 5).map((x) => (Number.isNaN(x) ? NaN : x));
      const start = int(rand, 0, 5);
      const data = quiet.subarray(start, start + W * H * channels); // a view that starts inside its buffer, sometimes
      const bytes = encodePfm(W, H, data, channels);
      expect(Buffer.from(bytes).equals(Buffer.from(oracleEncodePfm(W, H, data, channels)))).toBe(true);
      expect(bits(parsePfm(bytes, 'x').data).equals(bits(data))).toBe(true);

      const raw = randomBits(rand, W * H * channels);
      const big = rand() < 0.5;
      const header = Buffer.from(`P${channels === 1 ? 'f' : 'F'}\n${W} ${H}\n${big ? '1.0' : '-1.0'}\n`, 'ascii');
      const body = Buffer.alloc(4 * raw.length);
      for (let i = 0; i < raw.length; i++) {
        const u = new Uint32Array(raw.buffer)[i];
        if (big) body.writeUInt32BE(u, 4 * i); else body.writeUInt32LE(u, 4 * i);
      }
      const file = Buffer.concat([Buffer.alloc(int(rand, 0, 3)), header, body]); // any alignment of the data within the buffer
      const view = file.subarray(file.length - header.length - body.length);
      const parsed = parsePfm(view, 'x');
      expect(parsed.data.length).toBe(raw.length);
      const want = oracleParsePfmData(view, header.length, W, H, channels, !big);
      const differing = Array.from(want).filter((w, i) => !(Object.is(parsed.data[i], w) || (Number.isNaN(w) && Number.isNaN(parsed.data[i]))));
      expect(differing).toEqual([]);
      if (!big) { // the little-endian path copies bytes: exactly the file's rows, flipped
        const rowLen = W * channels;
        for (let fileRow = 0; fileRow < H; fileRow++) {
          const y = H - 1 - fileRow;
          expect(bits(parsed.data.subarray(y * rowLen, (y + 1) * rowLen)).equals(bits(raw.subarray(fileRow * rowLen, (fileRow + 1) * rowLen)))).toBe(true);
        }
      }
    }
  });
});

describe('disparity files and a whole scene\'s outputs', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-exact-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('writeDisparityPfm and writeDisparityPng write the bytes of the original conversions', async () => {
    const rand = seededRandom(8);
    for (let t = 0; t < scaled(120, 40); t++) {
      const W = int(rand, 1, 30);
      const H = int(rand, 1, 20);
      let d = randomDisparity(rand, W * H, 60);
      if (rand() < 0.3 && d instanceof Float32Array) d[int(rand, 0, d.length - 1)] = INVALID_DISPARITY;
      const pfm = path.join(tmp, `d${t}.pfm`);
      writeDisparityPfm(pfm, d, W, H);
      expect(fs.readFileSync(pfm).equals(Buffer.from(oracleEncodePfm(W, H, oraclePfmValues(d))))).toBe(true);

      const labels = Uint16Array.from({ length: W * H }, () => (rand() < 0.1 ? INVALID_DISPARITY : int(rand, 0, 60)));
      const scale = pick(rand, [1, 2, 4, 0.5, 4.25]);
      const png = path.join(tmp, `d${t}.png`);
      await writeDisparityPng(png, labels, W, H, scale);
      expect(fs.readFileSync(png).equals(Buffer.from(oracleEncodePng(oracleDisparityPngRaster(labels, W, H, scale))))).toBe(true);
    }
  });

  // The images drawn here, by two threads of their own (stereocut run's), and with the scene's own images drawn
  // ahead (SceneImagesAhead; 'other': ahead from other ground truth values, which must not be taken): the same files.
  test.each([['here', 0, 'none'], ['on two threads', 2, 'none'], ['on two threads, ahead', 2, 'same'], ['on two threads, ahead from other data', 2, 'other']] as const)('writeSceneOutputs, images drawn %s: every file equals the one the original pipeline wrote', async (_, threads, ahead) => {
    const writers = threads > 0 ? new ImageWriters(threads) : undefined;
    try {
      await everyFileAsTheOriginal(writers, ahead);
    } finally {
      writers?.close();
    }
    if (writers) expect(writers.doneHere).toBe(0);
  });

  async function everyFileAsTheOriginal(writers: ImageWriters | undefined, ahead: 'none' | 'same' | 'other'): Promise<void> {
    const rand = seededRandom(21);
    for (let t = 0; t < scaled(12, 5); t++) {
      const W = int(rand, 24, 60);
      const H = int(rand, 16, 40);
      const ndisp = int(rand, 4, 12);
      const base = generateSyntheticScene({ width: W, height: H, ndisp, seed: 100 + t });
      const n = W * H;
      const scene: Scene = { ...base, masks: { ...base.masks, ...(rand() < 0.5 ? { disc: randomMask(rand, n) } : {}) }, nonoccDerived: rand() < 0.3 };
      if (scene.groundTruth) scene.groundTruth = Float32Array.from(scene.groundTruth, (g) => (rand() < 0.1 ? Infinity : g));
      const disparity = Uint16Array.from({ length: n }, () => (rand() < 0.05 ? INVALID_DISPARITY : int(rand, 0, ndisp - 1)));
      const subpixel = rand() < 0.5 ? Float32Array.from(disparity, (d) => (d === INVALID_DISPARITY ? Infinity : d + rand() - 0.5)) : undefined;
      const energy = { data: 1, smoothness: 2, total: 3 };
      const r = {
        width: W, height: H, ndisp, minDisp: 0, disparity, subpixel, params: { lambda: 2 }, init: { kind: 'wta' }, costScale: 1,
        times: { totalMs: 1 }, backend: 'bk', device: undefined, initialEnergy: energy, finalEnergy: energy, cycles: [],
      } as unknown as MatchResult;
      const dir = path.join(tmp, `scene${t}-${writers ? 'threads' : 'here'}-${ahead}`);
      const drawnAhead = writers && ahead !== 'none'
        ? new SceneImagesAhead(dir, ahead === 'same' ? scene : { ...scene, groundTruth: Float32Array.from(scene.groundTruth!, (g) => g + 1) }, writers)
        : undefined;
      await writeSceneOutputs(dir, tmp, scene, r, undefined, writers, drawnAhead);
      const px = subpixel ?? disparity;
      // The default grey scale: the largest multiple of 0.01 that keeps the largest disparity within 255.
      const top = Math.max(1, ndisp - 1);
      const scale = top > 255 ? Math.max(1, Math.min(256, Math.floor(65535 / top))) : Math.floor(25500 / top) / 100;
      const expected: Record<string, Uint8Array> = {
        'left.png': oracleEncodePng(scene.left),
        'disp.png': oracleEncodePng(oracleDisparityPngRaster(disparity, W, H, scale)),
        'disp-color.png': oracleEncodePng(oracleColorize(disparity, W, H, ndisp - 1)),
        'gt-color.png': oracleEncodePng(oracleColorize(Float32Array.from(scene.groundTruth!, (g) => (Number.isFinite(g) ? g : NaN)), W, H, ndisp - 1)),
        'error.png': oracleEncodePng(oracleErrorImage(scene.left, disparity, scene.groundTruth!, 1, scene.masks.nonocc)),
        'disp.pfm': oracleEncodePfm(W, H, oraclePfmValues(px)),
      };
      for (const [f, bytes] of Object.entries(expected)) expect([f, fs.readFileSync(path.join(dir, f)).equals(Buffer.from(bytes))]).toEqual([f, true]);
      const metrics = JSON.parse(fs.readFileSync(path.join(dir, 'metrics.json'), 'utf8'));
      expect(metrics.bad).toStrictEqual(JSON.parse(JSON.stringify(oracleBadTable(scene, px, [0.5, 1, 2, 4]))));
    }
  }

  test.each([['here', 0, false], ['on two threads', 2, false], ['on two threads, ahead', 2, true]] as const)('writeSceneOutputs, images drawn %s: a write that fails is reported by name once every other write has finished, and leaves no temporary file', async (_, threads, ahead) => {
    const writers = threads > 0 ? new ImageWriters(threads) : undefined;
    const W = 30;
    const H = 20;
    const scene = generateSyntheticScene({ width: W, height: H, ndisp: 6, seed: 7 });
    const energy = { data: 1, smoothness: 2, total: 3 };
    const r = {
      width: W, height: H, ndisp: 6, minDisp: 0, disparity: new Uint16Array(W * H).fill(2), params: { lambda: 2 }, init: { kind: 'wta' }, costScale: 1,
      times: { totalMs: 1 }, backend: 'bk', device: undefined, initialEnergy: energy, finalEnergy: energy, cycles: [],
    } as unknown as MatchResult;
    try {
      await failuresReported(scene, r, W, writers, ahead);
    } finally {
      writers?.close();
    }
  });

  async function failuresReported(scene: Scene, r: MatchResult, W: number, writers: ImageWriters | undefined, ahead: boolean): Promise<void> {
    for (const blocked of ['left.png', 'disp-color.png', 'error.png']) {
      const dir = path.join(tmp, `blocked-${blocked}-${writers ? 'threads' : 'here'}-${ahead}`);
      // A folder where the file should go: its rename fails.
      fs.mkdirSync(path.join(dir, blocked), { recursive: true });
      const drawnAhead = writers && ahead ? new SceneImagesAhead(dir, scene, writers) : undefined;
      await expect(writeSceneOutputs(dir, tmp, scene, r, undefined, writers, drawnAhead)).rejects.toThrow(new RegExp(`cannot write .*${blocked.replace('.', '\\.')}`));
      const files = fs.readdirSync(dir).sort();
      expect(files.filter((f) => f.startsWith('.'))).toEqual([]);
      // Every other image was written whole.
      for (const f of ['left.png', 'disp.png', 'disp-color.png', 'gt-color.png', 'error.png'].filter((f) => f !== blocked)) {
        expect(decodePng(fs.readFileSync(path.join(dir, f)), f).width).toBe(W);
      }
    }
  }
});
