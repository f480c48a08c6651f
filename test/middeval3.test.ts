import { seededRandom } from '../data/random';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readImage } from '../data/imageIO';
import { middeval3Paths, middeval3Place, writeMiddEval3, MIDDEVAL3_SETS } from '../app/middeval3';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-me3-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('MiddEval3 layout', () => {
  test('set and scene come from the SDK tree or a <Scene>_<Set> folder name, else the option', () => {
    expect(middeval3Place('/data/MiddEval3/trainingQ/Adirondack')).toEqual({ set: 'trainingQ', scene: 'Adirondack' });
    expect(middeval3Place('/data/MiddEval3/testH/Australia/')).toEqual({ set: 'testH', scene: 'Australia' });
    expect(middeval3Place('../shared/data/middlebury/Adirondack_TrainingQ')).toEqual({ set: 'trainingQ', scene: 'Adirondack' });
    expect(middeval3Place('/x/teddy', 'trainingH')).toEqual({ set: 'trainingH', scene: 'teddy' });
    expect(() => middeval3Place('/x/teddy')).toThrow(/^--middeval3: cannot tell the MiddEval3 set of \/x\/teddy .*pass --middeval3-set$/);
    expect(() => middeval3Place('/x/teddy', 'trainingX')).toThrow(/--middeval3-set: unknown set 'trainingX'/);
  });

  test('disp0<NAME>.pfm reads back bit for bit (fractional, zero, INF); time<NAME>.txt is one number of seconds', async () => {
    const rnd = seededRandom(11);
    for (let trial = 0; trial < 12; trial++) {
      const width = 1 + Math.floor(rnd() * 40);
      const height = 1 + Math.floor(rnd() * 30);
      const d = new Float32Array(width * height);
      for (let i = 0; i < d.length; i++) {
        const u = rnd();
        d[i] = u < 0.05 ? Infinity : u < 0.1 ? 0 : trial % 2 ? Math.floor(u * 200) : u * 187.3;
      }
      const set = MIDDEVAL3_SETS[trial % MIDDEVAL3_SETS.length];
      const seconds = rnd() * 100;
      const p = writeMiddEval3(tmp, 'GCRev', { set, scene: `S${trial}`, width, height, disparity: d, seconds });
      expect(p).toMatchObject({ pfm: path.join(tmp, set, `S${trial}`, 'disp0GCRev.pfm'), time: path.join(tmp, set, `S${trial}`, 'timeGCRev.txt') });
      const back = await readImage(p.pfm);
      expect([back.width, back.height, back.channels]).toEqual([width, height, 1]);
      expect(Buffer.from(back.data.buffer, back.data.byteOffset, back.data.byteLength).equals(Buffer.from(d.buffer))).toBe(true);
      const t = fs.readFileSync(p.time, 'utf8');
      expect(t).toMatch(/^\d+\.\d{3}\n$/);
      expect(Math.abs(Number(t) - seconds)).toBeLessThanOrEqual(0.0005);
      // The SDK's own reader expects little-endian (negative scale) and bottom-to-top rows.
      const raw = fs.readFileSync(p.pfm);
      const header = raw.toString('latin1', 0, 40).split('\n');
      expect(header.slice(0, 3)).toEqual(['Pf', `${width} ${height}`, '-1']);
      const firstRowInFile = new Float32Array(raw.buffer.slice(raw.byteOffset + raw.length - 4 * width * height, raw.byteOffset + raw.length - 4 * width * (height - 1)));
      expect(Array.from(firstRowInFile)).toEqual(Array.from(d.subarray((height - 1) * width)));
    }
  });

  test('bad names and times are refused before anything is written', () => {
    const root = path.join(tmp, 'bad');
    const e = { set: 'trainingQ' as const, scene: 'A', width: 2, height: 1, disparity: [1, 2], seconds: 1 };
    expect(() => writeMiddEval3(root, 'my alg', e)).toThrow(/--middeval3-name: 'my alg' must be letters and digits only/);
    expect(() => writeMiddEval3(root, 'X', { ...e, seconds: NaN })).toThrow(/running time of A/);
    expect(() => writeMiddEval3(root, 'X', { ...e, disparity: [1] })).toThrow(/A disparity has 1 values for 2×1/);
    expect(fs.existsSync(root)).toBe(false);
    expect(middeval3Paths(root, 'trainingQ', 'A', 'X').pfm).toBe(path.join(root, 'trainingQ', 'A', 'disp0X.pfm'));
  });
});
