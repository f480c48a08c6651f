import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { findMiddlebury } from './support/middleburyData';
import { loadScene, listSceneDirs, deriveNonocc, middlebury2005Scale } from '../data/scene';
import { parseCalib, readCalib } from '../data/calib';
import { readImage } from '../data/imageIO';
import { encodePnm } from '../data/pnm';
import { encodePfm } from '../data/pfm';
import type { Scene } from '../data/sceneTypes';

/**
 * Scene folders: the real Middlebury files when present (expected figures from
 * each folder's SOURCE.txt), and small folders written here for the layout
 * rules and the error paths (these always run).
 */


interface Expect {
  layout: Scene['layout'];
  width: number;
  height: number;
  channels: number;
  ndisp: number;
  ndispSource: Scene['ndispSource'];
  scale: number;
  /** Largest known ground-truth disparity (gray max / scale). */
  gtMax: number;
  masks: string[];
  derived: boolean;
  right: boolean;
}

const EXPECT: Record<string, Expect> = {
  tsukuba: { layout: 'middlebury2001', width: 384, height: 288, channels: 3, ndisp: 16, ndispSource: 'dataset convention', scale: 16, gtMax: 14, masks: ['all', 'disc', 'nonocc'], derived: false, right: false },
  venus: { layout: 'middlebury2001', width: 434, height: 383, channels: 3, ndisp: 20, ndispSource: 'dataset convention', scale: 8, gtMax: 19.75, masks: ['all', 'disc', 'nonocc'], derived: false, right: true },
  sawtooth: { layout: 'middlebury2001', width: 434, height: 380, channels: 3, ndisp: 20, ndispSource: 'dataset convention', scale: 8, gtMax: 17.875, masks: [], derived: false, right: true },
  map: { layout: 'middlebury2001', width: 284, height: 216, channels: 1, ndisp: 30, ndispSource: 'dataset convention', scale: 8, gtMax: 28.125, masks: [], derived: false, right: true },
  teddy: { layout: 'middlebury2003', width: 450, height: 375, channels: 3, ndisp: 60, ndispSource: 'dataset convention', scale: 4, gtMax: 52.75, masks: ['all', 'disc', 'nonocc'], derived: false, right: true },
  cones: { layout: 'middlebury2003', width: 450, height: 375, channels: 3, ndisp: 60, ndispSource: 'dataset convention', scale: 4, gtMax: 55, masks: ['all', 'disc', 'nonocc'], derived: false, right: true },
  Rocks1: { layout: 'middlebury2005', width: 638, height: 555, channels: 3, ndisp: 86, ndispSource: 'ground-truth maximum', scale: 2, gtMax: 85, masks: ['nonocc'], derived: true, right: true },
  Baby1: { layout: 'middlebury2005', width: 620, height: 555, channels: 3, ndisp: 70, ndispSource: 'ground-truth maximum', scale: 2, gtMax: 68.5, masks: ['nonocc'], derived: true, right: true },
  Art_ThirdSize: { layout: 'middlebury2005', width: 463, height: 370, channels: 3, ndisp: 76, ndispSource: 'ground-truth maximum', scale: 3, gtMax: 224 / 3, masks: ['nonocc'], derived: true, right: true },
  Adirondack_TrainingQ: { layout: 'middlebury2014', width: 718, height: 496, channels: 3, ndisp: 62, ndispSource: 'calib vmin/vmax', scale: 1, gtMax: 63.04, masks: ['all', 'nonocc'], derived: false, right: false },
};

function count(a: ArrayLike<number>, pred: (v: number) => boolean): number {
  let c = 0;
  for (let i = 0; i < a.length; i++) if (pred(a[i])) c++;
  return c;
}

function finiteRange(a: Float32Array): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of a) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  return [lo, hi];
}

const root = findMiddlebury();
const describeData = root ? describe : describe.skip;
if (!root) {
  test.skip('Middlebury scenes: data not found (set STEREO_DATA or place ../shared/data beside the project)', () => undefined);
}

