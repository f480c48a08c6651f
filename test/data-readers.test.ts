import { seededRandom } from '../data/random';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { encodeJpeg } from './support/jpegFixture';
import { readImage, decodeImage, detectFormat, writePng, writePfm, writePnm, readDisparityFile, disparityFromRaster } from '../data/imageIO';
import { encodePnm, parsePnm } from '../data/pnm';
import { encodePfm, parsePfm } from '../data/pfm';
import { encodePng } from '../data/pngEncode';
import { sharedSamples, type Raster } from '../data/raster';
import { types } from 'util';
import { generateSyntheticScene } from '../data/synthetic';
import { loadScene } from '../data/scene';
import { expectedRaster, writeTestPng, type PngSpec } from './support/pngWriter';

/**
 * Image readers on files written here byte by byte (headers spelled out, so the
 * expected values are known independently of our writers), and every writer
 * read back.
 */

let dir: string;
beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-readers-')); });
afterAll(() => { fs.rmSync(dir, { recursive: true, force: true }); });

function put(name: string, bytes: Uint8Array | string): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, bytes);
  return p;
}

function randomSamples(n: number, maxval: number, seed: number): number[] {
  const rnd = seededRandom(seed);
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(Math.floor(rnd() * (maxval + 1)));
  // Always include both ends of the range.
  if (n >= 2) { out[0] = 0; out[n - 1] = maxval; }
  return out;
}

function pnmBytes(header: string, samples: number[], maxval: number): Uint8Array {
  const bps = maxval < 256 ? 1 : 2;
  const body = Buffer.alloc(samples.length * bps);
  samples.forEach((v, i) => { if (bps === 1) body[i] = v; else body.writeUInt16BE(v, 2 * i); });
  return Buffer.concat([Buffer.from(header, 'latin1'), body]);
}

describe('PGM/PPM (P5/P6) reader', () => {
  const headers = (magic: string, w: number, h: number, maxval: number): [string, string][] => [
    ['plain', `${magic}\n${w} ${h}\n${maxval}\n`],
    ['comment after magic', `${magic}\n# Created by Paint Shop Pro\n${w} ${h}\n${maxval}\n`],
    ['comment between width and height', `${magic} ${w}#w then h\n${h}\n${maxval}\n`],
    ['comment before maxval', `${magic}\n${w} ${h}\n# maxval next\n# and another\n${maxval}\n`],
    ['comments everywhere, tabs and CR', `${magic}#a\r${w}\t#b\n${h}#c\n#d\n${maxval}\r`],
  ];
  const cases: [string, number, number][] = [];
  for (const magic of ['P5', 'P6']) for (const maxval of [255, 1023, 65535, 7]) cases.push([magic, maxval, cases.length + 1]);

  test.each(cases)('%s maxval %d: exact samples under every header spelling', async (magic, maxval, seed) => {
    const channels = magic === 'P5' ? 1 : 3;
    const w = 5 + seed;
    const h = 3 + (seed % 4);
    const samples = randomSamples(w * h * channels, maxval, seed);
    for (const [label, header] of headers(magic, w, h, maxval)) {
      const file = put(`${magic}-${maxval}-${label.replace(/\W+/g, '_')}.pnm`, pnmBytes(header, samples, maxval));
      const r = await readImage(file);
      expect([label, r.width, r.height, r.channels, r.maxval]).toEqual([label, w, h, channels, maxval]);
      expect(Array.from(r.data)).toEqual(samples);
    }
  });

  test('16-bit samples are big-endian', () => {
    const r = parsePnm(Buffer.concat([Buffer.from('P5\n2 1\n65535\n'), Buffer.from([0x01, 0x02, 0xff, 0x00])]), 'x.pgm');
    expect(Array.from(r.data)).toEqual([0x0102, 0xff00]);
  });
});

/** Pf/PF bytes with rows given top to bottom, stored bottom to top in the chosen byte order. */
function pfmBytes(magic: 'Pf' | 'PF', w: number, h: number, rowsTopDown: number[][], little: boolean, scaleText?: string): Uint8Array {
  const header = Buffer.from(`${magic}\n${w} ${h}\n${scaleText ?? (little ? '-1.0' : '1.0')}\n`, 'latin1');
  const body = Buffer.alloc(rowsTopDown.flat().length * 4);
  let o = 0;
  for (let fileRow = 0; fileRow < h; fileRow++) {
    for (const v of rowsTopDown[h - 1 - fileRow]) {
      if (little) body.writeFloatLE(v, o); else body.writeFloatBE(v, o);
      o += 4;
    }
  }
  return Buffer.concat([header, body]);
}

