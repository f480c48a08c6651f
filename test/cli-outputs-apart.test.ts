import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../app/cli';
import { generateSyntheticScene } from '../data/synthetic';
import { writePng, writePfm } from '../data/imageIO';
import { writeSceneFolder } from './support/tuneSupport';
import { treeSnapshot } from './support/treeSnapshot';

/**
 * No output of any command lands on one of its inputs (issue 40, items 1,
 * 2 and 17): the same file by path, `./`, `..`, a relative path, a symbolic
 * link either way or a hard link is refused with one line naming the option
 * and the input, exit 1, before any work, nothing written and the input's
 * bytes unchanged.
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-apart-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const f = (...names: string[]): string => path.join(tmp, ...names);

interface Captured { code: number; out: string; err: string[] }
async function cli(args: string[]): Promise<Captured> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err };
}

const snapshot = (dir = tmp): Map<string, string> => treeSnapshot(dir);

/** The command is refused in one line naming `option` and `input`, exit 1, and nothing under tmp changed. */
async function refused(args: string[], option: string, input: RegExp): Promise<void> {
  const before = snapshot();
  const r = await cli(args);
  expect(r.err).toHaveLength(1);
  expect(r.err[0]).toMatch(new RegExp(`^stereocut: ${option}: `));
  expect(r.err[0]).toMatch(input);
  expect(r.code).toBe(1);
  expect(snapshot()).toEqual(before);
}

const scene = generateSyntheticScene({ width: 32, height: 24, ndisp: 6, seed: 5 });
const L = f('pair', 'L.png');
const R = f('pair', 'R.png');
const common = ['--ndisp', '6', '--backend', 'bk', '--cycles', '1', '-q'];

beforeAll(async () => {
  fs.mkdirSync(f('pair'));
  await writePng(L, scene.left);
  await writePng(R, scene.right);
  writePfm(f('pair', 'init.pfm'), 32, 24, Float32Array.from(scene.groundTruth!));
  // The same pair as PFM images (samples 0–255).
  const grey = (c: number): Float32Array => Float32Array.from({ length: 32 * 24 }, (_, i) => scene.left.data[i * scene.left.channels] + c);
  writePfm(f('pair', 'L.pfm'), 32, 24, grey(0));
  fs.symlinkSync(L, f('pair', 'link-to-L.png'));
  fs.linkSync(L, f('pair', 'hard-L.png'));
  await writeSceneFolder(f('tree', 'trainingQ', 'Toy'), { seed: 3, width: 32, height: 24, ndisp: 6 });
});

describe('match: no output on an input', () => {
  it('-o on the left image, by path and by ./', async () => {
    await refused(['match', L, R, ...common, '-o', L], '--output', /left image .*L\.png/);
    await refused(['match', L, R, ...common, '-o', f('pair', '.', 'L.png')], '--output', /left image/);
    await refused(['match', L, R, ...common, '-o', f('pair', 'sub', '..', 'R.png')], '--output', /right image/);
  });
  it('-o by a relative path, a symbolic link and a hard link to the right or left image', async () => {
    await refused(['match', L, R, ...common, '-o', path.relative(process.cwd(), R)], '--output', /right image/);
    await refused(['match', L, R, ...common, '-o', f('pair', 'link-to-L.png')], '--output', /same file as the left image/);
    await refused(['match', L, R, ...common, '-o', f('pair', 'hard-L.png')], '--output', /same file as the left image/);
  });
  it('an input that is a link to the output', async () => {
    await refused(['match', f('pair', 'link-to-L.png'), R, ...common, '-o', L], '--output', /left image .*link-to-L\.png/);
  });
  it('--pfm and --checkpoint on a PFM input (the left image, the --init file)', async () => {
    await refused(['match', f('pair', 'L.pfm'), R, ...common, '-o', f('out.png'), '--pfm', f('pair', 'L.pfm')], '--pfm', /left image/);
    await refused(['match', L, R, ...common, '-o', f('out.png'), '--init', f('pair', 'init.pfm'), '--checkpoint', f('pair', 'init.pfm')], '--checkpoint', /--init file/);
  });
  it('two outputs on one file', async () => {
    await refused(['match', L, R, ...common, '-o', f('out.png'), '--pfm', f('same.pfm'), '--checkpoint', f('.', 'same.pfm')], '--checkpoint', /also the file of --pfm/);
  });
});

