import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { deflateSync, inflateSync } from 'zlib';
import getPixels from 'get-pixels';
import { encodeJpeg } from './support/jpegFixture';
import { findMiddlebury } from './support/middleburyData';
import { FULL_TESTS } from './support/testScope';
import { seededRandom, type Rng } from '../data/random';
import { decodePng } from '../data/pngDecode';
import { encodePng, crc32, crc32ByTable, paethPredictor } from '../data/pngEncode';
import { readImage, decodeImage, encodePngBytes, writePng } from '../data/imageIO';
import type { Raster } from '../data/raster';
import {
  ALLOWED_DEPTHS, SAMPLES_PER_PIXEL, expectedRaster, findChunk, pngChunk, testCrc32, textbookPaeth, writeTestPng,
  type ColourType, type PngSpec,
} from './support/pngWriter';

/**
 * The PNG decoder (data/pngDecode.ts) against files from an independent
 * test-only writer (test/support/pngWriter.ts) and against get-pixels, the
 * decoder it replaced; the encoder (data/pngEncode.ts) by round trips; and the
 * one-line errors for malformed files.
 */

let dir: string;
beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-png-')); });
afterAll(() => { fs.rmSync(dir, { recursive: true, force: true }); });

function put(name: string, bytes: Uint8Array): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, bytes);
  return p;
}

/** get-pixels' reading of a PNG or JPEG, first `channels` of its RGBA samples, as the old imageIO path produced it. */
function viaGetPixels(bytes: Uint8Array, mime: string, channels: number): Promise<Raster> {
  return new Promise((resolve, reject) => {
    getPixels(Buffer.from(bytes), mime, (err, px) => {
      if (err) { reject(err); return; }
      const [width, height] = px.shape;
      const data = new Float32Array(width * height * channels);
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) {
          for (let c = 0; c < channels; c++) data[(y * width + x) * channels + c] = px.get(x, y, c);
        }
      }
      resolve({ width, height, channels, data, maxval: 255 });
    });
  });
}

const int = (rnd: Rng, lo: number, hi: number): number => lo + Math.floor(rnd() * (hi - lo + 1));

/**
 * A random image spec: sizes from 1×1 up to 21×13 (the first few cases are
 * 1×1, 1×h and w×1), random samples including both ends of the range, a
 * random filter on every row, the data over 1–3 IDAT chunks, and sometimes
 * ancillary chunks the decoder must skip. Palettes have 1..2^depth entries;
 * every third one is all grey (1-channel output).
 */
function randomSpec(rnd: Rng, colourType: ColourType, bitDepth: number, interlaced: boolean, k: number): PngSpec {
  const width = k === 0 || k === 1 ? 1 : int(rnd, 1, 21);
  const height = k === 0 || k === 2 ? 1 : int(rnd, 1, 13);
  const spp = SAMPLES_PER_PIXEL[colourType];
  let palette: number[] | undefined;
  let top = 2 ** bitDepth - 1;
  if (colourType === 3) {
    const entries = int(rnd, 1, 2 ** bitDepth);
    palette = [];
    for (let e = 0; e < entries; e++) {
      const v = int(rnd, 0, 255);
      palette.push(...(k % 3 === 0 ? [v, v, v] : [v, int(rnd, 0, 255), int(rnd, 0, 255)]));
    }
    top = entries - 1;
  }
  const samples = Array.from({ length: width * height * spp }, () => int(rnd, 0, top));
  samples[0] = top;
  if (samples.length > 1) samples[samples.length - 1] = 0;
  const filters = Array.from({ length: 64 }, () => int(rnd, 0, 4));
  const extraChunks = k % 4 === 3
    ? [{ type: 'tEXt', body: Buffer.from('Comment\0written by the test writer', 'latin1') }, { type: 'gAMA', body: Buffer.from([0, 0, 0xb1, 0x8f]) }]
    : undefined;
  return { width, height, colourType, bitDepth, samples, palette, interlaced, filterOf: (row) => filters[row % 64], idatChunks: int(rnd, 1, 3), extraChunks };
}

