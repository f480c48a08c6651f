import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../app/cli';
import { generateSyntheticScene } from '../data/synthetic';
import { writePng, writePfm } from '../data/imageIO';
import { writeFileAtomic } from '../data/atomicWrite';
import { DEFAULT_PARAMS } from '../stereo/params';
import { match, type MatchEvent } from '../stereo/match';
import { typedValues } from '../app/commands/optionValues';
import { describeRule } from '../stereo/paramSchema';
import { writeSceneFolder } from './support/tuneSupport';

/**
 * The command line as a new user meets it: each bug of issue 27 has a test
 * here (named by what it guards), and every command's bad input is held to
 * the one-line contract: "stereocut: <message naming the option or file>",
 * exit code 1 (a value or file refused) or 2 (the command line cannot be
 * parsed), and no file left behind.
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-everyday-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const f = (name: string): string => path.join(tmp, name);

interface Captured { code: number; out: string; err: string; outLines: string[]; status: string[] }

async function cli(args: (string | number)[], o: { status?: boolean; onOut?: (line: string) => void } = {}): Promise<Captured> {
  const out: string[] = [];
  const err: string[] = [];
  const status: string[] = [];
  const code = await main(args.map(String), {
    out: (l) => { out.push(l); o.onOut?.(l); },
    err: (l) => err.push(l),
    ...(o.status ? { status: (l: string) => status.push(l) } : {}),
  });
  return { code, out: out.join('\n'), err: err.join('\n'), outLines: out, status };
}

/** Every file under the temp folder, to check that a refused command wrote nothing. */
function listing(dir = tmp): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) { out.push(`${path.relative(dir, p)}/`); walk(p); } else out.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

const scene = generateSyntheticScene({ width: 64, height: 48, ndisp: 8, seed: 4 });
const L = f('left.png');
const R = f('right.png');

beforeAll(async () => {
  await writePng(L, scene.left);
  await writePng(R, scene.right);
  writePfm(f('init.pfm'), 64, 48, Float32Array.from(scene.groundTruth!));
  fs.mkdirSync(f('a-folder.png'));
  await writeSceneFolder(f('scenes/one'), { seed: 31, width: 64, height: 48, ndisp: 10 });
  await writeSceneFolder(f('scenes/two'), { seed: 32, width: 64, height: 48, ndisp: 10 });
  expect((await cli(['export-mrf', L, R, '--ndisp', 8, '-o', f('e.smrf')])).code).toBe(0);
});

