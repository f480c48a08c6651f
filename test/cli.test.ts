import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { spawnSync } from 'child_process';
import { main } from '../app/cli';
import { generateSyntheticScene } from '../data/synthetic';
import { writePng, writePfm, readImage } from '../data/imageIO';
import { encodePnm } from '../data/pnm';
import { readSmrf, readLabeling } from '../data/smrf';
import { computeEnergy } from '../data/energy';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-cli-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const f = (name: string): string => path.join(tmp, name);

async function cli(...args: (string | number)[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args.map(String), { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Files in the temp folder, so a test can check that a failed command left nothing behind. */
const listing = (): string[] => fs.readdirSync(tmp).sort();

const scene = generateSyntheticScene({ width: 64, height: 48, ndisp: 8, seed: 4 });

beforeAll(async () => {
  await writePng(f('left.png'), scene.left);
  await writePng(f('right.png'), scene.right);
  fs.writeFileSync(f('left.ppm'), encodePnm(scene.left));
  const small = { ...scene.right, width: 63, data: scene.right.data.slice(0, 63 * 48 * 3) };
  await writePng(f('small.png'), small);
  const png = fs.readFileSync(f('left.png'));
  fs.writeFileSync(f('truncated.png'), png.subarray(0, Math.floor(png.length / 2)));
  fs.writeFileSync(f('truncated.ppm'), encodePnm(scene.left).subarray(0, 500));
  fs.writeFileSync(f('garbage.png'), 'this is not an image');
  const gt = Float32Array.from(scene.groundTruth!);
  writePfm(f('gt.pfm'), 64, 48, gt);
});

describe('match', () => {
  test('writes a disparity PNG scaled to fill 0–255 and a PFM in pixels; reports energies per cycle', async () => {
    const r = await cli('match', f('left.png'), f('right.png'), '--ndisp', 8, '-o', f('d.png'), '--pfm', f('d.pfm'), '--backend', 'bk', '--cycles', 4);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/energy after init: \d+/);
    // Four cycles, or fewer when one changes nothing (the run ends there).
    const cycles = [...r.out.matchAll(/^cycle (\d): energy \d+.* changed (\d+) pixels/gm)];
    expect(cycles.length).toBeGreaterThanOrEqual(1);
    expect(cycles.map((c) => Number(c[1]))).toEqual([1, 2, 3, 4].slice(0, cycles.length));
    expect(cycles.length === 4 || cycles[cycles.length - 1][2] === '0').toBe(true);
    // 255 / 7 in hundredths, rounded down: the largest disparity 7 is grey 255 (254.94 rounded).
    expect(r.out).toMatch(/disparity × 36\.42, 8-bit\)/);
    const png = await readImage(f('d.png'));
    const pfm = await readImage(f('d.pfm'));
    expect(Array.from(png.data.subarray(0, 64 * 48))).toEqual(Array.from(pfm.data.subarray(0, 64 * 48), (v) => Math.round(v * 36.42)));
  });

  test('--json reports the run; --scale sets the PNG scale', async () => {
    const r = await cli('match', f('left.ppm'), f('right.png'), '--ndisp', 8, '-o', f('d2.png'), '--scale', 10, '--json', '--cycles', 1);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.pngScale).toBe(10);
    expect(j.cycles).toHaveLength(1);
    expect(j.backend).toBe('bk');
  });

  test.each([
    [['match', 'nope.png', 'right.png', '--ndisp', 8, '-o', 'x.png'], /left image .*nope\.png: no such file/],
    [['match', 'left.png', 'truncated.png', '--ndisp', 8, '-o', 'x.png'], /truncated\.png/],
    [['match', 'left.png', 'truncated.ppm', '--ndisp', 8, '-o', 'x.png'], /truncated\.ppm/],
    [['match', 'left.png', 'garbage.png', '--ndisp', 8, '-o', 'x.png'], /garbage\.png/],
    [['match', 'left.png', 'small.png', '--ndisp', 8, '-o', 'x.png'], /size mismatch: left .*64×48.*small\.png is 63×48/],
    [['match', 'left.png', 'right.png', '--ndisp', 0, '-o', 'x.png'], /--ndisp/],
    [['match', 'left.png', 'right.png', '--ndisp', 64, '-o', 'x.png'], /--ndisp: .*width 64/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '--lambda', -1, '-o', 'x.png'], /--lambda/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '--lambda', 'NaN', '-o', 'x.png'], /--lambda/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '--truncation', -2, '-o', 'x.png'], /--truncation/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '--tau', -5, '-o', 'x.png'], /--tau/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '--tau', 'NaN', '-o', 'x.png'], /--tau/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '--cycles', 'many', '-o', 'x.png'], /--cycles/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '--window', 4, '-o', 'x.png'], /--window/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '--cue-factor', 0.5, '-o', 'x.png'], /--cue-factor/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '--scale', 100000, '-o', 'x.png'], /--png-scale|--scale/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '-o', 'no/such/dir/x.png'], /--output: folder .* does not exist/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '-o', 'x.png', '--checkpoint', 'no/such/dir/c.pfm'], /--checkpoint: folder .* does not exist/],
  ])('bad input %j is a one-line error, exit 1, no output file', async (args, message) => {
    const before = listing();
    const r = await cli(...args.map((a) => (typeof a === 'string' && /\.(png|ppm)$/.test(a) && !a.includes('/') ? f(a) : a)));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^stereocut: /);
    expect(r.err.split('\n')).toHaveLength(1);
    expect(r.err).toMatch(message);
    expect(listing()).toEqual(before);
  });

  test('an error names the option as its own command line spells it, whatever other commands run beside it', async () => {
    // The png-scale check comes after the images are read: both calls are in flight at once.
    const run = (flag: string): Promise<{ code: number; err: string }> => cli('match', f('left.png'), f('right.png'), '--ndisp', 8, flag, 100000, '-o', f('never.png'));
    for (let k = 0; k < 3; k++) {
      const [old, current, other] = await Promise.all([run('--scale'), run('--png-scale'), run('--png-scale')]);
      expect([old.code, current.code, other.code]).toEqual([1, 1, 1]);
      expect(old.err).toMatch(/^stereocut: --scale: got '100000', expected at most/);
      expect(current.err).toMatch(/^stereocut: --png-scale: got '100000', expected at most/);
    }
    expect(fs.existsSync(f('never.png'))).toBe(false);
  });

  test.each([
    [['match', 'left.png', 'right.png', '--ndisp', 8, '--cost', 'ncc', '-o', 'x.png'], /cost/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '--graph', 'sideways', '-o', 'x.png'], /graph/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '--backend', 'quantum', '-o', 'x.png'], /backend/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '--order', 'alphabetical', '-o', 'x.png'], /order/],
  ])('a value outside an option\'s choices %j is a refused value (exit 1)', async (args, message) => {
    const before = listing();
    const r = await cli(...args.map((a) => (typeof a === 'string' && /\.png$/.test(a) ? f(a) : a)));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(message);
    expect(listing()).toEqual(before);
  });

  test.each([
    [['match', 'left.png', 'right.png', '-o', 'x.png'], /ndisp/],
    [['match', 'left.png', 'right.png', '--ndisp', 8, '-o', 'x.png', '--frobnicate'], /frobnicate/],
    [['teleport'], /teleport/],
  ])('a command line that cannot be parsed %j is a usage error (exit 2)', async (args, message) => {
    const before = listing();
    const r = await cli(...args.map((a) => (typeof a === 'string' && /\.png$/.test(a) ? f(a) : a)));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(listing()).toEqual(before);
  });

  test('--checkpoint holds the disparity after every cycle; a run continued from it with --init ends where an uninterrupted run ends', async () => {
    // The same command with --init CHECKPOINT runs the cycles after the checkpoint's (test/checkpoint-resume.test.ts: with the check and skips too).
    const common = ['--ndisp', 8, '--backend', 'bk', '--no-skip-unchanged', '--no-lr-check', '--json'];
    const full = JSON.parse((await cli('match', f('left.png'), f('right.png'), ...common, '--cycles', 4, '-o', f('ck-full.png'), '--pfm', f('ck-full.pfm'), '--checkpoint', f('ck-full-cp.pfm'))).out);
    expect(full.checkpoint).toBe(f('ck-full-cp.pfm'));
    expect((await readImage(f('ck-full-cp.pfm'))).data).toEqual((await readImage(f('ck-full.pfm'))).data);
    const first = JSON.parse((await cli('match', f('left.png'), f('right.png'), ...common, '--cycles', 2, '-o', f('ck-a.png'), '--checkpoint', f('ck.pfm'))).out);
    expect(first.cycles.map((c: { energy: { total: number } }) => c.energy.total)).toEqual(full.cycles.slice(0, 2).map((c: { energy: { total: number } }) => c.energy.total));
    const rest = await cli('match', f('left.png'), f('right.png'), ...common, '--cycles', 4, '--init', f('ck.pfm'), '-o', f('ck-b.png'), '--pfm', f('ck-b.pfm'), '--checkpoint', f('ck2.pfm'));
    expect(rest.code).toBe(0);
    const second = JSON.parse(rest.out);
    expect(second.initialEnergy.total).toBe(full.cycles[1].energy.total);
    expect(second.finalEnergy.total).toBe(full.finalEnergy.total);
    expect((await readImage(f('ck-b.pfm'))).data).toEqual((await readImage(f('ck-full.pfm'))).data);
    expect((await readImage(f('ck2.pfm'))).data).toEqual((await readImage(f('ck-full.pfm'))).data);
    // The checkpoint given to --init is an input: a checkpoint of the continued run is never written over it.
    const over = await cli('match', f('left.png'), f('right.png'), ...common, '--cycles', 4, '--init', f('ck.pfm'), '-o', f('ck-c.png'), '--checkpoint', f('ck.pfm'));
    expect([over.code, over.err]).toEqual([1, expect.stringMatching(/^stereocut: --checkpoint: .*ck\.pfm is the --init file/)]);
  });

  test('--help on every command shows an example', async () => {
    for (const c of ['match', 'eval', 'run', 'demo', 'export-mrf', 'solve-mrf']) {
      const r = await cli(c, '--help');
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/Examples:/);
    }
  });
});