function sameFloat(a: number, b: number): boolean {
  return Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
}

describe('PFM reader', () => {
  const rows = [
    [1.5, Infinity, -2.25],
    [NaN, 0, 63.04],
    [9.46, 1e-3, Infinity],
    [7, 8, 9],
  ];
  test.each([['little-endian (scale -1)', true, '-1.0'], ['big-endian (scale +1)', false, '1.0'], ['little, scale -0.003922', true, '-0.003922'], ['big, scale 2', false, '2']])(
    'grey %s: bottom-to-top rows, inf and NaN kept',
    async (label, little, scale) => {
      const file = put(`grey-${label.replace(/\W+/g, '_')}.pfm`, pfmBytes('Pf', 3, 4, rows, little, scale));
      const r = await readImage(file);
      // maxval: the scale the samples lie in (the largest finite one is 63.04: 0–255).
      expect([r.width, r.height, r.channels, r.maxval]).toEqual([3, 4, 1, 255]);
      const want = rows.flat().map((v) => Math.fround(v));
      const got = Array.from(r.data);
      for (let i = 0; i < want.length; i++) expect([i, sameFloat(got[i], want[i])]).toEqual([i, true]);
      // Top-left pixel is the first value of the last row in the file.
      expect(r.data[0]).toBe(1.5);
      expect(r.data[3 * 3 + 2]).toBe(9);
    },
  );

  test('RGB (PF) in both byte orders', async () => {
    const rnd = seededRandom(5);
    const w = 4;
    const h = 3;
    const rowsRgb = Array.from({ length: h }, () => Array.from({ length: 3 * w }, () => Math.fround(rnd() * 200 - 50)));
    for (const little of [true, false]) {
      const r = await readImage(put(`rgb-${little}.pfm`, pfmBytes('PF', w, h, rowsRgb, little)));
      expect([r.width, r.height, r.channels]).toEqual([w, h, 3]);
      expect(Array.from(r.data)).toEqual(rowsRgb.flat());
    }
  });

  test('readDisparityFile keeps PFM values in pixels and ignores the scale argument', async () => {
    const file = put('gt.pfm', pfmBytes('Pf', 3, 4, rows, true));
    const d = await readDisparityFile(file, 16);
    expect(d.data[0]).toBe(1.5);
    expect(d.data[1]).toBe(Infinity);
    expect(Number.isNaN(d.data[3])).toBe(true);
  });
});

/** Interleaved random samples of a colour type written by the test-only PNG writer, every filter in turn. */
function pngSpec(w: number, h: number, colourType: 0 | 2 | 4 | 6, bitDepth: 8 | 16, samples: number[], interlaced: boolean): PngSpec {
  return { width: w, height: h, colourType, bitDepth, samples, interlaced, filterOf: (row) => row % 5, idatChunks: 2 };
}

