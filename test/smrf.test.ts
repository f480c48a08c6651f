import { seededRandom } from '../data/random';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { decodeSmrf, encodeSmrf, readLabeling, readSmrf, smrfByteLength, writeLabeling, writeSmrf } from '../data/smrf';
import { volumeOf, type MrfEnergy, type SmoothnessKind } from '../data/energy';

function randomEnergy(seed: number): MrfEnergy {
  const rand = seededRandom(seed);
  const W = 1 + Math.floor(rand() * 9);
  const H = 1 + Math.floor(rand() * 7);
  const L = 1 + Math.floor(rand() * 6);
  const n = W * H;
  const data = new Int32Array(n * L).map(() => Math.floor(rand() * 2 ** 31));
  const wH = new Int32Array(n);
  const wV = new Int32Array(n);
  for (let p = 0; p < n; p++) {
    if ((p % W) + 1 < W) wH[p] = Math.floor(rand() * 1000);
    if (p + W < n) wV[p] = Math.floor(rand() * 1000);
  }
  const kinds: SmoothnessKind[] = ['linear', 'quadratic', 'potts'];
  const smoothness = kinds[Math.floor(rand() * 3)];
  return { width: W, height: H, labels: L, data: { kind: 'volume', costs: data }, smoothness, truncation: smoothness === 'potts' ? 0 : Math.floor(rand() * 50), wH, wV };
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-smrf-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('SMRF1', () => {
  test('write → read round trip is identical (many random energies)', () => {
    for (let s = 1; s <= 60; s++) {
      const e = randomEnergy(s);
      const file = path.join(tmp, `e${s}.smrf`);
      writeSmrf(file, e);
      expect(fs.statSync(file).size).toBe(smrfByteLength(e.width, e.height, e.labels));
      const back = readSmrf(file);
      expect(back).toEqual(e);
    }
  });

  test('header layout follows the format (magic, little-endian fields at fixed offsets)', () => {
    const e = randomEnergy(99);
    const b = encodeSmrf(e);
    expect(b.subarray(0, 8).toString('latin1')).toBe('SMRF1\0\0\0');
    expect(b.readUInt32LE(8)).toBe(e.width);
    expect(b.readUInt32LE(12)).toBe(e.height);
    expect(b.readUInt32LE(16)).toBe(e.labels);
    expect(b.readUInt32LE(20)).toBe(['linear', 'quadratic', 'potts'].indexOf(e.smoothness));
    expect(b.readInt32LE(32)).toBe(volumeOf(e)[0]);
  });

  test('wrong magic, wrong size, zero size and unknown kind are refused naming the file', () => {
    const e = randomEnergy(5);
    const good = encodeSmrf(e);
    const bad1 = Buffer.from(good); bad1.write('SMRF2', 0, 'latin1');
    expect(() => decodeSmrf(bad1, 'x.smrf')).toThrow(/x\.smrf: wrong magic/);
    expect(() => decodeSmrf(good.subarray(0, good.length - 4), 'y.smrf')).toThrow(/y\.smrf: size is \d+ bytes .* need exactly/);
    expect(() => decodeSmrf(Buffer.concat([good, Buffer.alloc(4)]), 'y.smrf')).toThrow(/need exactly/);
    const bad3 = Buffer.from(good); bad3.writeUInt32LE(7, 20);
    expect(() => decodeSmrf(bad3, 'z.smrf')).toThrow(/z\.smrf: unknown smoothness kind 7/);
    const bad4 = Buffer.from(good); bad4.writeUInt32LE(0, 16);
    expect(() => decodeSmrf(bad4, 'w.smrf')).toThrow(/w\.smrf: W·H·L is 0/);
    expect(() => decodeSmrf(Buffer.alloc(10), 'v.smrf')).toThrow(/v\.smrf: not an SMRF1 file/);
    const bad5 = Buffer.from(good); bad5.writeInt32LE(-1, 32);
    expect(() => decodeSmrf(bad5, 'u.smrf')).toThrow(/u\.smrf: data cost\[0\] = -1 is negative/);
    expect(() => readSmrf(path.join(tmp, 'missing.smrf'))).toThrow(/missing\.smrf: cannot read \(ENOENT\)/);
  });

  test('a writer refuses negative values and leaves no file', () => {
    const e = randomEnergy(6);
    e.wH[0] = -3;
    const file = path.join(tmp, 'neg.smrf');
    expect(() => writeSmrf(file, e)).toThrow(/negative/);
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.readdirSync(tmp).filter((f) => f.includes('neg'))).toEqual([]);
  });

  test('labelings round trip as uint16 and are checked against size and label count', () => {
    const labels = new Uint16Array([0, 3, 65535 % 4, 2, 1, 0]);
    const file = path.join(tmp, 'l.u16');
    writeLabeling(file, labels);
    expect(readLabeling(file, 3, 2, 4)).toEqual(labels);
    expect(() => readLabeling(file, 4, 2, 4)).toThrow(/l\.u16: 12 bytes, a 4×2 uint16 labeling needs 16/);
    expect(() => readLabeling(file, 3, 2, 3)).toThrow(/label 3 at pixel 1 is outside 0..2/);
  });
});