describeData('real Middlebury folders', () => {
  const scenes = new Map<string, Scene>();
  beforeAll(async () => {
    for (const name of Object.keys(EXPECT)) scenes.set(name, await loadScene(path.join(root as string, name)));
  });
  const get = (name: string): Scene => scenes.get(name) as Scene;

  test('listSceneDirs finds every folder, sorted', () => {
    const dirs = listSceneDirs(root as string).map((d) => path.basename(d));
    expect(dirs).toEqual(Object.keys(EXPECT).sort());
  });

  test.each(Object.keys(EXPECT))('%s: layout, size, ndisp and its source, ground-truth scale and range, masks', (name) => {
    const e = EXPECT[name];
    const s = get(name);
    const n = e.width * e.height;
    expect({ layout: s.layout, w: s.left.width, h: s.left.height, c: s.left.channels, ndisp: s.ndisp, src: s.ndispSource, scale: s.groundTruthScale, derived: s.nonoccDerived })
      .toEqual({ layout: e.layout, w: e.width, h: e.height, c: e.channels, ndisp: e.ndisp, src: e.ndispSource, scale: e.scale, derived: e.derived });
    expect([s.right.width, s.right.height, s.right.channels]).toEqual([e.width, e.height, e.channels]);
    expect(s.name).toBe(name);
    expect(s.groundTruth!.length).toBe(n);
    expect(s.groundTruthRight !== undefined).toBe(e.right);
    const [lo, hi] = finiteRange(s.groundTruth!);
    expect(hi).toBeCloseTo(e.gtMax, 2);
    expect(lo).toBeGreaterThan(0); // 0 in an integer file means unknown, never a disparity
    // Labels 0..ndisp-1 cover the ground truth to within rounding (venus: max 19.75 with 20 labels);
    // a ground-truth-maximum range is ceil(max) + 1 labels.
    expect(hi).toBeLessThan((s.minDisp ?? 0) + s.ndisp);
    expect(lo).toBeGreaterThanOrEqual(s.minDisp ?? 0);
    if (e.ndispSource === 'ground-truth maximum') expect(s.ndisp).toBe(Math.ceil(e.gtMax) + 1);
    expect(Object.keys(s.masks).sort()).toEqual(e.masks);
    for (const m of Object.values(s.masks)) {
      expect(m!.length).toBe(n);
      expect(count(m!, (v) => v !== 0 && v !== 1)).toBe(0);
    }
    if (s.masks.all && s.masks.nonocc) {
      // nonocc ⊆ all
      expect(count(s.masks.nonocc.map((v, i) => (v === 1 && s.masks.all![i] === 0 ? 1 : 0)), (v) => v === 1)).toBe(0);
    }
  });

  test('tsukuba: max 14.0, 20.7% unknown, all.png excludes exactly 22896 px, nonocc and disc share a 25154-px zero region', async () => {
    const s = get('tsukuba');
    const n = 384 * 288;
    const unknown = count(s.groundTruth!, (v) => v === Infinity);
    expect(unknown / n).toBeCloseTo(0.207, 3);
    expect(finiteRange(s.groundTruth!)[1]).toBe(14);
    expect(count(s.masks.all!, (v) => v === 0)).toBe(22896);
    expect(count(s.masks.nonocc!, (v) => v === 0)).toBe(25154);
    // disc.png has 255 (near a discontinuity), 128 (elsewhere, non-occluded) and 0 (excluded): its 0 region is nonocc's.
    const disc = await readImage(path.join(root as string, 'tsukuba', 'disc.png'));
    expect(disc.channels).toBe(1);
    let differ = 0;
    for (let i = 0; i < n; i++) if ((disc.data[i] === 0) !== (s.masks.nonocc![i] === 0)) differ++;
    expect(differ).toBe(0);
    expect(count(disc.data, (v) => v === 0)).toBe(25154);
    // The loaded disc mask (255 only) lies inside nonocc.
    expect(count(s.masks.disc!.map((v, i) => v & (1 - s.masks.nonocc![i])), (v) => v === 1)).toBe(0);
    expect(count(s.masks.disc!, (v) => v === 1)).toBeGreaterThan(0);
  });

  test('teddy: max 52.75 (gray 211 / 4), all.png excludes the unknown-GT pixels', () => {
    const s = get('teddy');
    expect(finiteRange(s.groundTruth!)[1]).toBe(52.75);
    expect(count(s.masks.all!, (v) => v === 0)).toBe(3406);
  });

  test('Adirondack: PFM ground truth 9.46..63.04, ~99.7% finite, labels calib vmin 8 − 2 .. vmax 65 + 2, mask0nocc masks', () => {
    const s = get('Adirondack_TrainingQ');
    expect([s.minDisp, s.minDisp! + s.ndisp - 1]).toEqual([6, 67]);
    const [lo, hi] = finiteRange(s.groundTruth!);
    expect(lo).toBeCloseTo(9.46, 2);
    expect(hi).toBeCloseTo(63.04, 2);
    expect(count(s.groundTruth!, Number.isFinite) / s.groundTruth!.length).toBeCloseTo(0.997, 3);
    // 255 → nonocc, 255 or 128 → all: nonocc is a strict subset of all.
    expect(count(s.masks.nonocc!, (v) => v === 1)).toBeLessThan(count(s.masks.all!, (v) => v === 1));
  });

  test('2005/2006: derived nonocc is a strict subset of the known pixels', () => {
    for (const name of ['Rocks1', 'Baby1', 'Art_ThirdSize']) {
      const s = get(name);
      const m = s.masks.nonocc!;
      const gt = s.groundTruth!;
      let outside = 0;
      for (let i = 0; i < m.length; i++) if (m[i] === 1 && !Number.isFinite(gt[i])) outside++;
      expect([name, outside]).toEqual([name, 0]);
      const nonocc = count(m, (v) => v === 1);
      const known = count(gt, Number.isFinite);
      expect(nonocc).toBeLessThan(known);
      // Occlusions are a minority in these scenes; the mask is far from empty.
      expect(nonocc).toBeGreaterThan(0.75 * known);
    }
  });

  test("map: grey PGM pair whose header carries a '# Created by Paint Shop Pro' comment", async () => {
    const file = path.join(root as string, 'map', 'im0.pgm');
    const bytes = fs.readFileSync(file);
    expect(bytes.subarray(0, 43).toString('latin1')).toContain('# Created by Paint Shop Pro');
    const r = await readImage(file);
    expect([r.width, r.height, r.channels, r.maxval]).toEqual([284, 216, 1, 255]);
    expect(get('map').left.data).toEqual(r.data);
  });

  test("Adirondack calib.txt with its extra spaces", () => {
    const c = readCalib(path.join(root as string, 'Adirondack_TrainingQ', 'calib.txt'));
    expect({ ndisp: c.ndisp, vmin: c.vmin, vmax: c.vmax, doffs: c.doffs, baseline: c.baseline, width: c.width, height: c.height, isint: c.isint, dyavg: c.dyavg, dymax: c.dymax })
      .toEqual({ ndisp: 73, vmin: 8, vmax: 65, doffs: 53.271, baseline: 176.252, width: 718, height: 496, isint: 0, dyavg: 0.184, dymax: 0.423 });
    expect(c.cam0).toEqual([[1038.018, 0, 322.037], [0, 1038.018, 243.393], [0, 0, 1]]);
    expect(c.cam1).toEqual([[1038.018, 0, 375.308], [0, 1038.018, 243.393], [0, 0, 1]]);
  });

  test('options override ndisp and the 2005 scale', async () => {
    const s = await loadScene(path.join(root as string, 'Baby1'), { ndisp: 90, gtScale: 4 });
    expect([s.ndisp, s.ndispSource, s.groundTruthScale]).toEqual([90, 'option', 4]);
    expect(finiteRange(s.groundTruth!)[1]).toBe(137 / 4);
  });
});