const COMBINATIONS: [ColourType, number, boolean][] = [];
for (const ct of [0, 2, 3, 4, 6] as ColourType[]) {
  for (const depth of ALLOWED_DEPTHS[ct]) for (const interlaced of [false, true]) COMBINATIONS.push([ct, depth, interlaced]);
}
const IMAGES_PER_COMBINATION = 24;

describe('decodePng: random images from the independent test writer', () => {
  test.each(COMBINATIONS)('colour type %d, %d-bit, interlaced %s: every sample as written', (ct, depth, interlaced) => {
    const rnd = seededRandom(ct * 1000 + depth * 10 + (interlaced ? 1 : 0));
    for (let k = 0; k < IMAGES_PER_COMBINATION; k++) {
      const spec = randomSpec(rnd, ct, depth, interlaced, k);
      const r = decodePng(writeTestPng(spec), 'random.png');
      const want = expectedRaster(spec);
      const label = `case ${k}: ${spec.width}x${spec.height}`;
      expect([label, r.width, r.height, r.channels, r.maxval]).toEqual([label, spec.width, spec.height, want.channels, want.maxval]);
      expect(r.data).toBeInstanceOf(Float32Array);
      expect([label, Array.from(r.data)]).toEqual([label, want.data]);
    }
  });

  test('a 17x11 interlaced RGB image: all seven passes hold pixels, rows cycle through the five filters', () => {
    const rnd = seededRandom(7);
    const spec: PngSpec = {
      width: 17, height: 11, colourType: 2, bitDepth: 8, interlaced: true,
      samples: Array.from({ length: 17 * 11 * 3 }, () => int(rnd, 0, 255)), filterOf: (row) => row % 5,
    };
    expect(Array.from(decodePng(writeTestPng(spec), 'passes.png').data)).toEqual(expectedRaster(spec).data);
  });

  const LOW_DEPTHS = COMBINATIONS.filter(([, depth]) => depth <= 8);
  test.each(LOW_DEPTHS)('colour type %d, %d-bit, interlaced %s: identical to get-pixels (the previous decoder)', async (ct, depth, interlaced) => {
    const rnd = seededRandom(50000 + ct * 1000 + depth * 10 + (interlaced ? 1 : 0));
    for (let k = 0; k < IMAGES_PER_COMBINATION; k++) {
      const spec = randomSpec(rnd, ct, depth, interlaced, k);
      const png = writeTestPng(spec);
      const ours = await decodeImage(png, 'random.png');
      const old = await viaGetPixels(png, 'image/png', ours.channels);
      expect([k, old.width, old.height]).toEqual([k, ours.width, ours.height]);
      expect([k, Array.from(ours.data)]).toEqual([k, Array.from(old.data)]);
    }
  });

  test('1/2/4-bit grey is scaled as pngjs scales it: 0..1 → 0,255; 0..3 → 0,85,170,255; 0..15 → multiples of 17', () => {
    for (const depth of [1, 2, 4]) {
      const top = 2 ** depth - 1;
      const samples = Array.from({ length: top + 1 }, (_, v) => v);
      const r = decodePng(writeTestPng({ width: top + 1, height: 1, colourType: 0, bitDepth: depth, samples }), 'grey.png');
      expect(Array.from(r.data)).toEqual(samples.map((v) => (v * 255) / top));
    }
  });

  test('alpha and transparency chunks are dropped: a tRNS colour key leaves the samples as stored', () => {
    // get-pixels (pngjs) zeroes the colour of pixels matching a tRNS key; imageIO's contract is "alpha dropped",
    // as its 16-bit path always had it, so the stored grey value comes back.
    const spec: PngSpec = { width: 3, height: 1, colourType: 0, bitDepth: 8, samples: [7, 200, 7], extraChunks: [{ type: 'tRNS', body: Buffer.from([0, 7]) }] };
    expect(Array.from(decodePng(writeTestPng(spec), 'key.png').data)).toEqual([7, 200, 7]);
  });
});