describe('bug 1: output paths are checked before any work', () => {
  test('-o naming an existing folder is refused at once, naming the option, with no temporary name', async () => {
    const before = listing();
    const t0 = performance.now();
    const r = await cli(['match', L, R, '--ndisp', 8, '-o', f('a-folder.png'), '--backend', 'bk']);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`stereocut: --output: ${f('a-folder.png')} is a folder; give a file name`);
    expect(r.out).toBe(''); // nothing ran: no live account of a match
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(listing()).toEqual(before);
  });

  test('a failed atomic write names the target, never its temporary file', () => {
    expect(() => writeFileAtomic(f('a-folder.png'), 'x')).toThrow(new RegExp(`^cannot write ${f('a-folder.png').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
    try { writeFileAtomic(f('a-folder.png'), 'x'); } catch (e) { expect((e as Error).message).not.toMatch(/\.tmp-/); }
  });
});

describe('bugs 2 and 3: the record says exactly what ran, every parameter included', () => {
  test('--init FILE is recorded as the file and its scale, in the header line and --json', async () => {
    const j = await cli(['match', L, R, '--ndisp', 8, '-o', f('i.png'), '--init', f('init.pfm'), '--cycles', 1, '--backend', 'bk', '--json']);
    expect(j.code).toBe(0);
    const rec = JSON.parse(j.out);
    expect(rec.params.init).toBe('file');
    expect(rec.params.initFile).toBe(f('init.pfm'));
    expect(rec.params.initScale).toBe(1);
    const t = await cli(['match', L, R, '--ndisp', 8, '-o', f('i.png'), '--init', f('init.pfm'), '--cycles', 1, '--backend', 'bk']);
    expect(t.outLines[0]).toMatch(new RegExp(`init file ${f('init.pfm').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')},`));
    expect(t.out).not.toMatch(/init wta/);
  });

  test('--json and metrics.json list every parameter with its effective value (τ from the cost kind when not given)', async () => {
    const j = JSON.parse((await cli(['match', L, R, '--ndisp', 8, '-o', f('p.png'), '--cost', 'sad', '--cycles', 1, '--backend', 'bk', '--json'])).out);
    for (const k of Object.keys(DEFAULT_PARAMS)) expect(j.params).toHaveProperty(k);
    expect(j.params.tau).toBe(20 * 3); // SAD's default: 20 per channel, 3 channels
    expect(j.params.ndisp).toBe(8);
    expect(j.params.init).toBe('wta');
    const d = await cli(['demo', '--out-dir', f('demo-rec'), '--width', 64, '--height', 48, '--cycles', 1, '--backend', 'bk', '--cost', 'ssd']);
    expect(d.code).toBe(0);
    const m = JSON.parse(fs.readFileSync(f('demo-rec/metrics.json'), 'utf8'));
    for (const k of Object.keys(DEFAULT_PARAMS)) expect(m.params).toHaveProperty(k);
    expect(m.params.tau).toBe(400 * 3);
    expect(m.params.cost).toBe('ssd');
  });
});

describe('bug 4: demo says every file it wrote', () => {
  test('the wrote line lists every file in the folder and the PNG scale', async () => {
    const r = await cli(['demo', '--out-dir', f('demo4'), '--width', 64, '--height', 48, '--cycles', 1, '--backend', 'bk']);
    expect(r.code).toBe(0);
    const wrote = r.outLines.find((l) => l.startsWith('wrote'))!;
    for (const file of fs.readdirSync(f('demo4'))) expect(wrote).toContain(file);
    expect(wrote).toMatch(/disp\.png \(disparity × [\d.]+\)/);
    expect(wrote).toContain('gt-color.png');
    expect(wrote).toContain('left.png');
  });
});

describe('bug 5: a bad value is one line naming the option, the value as typed and what is accepted', () => {
  test.each([
    [['--lambda', 'abc'], 1, "stereocut: --lambda: got 'abc', expected a finite number ≥ 0"],
    [['--window', '4'], 1, "stereocut: --window: got '4', expected an odd integer ≥ 1"],
    [['-T', '1.5'], 1, "stereocut: -T: got '1.5', expected an integer in 0..4294967295"],
    [['--truncation=x'], 1, "stereocut: --truncation: got 'x', expected an integer in 0..4294967295"],
    [['--cost', 'ncc'], 1, "stereocut: --cost: got 'ncc', expected one of sad, ssd, sad+sgrad, census"],
    [['--backend', 'quantum'], 1, "stereocut: --backend: got 'quantum', expected one of auto, gpu, gpujs-cpu, bk"],
    [['--cycles', 'many'], 1, "stereocut: --cycles: got 'many', expected an integer ≥ 0 or converge"],
    [['--cycles', '1.5'], 1, "stereocut: --cycles: got '1.5', expected an integer ≥ 0 or converge"],
    [['--levels', '9'], 1, "stereocut: --levels: got '9', expected an integer in 1..8 or auto"],
    [['--levels', '0'], 1, "stereocut: --levels: got '0', expected an integer in 1..8 or auto"],
  ])('match %j', async (bad, code, message) => {
    const before = listing();
    const r = await cli(['match', L, R, '--ndisp', 8, '-o', f('never.png'), ...bad]);
    expect(r.err).toBe(message);
    expect(r.code).toBe(code);
    expect(listing()).toEqual(before);
  });

  test('the rule texts and the typed values come from the one table', () => {
    expect(describeRule({ integer: true, min: 32, max: 4096 })).toBe('an integer in 32..4096');
    expect(describeRule({ above: 0 })).toBe('a finite number > 0');
    expect(typedValues(['--threshold', '1', 'x', '--json', '-T', '3', '--lambda=q'], ['threshold'])).toEqual(['1', 'x']);
    expect(typedValues(['-T', '3', '--lambda=q'], ['truncation', 'T'])).toEqual(['3']);
    expect(typedValues(['-T', '3', '--lambda=q'], ['lambda'])).toEqual(['q']);
  });
});

describe('bug 6: an output extension must name the format written', () => {
  test.each([
    [['match', 'L', 'R', '--ndisp', 8, '-o', 'd.jpg'], /^stereocut: --output: .*d\.jpg ends in \.jpg, but this writes PNG; give a name ending in \.png$/],
    [['match', 'L', 'R', '--ndisp', 8, '-o', 'd.png', '--pfm', 'd2.png'], /^stereocut: --pfm: .*d2\.png ends in \.png, but this writes PFM/],
    [['match', 'L', 'R', '--ndisp', 8, '-o', 'd.png', '--checkpoint', 'c.png'], /^stereocut: --checkpoint: .*c\.png ends in \.png, but this writes PFM/],
    [['eval', 'init.pfm', 'init.pfm', '--error-image', 'err.pfm'], /^stereocut: --error-image: .*err\.pfm ends in \.pfm, but this writes PNG/],
    [['export-mrf', 'L', 'R', '--ndisp', 8, '-o', 'e.png'], /^stereocut: --output: .*e\.png ends in \.png, but this writes SMRF/],
    [['solve-mrf', 'e.smrf', '-o', 'l.png'], /^stereocut: --output: .*l\.png ends in \.png, but this writes U16/],
    [['solve-mrf', 'e.smrf', '-o', 'l.u16', '--png', 'l.pfm'], /^stereocut: --png: .*l\.pfm ends in \.pfm, but this writes PNG/],
    [['run', 'scenes/one', '--report', 'r.txt'], /^stereocut: --report: .*r\.txt should end in \.html$/],
    [['bench', 'synthetic:seed=1,width=40,height=32,ndisp=8', '--json-out', 'b.md'], /^stereocut: --json-out: .*b\.md ends in \.md, but this writes JSON/],
  ])('%j', async (args, message) => {
    const before = listing();
    const r = await cli(args.map((a) => (a === 'L' ? L : a === 'R' ? R : typeof a === 'string' && /\.\w+$/.test(a) && !a.startsWith('synthetic') ? f(a) : a)));
    expect(r.err).toMatch(message);
    expect(r.code).toBe(1);
    expect(listing()).toEqual(before);
  });
});

describe('bug 7: solve-mrf without an output says so before it works', () => {
  test('a note on stderr, ahead of the energies', async () => {
    const r = await cli(['solve-mrf', f('e.smrf'), '--cycles', 1, '--backend', 'bk']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('note: no -o, --png or --checkpoint given: the labeling is not written, only the energies are printed');
    expect(r.out).toMatch(/final energy/);
  });
});

describe('bug 8: run shows every threshold asked for', () => {
  test('--threshold 2 4: a column group per threshold', async () => {
    const r = await cli(['run', f('scenes/one'), '--threshold', 2, 4, '--cycles', 1, '--backend', 'bk']);
    expect(r.code).toBe(0);
    const head = r.outLines.find((l) => l.startsWith('scene'))!;
    for (const c of ['nonocc>2', 'all>2', 'nonocc>4', 'all>4']) expect(head).toContain(c);
  });
});

describe('bug 9: version, help and mistyped commands as npm CLIs answer them', () => {
  const version = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')).version;
  test.each([['--version'], ['-v']])('%s prints the package version', async (flag) => {
    const r = await cli([flag]);
    expect(r).toMatchObject({ code: 0, out: version, err: '' });
  });

  test('-h and help are --help; help CMD is CMD --help', async () => {
    const top = await cli(['--help']);
    expect(top.code).toBe(0);
    expect(top.out).toMatch(/Examples:/);
    expect((await cli(['-h'])).out).toBe(top.out);
    expect((await cli(['help'])).out).toBe(top.out);
    const m = await cli(['match', '--help']);
    expect((await cli(['help', 'match'])).out).toBe(m.out);
    expect(m.out).toMatch(/--ndisp/);
  });

  test('a mistyped command gets a suggestion, exit 2', async () => {
    const r = await cli(['mtch', 'a.png']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^stereocut: unknown command 'mtch'; did you mean match\? \(commands: match, eval, run/);
    expect(r.err.split('\n')).toHaveLength(1);
  });

  test('run with no scene names what is missing, in one line', async () => {
    const r = await cli(['run']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('stereocut: run: missing arguments; usage: stereocut run <scenes..> (see stereocut run --help)');
  });
});

describe('help describes what applies', () => {
  test('export-mrf lists no solver options; its positionals and solve-mrf\'s are described', async () => {
    const e = (await cli(['export-mrf', '--help'])).out;
    for (const o of ['--order', '--backend', '--cycles', '--verify']) expect(e).not.toContain(o);
    expect(e).toMatch(/left +left image/);
    const s = (await cli(['solve-mrf', '--help'])).out;
    expect(s).toMatch(/file +SMRF1 energy/);
    for (const o of ['--order', '--graph', '--seed', '--init', '--backend']) expect(s).toMatch(new RegExp(`${o} .*\\w`));
  });
});

describe('live progress', () => {
  test('match() tells each phase as it ends, in order, and the bar follows the moves', async () => {
    const events: MatchEvent['kind'][] = [];
    await match(scene.left, scene.right, { ndisp: 8, backend: 'bk', cycles: 2, onEvent: (e) => events.push(e.kind) });
    expect(events).toEqual(['start', 'costs', 'solver', 'init', 'initialEnergy', 'cycle', 'cycle', 'leftRightCheck']);
  });

  test('match prints the parameters and the backend before the first cycle ends, a bar on a terminal, notices only on stderr', async () => {
    const r = await cli(['match', L, R, '--ndisp', 8, '-o', f('live.png'), '--cycles', 2], { status: true });
    expect(r.code).toBe(0);
    expect(r.outLines[0]).toMatch(/^64×48 pixels, 8 disparities; cost census 7x7 τ=26 .*, left-right check and fill$/);
    expect(r.outLines[1]).toMatch(/^backend: /);
    expect(r.outLines[2]).toMatch(/^energy after init: /);
    expect(r.outLines[3]).toMatch(/^cycle 1: /);
    expect(r.status.some((s) => /^\[[#-]{24}\] cycle 1\/2 move \d+\/\d+/.test(s))).toBe(true);
    expect(r.status[r.status.length - 1]).toBe(''); // erased at the end
    // No GPU here is normal: 'auto' says nothing about it.
    expect(r.out + r.err).not.toMatch(/WebGPU|warm-up/);
  });

  test('--quiet prints the result only; --json only JSON on stdout', async () => {
    const q = await cli(['match', L, R, '--ndisp', 8, '-o', f('q.png'), '--cycles', 1, '--backend', 'bk', '--quiet'], { status: true });
    expect(q.outLines).toEqual([`wrote ${f('q.png')} (disparity × 36.42, 8-bit)`]);
    expect(q.status).toEqual([]);
    const j = await cli(['match', L, R, '--ndisp', 8, '-o', f('q.png'), '--cycles', 1, '--backend', 'bk', '--json']);
    expect(() => JSON.parse(j.out)).not.toThrow();
  });

  test('run prints a line per scene as it finishes; a SIGINT keeps the finished scenes and their report (exit 130)', async () => {
    const r = await cli(['run', f('scenes/one'), f('scenes/two'), '--cycles', 1, '--backend', 'bk', '--report', f('stopped.html')], {
      onOut: (l) => { if (l.startsWith('[1/2]')) process.emit('SIGINT'); },
    });
    expect(r.code).toBe(130);
    expect(r.out).toMatch(/^\[1\/2\] one: nonocc>1 \d+\.\d\d%/m);
    expect(r.out).not.toMatch(/\[2\/2\]/);
    expect(r.err).toMatch(/stopped by Ctrl-C after 1 of 2 scenes/);
    const html = fs.readFileSync(f('stopped.html'), 'utf8');
    expect(html).toContain('1 scene(s) of 2; stopped by Ctrl-C');
    expect(html).not.toMatch(/units of 1\/1 /);
    expect(process.listenerCount('SIGINT')).toBe(0);
  });
});

describe('one vocabulary: the old spellings stay as aliases', () => {
  test('--out / --out-dir, --scale / --png-scale, --seed is the label-order seed and --scene-seed the scene', async () => {
    const a = await cli(['demo', '--out', f('v1'), '--width', 64, '--height', 48, '--cycles', 1, '--backend', 'bk', '--json']);
    const b = await cli(['demo', '--out-dir', f('v2'), '--width', 64, '--height', 48, '--cycles', 1, '--backend', 'bk', '--json', '--scene-seed', 1, '--seed', 7, '--order', 'random']);
    expect(JSON.parse(a.out).sceneSeed).toBe(1);
    expect(JSON.parse(b.out).params.seed).toBe(7);
    expect(JSON.parse(b.out).sceneSeed).toBe(1);
    const p = JSON.parse((await cli(['match', L, R, '--ndisp', 8, '-o', f('s.png'), '--png-scale', 10, '--cycles', 1, '--json'])).out);
    expect(p.pngScale).toBe(10);
  });
});

describe('every command: bad input is one line naming the option or file, exit code, no file left', () => {
  test.each([
    [['eval', 'nope.pfm', 'init.pfm'], 1, /^stereocut: disparity .*nope\.pfm: no such file$/],
    [['eval', 'init.pfm', 'init.pfm', '--threshold', 'x'], 1, /^stereocut: --threshold: got 'x', expected a finite number ≥ 0$/],
    [['eval', 'init.pfm', 'left.png', '--gt-scale', 0], 1, /^stereocut: --gt-scale: got '0', expected a finite number > 0$/],
    [['eval', 'init.pfm', 'init.pfm', '--mask', 'nope.png'], 1, /^stereocut: --mask .*nope\.png: no such file$/],
    [['run', 'scenes/one', '--ndisp', 0], 1, /^stereocut: --ndisp: got '0', expected an integer > 0$/],
    [['run', 'scenes/one', '--out-dir', 'left.png'], 1, /^stereocut: --out-dir: .*left\.png exists and is not a folder$/],
    [['run', 'scenes/one', '--threshold', -1], 1, /^stereocut: --threshold: got '-1', expected a finite number ≥ 0$/],
    [['run', 'scenes/one', '--report', 'a-folder.png'], 1, /^stereocut: --report: .*a-folder\.png is a folder; give a file name$/],
    [['run', 'scenes/one', '--middeval3', 'left.png'], 1, /^stereocut: --middeval3: .*left\.png exists and is not a folder$/],
    [['run', 'scenes/one', '--frobnicate'], 2, /^stereocut: unknown option --frobnicate \(see stereocut run --help\)$/],
    [['demo', '--width', 8, '--out-dir', 'never-demo'], 1, /^stereocut: --width: got '8', expected an integer in 32..4096$/],
    [['demo', '--scene-seed', 1.5, '--out-dir', 'never-demo'], 1, /^stereocut: --scene-seed: got '1.5', expected an integer in 0..4294967295$/],
    [['demo', '--init', 'init.pfm', '--out-dir', 'never-demo'], 1, /^stereocut: --init: got '.*init\.pfm', expected wta or zero/],
    [['export-mrf', 'L', 'R', '--ndisp', 8, '-o', 'no/such/x.smrf'], 1, /^stereocut: --output: folder .* does not exist/],
    [['export-mrf', 'L', 'R', '--ndisp', 8, '-o', 'x.smrf', '--order', 'random'], 2, /^stereocut: unknown option --order/],
    [['solve-mrf', 'nope.smrf', '-o', 'x.u16'], 1, /^stereocut: SMRF file .*nope\.smrf: no such file$/],
    [['solve-mrf', 'e.smrf', '-o', 'x.u16', '--init', 'nope.u16'], 1, /^stereocut: --init .*nope\.u16: no such file$/],
    [['solve-mrf', 'e.smrf', '-o', 'x.u16', '--seed', 'x'], 1, /^stereocut: --seed: got 'x', expected an integer$/],
    [['tune', 'scenes', '-p', 'lambda=1,2', '--workers', 0, '--out-dir', 'never-tune'], 1, /^stereocut: --workers: got '0', expected an integer ≥ 1$/],
    [['tune', 'scenes', '-p', 'lambda=1,2', '--random', 'x', '--out-dir', 'never-tune'], 1, /^stereocut: --random: got 'x', expected an integer ≥ 1$/],
    [['bench', '--repeat', 0], 1, /^stereocut: --repeat: got '0', expected an integer ≥ 1$/],
    [['bench', '--backend', 'quantum'], 1, /^stereocut: --backend: got 'quantum', expected one of auto, gpu, gpujs-cpu, bk$/],
  ])('%j', async (args, code, message) => {
    const before = listing();
    const r = await cli(args.map((a) => (a === 'L' ? L : a === 'R' ? R : typeof a === 'string' && /\.\w+$|^scenes|^never|^no\//.test(a) && !a.startsWith('--') ? f(a) : a)));
    expect(r.err).toMatch(message);
    expect(r.err.split('\n')).toHaveLength(1);
    expect(r.code).toBe(code);
    expect(listing()).toEqual(before);
  });
});

describe('small rough edges', () => {
  test('a --mask image is named by its file name in the region column; the regions are explained', async () => {
    const mask = { width: 64, height: 48, channels: 1, data: new Float32Array(64 * 48).fill(255), maxval: 255 };
    fs.mkdirSync(f('masks/deep'), { recursive: true });
    await writePng(f('masks/deep/mine.png'), mask);
    const r = await cli(['eval', f('init.pfm'), f('init.pfm'), '--mask', f('masks/deep/mine.png')]);
    expect(r.code).toBe(0);
    const row = r.outLines.find((l) => /mine\.png/.test(l))!;
    expect(row.trim()).toMatch(/^mine\.png /);
    expect(r.out).not.toContain(f('masks/deep'));
    expect(r.out).toMatch(/known = every pixel with ground truth/);
  });

  test('run shows known only where it differs from all, and says what the regions are', async () => {
    const r = await cli(['run', f('scenes/one'), '--cycles', 1, '--backend', 'bk']);
    expect(r.code).toBe(0);
    // The MiddEval3 all mask (mask0nocc non-zero) covers every pixel with ground truth: one column, not two equal ones.
    const head = r.outLines.find((l) => l.startsWith('scene'))!;
    expect(head).toContain('nonocc>1');
    expect(head).toContain('all>1');
    expect(head).not.toContain('known>1');
    expect(r.out).toMatch(/^regions: nonocc = not occluded/m);
  });
});
