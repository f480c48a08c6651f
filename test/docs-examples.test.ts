import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { generateSyntheticScene } from '../data/synthetic';
import { panFrames } from '../data/panSequence';
import { readImage, writePfm, writePng, writePnm } from '../data/imageIO';
import type { Raster } from '../data/raster';
import { loadScene } from '../data/scene';
import { main } from '../app/cli';
import { findMiddlebury } from './support/middleburyData';
import { FULL_TESTS, scaled } from './support/testScope';
import { writeSceneFolder } from './support/tuneSupport';
import { readmeExamples, shellWords, stereocutArgs } from './support/commandLines';

/**
 * Every command example of the README and of every `--help` runs here, as
 * written: each in a fresh folder holding the files it names (im2.png,
 * gt.png, teddy.smrf, a MiddEval3 tree, … made from the synthetic generator;
 * teddy/ and disp.pfm from the real teddy), its words expanded by bash as a
 * shell would (`$STEREO_DATA`, braces), and run by main() in this process.
 * Examples that read `$STEREO_DATA` need the Middlebury scenes; the few that
 * take minutes on two cores, and a second 320×240 demo (the README's runs
 * the same command with another seed), run with STEREOCUT_FULL_TESTS=1 (as
 * CI does).
 * By default the examples run on smaller inputs of the same kinds: the
 * synthetic files at 96×72 instead of 160×120, and `$STEREO_DATA` a folder
 * of the scenes the examples name, each cropped to its central third in
 * each direction (same files, names and formats); STEREOCUT_FULL_TESTS=1
 * runs them on the whole scenes.
 */