describe('eval', () => {
  test('scores a PFM against a ground-truth file and a PNG with --disp-scale identically', async () => {
    await cli('match', f('left.png'), f('right.png'), '--ndisp', 8, '-o', f('e.png'), '--pfm', f('e.pfm'), '--scale', 30);
    const a = await cli('eval', f('e.pfm'), f('gt.pfm'), '--json', '--threshold', 1, 2);
    const b = await cli('eval', f('e.png'), f('gt.pfm'), '--disp-scale', 30, '--json', '--threshold', 1, 2);
    expect(a.code).toBe(0);
    expect(JSON.parse(a.out).regions).toEqual(JSON.parse(b.out).regions);
    expect(JSON.parse(a.out).thresholds).toEqual([1, 2]);
  });

  test.each([
    [['eval', 'missing.pfm', 'gt.pfm'], 1, /missing\.pfm: no such file/],
    [['eval', 'e.png', 'gt.pfm'], 1, /--disp-scale/],
    [['eval', 'e.pfm'], 1, /scene folder or a ground-truth file/],
    [['eval', 'e.pfm', 'left.png'], 1, /--scale/],
    [['eval', 'e.pfm', 'gt.pfm', '--threshold', -1], 1, /--threshold/],
    [['eval', 'e.pfm', 'small.png', '--scale', 4], 1, /size mismatch/],
    [['eval', 'e.pfm', 'gt.pfm', '--mask', 'disc'], 1, /no disc mask/],
    [['eval', 'e.pfm', 'gt.pfm', '--error-image', 'err.png'], 1, /--error-image: needs a scene folder/],
  ])('bad input %j', async (args, code, message) => {
    const before = listing();
    const r = await cli(...args.map((a) => (typeof a === 'string' && /\.(png|pfm)$/.test(a) ? f(a) : a)));
    expect(r.code).toBe(code);
    expect(r.err).toMatch(message);
    expect(listing()).toEqual(before);
  });
});

