import { seededRandom } from '../data/random';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { encodeJpeg } from './support/jpegFixture';
import { readImage, writePng, writePfm, writePnm, readDisparityFile } from '../data/imageIO';
import { writeFileAtomic } from '../data/atomicWrite';
import { encodePng } from '../data/pngEncode';
import { encodePnm } from '../data/pnm';
import { encodePfm } from '../data/pfm';
import { readCalib } from '../data/calib';

/** Every bad input is a one-line error naming the file; failed writes leave nothing behind. */

let dir: string;
beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-bad-')); });
afterAll(() => { fs.rmSync(dir, { recursive: true, force: true }); });

function put(name: string, bytes: Uint8Array | string): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, bytes);
  return p;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The error is one line, starts with the file name, and matches `re`. */
async function expectFileError(p: Promise<unknown>, file: string, re: RegExp): Promise<void> {
  let err: unknown;
  try { await p; } catch (e) { err = e; }
  expect(err).toBeInstanceOf(Error);
  const msg = (err as Error).message;
  expect(msg).not.toContain('\n');
  expect(msg).toMatch(new RegExp(`^${escape(file)}: `));
  expect(msg).toMatch(re);
}

function jpegBytes(): Promise<Buffer> {
  const rnd = seededRandom(3);
  return encodeJpeg(Uint8Array.from({ length: 16 * 16 * 3 }, () => Math.floor(rnd() * 256)), 16, 16);
}

const rgb = { width: 12, height: 7, channels: 3, data: Float32Array.from({ length: 12 * 7 * 3 }, (_, i) => (i * 37) % 256), maxval: 255 };
const grey = { width: 12, height: 7, channels: 1, data: Float32Array.from({ length: 12 * 7 }, (_, i) => (i * 37) % 256), maxval: 255 };