describe('calib.txt parsing', () => {
  test('spaced and plain spellings give the same values; CRLF and blank lines are fine', () => {
    const plain = 'cam0=[1038.018 0 322.037; 0 1038.018 243.393; 0 0 1]\ndoffs=53.271\nbaseline=176.252\nwidth=718\nheight=496\nndisp=73\nvmin=8\nvmax=65\nextra=hello\n';
    const spaced = 'cam0=[ 1038.018 0 322.037 ; 0 1038.018 243.393 ; 0 0 1 ] \r\n doffs= 53.271 \r\n\r\nbaseline= 176.252\r\n width= 718\r\nheight= 496\r\n ndisp= 73\r\n vmin= 8 \r\nvmax= 65\r\n extra = hello \r\n';
    const a = parseCalib(plain, 'plain.txt');
    const b = parseCalib(spaced, 'spaced.txt');
    // Parsed values agree; `raw` keeps each value as written (trimmed), so only the matrix text differs.
    expect({ ...b, raw: undefined }).toEqual({ ...a, raw: undefined });
    expect(b.raw.cam0).toBe('[ 1038.018 0 322.037 ; 0 1038.018 243.393 ; 0 0 1 ]');
    expect({ ...b.raw, cam0: '' }).toEqual({ ...a.raw, cam0: '' });
    expect(a.raw.extra).toBe('hello');
    expect(a.ndisp).toBe(73);
  });

  test.each([
    ['ndisp=abc', /bad\.txt: ndisp = 'abc' is not a number/],
    ['ndisp=0', /bad\.txt: ndisp = 0 is not a positive integer/],
    ['ndisp=7.5', /bad\.txt: ndisp = 7\.5 is not a positive integer/],
    ['cam0=1 2 3', /bad\.txt: cam0 should be a bracketed matrix/],
    ['cam0=[1 2; 3 4; 5 6]', /bad\.txt: cam0 is not a 3x3 matrix/],
    ['just words', /bad\.txt: line 1 is not 'key = value'/],
    ['doffs=', /bad\.txt: doffs = '' is not a number/],
  ])('bad calib %j', (text, re) => {
    expect(() => parseCalib(text, 'bad.txt')).toThrow(re);
  });
});