const ROOT = path.resolve(__dirname, '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const CLI_SOURCE = fs.readFileSync(path.join(ROOT, 'app', 'cli.ts'), 'utf8');
/** The Middlebury scenes as found; the examples read `DATA` (set by makeFixtures): these, or their crops. */
const FOUND_DATA = findMiddlebury();
let DATA = FOUND_DATA;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-examples-'));
const fixtures = path.join(tmp, 'fixtures');
/** The size of the synthetic pairs the examples name (im2.png, left/0000.png, …). */
const [FW, FH] = [scaled(160, 96), scaled(120, 72)];
/** The scenes the examples that run by default name (the others run only under STEREOCUT_FULL_TESTS=1, on the whole scenes). */
const CROPPED_SCENES = ['tsukuba', 'venus', 'map', 'teddy'];
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The examples of every command's --help (declared with .example('$0 …') in app/cli.ts). */
const helpExamples = (): string[] => [...CLI_SOURCE.matchAll(/\.example\('\$0 ([^']*)'/g)].map((m) => `stereocut ${m[1]}`);

/**
 * Examples that take minutes on two cores (four or ten real scenes, tuning
 * (whose worker threads each compile the sources under ts-jest), bench),
 * or that repeat another example's command with other values (a second
 * 320×240 demo), with why. The default metric and the random draws that the
 * README's tune examples rely on are tested in tune.test.ts.
 */
const HEAVY: Record<string, string> = {
  'npx stereocut run $STEREO_DATA/{tsukuba,venus,teddy,cones}': 'four scenes with their own parameters',
  'npx stereocut tune $STEREO_DATA/{tsukuba,venus} -p lambda=4,5,6 -p census-window=5x5,7x7 --backend bk --out-dir tune-out': '14 trials',
  'npx stereocut tune $STEREO_DATA/{tsukuba,map} --random 6 --search-seed 7 -p lambda=3:12 -p cost=census,sad+sgrad --out-dir tune-out --resume': '14 trials',
  'stereocut tune $STEREO_DATA/tsukuba $STEREO_DATA/map -p lambda=4,8 --backend bk --out-dir tune-out': '6 trials on worker threads',
  'stereocut tune $STEREO_DATA/tsukuba $STEREO_DATA/map --random 4 -p lambda=3:12 -p cue-factor=1:3 --out-dir tune-out --resume': '10 trials on worker threads',
  'npm run bench:cpu': 'every technique switch on tsukuba and teddy',
  'stereocut bench --backend bk': 'every technique switch on tsukuba and teddy',
  'stereocut match teddy/im2.png teddy/im6.png --ndisp 60 -o disp.png --pfm disp.pfm': 'teddy at full size',
  'stereocut demo --scene-seed 3 --width 320 --height 240 --out-dir demo-3': "a second 320×240 demo: the README's `npx stereocut demo --width 320 --height 240 --scene-seed 7 --out-dir demo-7` runs the same options by default",
};

/** Examples that cannot run here, with why (each is covered elsewhere or needs a GPU). */
const ELSEWHERE: Record<string, string> = {
  'npx stereocut accuracy $STEREO_DATA/{tsukuba,venus,sawtooth,map,teddy,cones,Rocks1,Baby1,Art_ThirdSize,Adirondack_TrainingQ}': 'test/middlebury-accuracy.test.ts runs it (STEREOCUT_FULL_TESTS=1) and holds its table against OpenCV StereoSGBM, scene by scene',
  'npm install && npx stereocut demo': 'test/package-install.test.ts installs the packed package and runs `npx stereocut demo` from it',
  'npm test': 'the suite itself',
  'stereocut bench --backend gpu bk --repeat 3 --json-out bench.json --markdown BENCHMARKS.md': 'needs a WebGPU adapter (the device benchmarks run it on a GPU machine)',
  'npx stereocut worker --queue redis://:SECRET@HOST:6379/study --backend gpu': 'needs a Redis server at the URL; test/tune-queue.test.ts runs workers against a real redis-server',
  'npx stereocut tune $STEREO_DATA -p lambda=3:12:1 --queue redis://:SECRET@HOST:6379/study --out-dir tune-out': 'needs a Redis server at the URL; test/tune-queue.test.ts runs tune --queue against a real redis-server',
  'stereocut run $STEREO_DATA/tsukuba $STEREO_DATA/venus --queue redis://localhost:6379/scenes --out-dir results': 'needs a Redis server at the URL; test/tune-queue.test.ts runs run --queue against a real redis-server',
  'stereocut tune $STEREO_DATA/tsukuba -p lambda=4,5,6 --queue redis://localhost:6379/study --out-dir tune-out': 'needs a Redis server at the URL; test/tune-queue.test.ts runs tune --queue against a real redis-server',
  'stereocut worker --queue redis://localhost:6379/study --concurrency 4 --backend bk': 'needs a Redis server at the URL; test/tune-queue.test.ts runs workers against a real redis-server',
  'stereocut trial --plan plan.json --index 0 --out-dir rows --backend bk': 'needs the plan the --plan example writes; test/tune-index.test.ts runs plan, trials and collect in turn',
  'stereocut tune --collect rows --out-dir tune-out': 'needs the rows trial writes; test/tune-index.test.ts runs plan, trials and collect in turn',
};

function cropRaster(r: Raster, x0: number, y0: number, w: number, h: number): Raster {
  const C = r.channels;
  const data = new Float32Array(w * h * C);
  for (let y = 0; y < h; y++) data.set(r.data.subarray(((y0 + y) * r.width + x0) * C, ((y0 + y) * r.width + x0 + w) * C), y * w * C);
  return { ...r, width: w, height: h, data };
}

/** A copy of the scene folder `src` at `dst` with every image (the pair, ground truths, masks) cropped to its central third in each direction, in its own format. */
async function cropSceneFolder(src: string, dst: string): Promise<void> {
  fs.mkdirSync(dst, { recursive: true });
  for (const f of fs.readdirSync(src)) {
    const ext = path.extname(f).toLowerCase();
    if (!['.png', '.ppm', '.pgm'].includes(ext)) {
      fs.copyFileSync(path.join(src, f), path.join(dst, f));
      continue;
    }
    const r = await readImage(path.join(src, f));
    const [w, h] = [Math.round(r.width / 3), Math.round(r.height / 3)];
    const part = cropRaster(r, Math.floor((r.width - w) / 2), Math.floor((r.height - h) / 2), w, h);
    if (ext === '.png') await writePng(path.join(dst, f), part);
    else writePnm(path.join(dst, f), part);
  }
}

/** The files the examples name, in one folder copied for each example. */
async function makeFixtures(): Promise<void> {
  if (FOUND_DATA && !FULL_TESTS) {
    DATA = path.join(tmp, 'middlebury');
    for (const scene of CROPPED_SCENES) await cropSceneFolder(path.join(FOUND_DATA, scene), path.join(DATA, scene));
  }
  fs.mkdirSync(fixtures);
  const at = (f: string) => path.join(fixtures, f);
  const a = generateSyntheticScene({ width: FW, height: FH, ndisp: 16, seed: 71 });
  const b = generateSyntheticScene({ width: FW, height: FH, ndisp: 16, seed: 72 });
  for (const [l, r, s] of [['im2.png', 'im6.png', a], ['im0.png', 'im1.png', b], ['left.png', 'right.png', a]] as const) {
    await writePng(at(l), s.left);
    await writePng(at(r), s.right);
  }
  const grey = (v: ArrayLike<number>) => ({ width: FW, height: FH, channels: 1, maxval: 255, data: Float32Array.from(v) });
  await writePng(at('gt.png'), grey(Array.from(a.groundTruth!, (d) => 4 * d)));
  await writePng(at('disp.png'), grey(Array.from(a.groundTruth!, (d) => 4 * Math.max(0, d - 1))));
  await writePng(at('nonocc.png'), grey(Array.from(a.masks.nonocc!, (m) => (m ? 255 : 0))));
  // The camera of the depth and point-cloud examples (a MiddEval3 calib.txt of the pair).
  const cam = `[200 0 ${FW / 2}; 0 200 ${FH / 2}; 0 0 1]`;
  fs.writeFileSync(at('calib.txt'), `cam0=${cam}\ncam1=${cam}\ndoffs=0\nbaseline=100\nwidth=${FW}\nheight=${FH}\nndisp=64\nvmin=0\nvmax=15\n`);
  // The frames of the video examples: a slow pan, as folders (left/, right/) and as numbered files (cam/left_0000.png, …).
  const pan = generateSyntheticScene({ width: FW + 2, height: FH, ndisp: 16, seed: 74 });
  for (const d of ['left', 'right', 'cam']) fs.mkdirSync(at(d));
  for (const [k, f] of panFrames(pan, { frames: 3, width: FW }).entries()) {
    const n = String(k).padStart(4, '0');
    await writePng(at(`left/${n}.png`), f.left);
    await writePng(at(`right/${n}.png`), f.right);
    await writePng(at(`cam/left_${n}.png`), f.left);
    await writePng(at(`cam/right_${n}.png`), f.right);
  }
  await writeSceneFolder(at('MiddEval3/trainingQ/Adirondack'), { seed: 73, width: 64, height: 48, ndisp: 10 });
  const made = await main(['export-mrf', at('im2.png'), at('im6.png'), '--ndisp', '60', '-o', at('teddy.smrf'), '--labels', at('teddy.init.u16')], { out: () => undefined, err: (l) => { throw new Error(l); } });
  if (made !== 0) throw new Error('export-mrf failed');
  if (DATA) {
    // A teddy-sized map for `eval disp.pfm $STEREO_DATA/teddy`, and the pair the transcript matches.
    const teddy = await loadScene(path.join(DATA, 'teddy'));
    writePfm(at('disp.pfm'), teddy.left.width, teddy.left.height, teddy.groundTruth!);
    fs.mkdirSync(at('teddy'));
    for (const f of ['im2.png', 'im6.png']) fs.copyFileSync(path.join(DATA, 'teddy', f), at(path.join('teddy', f)));
  }
}

beforeAll(makeFixtures, 120000);

/**
 * Runs of the examples by stereocut's arguments: the README and the --help texts share some (`npx stereocut video left
 * right …` and `stereocut video left right …`; `npm run bench:cpu` and `stereocut bench --backend bk`), and the same
 * arguments run once, in the same fixtures, each of their examples checking that run.
 */
const runs = new Map<string, Promise<{ code: number; out: string[]; err: string[] }>>();
const runOnce = (cmd: string): Promise<{ code: number; out: string[]; err: string[] }> => {
  const args = stereocutArgs(shellWords(cmd, fixtures, DATA));
  const key = JSON.stringify(args);
  let run = runs.get(key);
  if (!run) runs.set(key, run = runExample(args));
  return run;
};

/** Runs stereocut with `args` in a fresh copy of the fixtures; returns what it printed. */
async function runExample(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const dir = fs.mkdtempSync(path.join(tmp, 'run-'));
  fs.cpSync(fixtures, dir, { recursive: true });
  const out: string[] = [];
  const err: string[] = [];
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out, err };
  } finally {
    process.chdir(cwd);
  }
}