describe('reading bad files', () => {
  test('missing file and a folder', async () => {
    const missing = path.join(dir, 'nope.png');
    await expectFileError(readImage(missing), missing, /file not found/);
    await expectFileError(readDisparityFile(missing), missing, /file not found/);
    await expectFileError(readImage(dir), dir, /is a folder, not a file/);
    expect(() => readCalib(missing)).toThrow(new RegExp(`^${escape(missing)}: file not found$`));
  });

  test('PNG, PPM, PGM, PFM and JPEG cut short at many points', async () => {
    const full: [string, Buffer, RegExp][] = [
      ['png', Buffer.from(await encodePng(rgb, 8)), /truncated PNG|corrupt PNG|cannot decode/],
      ['png16', Buffer.from(await encodePng(grey, 16)), /truncated PNG|corrupt PNG|cannot decode/],
      ['ppm', Buffer.from(encodePnm(rgb)), /truncated PNM|PNM header ends|malformed|not followed by whitespace/],
      ['pgm', Buffer.from(encodePnm({ ...grey, maxval: 65535 })), /truncated PNM|PNM header ends|malformed|not followed by whitespace/],
      ['pfm', Buffer.from(encodePfm(12, 7, grey.data)), /truncated PFM|PFM header ends|not followed by whitespace|not a non-zero number/],
      ['jpg', await jpegBytes(), /truncated JPEG/],
    ];
    for (const [kind, bytes, re] of full) {
      // The whole file is fine...
      await readImage(put(`ok.${kind}`, bytes));
      // ...every shorter prefix that still has its magic is an error naming the file.
      const cuts = new Set<number>([bytes.length - 1, bytes.length - 2, bytes.length >> 1, 10, 20, 33, 40, 60]);
      for (const cut of cuts) {
        if (cut < 8 || cut >= bytes.length) continue;
        const file = put(`cut${cut}.${kind}`, bytes.subarray(0, cut));
        await expectFileError(readImage(file), file, re);
      }
    }
  });

  test('PNM and PFM with extra bytes after the pixels', async () => {
    const ppm = put('long.ppm', Buffer.concat([Buffer.from(encodePnm(rgb)), Buffer.from([1, 2, 3])]));
    await expectFileError(readImage(ppm), ppm, /3 bytes after the 12x7x3 pixel data/);
    const pfm = put('long.pfm', Buffer.concat([Buffer.from(encodePfm(12, 7, grey.data)), Buffer.from([0, 0, 0, 0])]));
    await expectFileError(readImage(pfm), pfm, /4 bytes after/);
  });

  test('garbage bytes of many lengths are an unknown format', async () => {
    const rnd = seededRandom(9);
    for (let k = 0; k < 20; k++) {
      const bytes = Buffer.from(Array.from({ length: k * 13 }, () => Math.floor(rnd() * 256)));
      bytes[0] = 0x41 + k; // never 'P', 0x89 or 0xFF, so no magic matches
      const file = put(`garbage${k}.png`, k === 0 ? Buffer.alloc(0) : bytes);
      await expectFileError(readImage(file), file, /unknown image format/);
    }
  });

  test('PNG with a valid signature but corrupt data', async () => {
    const good = Buffer.from(await encodePng(rgb, 8));
    // Flip bytes inside the compressed image data: the chunks still fit, the decoder must refuse.
    const bad = Buffer.from(good);
    const idat = bad.indexOf('IDAT');
    for (let i = idat + 6; i < idat + 16; i++) bad[i] ^= 0x5a;
    const file = put('corrupt.png', bad);
    await expectFileError(readImage(file), file, /cannot decode|corrupt/);
    const good16 = Buffer.from(await encodePng(grey, 16));
    const bad16 = Buffer.from(good16);
    const idat16 = bad16.indexOf('IDAT');
    for (let i = idat16 + 6; i < idat16 + 16; i++) bad16[i] ^= 0x5a;
    const file16 = put('corrupt16.png', bad16);
    await expectFileError(readImage(file16), file16, /cannot decode|corrupt/);
  });

  test.each([
    ['P6\n12 x\n255\n', /PNM header has 'x' where the height should be/],
    ['P6\n12 7\n0\n', /PNM maxval 0 outside 1\.\.65535/],
    ['P6\n12 7\n70000\n', /PNM maxval 70000 outside 1\.\.65535/],
    ['P6\n0 7\n255\n', /PNM size 0x7 is empty/],
    ['P3\n12 7\n255\n', /ASCII PNM \(P3\) is not supported/],
    ['P7\n12 7\n255\n', /unsupported PNM type 'P7'/],
    ['P612 7\n255\n', /malformed PNM magic/],
    ['P5\n2 1\n9\n\x05\x0a', /PNM sample 10 exceeds maxval 9/],
    ['P5\n2 1\n255', /PNM header not followed by whitespace/],
  ])('PNM with a bad header %j', async (header, re) => {
    const file = put(`bad-${Buffer.from(header).toString('hex').slice(0, 24)}.ppm`, Buffer.from(header, 'latin1'));
    await expectFileError(readImage(file), file, re);
  });

  test.each([
    ['Pf\n3 x\n-1\n', /PFM size '3 x' is not two integers/],
    ['Pf\n3 2\n0\n', /PFM scale '0' is not a non-zero number/],
    ['Pf\n3 2\nabc\n', /PFM scale 'abc'/],
    ['Pf\n0 2\n-1\n', /PFM size 0x2 is empty/],
  ])('PFM with a bad header %j', async (header, re) => {
    const file = put(`bad-${Buffer.from(header).toString('hex').slice(0, 24)}.pfm`, Buffer.from(header, 'latin1'));
    await expectFileError(readImage(file), file, re);
  });
});

/** Names in `d` other than those listed in `before`. */
function newEntries(d: string, before: string[]): string[] {
  return fs.readdirSync(d).filter((e) => !before.includes(e));
}