describe('scene folders written here', () => {
  let dir: string;
  beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-scenes-')); });
  afterAll(() => { fs.rmSync(dir, { recursive: true, force: true }); });

  const grey = (w: number, h: number, fill: (i: number) => number, maxval = 255): Uint8Array =>
    encodePnm({ width: w, height: h, channels: 1, data: Float32Array.from({ length: w * h }, (_, i) => fill(i)), maxval });
  const rgb = (w: number, h: number): Uint8Array =>
    encodePnm({ width: w, height: h, channels: 3, data: Float32Array.from({ length: w * h * 3 }, (_, i) => i % 256), maxval: 255 });
  function folder(name: string, files: Record<string, Uint8Array | string>): string {
    const d = path.join(dir, name);
    fs.mkdirSync(d);
    for (const [f, b] of Object.entries(files)) fs.writeFileSync(path.join(d, f), b);
    return d;
  }

  test('a folder matching no layout: the error lists every pair of names looked for', async () => {
    // (left.png + right.png is a pair now: data/pairNames.ts)
    const d = folder('nothing', { 'first.png': 'x', 'second.png': 'y' });
    let msg = '';
    try { await loadScene(d); } catch (e) { msg = (e as Error).message; }
    expect(msg.startsWith(`${d}: not a recognised scene folder; looked for `)).toBe(true);
    for (const pair of ['im0.png+im1.png', 'im0.pgm+im1.pgm', 'scene1.row3.col3.ppm+scene1.row3.col4.ppm', 'im2.ppm+im6.ppm', 'im2.png+im6.png', 'view1.png+view5.png']) {
      expect(msg).toContain(pair);
    }
    expect(msg).not.toContain('\n');
    await expect(loadScene(path.join(dir, 'absent'))).rejects.toThrow(/absent: scene folder not found/);
    expect(listSceneDirs(dir)).not.toContain(d);
  });

  test('left and right of different sizes, and ground truth of another size', async () => {
    const d1 = folder('mismatch', { 'im2.ppm': rgb(10, 8), 'im6.ppm': rgb(10, 9) });
    await expect(loadScene(d1)).rejects.toThrow(new RegExp(`size mismatch: .*im6\\.ppm is 10x9 but .*im2\\.ppm is 10x8`));
    const d2 = folder('gt-mismatch', { 'im2.ppm': rgb(10, 8), 'im6.ppm': rgb(10, 8), 'disp2.pgm': grey(11, 8, () => 8) });
    await expect(loadScene(d2)).rejects.toThrow(/size mismatch: .*disp2\.pgm is 11x8 but .*im2\.ppm is 10x8/);
    const d3 = folder('channels', { 'im2.ppm': rgb(10, 8), 'im6.ppm': grey(10, 8, () => 1) });
    await expect(loadScene(d3)).rejects.toThrow(/channel mismatch: .*im2\.ppm has 3 channels but .*im6\.ppm has 1/);
    const d4 = folder('calib-mismatch', {
      'im0.png': fs.readFileSync(path.join(d1, 'im2.ppm')), 'im1.png': fs.readFileSync(path.join(d1, 'im2.ppm')),
      'calib.txt': 'width=12\nheight=8\nndisp=5\n',
    });
    await expect(loadScene(d4)).rejects.toThrow(/size mismatch: .*calib\.txt says 12x8 but .*im0\.png is 10x8/);
  });

  test('a small 2014-style folder: PFM ground truth, calib ndisp, mask0nocc levels', async () => {
    const w = 6;
    const h = 4;
    const gt = Float32Array.from({ length: w * h }, (_, i) => (i === 5 ? Infinity : 1 + i / 4));
    const mask = grey(w, h, (i) => [255, 128, 0][i % 3]);
    const d = folder('mini2014', {
      'im0.png': rgb(w, h), 'im1.png': rgb(w, h), 'disp0GT.pfm': encodePfm(w, h, gt), 'calib.txt': 'ndisp=9\n', 'mask0nocc.png': mask,
    });
    const s = await loadScene(d);
    expect([s.layout, s.ndisp, s.ndispSource, s.groundTruthScale]).toEqual(['middlebury2014', 9, 'calib ndisp', 1]);
    expect(Array.from(s.groundTruth!)).toEqual(Array.from(gt));
    expect(Array.from(s.masks.nonocc!)).toEqual(Array.from({ length: w * h }, (_, i) => (i % 3 === 0 ? 1 : 0)));
    expect(Array.from(s.masks.all!)).toEqual(Array.from({ length: w * h }, (_, i) => (i % 3 === 2 ? 0 : 1)));
  });

  test('a 2005-style folder too wide to place needs gtScale; with it, ndisp comes from the ground-truth maximum', async () => {
    const w = 1200;
    const h = 2;
    const files = { 'view1.png': rgb(w, h), 'view5.png': rgb(w, h), 'disp1.png': grey(w, h, (i) => i % 50), 'disp5.png': grey(w, h, (i) => i % 50) };
    const d = folder('wide2005', files);
    await expect(loadScene(d)).rejects.toThrow(/cannot tell the ground-truth scale of a 1200-px-wide 2005\/2006 folder.*gtScale/);
    const s = await loadScene(d, { gtScale: 2 });
    expect([s.groundTruthScale, s.ndisp, s.ndispSource, s.nonoccDerived]).toEqual([2, 26, 'ground-truth maximum', true]);
    await expect(loadScene(d, { gtScale: -1 })).rejects.toThrow(/^loadScene: gtScale: got -1, expected a finite number > 0$/);
    await expect(loadScene(d, { ndisp: 0 })).rejects.toThrow(/^loadScene: ndisp: got 0, expected an integer ≥ 1$/);
  });

  test('middlebury2005Scale: the folder name decides, else the width', () => {
    expect(middlebury2005Scale('Art_ThirdSize', 1390)).toBe(3);
    expect(middlebury2005Scale('cloth_halfsize', 300)).toBe(2);
    expect(middlebury2005Scale('Art', 463)).toBe(3);
    expect(middlebury2005Scale('Art', 560)).toBe(3);
    expect(middlebury2005Scale('Baby1', 620)).toBe(2);
    expect(middlebury2005Scale('Baby1', 999)).toBe(2);
    expect(middlebury2005Scale('Baby1', 1000)).toBeUndefined();
  });
});