const usesData = (cmd: string): boolean => /\$STEREO_DATA|teddy\/im/.test(cmd) || /^npm run bench/.test(cmd) || /^stereocut bench --backend bk$/.test(cmd);

function exampleTests(source: string, examples: string[]): void {
  test(`${source}: the examples are found`, () => {
    expect(examples.length).toBeGreaterThanOrEqual(source === 'README' ? 15 : 12);
  });
  for (const cmd of examples) {
    const why = ELSEWHERE[cmd] ?? (usesData(cmd) && !DATA ? 'no Middlebury data (set STEREO_DATA)' : HEAVY[cmd] && !FULL_TESTS ? `${HEAVY[cmd]}: STEREOCUT_FULL_TESTS=1 only` : undefined);
    if (why) {
      test.skip(`${source}: ${cmd} (skipped: ${why})`, () => undefined);
      continue;
    }
    test(`${source}: ${cmd}`, async () => {
      const r = await runOnce(cmd);
      expect(r.err.filter((l) => l.startsWith('stereocut:'))).toEqual([]);
      expect(r.code).toBe(0);
      if (cmd.startsWith('stereocut match teddy/')) {
        // The transcript's account, line by line in kind.
        const kinds = [/^450×375 pixels, 60 disparities; cost census 7x7/, /^backend: /, /^energy after init: \d+ \(data \d+, smoothness \d+\)$/, /^cycle 1: energy \d+/, /^cycle 2: energy \d+/, /^left-right check: \d+ inconsistent pixels/, /^time: costs /, /^wrote disp\.png \(disparity × 4[.\d]*[,)].* and disp\.pfm/];
        for (const k of kinds) expect(r.out.some((l) => k.test(l))).toBe(true);
      }
    }, 600000);
  }
}

