import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { generateSyntheticScene } from '../data/synthetic';
import { writePng } from '../data/imageIO';
import { match } from '../stereo/match';
import { fillAlongRows, inconsistentPixels, INVALID_DISPARITY, leftRightCheck } from '../stereo/leftRightCheck';
import { labelRange } from '../app/commands/rangeOptions';
import { main } from '../app/cli';

const scene = generateSyntheticScene({ width: 96, height: 64, ndisp: 12, seed: 3 });
const W = scene.left.width;
const H = scene.left.height;
const gt = scene.groundTruth!;
let lo = Infinity;
let hi = -Infinity;
for (const g of gt) if (Number.isFinite(g)) { lo = Math.min(lo, Math.floor(g)); hi = Math.max(hi, Math.ceil(g)); }

describe('disparity ranges (--min-disp / --max-disp)', () => {
  test('per-pixel winners: a range gives the full range\'s disparity wherever that lies in the range', async () => {
    // λ 0, one-pixel WTA, no cycles: each pixel takes its cheapest disparity, so the two runs must agree exactly there.
    const p = { cost: 'census' as const, lambda: 0, window: 1, cycles: 0, lrCheck: false, backend: 'bk' as const };
    const full = await match(scene.left, scene.right, { ...p, ndisp: 12 });
    // A range that cuts off the smallest disparities, so the offset matters.
    const a = lo + 2;
    const b = hi;
    const part = await match(scene.left, scene.right, { ...p, ndisp: b - a + 1, minDisp: a });
    let inRange = 0;
    // Pixels breaking a rule, collected for one expect (an expect per pixel would cost a second).
    const wrong: unknown[] = [];
    for (let i = 0; i < W * H; i++) {
      if (!(part.disparity[i] >= a && part.disparity[i] <= b)) wrong.push({ i, part: part.disparity[i], range: [a, b] });
      if (full.disparity[i] >= a && full.disparity[i] <= b) {
        inRange++;
        if (!Object.is(part.disparity[i], full.disparity[i])) wrong.push({ i, part: part.disparity[i], full: full.disparity[i] });
      }
    }
    expect(wrong).toEqual([]);
    expect(inRange).toBeGreaterThan(W * H * 0.3);
  });

  test('the full energy on a range that holds the truth gives the same disparities where the truth lies', async () => {
    const p = { backend: 'bk' as const, lrCheck: false };
    const full = await match(scene.left, scene.right, { ...p, ndisp: 12 });
    const part = await match(scene.left, scene.right, { ...p, ndisp: hi - lo + 1, minDisp: lo });
    let same = 0;
    let n = 0;
    for (let i = 0; i < W * H; i++) {
      if (!Number.isFinite(gt[i])) continue;
      n++;
      if (part.disparity[i] === full.disparity[i]) same++;
    }
    expect(same / n).toBeGreaterThan(0.98);
  });

  test('bad ranges are one-line errors naming the option', () => {
    expect(labelRange({ ndisp: 16 }, 100)).toEqual({ minDisp: 0, ndisp: 16 });
    expect(labelRange({ 'min-disp': 8, 'max-disp': 65 }, 100)).toEqual({ minDisp: 8, ndisp: 58 });
    expect(labelRange({ 'min-disp': 4, ndisp: 16 }, 100)).toEqual({ minDisp: 4, ndisp: 12 });
    const cases: [Parameters<typeof labelRange>[0], RegExp][] = [
      [{ 'min-disp': 10, 'max-disp': 5 }, /^--min-disp: 10 is above the largest disparity 5$/],
      [{ 'min-disp': 20, ndisp: 16 }, /^--min-disp: /],
      [{ 'max-disp': 100 }, /^--max-disp: 100 is not below the image width 100$/],
      [{ 'min-disp': -1, ndisp: 8 }, /^--min-disp: /],
      [{ 'max-disp': 2.5 }, /^--max-disp: /],
      [{ 'max-disp': 10, ndisp: 8 }, /^--max-disp: give either/],
      [{}, /^--ndisp: /],
    ];
    for (const [a, re] of cases) expect(() => labelRange(a, 100)).toThrow(re);
  });

  test('match on the command line: bad --census-window, min > max and a range outside the image fail with one line and write nothing', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-range-'));
    const l = path.join(dir, 'l.png');
    const r = path.join(dir, 'r.png');
    await writePng(l, scene.left);
    await writePng(r, scene.right);
    const out = path.join(dir, 'd.png');
    const cases: [string[], RegExp][] = [
      [['--ndisp', '12', '--cost', 'census', '--census-window', '4x4'], /^--census-window: /],
      [['--ndisp', '12', '--census-window', '0'], /^--census-window: /],
      [['--ndisp', '12', '--census-window', '7x6'], /^--census-window: /],
      [['--min-disp', '9', '--max-disp', '3'], /^--min-disp: /],
      [['--max-disp', '96'], /^--max-disp: /],
    ];
    for (const [args, re] of cases) {
      const lines: string[] = [];
      const code = await main(['match', l, r, '-o', out, '--backend', 'bk', ...args], { out: () => undefined, err: (s: string) => lines.push(s) });
      expect(code).not.toBe(0);
      const text = lines.join('\n').replace(/^stereocut: /, '').replace(/^error: /, '');
      expect(text.split('\n').filter((s) => s.trim() !== '').length).toBe(1);
      expect(text).toMatch(re);
      expect(fs.existsSync(out)).toBe(false);
    }
    const ok = await main(['match', l, r, '-o', out, '--backend', 'bk', '--min-disp', '1', '--max-disp', '11', '--cycles', '1'], { out: () => undefined, err: () => undefined });
    expect(ok).toBe(0);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('left–right consistency check', () => {
  test('fill takes the farther (smaller) of the two row neighbours; a row end takes the one it has', () => {
    const d = new Uint16Array([5, 9, 9, 2, 7, 7, 3, 3]);
    const m = new Uint8Array([0, 1, 1, 0, 0, 1, 1, 1]);
    expect(Array.from(fillAlongRows(d, m, 8, 1))).toEqual([5, 2, 2, 2, 7, 7, 7, 7]);
    // Two identical views are consistent except where x − d leaves the image.
    const v = new Uint16Array([0, 3, 0, 0]);
    expect(Array.from(inconsistentPixels(v, v, 4, 1))).toEqual([0, 1, 0, 0]);
    const checked = leftRightCheck(v, v, 4, 1, false);
    expect(Array.from(checked.disparity)).toEqual([0, INVALID_DISPARITY, 0, 0]);
    expect(checked.invalid).toBe(1);
  });

  test('marks the occluded strips of a synthetic scene and fills them', async () => {
    const p = { backend: 'bk' as const, ndisp: 12 };
    const off = await match(scene.left, scene.right, { ...p, lrCheck: false });
    const marked = await match(scene.left, scene.right, { ...p, lrCheck: true, lrFill: false });
    const filled = await match(scene.left, scene.right, { ...p, lrCheck: true, lrFill: true });
    const nonocc = scene.masks.nonocc!;
    let occ = 0;
    let occMarked = 0;
    let vis = 0;
    let visMarked = 0;
    let occBadOff = 0;
    let occBadFilled = 0;
    for (let i = 0; i < W * H; i++) {
      if (!Number.isFinite(gt[i])) continue;
      const isMarked = marked.disparity[i] === INVALID_DISPARITY;
      if (nonocc[i]) { vis++; if (isMarked) visMarked++; continue; }
      occ++;
      if (isMarked) occMarked++;
      if (Math.abs(off.disparity[i] - gt[i]) > 1) occBadOff++;
      if (Math.abs(filled.disparity[i] - gt[i]) > 1) occBadFilled++;
      expect(filled.disparity[i]).not.toBe(INVALID_DISPARITY);
    }
    expect(occ).toBeGreaterThan(50);
    expect(occMarked / occ).toBeGreaterThan(0.5);
    expect(visMarked / vis).toBeLessThan(0.05);
    expect(occBadFilled).toBeLessThan(occBadOff);
    expect(marked.inconsistentPixels).toBeGreaterThanOrEqual(occMarked);
  });
});

describe('census costs and ranges on the device solver', () => {
  test('gpu.js CPU backend: the census volume with a disparity range gives the labels BK gives', async () => {
    const small = generateSyntheticScene({ width: 40, height: 24, ndisp: 8, seed: 5 });
    const p = { cost: 'census' as const, ndisp: 6, minDisp: 1, lrCheck: false, cycles: 1 };
    const bk = await match(small.left, small.right, { ...p, backend: 'bk' });
    const dev = await match(small.left, small.right, { ...p, backend: 'gpujs-cpu' });
    expect(dev.finalEnergy.total).toBe(bk.finalEnergy.total);
    expect(Array.from(dev.disparity)).toEqual(Array.from(bk.disparity));
  });
});

describe('scene folders: ranges from calib.txt and from the options', () => {
  const root = [process.env.STEREO_DATA, path.join(__dirname, '..', '..', 'shared', 'data', 'middlebury')].find((c): c is string => !!c && fs.existsSync(path.join(c, 'tsukuba')));
  const maybe = root ? test : test.skip;
  maybe('run: min > max and a range past the image are one-line errors naming the option', async () => {
    const dir = path.join(root!, 'tsukuba');
    for (const [args, re] of [
      [['--min-disp', '10', '--max-disp', '3'], /^stereocut: --min-disp: got '10', expected at most the largest disparity 3$/],
      [['--max-disp', '400'], /^stereocut: --max-disp: got '400', expected a largest disparity below the image width 384 \(it is 400\)$/],
      [['--min-disp', '-2'], /^stereocut: --min-disp: /],
    ] as [string[], RegExp][]) {
      const err: string[] = [];
      const code = await main(['run', dir, '--backend', 'bk', ...args], { out: () => undefined, err: (s: string) => err.push(s) });
      expect(code).not.toBe(0);
      expect(err).toHaveLength(1);
      expect(err[0]).toMatch(re);
    }
  });
});
