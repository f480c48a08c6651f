import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../app/cli';
import { generateSyntheticScene } from '../data/synthetic';
import { writePng, writePfm } from '../data/imageIO';
import { seededRandom } from '../data/random';
import { encodeLabeling } from '../data/smrf';
import { writeSceneFolder } from './support/tuneSupport';
import { treeSnapshot } from './support/treeSnapshot';

/**
 * The property of issue 40: for random command lines drawn from every
 * command's options, with an output aimed at one of the command's inputs
 * (by its path, `./`, `..`, a relative path, a symbolic link, a hard link,
 * a linked folder, or an input that is itself a link to the output), the
 * command is refused in one line, exit 1, no file anywhere changes and
 * nothing is written. (demo reads no file and accuracy writes none.)
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-property-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const f = (...names: string[]): string => path.join(tmp, ...names);

const snapshot = (): Map<string, string> => treeSnapshot(tmp);

const W = 24;
const H = 16;
const SCENE = f('tree', 'trainingQ', 'Toy');
const SCENE_FILES = ['im0.png', 'im1.png', 'disp0GT.pfm', 'mask0nocc.png', 'calib.txt'].map((n) => path.join(SCENE, n));

beforeAll(async () => {
  const s = generateSyntheticScene({ width: W, height: H, ndisp: 4, seed: 6 });
  fs.mkdirSync(f('in'));
  fs.mkdirSync(f('links'));
  fs.mkdirSync(f('elsewhere'));
  await writePng(f('in', 'L.png'), s.left);
  await writePng(f('in', 'R.png'), s.right);
  writePfm(f('in', 'Lgrey.pfm'), W, H, Float32Array.from({ length: W * H }, (_, i) => s.left.data[3 * i]));
  writePfm(f('in', 'Rgrey.pfm'), W, H, Float32Array.from({ length: W * H }, (_, i) => s.right.data[3 * i]));
  writePfm(f('in', 'init.pfm'), W, H, Float32Array.from(s.groundTruth!));
  fs.writeFileSync(f('in', 'init.u16'), encodeLabeling(new Uint16Array(W * H)));
  fs.writeFileSync(f('in', 'bench.json'), JSON.stringify({ version: 1, command: 'x', date: '', commit: '', host: { cpu: '', cores: 1, node: '', platform: '' }, scenes: [], backends: [], techniques: [], cycles: 1, repeat: 1, k: { baseline: 8, tuned: 16 }, runs: [] }));
  await writeSceneFolder(SCENE, { seed: 2, width: W, height: H, ndisp: 4 });
  // A sequence of one frame for video (its folders of frames).
  for (const side of ['left', 'right']) fs.mkdirSync(f('frames', side), { recursive: true });
  fs.copyFileSync(f('in', 'L.png'), f('frames', 'left', 'a.png'));
  fs.copyFileSync(f('in', 'R.png'), f('frames', 'right', 'a.png'));
  // A real energy, so that a command the guard missed would run and write.
  const err: string[] = [];
  expect(await main(['export-mrf', f('in', 'L.png'), f('in', 'R.png'), '--ndisp', '4', '-o', f('in', 'e.smrf')], { out: () => undefined, err: (l) => err.push(l) })).toBe(0);
});

/** An output option of a command: its flag, the extension it must have ('' for a folder), and how its files lie under it. */
interface Out { flag: string; ext: string }
/** A command: its fixed arguments with its inputs, the inputs its outputs may be aimed at, its outputs, and options that vary. */
interface Cmd { name: string; args: () => string[]; inputs: string[]; outputs: Out[]; extra: string[][] }

const pick = <T>(rand: () => number, a: readonly T[]): T => a[Math.floor(rand() * a.length)];