const middlebury = findMiddlebury();
if (!middlebury) {
  test.skip('Middlebury PNGs against get-pixels: data not found (set STEREO_DATA or place ../shared/data beside the project)', () => undefined);
} else {
  describe('the real Middlebury PNGs', () => {
    const root = middlebury;
    const all = fs.readdirSync(root)
      .filter((d) => fs.statSync(path.join(root, d)).isDirectory())
      .flatMap((d) => fs.readdirSync(path.join(root, d)).filter((f) => f.endsWith('.png')).map((f) => path.join(d, f)))
      .sort();
    /** A PNG's kind: its folder (one scene, one source), bit depth and colour type (IHDR's bytes 24 and 25). */
    const kindOf = (file: string): string => {
      const head = Buffer.alloc(26);
      const fd = fs.openSync(path.join(root, file), 'r');
      try {
        fs.readSync(fd, head, 0, 26, 0);
      } finally {
        fs.closeSync(fd);
      }
      return `${path.dirname(file)} ${head[24]} ${head[25]}`;
    };
    // Every PNG under STEREOCUT_FULL_TESTS=1; by default the first of each kind (each scene's images and its maps or masks).
    const files = FULL_TESTS ? all : all.filter((f, i) => all.findIndex((g) => kindOf(g) === kindOf(f)) === i);

    test('there are PNGs to compare', () => {
      expect(files.length).toBeGreaterThan(0);
    });

    test.each(files)('%s: identical to get-pixels', async (file) => {
      const bytes = fs.readFileSync(path.join(root, file));
      const ours = await readImage(path.join(root, file));
      const old = await viaGetPixels(bytes, 'image/png', ours.channels);
      expect([ours.width, ours.height, ours.maxval]).toEqual([old.width, old.height, 255]);
      let differing = 0;
      for (let i = 0; i < ours.data.length; i++) if (ours.data[i] !== old.data[i]) differing++;
      expect(differing).toBe(0);
    });
  });
}

/** The IDAT data's compressed size and the filter byte of every row of a non-interlaced PNG (read with zlib, not the decoder under test). */
function idatStream(png: Uint8Array, rowBytes: number): { compressed: number; filters: number[] } {
  const buf = Buffer.from(png);
  const parts: Buffer[] = [];
  for (let pos = 8; pos < buf.length; pos += 12 + buf.readUInt32BE(pos)) {
    if (buf.toString('latin1', pos + 4, pos + 8) === 'IDAT') parts.push(buf.subarray(pos + 8, pos + 8 + buf.readUInt32BE(pos)));
  }
  const compressed = Buffer.concat(parts);
  const raw = inflateSync(compressed);
  const filters: number[] = [];
  for (let pos = 0; pos < raw.length; pos += rowBytes + 1) filters.push(raw[pos]);
  return { compressed: compressed.length, filters };
}

/** A raster of smooth gradients plus noise (a photograph for the encoder: far more than 256 distinct pixel values). */
function photoLike(width: number, height: number, channels: number, top: number, rnd: Rng): Raster {
  const data = new Float32Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < channels; c++) {
        const v = ((x * (c + 2) + y * 3) / (width + height)) * top * 0.8 + rnd() * top * 0.2;
        data[(y * width + x) * channels + c] = v;
      }
    }
  }
  return { width, height, channels, data, maxval: top };
}

/** A raster of at most `levels` values per channel in flat bands (a disparity or mask image for the encoder). */
function bandsLike(width: number, height: number, channels: number, top: number, levels: number, rnd: Rng): Raster {
  const data = new Float32Array(width * height * channels);
  const colours = Array.from({ length: levels }, () => Array.from({ length: channels }, () => int(rnd, 0, top)));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const colour = colours[Math.floor(((x + (y >> 1)) / (width + 1)) * levels) % levels];
      for (let c = 0; c < channels; c++) data[(y * width + x) * channels + c] = colour[c];
    }
  }
  return { width, height, channels, data, maxval: top };
}