describe('PNG reader', () => {
  const shapes: [number, number][] = [[1, 1], [3, 2], [9, 7], [17, 11], [8, 8], [2, 13]];
  const types: (0 | 2 | 4 | 6)[] = [0, 2, 4, 6];

  test('8-bit grey, grey+alpha, RGB, RGBA (all filters, interlaced or not): exact, maxval 255', async () => {
    let seed = 100;
    for (const [w, h] of shapes) for (const ct of types) for (const interlace of [false, true]) {
      const spp = { 0: 1, 2: 3, 4: 2, 6: 4 }[ct];
      const samples = randomSamples(w * h * spp, 255, seed++);
      const spec = pngSpec(w, h, ct, 8, samples, interlace);
      const r = await decodeImage(writeTestPng(spec), `t${ct}.png`);
      expect([w, h, ct, interlace, r.width, r.height, r.channels, r.maxval]).toEqual([w, h, ct, interlace, w, h, ct === 0 || ct === 4 ? 1 : 3, 255]);
      expect(Array.from(r.data)).toEqual(expectedRaster(spec).data);
    }
  });

  // 16-bit PNGs come back exact with maxval 65535 (get-pixels would rescale them to 8 bits).
  test('16-bit grey, grey+alpha, RGB, RGBA (all filters, interlaced or not): exact samples, maxval 65535', async () => {
    let seed = 500;
    for (const [w, h] of shapes) for (const ct of types) for (const interlace of [false, true]) {
      const spp = { 0: 1, 2: 3, 4: 2, 6: 4 }[ct];
      const samples = randomSamples(w * h * spp, 65535, seed++);
      const spec = pngSpec(w, h, ct, 16, samples, interlace);
      const r = await decodeImage(writeTestPng(spec), `t${ct}.png`);
      expect([w, h, ct, interlace, r.width, r.height, r.channels, r.maxval]).toEqual([w, h, ct, interlace, w, h, ct === 0 || ct === 4 ? 1 : 3, 65535]);
      expect(Array.from(r.data)).toEqual(expectedRaster(spec).data);
    }
  });

  test('encodePng(r, 16) read back through readImage keeps every 16-bit value', async () => {
    for (const channels of [1, 3]) {
      const w = 23;
      const h = 9;
      const data = Float32Array.from(randomSamples(w * h * channels, 65535, channels));
      const file = put(`enc16-${channels}.png`, await encodePng({ width: w, height: h, channels, data, maxval: 65535 }, 16));
      const r = await readImage(file);
      expect([r.width, r.height, r.channels, r.maxval]).toEqual([w, h, channels, 65535]);
      expect(Array.from(r.data)).toEqual(Array.from(data));
      // A 16-bit disparity PNG keeps sub-pixel precision through readDisparityFile.
      if (channels === 1) {
        const d = await readDisparityFile(file, 256);
        for (let i = 0; i < w * h; i++) expect(d.data[i]).toBe(data[i] === 0 ? Infinity : data[i] / 256);
      }
    }
  });

  test('encodePng(r, 8) grey and RGB read back exactly', async () => {
    for (const channels of [1, 3]) {
      const data = Float32Array.from(randomSamples(31 * 17 * channels, 255, 40 + channels));
      const r = await readImage(put(`enc8-${channels}.png`, await encodePng({ width: 31, height: 17, channels, data, maxval: 255 }, 8)));
      expect([r.width, r.height, r.channels, r.maxval]).toEqual([31, 17, channels, 255]);
      expect(Array.from(r.data)).toEqual(Array.from(data));
    }
  });
});

describe('JPEG reader', () => {
  test('a JPEG written by save-pixels reads back close to the original', async () => {
    const w = 40;
    const h = 24;
    const px = new Uint8Array(w * h * 3);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
      // Smooth content, which JPEG keeps well.
      px[(y * w + x) * 3] = 40 + 4 * x;
      px[(y * w + x) * 3 + 1] = 30 + 6 * y;
      px[(y * w + x) * 3 + 2] = 128;
    }
    const file = put('smooth.jpg', await encodeJpeg(px, w, h, 95));
    expect(detectFormat(fs.readFileSync(file))).toBe('jpeg');
    const r = await readImage(file);
    expect([r.width, r.height, r.channels, r.maxval]).toEqual([w, h, 3, 255]);
    let sum = 0;
    let worst = 0;
    for (let i = 0; i < px.length; i++) {
      const e = Math.abs(r.data[i] - px[i]);
      sum += e;
      worst = Math.max(worst, e);
    }
    expect(sum / px.length).toBeLessThan(3);
    expect(worst).toBeLessThan(24);
  });
});

describe('samples into shared memory (a pair read for matching)', () => {
  test('PNG (8 and 16 bit, grey and RGB), PGM/PPM, PFM and JPEG decode into shared memory with the samples of a plain read; a scene\'s pair is read there', async () => {
    const rnd = seededRandom(91);
    const files: string[] = [];
    for (const [channels, maxval] of [[1, 255], [3, 255], [1, 65535], [3, 65535]] as const) {
      const r: Raster = { width: 7, height: 5, channels, maxval, data: Float32Array.from({ length: 35 * channels }, () => Math.floor(rnd() * (maxval + 1))) };
      files.push(put(`shared-${channels}-${maxval}.png`, await encodePng(r, maxval > 255 ? 16 : 8)));
      files.push(put(`shared-${channels}-${maxval}.pnm`, encodePnm(r)));
    }
    files.push(put('shared.pfm', encodePfm(4, 3, Float32Array.from({ length: 36 }, () => rnd()), 3)));
    const px = Uint8Array.from({ length: 16 * 8 * 3 }, (_, i) => (i * 7) & 255);
    files.push(put('shared.jpg', await encodeJpeg(px, 16, 8, 90)));
    for (const file of files) {
      const [plain, shared] = [await readImage(file), await readImage(file, sharedSamples)];
      expect(types.isSharedArrayBuffer(shared.data.buffer) && !types.isSharedArrayBuffer(plain.data.buffer)).toBe(true);
      expect({ file, ...shared, data: Array.from(shared.data) }).toEqual({ file, ...plain, data: Array.from(plain.data) });
    }
    const scene = generateSyntheticScene({ width: 24, height: 16, ndisp: 6, seed: 4 });
    const sceneDir = path.join(dir, 'shared-scene');
    fs.mkdirSync(sceneDir);
    await writePng(path.join(sceneDir, 'im0.png'), scene.left);
    await writePng(path.join(sceneDir, 'im1.png'), scene.right);
    const loaded = await loadScene(sceneDir, { ndisp: 6 });
    expect(types.isSharedArrayBuffer(loaded.left.data.buffer) && types.isSharedArrayBuffer(loaded.right.data.buffer)).toBe(true);
  });
});