function commands(rand: () => number): Cmd[] {
  const pairs = [[f('in', 'L.png'), f('in', 'R.png')], [f('in', 'Lgrey.pfm'), f('in', 'Rgrey.pfm')]];
  const pair = pick(rand, pairs);
  return [
    { name: 'match', args: () => ['match', ...pair, '--ndisp', '4', '--backend', 'bk'], inputs: [...pair, f('in', 'init.pfm')],
      outputs: [{ flag: '-o', ext: '.png' }, { flag: '--pfm', ext: '.pfm' }, { flag: '--checkpoint', ext: '.pfm' }],
      extra: [['--init', f('in', 'init.pfm')], ['--cycles', '1'], ['--no-lr-check'], ['--cost', 'sad'], ['--lambda', '7'], ['--json'], ['-q']] },
    { name: 'eval', args: () => ['eval', f('in', 'init.pfm'), SCENE], inputs: [f('in', 'init.pfm'), ...SCENE_FILES],
      outputs: [{ flag: '--error-image', ext: '.png' }], extra: [['--threshold', '1', '2'], ['--json'], ['--mask', 'nonocc']] },
    { name: 'export-mrf', args: () => ['export-mrf', ...pair, '--ndisp', '4'], inputs: pair,
      outputs: [{ flag: '-o', ext: '.smrf' }, { flag: '--labels', ext: '.u16' }], extra: [['--cost', 'ssd'], ['--init', 'zero']] },
    { name: 'solve-mrf', args: () => ['solve-mrf', f('in', 'e.smrf'), '--backend', 'bk'], inputs: [f('in', 'e.smrf'), f('in', 'init.u16')],
      outputs: [{ flag: '-o', ext: '.u16' }, { flag: '--png', ext: '.png' }, { flag: '--checkpoint', ext: '.u16' }],
      extra: [['--init', f('in', 'init.u16')], ['--cycles', '1'], ['--order', 'random'], ['--json']] },
    { name: 'run', args: () => ['run', SCENE, '--backend', 'bk', '--cycles', '1'], inputs: SCENE_FILES,
      outputs: [{ flag: '--report', ext: '.html' }, { flag: '--middeval3', ext: '' }, { flag: '--out-dir', ext: '' }], extra: [['--json'], ['--threshold', '2'], ['-q']] },
    { name: 'tune', args: () => ['tune', SCENE, '-p', 'lambda=5,9', '--backend', 'bk', '--workers', '1'], inputs: SCENE_FILES,
      outputs: [{ flag: '--out-dir', ext: '' }], extra: [['--resume'], ['--no-baseline'], ['--json']] },
    { name: 'video', args: () => ['video', f('frames', 'left'), f('frames', 'right'), '--ndisp', '4', '--backend', 'bk'], inputs: [f('frames', 'left', 'a.png'), f('frames', 'right', 'a.png')],
      outputs: [{ flag: '--out-dir', ext: '' }], extra: [['--json'], ['--no-warm'], ['--cycles', '1']] },
    { name: 'bench', args: () => ['bench', '--from-json', f('in', 'bench.json')], inputs: [f('in', 'bench.json')],
      outputs: [{ flag: '--json-out', ext: '.json' }, { flag: '--markdown', ext: '.md' }], extra: [['--json'], ['-q']] },
  ];
}

let links = 0;
/** A path that names `target` for an output of extension `ext`, in one of the ways a user could: some need the target's own extension. */
function aimedAt(rand: () => number, target: string, ext: string): string {
  const n = ++links;
  const own = path.extname(target) === ext;
  const forms = ['symlink', 'hardlink', ...(own ? ['same', 'dot', 'dotdot', 'relative', 'folder-link'] : [])];
  switch (pick(rand, forms)) {
    case 'same': return target;
    case 'dot': return path.join(path.dirname(target), '.') + path.sep + '.' + path.sep + path.basename(target);
    case 'dotdot': return `${path.dirname(target)}${path.sep}sub${path.sep}..${path.sep}${path.basename(target)}`;
    case 'relative': return path.relative(process.cwd(), target);
    case 'folder-link': fs.symlinkSync(path.dirname(target), f('links', `d${n}`)); return f('links', `d${n}`, path.basename(target));
    case 'hardlink': fs.linkSync(target, f('links', `h${n}${ext}`)); return f('links', `h${n}${ext}`);
    default: fs.symlinkSync(target, f('links', `s${n}${ext}`)); return f('links', `s${n}${ext}`);
  }
}