const rounded = (data: Float32Array, top: number): number[] =>
  Array.from(data, (v) => (Number.isNaN(v) ? 0 : Math.min(top, Math.max(0, Math.round(v)))));

describe('encodePng round trips', () => {
  const sizes: [number, number][] = [[1, 1], [1, 9], [9, 1], [13, 7], [37, 23], [64, 40]];

  test.each([[1, 8], [3, 8], [1, 16], [3, 16]] as [number, 8 | 16][])('%d channel(s), %d-bit: photo-like and banded images read back exactly', async (channels, depth) => {
    const top = depth === 8 ? 255 : 65535;
    const rnd = seededRandom(channels * 100 + depth);
    for (const [w, h] of sizes) {
      for (const raster of [photoLike(w, h, channels, top, rnd), bandsLike(w, h, channels, top, 5, rnd)]) {
        // Out-of-range, fractional and NaN samples are rounded and clamped.
        raster.data[0] = NaN;
        if (raster.data.length > 2) { raster.data[1] = -3.5; raster.data[2] = top + 100; }
        const png = await encodePng(raster, depth);
        const r = decodePng(png, 'round.png');
        expect([w, h, r.width, r.height, r.channels, r.maxval]).toEqual([w, h, w, h, channels, top]);
        expect(Array.from(r.data)).toEqual(rounded(raster.data, top));
      }
    }
  });

  test('8-bit output is read identically by get-pixels (the rows are valid PNG for other decoders)', async () => {
    const rnd = seededRandom(31);
    for (const channels of [1, 3]) {
      for (const raster of [photoLike(45, 30, channels, 255, rnd), bandsLike(45, 30, channels, 255, 6, rnd)]) {
        const png = await encodePng(raster, 8);
        const old = await viaGetPixels(png, 'image/png', channels);
        expect(Array.from(old.data)).toEqual(rounded(raster.data, 255));
      }
    }
  });

  test('photographs get per-row filters; banded images come out no larger than unfiltered', async () => {
    const rnd = seededRandom(5);
    const photo = photoLike(120, 60, 3, 255, rnd);
    const photoFilters = new Set(idatStream(await encodePng(photo, 8), 120 * 3).filters);
    expect(photoFilters.size).toBeGreaterThan(1);
    for (const channels of [1, 3]) {
      const bands = bandsLike(120, 60, channels, 255, 8, rnd);
      const png = await encodePng(bands, 8);
      const { compressed, filters } = idatStream(png, 120 * channels);
      expect(filters.length).toBe(60);
      const unfiltered = Buffer.alloc(60 * (120 * channels + 1));
      rounded(bands.data, 255).forEach((v, i) => { unfiltered[Math.floor(i / (120 * channels)) * (120 * channels + 1) + 1 + (i % (120 * channels))] = v; });
      expect(compressed).toBeLessThanOrEqual(deflateSync(unfiltered).length);
      expect(Array.from(decodePng(png, 'bands.png').data)).toEqual(rounded(bands.data, 255));
    }
  });

  test('encodePngBytes and writePng: 3 channels as 8-bit RGB (colour type 2), 1 channel as 8-bit grey', async () => {
    const rnd = seededRandom(8);
    for (const channels of [1, 3]) {
      const raster = photoLike(19, 11, channels, 255, rnd);
      const bytes = Buffer.from(await encodePngBytes(raster));
      expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20), bytes[24], bytes[25], bytes[28]]).toEqual([19, 11, 8, channels === 3 ? 2 : 0, 0]);
      const file = path.join(dir, `written-${channels}.png`);
      await writePng(file, raster);
      expect(fs.readFileSync(file).equals(bytes)).toBe(true);
      expect(Array.from((await readImage(file)).data)).toEqual(rounded(raster.data, 255));
    }
  });
});