describe('the README\'s command examples run as written', () => {
  exampleTests('README', readmeExamples(README));
});

describe('every --help example runs as written', () => {
  exampleTests('--help', helpExamples());

  test('every command\'s --help shows its examples', async () => {
    for (const cmd of ['match', 'video', 'eval', 'run', 'accuracy', 'demo', 'export-mrf', 'solve-mrf', 'tune', 'bench']) {
      const out: string[] = [];
      expect(await main([cmd, '--help'], { out: (l) => out.push(l), err: () => undefined })).toBe(0);
      expect(out.join('\n')).toMatch(new RegExp(`Examples:\\n\\s+stereocut ${cmd}(\\s|$)`));
    }
  });
});

describe('the docs stand on their own', () => {
  test('README, DESIGN.md and every --help name no file outside the project (../shared/…)', async () => {
    const texts: [string, string][] = [['README.md', README], ['DESIGN.md', fs.readFileSync(path.join(ROOT, 'DESIGN.md'), 'utf8')]];
    for (const cmd of ['', 'match', 'video', 'eval', 'run', 'accuracy', 'demo', 'export-mrf', 'solve-mrf', 'tune', 'bench']) {
      const out: string[] = [];
      await main([...(cmd ? [cmd] : []), '--help'], { out: (l) => out.push(l), err: () => undefined });
      texts.push([`stereocut ${cmd} --help`, out.join('\n')]);
    }
    for (const [name, text] of texts) expect([name, text.match(/[^\s`(]*(\.\.\/shared\b|shared\/(formats|anchors))[^\s`)]*/g)]).toEqual([name, null]);
  });

  test('every relative link of README.md and DESIGN.md names a file of the project', () => {
    for (const doc of ['README.md', 'DESIGN.md', 'docs/smrf.md', 'docs/reference-figures.md']) {
      const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
      for (const m of text.matchAll(/\]\(([^)#:]+)(#[^)]*)?\)/g)) expect([doc, m[1], fs.existsSync(path.join(ROOT, path.dirname(doc), m[1]))]).toEqual([doc, m[1], true]);
    }
  });
});