describe('export-mrf / solve-mrf', () => {
  test('export then solve reproduces the energies of match on the same pair', async () => {
    const e = await cli('export-mrf', f('left.png'), f('right.png'), '--ndisp', 8, '-o', f('s.smrf'), '--labels', f('s.u16'));
    expect(e.code).toBe(0);
    const energy = readSmrf(f('s.smrf'));
    const init = readLabeling(f('s.u16'), 64, 48, 8);
    const s = await cli('solve-mrf', f('s.smrf'), '--init', f('s.u16'), '-o', f('s.out.u16'), '--json');
    expect(s.code).toBe(0);
    const j = JSON.parse(s.out);
    expect(j.initialEnergy.total).toBe(computeEnergy(energy, init).total);
    expect(j.finalEnergy.total).toBe(computeEnergy(energy, readLabeling(f('s.out.u16'), 64, 48, 8)).total);
    // The exported energy is the left view's; match's energies with the left–right check are those of both views as one energy.
    const m = JSON.parse((await cli('match', f('left.png'), f('right.png'), '--ndisp', 8, '-o', f('m.png'), '--no-lr-check', '--json')).out);
    expect(m.finalEnergy.total).toBe(j.finalEnergy.total);
    const both = JSON.parse((await cli('match', f('left.png'), f('right.png'), '--ndisp', 8, '-o', f('m2.png'), '--json')).out);
    expect(both.finalEnergy.total).toBeGreaterThan(m.finalEnergy.total);
  });

  test('solve-mrf --checkpoint holds the labeling after the last cycle, and refuses a missing folder before any work', async () => {
    const s = await cli('solve-mrf', f('s.smrf'), '--init', f('s.u16'), '-o', f('s.out2.u16'), '--checkpoint', f('s.cp.u16'), '--cycles', 2);
    expect(s.code).toBe(0);
    expect(readLabeling(f('s.cp.u16'), 64, 48, 8)).toEqual(readLabeling(f('s.out2.u16'), 64, 48, 8));
    const before = listing();
    const bad = await cli('solve-mrf', f('s.smrf'), '-o', f('never2.u16'), '--checkpoint', f('no/such/dir/c.u16'));
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/--checkpoint: folder .* does not exist/);
    expect(listing()).toEqual(before);
  });

  test.each([
    [(b: Buffer) => { b.write('XMRF1', 0, 'latin1'); return b; }, /wrong magic/],
    [(b: Buffer) => b.subarray(0, b.length - 8), /size is \d+ bytes/],
  ])('a corrupt SMRF file is refused naming it', async (corrupt, message) => {
    const bad = corrupt(Buffer.from(fs.readFileSync(f('s.smrf'))));
    fs.writeFileSync(f('bad.smrf'), bad);
    const r = await cli('solve-mrf', f('bad.smrf'), '-o', f('never.u16'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/bad\.smrf/);
    expect(r.err).toMatch(message);
    expect(fs.existsSync(f('never.u16'))).toBe(false);
  });
});