describe('the other commands: no output on an input', () => {
  it('eval --error-image on a scene file (the mask) or on the disparity map', async () => {
    const toy = f('tree', 'trainingQ', 'Toy');
    await refused(['eval', path.join(toy, 'disp0GT.pfm'), toy, '--error-image', path.join(toy, 'mask0nocc.png')], '--error-image', /input of scene Toy .*mask0nocc\.png/);
    await refused(['eval', path.join(toy, 'disp0GT.pfm'), toy, '--error-image', path.join(toy, 'im0.png')], '--error-image', /im0\.png/);
  });
  it('export-mrf onto its images, solve-mrf onto its energy and its --init labeling', async () => {
    fs.symlinkSync(R, f('pair', 'R-link.u16'));
    await refused(['export-mrf', L, R, '--ndisp', '6', '-o', f('e.smrf'), '--labels', f('pair', 'R-link.u16')], '--labels', /same file as the right image/);
    fs.linkSync(L, f('pair', 'hard-L.smrf'));
    await refused(['export-mrf', L, R, '--ndisp', '6', '-o', f('pair', 'hard-L.smrf')], '--output', /same file as the left image/);
    fs.writeFileSync(f('pair', 'energy.bin'), 'not read: refused first');
    fs.writeFileSync(f('pair', 'x.u16'), 'not read: refused first');
    await refused(['solve-mrf', f('pair', 'energy.bin'), '-o', f('pair', '.', 'energy.bin')], '--output', /SMRF file/);
    await refused(['solve-mrf', f('pair', 'energy.bin'), '--init', f('pair', 'x.u16'), '--checkpoint', f('pair', 'x.u16')], '--checkpoint', /--init file/);
  });
  it('run --middeval3 TREE --middeval3-name GT would replace the scene\'s disp0GT.pfm: refused (item 2)', async () => {
    await refused(['run', f('tree', 'trainingQ', 'Toy'), '--backend', 'bk', '--middeval3', f('tree'), '--middeval3-name', 'GT'], '--middeval3', /input of scene Toy .*disp0GT\.pfm/);
  });
  it('run --out-dir whose scene folder is the scene itself, onto a file the scene reads', async () => {
    // A scene folder whose left image is named like run's left.png output: a 2003-style folder can't, but a link can.
    const own = f('own', 'Toy');
    fs.mkdirSync(own, { recursive: true });
    for (const n of ['im0.png', 'im1.png', 'calib.txt']) fs.copyFileSync(f('tree', 'trainingQ', 'Toy', n), path.join(own, n));
    fs.symlinkSync(path.join(own, 'im0.png'), path.join(own, 'left.png'));
    await refused(['run', own, '--backend', 'bk', '--out-dir', f('own')], '--out-dir', /input of scene Toy .*im0\.png/);
  });
  it('bench --json-out onto its --from-json file', async () => {
    fs.writeFileSync(f('pair', 'b.json'), '{}');
    await refused(['bench', '--from-json', f('pair', 'b.json'), '--json-out', f('pair', '.', 'b.json')], '--json-out', /--from-json file/);
  });
  it('tune --out-dir whose trials.csv is a link to a scene\'s image', async () => {
    fs.mkdirSync(f('tune-out'));
    fs.symlinkSync(f('tree', 'trainingQ', 'Toy', 'im1.png'), f('tune-out', 'trials.csv'));
    await refused(['tune', f('tree', 'trainingQ', 'Toy'), '-p', 'lambda=10,20', '--backend', 'bk', '--out-dir', f('tune-out')], '--out-dir', /same file as the input of scene Toy .*im1\.png/);
  });
});

describe('run --report inside --out-dir (item 17)', () => {
  it('is accepted although --out-dir is made by the run', async () => {
    const out = f('made-by-run');
    const r = await cli(['run', f('tree', 'trainingQ', 'Toy'), '--backend', 'bk', '--cycles', '1', '-q', '--report', path.join(out, 'r.html'), '--out-dir', out]);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    expect(fs.existsSync(path.join(out, 'r.html'))).toBe(true);
    expect(fs.existsSync(path.join(out, 'Toy', 'disp.png'))).toBe(true);
  });
  it('a report in a missing folder that --out-dir does not make is still refused', async () => {
    await refused(['run', f('tree', 'trainingQ', 'Toy'), '--backend', 'bk', '--report', f('nowhere', 'r.html'), '--out-dir', f('elsewhere')], '--report', /folder .*nowhere does not exist/);
  });
});