describe('deriveNonocc', () => {
  test('hand-made row: in range, matching right disparity within 1 px, unknowns excluded', () => {
    const I = Infinity;
    // width 6, one row; left GT and right GT in pixels.
    const left = Float32Array.from([0, 2, 2, 1, I, 2.4]);
    const right = Float32Array.from([2, 2, 5, 1, 2, 2]);
    // x=0: d=0 → xr=0, right 2 vs 0: off by 2 → 0.  x=1: d=2 → xr=-1 → 0.  x=2: xr=0, right 2 → 1.
    // x=3: d=1 → xr=2, right 5 → 0.  x=4: unknown → 0.  x=5: d=2.4 → xr=3, right 1, |1-2.4|>1 → 0.
    expect(Array.from(deriveNonocc(left, right, 6, 1))).toEqual([0, 0, 1, 0, 0, 0]);
    right[3] = 1.5; // now within 1 px of 2.4
    expect(Array.from(deriveNonocc(left, right, 6, 1))).toEqual([0, 0, 1, 0, 0, 1]);
  });

  test('brute force on random maps: agrees with a direct reading of the rule', () => {
    let seed = 1;
    const rnd = (): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
    for (let t = 0; t < 30; t++) {
      const w = 3 + Math.floor(rnd() * 12);
      const h = 1 + Math.floor(rnd() * 5);
      const mk = (): Float32Array => Float32Array.from({ length: w * h }, () => (rnd() < 0.1 ? Infinity : Math.fround(rnd() * 6)));
      const l = mk();
      const r = mk();
      const got = deriveNonocc(l, r, w, h);
      for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
        const d = l[y * w + x];
        let want = 0;
        if (d !== Infinity) {
          const xr = x - Math.round(d);
          if (xr >= 0 && xr < w && r[y * w + xr] !== Infinity && Math.abs(r[y * w + xr] - d) <= 1) want = 1;
        }
        expect(got[y * w + x]).toBe(want);
      }
    }
  });
});
