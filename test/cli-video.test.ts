import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { generateSyntheticScene } from '../data/synthetic';
import { panFrames } from '../data/panSequence';
import { readImage, writePng } from '../data/imageIO';
import { main } from '../app/cli';

/** `stereocut video`: frames paired by name or pattern, outputs per frame, and every refusal as one line before any frame is matched. */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-video-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const at = (...p: string[]): string => path.join(tmp, ...p);

beforeAll(async () => {
  const s = generateSyntheticScene({ width: 67, height: 40, ndisp: 8, seed: 5 });
  const frames = panFrames(s, { frames: 4, width: 64 });
  for (const d of ['left', 'right', 'cam', 'empty', 'three']) fs.mkdirSync(at(d));
  for (const [k, f] of frames.entries()) {
    // Names whose natural order differs from their text order (f9 before f10).
    const name = `f${k === 3 ? 10 : k + 7}.png`;
    await writePng(at('left', name), f.left);
    await writePng(at('right', name), f.right);
    await writePng(at('cam', `left_${String(k).padStart(4, '0')}.png`), f.left);
    await writePng(at('cam', `right_${String(k).padStart(4, '0')}.png`), f.right);
    if (k < 3) await writePng(at('three', name), f.right);
  }
});

async function cli(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

test('folders: a disparity, a PFM and a colour map per frame, named after the left frame; a row per frame in name order', async () => {
  const r = await cli(['video', at('left'), at('right'), '--ndisp', '8', '--out-dir', at('out'), '--pfm', '--color', '--backend', 'bk', '--json']);
  expect(r.err.filter((l) => l.startsWith('stereocut:'))).toEqual([]);
  expect(r.code).toBe(0);
  const j = JSON.parse(r.out.join('\n')) as { frames: number; rows: Array<{ frame: string; start: string; finalEnergy: number }> };
  expect(j.frames).toBe(4);
  expect(j.rows.map((x) => x.frame)).toEqual(['f7', 'f8', 'f9', 'f10']);
  expect(j.rows.map((x) => x.start)).toEqual(['cold', 'warm', 'warm', 'warm']);
  for (const f of ['f7', 'f8', 'f9', 'f10']) {
    for (const suffix of ['.png', '.pfm', '-color.png']) expect(fs.existsSync(at('out', f + suffix))).toBe(true);
    expect((await readImage(at('out', `${f}.png`))).width).toBe(64);
  }
}, 120000);

test('patterns, and the account: a line per frame and the frames per second', async () => {
  const r = await cli(['video', at('cam', 'left_%04d.png'), at('cam', 'right_%04d.png'), '--max-disp', '7', '--out-dir', at('out-cam'), '--backend', 'bk', '--no-lr-check']);
  expect(r.code).toBe(0);
  expect(r.out.filter((l) => l.startsWith('frame '))).toHaveLength(4);
  expect(r.out[1]).toMatch(/^frame 2\/4 left_0001: warm, energy \d+ → \d+, 1 cycle, [\d.]+ s$/);
  expect(r.out[4]).toMatch(/^4 frames in [\d.]+ s: [\d.]+ frames\/s \(3 warm, 1 cold, 0 fallback\); wrote /);
  expect(fs.readdirSync(at('out-cam')).sort()).toEqual(['left_0000.png', 'left_0001.png', 'left_0002.png', 'left_0003.png']);
}, 120000);

test('--no-warm matches every frame on its own', async () => {
  const r = await cli(['video', at('left'), at('right'), '--ndisp', '8', '--out-dir', at('out-cold'), '--backend', 'bk', '--no-warm', '--no-lr-check', '--json']);
  expect(r.code).toBe(0);
  expect((JSON.parse(r.out.join('\n')) as { cold: number }).cold).toBe(4);
}, 120000);

describe('refused before any frame, in one line naming the folder or option', () => {
  const cases: Array<[string, () => string[], RegExp]> = [
    ['different counts', () => ['video', at('left'), at('three'), '--ndisp', '8', '--out-dir', at('x')], /^stereocut: left frames .*left has 4 images, right frames .*three has 3; /],
    ['an empty folder', () => ['video', at('empty'), at('right'), '--ndisp', '8', '--out-dir', at('x')], /^stereocut: left frames .*empty: no images \(/],
    ['a missing folder', () => ['video', at('nowhere'), at('right'), '--ndisp', '8', '--out-dir', at('x')], /^stereocut: left frames .*nowhere: no such folder/],
    ['a pattern matching nothing', () => ['video', at('cam', 'l_%d.png'), at('right'), '--ndisp', '8', '--out-dir', at('x')], /^stereocut: left frames .*l_%d\.png: no file of .* matches the pattern$/],
    ['outputs onto the left frames', () => ['video', at('left'), at('right'), '--ndisp', '8', '--out-dir', at('left')], /^stereocut: --out-dir: .*f7\.png is the left frame .*f7\.png; an output never replaces an input/],
    ['an --init file', () => ['video', at('left'), at('right'), '--ndisp', '8', '--out-dir', at('x'), '--init', at('left', 'f7.png')], /^stereocut: --init: got '.*', expected wta or zero/],
    ['--keyframe -1', () => ['video', at('left'), at('right'), '--ndisp', '8', '--out-dir', at('x'), '--keyframe', '-1'], /^stereocut: --keyframe: /],
    ['--warm-cycles 0', () => ['video', at('left'), at('right'), '--ndisp', '8', '--out-dir', at('x'), '--warm-cycles', '0'], /^stereocut: --warm-cycles: got '0', expected an integer ≥ 1 or converge$/],
    ['--ndisp beyond the width', () => ['video', at('left'), at('right'), '--ndisp', '80', '--out-dir', at('x')], /^stereocut: --ndisp: got '80', expected an integer with 0 < ndisp < the image width 64$/],
  ];
  test.each(cases)('%s', async (_, args, message) => {
    const before = fs.readdirSync(at('left')).sort();
    const r = await cli(args());
    expect(r.code).toBe(1);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(message);
    expect(fs.existsSync(at('x'))).toBe(false);
    expect(fs.readdirSync(at('left')).sort()).toEqual(before);
  });
});
