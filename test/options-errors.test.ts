import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../app/cli';
import { generateSyntheticScene } from '../data/synthetic';
import { writePfm, writePng } from '../data/imageIO';
import { evaluate, match, type MatchOptions } from '../stereo';
import { MATCH_OPTION_KEYS, type MatchOptionKey } from '../stereo/matchOptions';
import { attachDashValues } from '../app/cli';

/**
 * Errors that name the right thing (issue 40, items 14–16): the library's
 * errors in the library's names with the value as given, the command
 * line's under its flags with the value as typed and exit 1 for a refused
 * value (2 only for a command line that cannot be parsed), never a value
 * clamped into range without a word, and a notice for an option that
 * changes nothing.
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-options-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const f = (name: string): string => path.join(tmp, name);

const scene = generateSyntheticScene({ width: 32, height: 24, ndisp: 4, seed: 5 });
const L = f('left.png');
const R = f('right.png');
beforeAll(async () => {
  await writePng(L, scene.left);
  await writePng(R, scene.right);
});

async function cli(args: (string | number)[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args.map(String), { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

function listing(): string[] {
  return fs.readdirSync(tmp, { recursive: true }).map(String).sort();
}

// Compile-time: the keys match() checks are exactly MatchOptions' keys (this file does not compile otherwise).
type Missing = Exclude<keyof MatchOptions, MatchOptionKey>;
type Extra = Exclude<MatchOptionKey, keyof MatchOptions>;
const sameKeys: [Missing, Extra] extends [never, never] ? true : false = true;

describe('item 14: library errors name the option as the library spells it, with the value as given', () => {
  const call = (o: unknown) => match(scene.left, scene.right, o as MatchOptions);

  test.each([
    [{ ndisp: '60' }, TypeError, "match: ndisp: got '60' (a string), expected an integer > 0"],
    [{ ndisp: 4, lambda: '5' }, TypeError, "match: lambda: got '5' (a string), expected a finite number ≥ 0"],
    [{ ndisp: 4, lambda: -1 }, RangeError, 'match: lambda: got -1, expected a finite number ≥ 0'],
    [{ ndisp: 4, cycles: 1.5 }, RangeError, "match: cycles: got 1.5, expected an integer ≥ 0 or 'converge'"],
    [{ ndisp: 4, cost: 'ncc' }, RangeError, "match: cost: got 'ncc' (a string), expected one of 'sad', 'ssd', 'sad+sgrad', 'census'"],
    [{ ndisp: 4, backend: 'bk', lrCheck: 'yes' }, TypeError, "match: lrCheck: got 'yes' (a string), expected true or false"],
    [{ ndisp: 40 }, RangeError, 'match: ndisp: got 40, expected an integer in 1..31 (the largest disparity minDisp + ndisp − 1 must stay below the image width 32)'],
    [{ ndisp: 4, initialLabels: new Uint16Array(3) }, RangeError, 'match: initialLabels: got a Uint16Array of 3 values, expected 768 disparities, one per pixel of the 32×24 images'],
  ])('%j', async (options, type, message) => {
    const e = await call(options).then(() => undefined, (err: unknown) => err);
    expect(e).toBeInstanceOf(type);
    expect((e as Error).message).toBe(message);
  });

  test('a misspelled option is refused with the closest name', async () => {
    const e = await call({ ndisp: 4, censusWindw: { width: 5, height: 5 } }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(TypeError);
    expect((e as Error).message).toMatch(/^match: unknown option 'censusWindw'; did you mean censusWindow\? \(options: cost, /);
    await expect(call({ ndisp: 4, labmda: 5 })).rejects.toThrow(/did you mean lambda\?/);
    await expect(call({ ndisp: 4, frobnicate: 1 })).rejects.toThrow(/^match: unknown option 'frobnicate' \(options: /);
  });

  test('every key match() takes is checked (and no other)', () => {
    expect(sameKeys).toBe(true);
    expect(MATCH_OPTION_KEYS).toContain('censusWindow');
  });

  test('evaluate([1, 2, 3], {}) says what it expected', () => {
    expect(() => evaluate([1, 2, 3], {} as never)).toThrow(TypeError);
    expect(() => evaluate([1, 2, 3], {} as never)).toThrow('evaluate: the ground truth must be a scene from loadScene() or a map { width, height, data: Float32Array } (+Infinity = unknown), got an empty object');
    const gt = { width: 2, height: 2, data: new Float32Array(4) };
    expect(() => evaluate([1, 2, 3], gt)).toThrow(new RangeError('evaluate: the disparity has 3 values, expected 4 for the 2×2 ground truth'));
    expect(() => evaluate([1, 2, 3, 4], gt, { threshold: [1] } as never)).toThrow(/^evaluate: unknown option 'threshold'; did you mean thresholds\?/);
    expect(() => evaluate([1, 2, 3, 4], gt, { thresholds: ['1'] } as never)).toThrow(TypeError);
    expect(() => evaluate([1, 2, 3, 4], gt, { thresholds: 1 } as never)).toThrow(/^evaluate: thresholds: got 1, expected an array of finite numbers ≥ 0, e\.g\. \[1, 2\]$/);
    expect(() => evaluate([1, 2, 3, 4], gt, { thresholds: [2, -1] })).toThrow(/^evaluate: thresholds: got -1, expected finite numbers ≥ 0$/);
    expect(evaluate([0, 0, 0, 0], gt).regions[0].bad[0]).toBe(0);
  });
});

describe('item 15: messages name the thing that is wrong', () => {
  test('--lambda 1e308 names --lambda (not --cue-factor) and the range; the library says lambda', async () => {
    const before = listing();
    const r = await cli(['match', L, R, '--ndisp', 4, '-o', f('x.png'), '--backend', 'bk', '--lambda', '1e308']);
    expect(r.err).toEqual(["stereocut: --lambda: got '1e308', expected a number in 0..1073741823 (with this cost and cue factor 2 the smoothness weights must fit 32 bits)"]);
    expect(r.code).toBe(1);
    expect(listing()).toEqual(before);
    await expect(match(scene.left, scene.right, { ndisp: 4, lambda: 1e308 })).rejects.toThrow(/^match: lambda: got 1e\+308, expected a number in 0\.\.1073741823/);
    // The cue factor alone too large: named itself.
    const c = await cli(['match', L, R, '--ndisp', 4, '-o', f('x.png'), '--backend', 'bk', '--cue-factor', '1e300']);
    expect(c.err).toEqual(["stereocut: --cue-factor: got '1e300', expected a number in 1..429496729 (with this cost and λ 5 the smoothness weights must fit 32 bits)"]);
    // A τ whose scaled costs do not fit, named itself (the library: tau).
    await expect(match(scene.left, scene.right, { ndisp: 4, tau: 1e12, backend: 'bk' })).rejects.toThrow(/^match: tau: got 1000000000000, expected a number in 0\.\./);
  });

  test('--census-window -7x7 is refused as that option\'s value, exit 1; the library refuses \'99x99\' as a string, 99x99 as a size', async () => {
    const r = await cli(['match', L, R, '--ndisp', 4, '-o', f('x.png'), '--census-window', '-7x7']);
    expect(r.err).toEqual(["stereocut: --census-window: got '-7x7', expected WxH or N with odd sides in 1..31, not 1x1 (7x7, 9x7, 5)"]);
    expect(r.code).toBe(1);
    expect(attachDashValues(['match', '--min-disp', '-3', '--', '--x', '-1'])).toEqual({ argv: ['match', '--min-disp=-3', '--', '--x', '-1'], attached: ['--min-disp=-3'] });
    // A dash value after a switch is still an argument the command does not take.
    const v = await cli(['match', L, R, '--ndisp', 4, '-o', f('x.png'), '--verify', '-5']);
    expect(v).toMatchObject({ code: 2, err: ['stereocut: unexpected argument -5 (see stereocut match --help)'] });
    const s = await match(scene.left, scene.right, { ndisp: 4, censusWindow: '99x99' as never }).catch((e: unknown) => e);
    expect(s).toBeInstanceOf(TypeError);
    expect((s as Error).message).toBe("match: censusWindow: got '99x99' (a string), expected { width, height } with odd sides in 1..31, not 1×1 (parseCensusWindow('7x7') gives one)");
    await expect(match(scene.left, scene.right, { ndisp: 4, censusWindow: { width: 99, height: 99 } })).rejects.toThrow(RangeError);
  });

  test('calib.txt with vmax beyond the image names calib.txt and vmax', async () => {
    const dir = f('mini2014');
    fs.mkdirSync(dir);
    await writePng(path.join(dir, 'im0.png'), scene.left);
    await writePng(path.join(dir, 'im1.png'), scene.right);
    writePfm(path.join(dir, 'disp0GT.pfm'), 32, 24, Float32Array.from(scene.groundTruth!));
    fs.writeFileSync(path.join(dir, 'calib.txt'), 'width=32\nheight=24\nndisp=8\nvmin=0\nvmax=999999999\n');
    const r = await cli(['run', dir, '--backend', 'bk', '-q']);
    expect(r.err).toEqual([`stereocut: ${path.join(dir, 'calib.txt')}: vmax = 999999999 is not below the image width 32`]);
    expect(r.code).toBe(1);
    fs.writeFileSync(path.join(dir, 'calib.txt'), 'width=32\nheight=24\nvmin=6\nvmax=2\n');
    expect((await cli(['run', dir, '--backend', 'bk', '-q'])).err).toEqual([`stereocut: ${path.join(dir, 'calib.txt')}: vmin = 6 is above vmax = 2`]);
  });

  test('--init values that are no disparity of the range are refused, naming the pixel, not clamped', async () => {
    const ok = Float32Array.from({ length: 32 * 24 }, () => 1);
    const cases: Array<[string, number, string]> = [
      ['nan.pfm', NaN, 'holds NaN (no disparity)'],
      ['big.pfm', 80, 'holds 80'],
      ['neg.pfm', -3, 'holds -3'],
    ];
    for (const [name, value, says] of cases) {
      const data = ok.slice();
      data[5 * 32 + 7] = value;
      data[6 * 32 + 1] = value;
      writePfm(f(name), 32, 24, data);
      const before = listing();
      const r = await cli(['match', L, R, '--ndisp', 4, '-o', f('x.png'), '--backend', 'bk', '--init', f(name)]);
      expect(r.err).toEqual([`stereocut: --init ${f(name)}: pixel (7, 5) ${says}, outside the disparities 0..3, as do 1 more pixels`]);
      expect(r.code).toBe(1);
      expect(listing()).toEqual(before);
    }
    writePfm(f('fine.pfm'), 32, 24, ok);
    expect((await cli(['match', L, R, '--ndisp', 4, '-o', f('fine.png'), '--backend', 'bk', '--init', f('fine.pfm'), '--cycles', 0])).code).toBe(0);
  });

  test('an option without effect in the combination given gets a one-line notice on stderr; an effective one none', async () => {
    const run = (extra: (string | number)[]) => cli(['match', L, R, '--ndisp', 4, '-o', f('n.png'), '--backend', 'bk', '--cycles', 0, '-q', ...extra]);
    expect((await run(['--census-window', '5x5', '--cost', 'sad'])).err).toEqual(['note: --census-window has no effect with --cost sad (it shapes census costs only)']);
    expect((await run(['--init', 'zero', '--init-scale', 4])).err).toEqual(['note: --init-scale has no effect with --init zero (it reads an integer disparity image given to --init)']);
    expect((await run(['--init-scale', 4])).err).toEqual(['note: --init-scale has no effect with --init wta (it reads an integer disparity image given to --init)']);
    expect((await run(['--no-lr-check', '--no-lr-fill'])).err).toEqual(['note: --lr-fill has no effect with --no-lr-check (it fills the pixels the check marks)']);
    expect((await run(['--no-lr-fill', '--no-lr-median'])).err).toEqual(['note: --lr-median has no effect with --no-lr-fill (it follows the row fill)']);
    expect((await run(['--seed', 3])).err).toEqual(['note: --seed has no effect with --order frequent (it seeds the random order)']);
    expect((await run(['--subpixel'])).err).toEqual(['note: --subpixel has no effect without --pfm (the PNG holds whole disparities)']);
    for (const fine of [['--census-window', '5x5'], ['--order', 'random', '--seed', 3], ['--init', 'wta', '--window', 5], ['--cue-factor', 3, '--cue-threshold', 9]]) {
      const r = await run(fine);
      expect({ fine, err: r.err, code: r.code }).toEqual({ fine, err: [], code: 0 });
    }
  });
});

describe('item 16: exit 1 for a refused value, 2 only for a command line that cannot be parsed', () => {
  test.each([
    [['--cost', 'ncc'], 1],
    [['--smoothness', 'cubic'], 1],
    [['--lambda', 'abc'], 1],
    [['--census-window', '4x4'], 1],
    [['--frobnicate'], 2],
    [['-Z'], 2],
  ])('match %j exits %i', async (bad, code) => {
    const before = listing();
    const r = await cli(['match', L, R, '--ndisp', 4, '-o', f('never.png'), '--backend', 'bk', ...bad]);
    expect(r.code).toBe(code);
    expect(r.err).toHaveLength(1);
    expect(listing()).toEqual(before);
  });
});