describe('writers read back', () => {
  const rnd = seededRandom(77);
  const sizes: [number, number][] = [[1, 1], [5, 3], [64, 17], [13, 40]];

  test('writePng: grey and RGB, values rounded and clamped to 0..255', async () => {
    for (const [w, h] of sizes) for (const channels of [1, 3]) {
      const n = w * h * channels;
      const data = new Float32Array(n);
      for (let i = 0; i < n; i++) data[i] = rnd() * 300 - 20; // some out of range on both sides
      data[0] = NaN;
      const file = path.join(dir, `wp-${w}x${h}x${channels}.png`);
      await writePng(file, { width: w, height: h, channels, data, maxval: 255 });
      const r = await readImage(file);
      expect([r.width, r.height, r.channels, r.maxval]).toEqual([w, h, channels, 255]);
      const want = Array.from(data, (v) => (Number.isNaN(v) ? 0 : Math.min(255, Math.max(0, Math.round(v)))));
      expect(Array.from(r.data)).toEqual(want);
    }
  });

  test('writePfm: bit-exact floats with inf and NaN', async () => {
    for (const [w, h] of sizes) {
      const data = new Float32Array(w * h);
      for (let i = 0; i < data.length; i++) data[i] = Math.fround((rnd() - 0.3) * 1000);
      data[0] = Infinity;
      if (data.length > 2) { data[1] = NaN; data[2] = -Infinity; }
      const file = path.join(dir, `wf-${w}x${h}.pfm`);
      writePfm(file, w, h, data);
      const bytes = fs.readFileSync(file);
      expect(bytes.subarray(0, 2).toString()).toBe('Pf');
      const r = await readImage(file);
      const top = Math.max(0, ...Array.from(data).filter((v) => Number.isFinite(v)));
      expect([r.width, r.height, r.channels, r.maxval]).toEqual([w, h, 1, top <= 1 ? 1 : top <= 255 ? 255 : 65535]);
      for (let i = 0; i < data.length; i++) expect([i, sameFloat(r.data[i], data[i])]).toEqual([i, true]);
      // And the same bytes through the parser directly (encodePfm is what writePfm writes).
      expect(Buffer.from(encodePfm(w, h, data)).equals(bytes)).toBe(true);
    }
  });

  test('encodePfm RGB round trip', () => {
    const data = Float32Array.from({ length: 4 * 3 * 3 }, () => Math.fround(rnd() * 10));
    const r = parsePfm(encodePfm(4, 3, data, 3), 'rgb.pfm');
    expect([r.channels, Array.from(r.data)]).toEqual([3, Array.from(data)]);
  });

  test('encodePnm / writePnm: P5 and P6 at maxval 255, 1023 and 65535', async () => {
    for (const [w, h] of sizes) for (const channels of [1, 3]) for (const maxval of [255, 1023, 65535]) {
      const samples = randomSamples(w * h * channels, maxval, w * 1000 + h * 10 + channels + maxval);
      const raster: Raster = { width: w, height: h, channels, data: Float32Array.from(samples), maxval };
      const bytes = encodePnm(raster);
      expect(bytes.length).toBe(`P5\n${w} ${h}\n${maxval}\n`.length + samples.length * (maxval > 255 ? 2 : 1));
      const file = path.join(dir, `wn-${w}x${h}x${channels}-${maxval}.pnm`);
      writePnm(file, raster);
      const r = await readImage(file);
      expect([r.width, r.height, r.channels, r.maxval]).toEqual([w, h, channels, maxval]);
      expect(Array.from(r.data)).toEqual(samples);
    }
  });

  test('disparityFromRaster: gray / scale, 0 = unknown', () => {
    const r: Raster = { width: 3, height: 1, channels: 1, data: Float32Array.from([0, 16, 225]), maxval: 255 };
    expect(Array.from(disparityFromRaster(r, 16, 'd.pgm').data)).toEqual([Infinity, 1, 225 / 16]);
    expect(() => disparityFromRaster(r, 0, 'd.pgm')).toThrow(/d\.pgm: disparity scale must be a positive number, got 0/);
  });
});