/** The command line with `out` aimed at `target`; folder outputs aim their files at it. */
function aim(rand: () => number, cmd: Cmd, out: Out, target: string): string[] {
  if (out.ext !== '') return [out.flag, aimedAt(rand, target, out.ext)];
  if (out.flag === '--middeval3') {
    // The MiddEval3 tree holding the scene, under an algorithm name that makes disp0<NAME>.pfm its ground truth.
    return ['--middeval3', pick(rand, [f('tree'), path.relative(process.cwd(), f('tree')), f('tree', 'trainingQ', '..')]), '--middeval3-name', 'GT'];
  }
  // --out-dir: one of the folder's files is made a link to the input (run: <dir>/Toy/disp.pfm; tune: trials.csv; video: the frame's disparity a.png).
  const dir = f('links', `o${++links}`);
  const file = cmd.name === 'run' ? path.join(dir, 'Toy', pick(rand, ['disp.pfm', 'left.png', 'metrics.json']))
    : cmd.name === 'video' ? path.join(dir, 'a.png') : path.join(dir, pick(rand, ['trials.jsonl', 'trials.csv', 'tune.json']));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (rand() < 0.5) fs.symlinkSync(target, file);
  else fs.linkSync(target, file);
  return ['--out-dir', dir];
}

describe('outputs aimed at inputs, every command', () => {
  it('120 random command lines: refused in one line, exit 1, nothing changed or written', async () => {
    const rand = seededRandom(4040);
    const seen = new Set<string>();
    for (let t = 0; t < 120; t++) {
      const cmd = pick(rand, commands(rand));
      const out = pick(rand, cmd.outputs);
      // A file the command reads (the --init file only when given).
      const extra = cmd.extra.filter(() => rand() < 0.4).flat();
      const read = cmd.inputs.filter((i) => !(i.endsWith('init.pfm') && cmd.name === 'match') || extra.includes(i)).filter((i) => !i.endsWith('init.u16') || extra.includes(i));
      const target = out.flag === '--middeval3' ? path.join(SCENE, 'disp0GT.pfm') : pick(rand, read);
      let argv = [...cmd.args(), ...extra, ...aim(rand, cmd, out, target)];
      // Outputs a command needs (-o) aimed elsewhere when the one aimed at the input is another.
      if (['match', 'export-mrf'].includes(cmd.name) && out.flag !== '-o') argv.push('-o', f('elsewhere', `x${t}${cmd.name === 'match' ? '.png' : '.smrf'}`));
      // An input that is itself a link to the output: the left image given as a link to -o's file (a copy of it).
      if (cmd.name === 'match' && out.flag === '-o' && rand() < 0.25) {
        const o = f('links', `out${t}.png`);
        fs.copyFileSync(argv[1], o);
        fs.symlinkSync(o, f('links', `in${t}.png`));
        argv = argv.map((a, i) => (i === 1 ? f('links', `in${t}.png`) : a));
        argv[argv.indexOf('-o') + 1] = o;
      }
      const before = snapshot();
      const err: string[] = [];
      const code = await main(argv, { out: () => undefined, err: (l) => err.push(l) });
      const why = `${argv.join(' ')}\n${err.join('\n')}`;
      expect([why, code]).toEqual([why, 1]);
      expect([why, err.length]).toEqual([why, 1]);
      expect([why, err[0]]).toEqual([why, expect.stringMatching(/an output never replaces an input/)]);
      expect(snapshot()).toEqual(before);
      seen.add(`${cmd.name} ${out.flag}`);
    }
    // Every output option of every command was drawn.
    expect(seen.size).toBe(commands(() => 0).reduce((s, c) => s + c.outputs.length, 0));
  });
});