describe('writeFileAtomic and the writers never leave partial files', () => {
  test('target folder missing: error naming the file, nothing created', () => {
    const target = path.join(dir, 'no-such-folder', 'out.png');
    const before = fs.readdirSync(dir);
    expect(() => writeFileAtomic(target, 'x')).toThrow(new RegExp(`^cannot write ${escape(target)}: .*ENOENT`));
    expect(fs.existsSync(path.dirname(target))).toBe(false);
    expect(newEntries(dir, before)).toEqual([]);
  });

  test('target is a folder: error, the folder untouched, no temporary file left', () => {
    const target = path.join(dir, 'a-folder');
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, 'inside.txt'), 'keep');
    const before = fs.readdirSync(dir);
    expect(() => writeFileAtomic(target, Buffer.alloc(1000, 7))).toThrow(new RegExp(`^cannot write ${escape(target)}: `));
    expect(fs.statSync(target).isDirectory()).toBe(true);
    expect(fs.readdirSync(target)).toEqual(['inside.txt']);
    expect(newEntries(dir, before)).toEqual([]);
  });

  test('a write that fails midway (disk full) keeps the old content and removes the temporary file', () => {
    const sub = fs.mkdtempSync(path.join(dir, 'full-'));
    const target = path.join(sub, 'disp.pfm');
    fs.writeFileSync(target, 'old content');
    const realWrite = fs.writeSync;
    let calls = 0;
    // Write part of the data for real, then fail the way a full disk does.
    // The plain module object (the namespace import above only has getters, which cannot be spied on).
    const nodeFs = require('fs') as typeof fs;
    const spy = jest.spyOn(nodeFs, 'writeSync').mockImplementation(((fd: number, buf: Uint8Array, off: number, len: number) => {
      if (++calls === 1) return realWrite(fd, buf, off, Math.min(len, 100));
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    }) as unknown as typeof fs.writeSync);
    try {
      expect(() => writeFileAtomic(target, Buffer.alloc(5000, 1))).toThrow(new RegExp(`^cannot write ${escape(target)}: ENOSPC`));
    } finally {
      spy.mockRestore();
    }
    expect(calls).toBe(2);
    expect(fs.readFileSync(target, 'utf8')).toBe('old content');
    expect(fs.readdirSync(sub)).toEqual(['disp.pfm']);
  });

  test('successful writes replace the file whole and leave no temporary file', () => {
    const sub = fs.mkdtempSync(path.join(dir, 'ok-'));
    const target = path.join(sub, 'out.bin');
    for (let k = 0; k < 5; k++) {
      const bytes = Buffer.alloc(1000 * (5 - k), k);
      writeFileAtomic(target, bytes);
      expect(fs.readFileSync(target).equals(bytes)).toBe(true);
      expect(fs.readdirSync(sub)).toEqual(['out.bin']);
    }
    writeFileAtomic(target, 'text');
    expect(fs.readFileSync(target, 'utf8')).toBe('text');
  });

  test('writePng, writePfm, writePnm: bad rasters or bad targets write nothing', async () => {
    const sub = fs.mkdtempSync(path.join(dir, 'writers-'));
    const out = (n: string): string => path.join(sub, n);
    await expect(writePng(out('a.png'), { ...rgb, channels: 2 })).rejects.toThrow(new RegExp(`^cannot write ${escape(out('a.png'))}: .*channels must be 1 or 3`));
    await expect(writePng(out('b.png'), { ...rgb, data: new Float32Array(5) })).rejects.toThrow(/^cannot write .*b\.png: .*data length 5/);
    await expect(writePng(out('b.png'), { ...grey, data: new Float32Array(5) })).rejects.toThrow(/^cannot write .*b\.png: .*data length 5/);
    expect(() => writePfm(out('c.pfm'), 4, 4, new Float32Array(15))).toThrow(/^cannot write .*c\.pfm: .*data length 15/);
    expect(() => writePfm(out('c.pfm'), 0, 4, new Float32Array(0))).toThrow(/^cannot write .*c\.pfm: .*bad size 0x4/);
    expect(() => writePnm(out('d.pgm'), { ...grey, maxval: 70000 })).toThrow(/^cannot write .*d\.pgm: .*maxval 70000/);
    expect(() => writePnm(out('d.pgm'), { ...grey, channels: 4 })).toThrow(/^cannot write .*d\.pgm: .*channels must be 1 or 3/);
    await expect(writePng(out('missing/e.png'), rgb)).rejects.toThrow(/^cannot write .*e\.png: /);
    expect(() => writePfm(out('missing/f.pfm'), 12, 7, grey.data)).toThrow(/^cannot write .*f\.pfm: /);
    expect(fs.readdirSync(sub)).toEqual([]);
  });
});