describe('shared PNG arithmetic', () => {
  test('crc32 (native where Node has it) and the table version agree with an independent CRC and the check value', () => {
    const check = Buffer.from('123456789', 'latin1');
    expect([crc32(check), crc32ByTable(check), testCrc32(check)]).toEqual([0xcbf43926, 0xcbf43926, 0xcbf43926]);
    const rnd = seededRandom(12);
    for (let k = 0; k < 50; k++) {
      const bytes = Uint8Array.from({ length: int(rnd, 0, 300) }, () => int(rnd, 0, 255));
      const start = int(rnd, 0, bytes.length);
      const end = int(rnd, start, bytes.length);
      const want = testCrc32(bytes.subarray(start, end));
      expect([k, crc32(bytes, start, end), crc32ByTable(bytes, start, end)]).toEqual([k, want, want]);
    }
  });

  test('the branch-free Paeth predictor equals the textbook one for every pair of differences', () => {
    // Both predictors pick a, b or c by the distances |b − c|, |a − c| and |a + b − 2c| alone, so every
    // difference pair (a − c, b − c), met once with some valid c, covers every case of the choice.
    let mismatches = 0;
    for (let da = -255; da <= 255; da++) {
      for (let db = -255; db <= 255; db++) {
        const c = Math.max(0, -da, -db);
        if (c + Math.max(da, db) > 255) continue; // no bytes a, b, c have these differences
        if (paethPredictor(c + da, c + db, c) !== textbookPaeth(c + da, c + db, c)) mismatches++;
      }
    }
    expect(mismatches).toBe(0);
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** readImage fails with one line that starts with the file name and matches `re`. */
async function expectFileError(file: string, re: RegExp): Promise<void> {
  let err: unknown;
  try { await readImage(file); } catch (e) { err = e; }
  expect(err).toBeInstanceOf(Error);
  const msg = (err as Error).message;
  expect(msg).not.toContain('\n');
  expect(msg).toMatch(new RegExp(`^${escape(file)}: `));
  expect(msg).toMatch(re);
}

/** A copy of `png` whose IHDR body is patched by `patch` (CRC recomputed, so only the field is wrong). */
function withIhdr(png: Buffer, patch: (body: Buffer) => void): Buffer {
  const body = Buffer.from(png.subarray(16, 29));
  patch(body);
  return Buffer.concat([png.subarray(0, 8), pngChunk('IHDR', body), png.subarray(33)]);
}

/** `png` with a chunk inserted right after IHDR. */
function withChunkAfterIhdr(png: Buffer, type: string, body: Uint8Array): Buffer {
  return Buffer.concat([png.subarray(0, 33), pngChunk(type, body), png.subarray(33)]);
}

describe('malformed PNGs: one-line errors naming the file', () => {
  const rgb: PngSpec = {
    width: 9, height: 7, colourType: 2, bitDepth: 8,
    samples: Array.from({ length: 9 * 7 * 3 }, (_, i) => (i * 37) % 256), filterOf: (row) => row % 5, idatChunks: 2,
  };
  const palette2: PngSpec = {
    width: 9, height: 7, colourType: 3, bitDepth: 2, palette: [0, 0, 0, 90, 90, 90, 255, 0, 0],
    samples: Array.from({ length: 63 }, (_, i) => i % 3), interlaced: true, filterOf: (row) => (row * 3) % 5,
  };
  const rgba16: PngSpec = {
    width: 5, height: 4, colourType: 6, bitDepth: 16, samples: Array.from({ length: 5 * 4 * 4 }, (_, i) => (i * 7919) % 65536), filterOf: () => 4,
  };

  test('the well-formed originals decode', async () => {
    for (const [name, spec] of [['rgb', rgb], ['palette2', palette2], ['rgba16', rgba16]] as const) {
      expect(Array.from((await readImage(put(`${name}.png`, writeTestPng(spec)))).data)).toEqual(expectedRaster(spec).data);
    }
  });

  test('cut short anywhere: truncated or corrupt, never a partial image', async () => {
    for (const [name, spec] of [['rgb', rgb], ['palette2', palette2], ['rgba16', rgba16]] as const) {
      const png = writeTestPng(spec);
      for (let cut = 8; cut < png.length; cut += 3) {
        await expectFileError(put(`${name}-cut${cut}.png`, png.subarray(0, cut)), /truncated PNG|corrupt PNG/);
      }
    }
  });

  test('a bad CRC in a critical chunk is an error; in an ancillary chunk it is ignored', async () => {
    const png = writeTestPng(rgb);
    for (const type of ['IHDR', 'IDAT', 'IEND']) {
      const bad = Buffer.from(png);
      const pos = findChunk(bad, type);
      bad[pos + 8 + bad.readUInt32BE(pos) + 3] ^= 1;
      await expectFileError(put(`crc-${type}.png`, bad), new RegExp(`corrupt PNG \\(CRC mismatch in chunk ${type}\\)`));
    }
    const withPalette = writeTestPng(palette2);
    const pos = findChunk(withPalette, 'PLTE');
    withPalette[pos + 8] ^= 0x40;
    await expectFileError(put('crc-PLTE.png', withPalette), /CRC mismatch in chunk PLTE/);
    const text = withChunkAfterIhdr(png, 'tEXt', Buffer.from('Title\0x', 'latin1'));
    text[33 + 12 + 7 - 1] ^= 1; // the CRC's last byte
    expect(Array.from((await readImage(put('crc-tEXt.png', text))).data)).toEqual(expectedRaster(rgb).data);
  });

  test('a row filter byte above 4', async () => {
    for (const [spec, row, value] of [[rgb, 3, 5], [palette2, 6, 255], [rgba16, 0, 9]] as const) {
      const file = put(`filter-${value}.png`, writeTestPng({ ...spec, filterByte: { row, value } }));
      await expectFileError(file, new RegExp(`corrupt PNG \\(row filter ${value}\\)`));
    }
  });

  test('image data shorter than the header needs', async () => {
    for (const [spec, drop] of [[rgb, 1], [rgb, 100], [palette2, 1], [rgba16, 41]] as const) {
      const file = put(`short-${drop}.png`, writeTestPng({ ...spec, dropImageBytes: drop }));
      await expectFileError(file, new RegExp(`corrupt PNG \\(image data shorter than ${spec.width}x${spec.height} needs\\)`));
    }
    const empty = put('empty-idat.png', withIhdr(writeTestPng(rgb), (b) => b.writeUInt32BE(10, 0)));
    await expectFileError(empty, /image data shorter than 10x7 needs/);
  });

  test('a palette index beyond the palette', async () => {
    const at8: PngSpec = { width: 4, height: 2, colourType: 3, bitDepth: 8, palette: [1, 2, 3, 4, 5, 6, 7, 8, 9], samples: [0, 1, 2, 0, 1, 2, 3, 0] };
    await expectFileError(put('index8.png', writeTestPng(at8)), /corrupt PNG \(palette index 3 outside the 3-entry palette\)/);
    const at2: PngSpec = { ...palette2, palette: [0, 0, 0, 90, 90, 90], samples: palette2.samples };
    await expectFileError(put('index2.png', writeTestPng(at2)), /palette index 2 outside the 2-entry palette/);
  });

  test('header and chunk-list faults', async () => {
    const png = writeTestPng(rgb);
    const cases: [string, Buffer, RegExp][] = [
      ['no-plte', writeTestPng({ ...palette2, palette: undefined }), /corrupt PNG \(palette image without PLTE chunk\)/],
      ['plte-length', withChunkAfterIhdr(writeTestPng({ ...palette2, palette: undefined }), 'PLTE', Buffer.alloc(7)), /corrupt PNG \(PLTE length 7\)/],
      ['depth', withIhdr(png, (b) => { b[8] = 4; }), /corrupt PNG \(colour type 2 cannot have 4-bit samples\)/],
      ['depth16-palette', withIhdr(writeTestPng(palette2), (b) => { b[8] = 16; }), /colour type 3 cannot have 16-bit samples/],
      ['colour-type', withIhdr(png, (b) => { b[9] = 5; }), /corrupt PNG \(colour type 5\)/],
      ['compression', withIhdr(png, (b) => { b[10] = 1; }), /corrupt PNG \(compression method 1\)/],
      ['filter-method', withIhdr(png, (b) => { b[11] = 1; }), /corrupt PNG \(filter method 1\)/],
      ['interlace', withIhdr(png, (b) => { b[12] = 2; }), /corrupt PNG \(interlace method 2\)/],
      ['zero-width', withIhdr(png, (b) => b.writeUInt32BE(0, 0)), /PNG size 0x7 is empty/],
      ['critical', withChunkAfterIhdr(png, 'ABCD', Buffer.from([1])), /corrupt PNG \(unexpected critical chunk ABCD\)/],
      ['second-ihdr', withChunkAfterIhdr(png, 'IHDR', png.subarray(16, 29)), /unexpected critical chunk IHDR/],
      ['not-letters', Buffer.concat([png.subarray(0, 33), Buffer.from([0, 0, 0, 0, 0x41, 0x0a, 0x42, 0x43, 0, 0, 0, 0]), png.subarray(33)]), /corrupt PNG \(chunk type at byte 37 is not four letters\)/],
      ['first-not-ihdr', Buffer.concat([png.subarray(0, 8), pngChunk('gAMA', Buffer.from([0, 0, 0xb1, 0x8f])), png.subarray(8)]), /corrupt PNG \(first chunk is not IHDR\)/],
      ['no-idat', Buffer.concat([png.subarray(0, 33), pngChunk('IEND', Buffer.alloc(0))]), /corrupt PNG \(no IDAT chunk\)/],
      ['not-zlib', Buffer.concat([png.subarray(0, 33), pngChunk('IDAT', Buffer.from('not a zlib stream')), pngChunk('IEND', Buffer.alloc(0))]), /corrupt PNG \(image data does not inflate: /],
    ];
    for (const [name, bytes, re] of cases) await expectFileError(put(`${name}.png`, bytes), re);
    // An unknown ancillary chunk is skipped.
    const ancillary = withChunkAfterIhdr(png, 'abCd', Buffer.from([1, 2, 3]));
    expect(Array.from((await readImage(put('ancillary.png', ancillary))).data)).toEqual(expectedRaster(rgb).data);
  });
});

describe('loading', () => {
  test('importing data/imageIO loads neither get-pixels, save-pixels nor pngjs; the first JPEG loads get-pixels', async () => {
    const loaded: string[] = [];
    let io: typeof import('../data/imageIO') | undefined;
    jest.isolateModules(() => {
      for (const name of ['get-pixels', 'save-pixels', 'pngjs']) {
        jest.doMock(name, () => {
          loaded.push(name);
          return jest.requireActual(name);
        });
      }
      io = require('../data/imageIO') as typeof import('../data/imageIO');
    });
    const imageIO = io as typeof import('../data/imageIO');
    expect(loaded).toEqual([]);
    await imageIO.decodeImage(writeTestPng(rgbSmall), 'a.png');
    imageIO.encodePngBytes({ width: 2, height: 1, channels: 3, data: new Float32Array(6), maxval: 255 });
    expect(loaded).toEqual([]);
    const jpeg = await jpegBytes();
    const r = await imageIO.decodeImage(jpeg, 'a.jpg');
    expect([r.width, r.height, r.channels]).toEqual([8, 8, 3]);
    expect(loaded).toContain('get-pixels');
    expect(loaded).not.toContain('save-pixels');
  });
});

const rgbSmall: PngSpec = { width: 2, height: 2, colourType: 2, bitDepth: 8, samples: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] };

/** A small JPEG (test/support/jpegFixture.ts). */
const jpegBytes = (): Promise<Buffer> => encodeJpeg(Uint8Array.from({ length: 8 * 8 * 3 }, (_, i) => (i * 11) % 256), 8, 8);