describe('run and demo', () => {
  test('demo writes its images and prints the bad-pixel score', async () => {
    const r = await cli('demo', '--out', f('demo'), '--width', 64, '--height', 48);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/bad pixels \(nonocc, > 1 px\): \d+\.\d\d%/);
    for (const file of ['disp.png', 'disp.pfm', 'error.png', 'disp-color.png', 'metrics.json']) expect(fs.existsSync(path.join(f('demo'), file))).toBe(true);
  });

  test('run on a folder that is not a scene names what it looked for', async () => {
    fs.mkdirSync(f('empty'));
    const r = await cli('run', f('empty'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/empty/);
    const r2 = await cli('run', f('nowhere'));
    expect(r2.err).toMatch(/scene folder .*nowhere: no such folder/);
  });

  test('the installed launcher exits non-zero with one line on stderr', () => {
    const bin = path.join(__dirname, '..', 'bin', 'stereocut.js');
    if (!fs.existsSync(path.join(__dirname, '..', 'dist', 'app', 'cli.js'))) {
      throw new Error('dist/ is missing: run npm run build (npm ci does it through the prepare script)');
    }
    const r = spawnSync(process.execPath, [bin, 'match', f('nope.png'), f('right.png'), '--ndisp', '8', '-o', f('x.png')], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/nope\.png/);
  });

  test('a bad STEREOCUT_GPU_BOUNDS_CHECKS is refused, naming the variable, with nothing written', () => {
    const bin = path.join(__dirname, '..', 'bin', 'stereocut.js');
    const before = listing();
    const r = spawnSync(process.execPath, [bin, 'match', f('left.png'), f('right.png'), '--ndisp', '8', '-o', f('bounds.png'), '--backend', 'auto'], {
      encoding: 'utf8', env: { ...process.env, STEREOCUT_GPU_BOUNDS_CHECKS: 'yes' },
    });
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/STEREOCUT_GPU_BOUNDS_CHECKS: expected 0 or 1, got 'yes'/);
    expect(listing()).toEqual(before);
  });
});
