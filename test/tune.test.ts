import { seededRandom } from '../data/random';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { gridPoints, parseParamSpec, parseSearchSpace, pointKey, randomPoints, TUNABLE_NAMES } from '../app/tune/space';
import { paramProblem, PARAM_SCHEMA } from '../stereo/paramSchema';
import { parseCensusWindow } from '../costs';
import { parseObjective } from '../app/tune/objective';
import { costScale } from '../costs/smoothness';
import { readTrialLog } from '../app/tune/records';
import { tune, TUNE_FILES } from '../app/tune/tune';
import { bestSettings } from '../app/tune/results';
import { Progress } from '../app/tune/progress';
import type { TrialRecord } from '../app/tune/trial';
import { listFiles, writeSceneFolder } from './support/tuneSupport';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-tune-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('search space', () => {
  test('lists, stepped ranges and aliases expand to the expected values', () => {
    expect(parseParamSpec('lambda=10,20,40').domain).toEqual({ kind: 'list', values: [10, 20, 40] });
    expect(parseParamSpec('lambda=0.1:0.5:0.1').domain).toEqual({ kind: 'list', values: [0.1, 0.2, 0.3, 0.4, 0.5] });
    expect(parseParamSpec('T=1:4:1')).toMatchObject({ name: 'truncation', domain: { kind: 'list', values: [1, 2, 3, 4] } });
    expect(parseParamSpec('cue-factor=1,2').name).toBe('cueFactor');
    expect(parseParamSpec('cost=sad,sad+sgrad').domain).toEqual({ kind: 'list', values: ['sad', 'sad+sgrad'] });
    expect(parseParamSpec('cycles=2,converge').domain).toEqual({ kind: 'list', values: [2, 'converge'] });
    expect(parseParamSpec('window=3:9:2').domain).toEqual({ kind: 'list', values: [3, 5, 7, 9] });
    expect(parseParamSpec('lambda=5:30').domain).toEqual({ kind: 'interval', lo: 5, hi: 30, integer: false });
  });

  test('a study accepts a value of each parameter exactly when a match does (the parameters\' schema; random values)', () => {
    const rand = seededRandom(17);
    const pool = [-1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 4, 7, 8, 9.25, 1e9, 2 ** 32, 2 ** 32 - 1];
    for (const name of TUNABLE_NAMES) {
      const spec = PARAM_SCHEMA[name];
      for (let t = 0; t < 12; t++) {
        const value = spec.kind === 'number' || spec.kind === 'cycles' ? pool[Math.floor(rand() * pool.length)]
          : spec.kind === 'choice' ? (rand() < 0.7 ? spec.choices![Math.floor(rand() * spec.choices!.length)] : 'bogus')
            : spec.kind === 'flag' ? (rand() < 0.5 ? 'on' : 'off') : ['7x7', '5x9', '4x4', '1x1', '31x31', '33x3'][Math.floor(rand() * 6)];
        let study: unknown;
        try {
          study = (parseParamSpec(`${name}=${value}`).domain as { values: unknown[] }).values[0];
        } catch {
          study = undefined;
        }
        const asMatch = spec.kind === 'flag' ? value === 'on' : spec.kind === 'censusWindow' ? (() => { try { return parseCensusWindow(String(value)); } catch { return undefined; } })() : value;
        const matchAccepts = asMatch !== undefined && paramProblem(spec, asMatch) === null;
        expect({ name, value, accepted: study !== undefined }).toEqual({ name, value, accepted: matchAccepts });
      }
    }
  });

  test('bad specs are one-line errors naming the option and the parameter', () => {
    const cases: [string, RegExp][] = [
      ['gamma=1,2', /^--param: unknown parameter 'gamma'/],
      ['lambda=40:10:5', /^--param lambda=40:10:5: empty range/],
      ['lambda=', /^--param lambda=: empty list/],
      ['lambda=1,,2', /empty item/],
      ['T=1.5', /truncation: got 1\.5, expected an integer/],
      ['window=4', /window: got 4, expected an odd integer/],
      ['cost=sgd', /unknown cost 'sgd'/],
      ['lambda=1:5:0', /step must be > 0/],
      ['cue-factor=0.5', /cueFactor: got 0\.5, expected a finite number ≥ 1$/],
      ['T=0.2:0.8:0.2', /truncation: got 0\.2, expected an integer/],
      ['lambda', /expected NAME=VALUES/],
    ];
    for (const [spec, re] of cases) {
      let msg = '';
      try { parseParamSpec(spec); } catch (e) { msg = (e as Error).message; }
      expect(msg).toMatch(re);
      expect(msg).not.toContain('\n');
    }
    expect(() => parseSearchSpace(['lambda=1', 'λ=2'])).toThrow(/lambda is given twice/);
    expect(() => gridPoints(parseSearchSpace(['lambda=1:4']))).toThrow(/grid search needs a list or a range with a step/);
    expect(() => parseObjective('bad1-everywhere')).toThrow(/^--metric: unknown metric/);
  });

  test('grid = cartesian product, every point once, key independent of key order', () => {
    const rnd = seededRandom(7);
    for (let trial = 0; trial < 50; trial++) {
      const a = 1 + Math.floor(rnd() * 4);
      const b = 1 + Math.floor(rnd() * 3);
      const c = 1 + Math.floor(rnd() * 3);
      const space = parseSearchSpace([
        `lambda=${Array.from({ length: a }, (_, i) => 5 * (i + 1)).join(',')}`,
        `T=1:${b}:1`,
        `cost=${['sad', 'ssd', 'sad+sgrad'].slice(0, c).join(',')}`,
      ]);
      const pts = gridPoints(space);
      expect(pts).toHaveLength(a * b * c);
      expect(new Set(pts.map(pointKey)).size).toBe(pts.length);
    }
    expect(pointKey({ truncation: 2, lambda: 10 })).toBe(pointKey({ lambda: 10, truncation: 2 }));
  });

  test('random search: same seed same points, distinct points, values inside their domains', () => {
    const space = parseSearchSpace(['lambda=5:40', 'T=1:4', 'cost=sad,ssd']);
    for (let seed = 1; seed <= 20; seed++) {
      const a = randomPoints(space, 15, seed);
      expect(randomPoints(space, 15, seed)).toEqual(a);
      expect(new Set(a.map(pointKey)).size).toBe(15);
      for (const p of a) {
        expect(p.lambda as number).toBeGreaterThanOrEqual(5);
        expect(p.lambda as number).toBeLessThanOrEqual(40);
        expect([1, 2, 3, 4]).toContain(p.truncation);
        expect(['sad', 'ssd']).toContain(p.cost);
      }
    }
    // λ and the cue factor drawn together always make an energy (λ and λ·factor with at most 3 decimals).
    for (const p of randomPoints(parseSearchSpace(['lambda=3:12', 'cue-factor=1:3', 'tau=10:30']), 200, 7)) {
      expect(() => costScale(p.lambda as number, p.cueFactor as number)).not.toThrow();
      expect(p.cueFactor as number).toBeGreaterThanOrEqual(1);
      expect(p.cueFactor as number).toBeLessThanOrEqual(3);
      expect(Math.round((p.tau as number) * 1000) / 1000).toBe(p.tau);
    }
    // A finite space smaller than the count: every point, once.
    expect(randomPoints(parseSearchSpace(['T=1:3', 'cost=sad,ssd']), 50, 1)).toHaveLength(6);
  });
});

/** The CSV as rows of cells (no quoted commas occur in these tests' values except in device names, which we parse with quotes). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  for (const line of text.trimEnd().split('\n')) {
    const cells: string[] = [];
    let cur = '';
    let q = false;
    for (let i = 0; i < line.length; i++) {
      const ch = line[i];
      if (q) {
        if (ch === '"' && line[i + 1] === '"') { cur += '"'; i++; } else if (ch === '"') q = false; else cur += ch;
      } else if (ch === '"') q = true;
      else if (ch === ',') { cells.push(cur); cur = ''; } else cur += ch;
    }
    cells.push(cur);
    rows.push(cells);
  }
  return rows;
}

describe('tune (library)', () => {
  const scenes = ['synthetic:seed=1,width=48,height=36,ndisp=8', 'synthetic:seed=2,width=48,height=36,ndisp=8'];

  test('JSONL, CSV and JSON hold the same trials; best settings are the true minima', async () => {
    const out = path.join(tmp, 'agree');
    const r = await tune({ scenes, params: ['lambda=4,12,24', 'T=1,2'], backend: 'bk', workers: 2, out });
    expect(r.trials).toHaveLength(2 + 3 * 2 * 2);
    const log = readTrialLog(path.join(out, TUNE_FILES.jsonl), false);
    expect(log.map((t) => t.key).sort()).toEqual(r.trials.map((t) => t.key).sort());
    const byKey = new Map(log.map((t) => [t.key, t]));

    const rows = parseCsv(fs.readFileSync(path.join(out, TUNE_FILES.csv), 'utf8'));
    const head = rows[0];
    expect(rows).toHaveLength(1 + log.length);
    const col = (name: string) => head.indexOf(name);
    for (const row of rows.slice(1)) {
      const t = byKey.get(row[col('key')])!;
      expect(t).toBeDefined();
      expect(Number(row[col('objective')])).toBe(t.objective);
      expect(Number(row[col('lambda')])).toBe(t.params.lambda);
      expect(Number(row[col('truncation')])).toBe(t.params.truncation);
      expect(Number(row[col('bad1_nonocc')])).toBe(t.bad.nonocc!['1']);
      expect(Number(row[col('bad2_all')])).toBe(t.bad.all!['2']);
      expect(Number(row[col('energy')])).toBe(t.energy);
    }

    const json = JSON.parse(fs.readFileSync(path.join(out, TUNE_FILES.json), 'utf8')) as { trials: TrialRecord[]; best: ReturnType<typeof bestSettings> };
    expect(json.trials).toEqual(r.trials.map((t) => byKey.get(t.key)));
    // Best per scene and overall, recomputed by brute force from the log.
    for (const sc of r.scenes) {
      const mine = log.filter((t) => t.scene === sc && pointKey(t.point) !== '');
      const min = Math.min(...mine.map((t) => t.objective));
      expect(json.best.perScene[sc].objective).toBe(min);
      expect(json.best.perScene[sc].handSet).toBe(log.find((t) => t.scene === sc && pointKey(t.point) === '')!.objective);
    }
    const means = new Map<string, number[]>();
    for (const t of log) if (pointKey(t.point) !== '') means.set(pointKey(t.point), [...(means.get(pointKey(t.point)) ?? []), t.objective]);
    const bestMean = Math.min(...[...means.values()].map((v) => v.reduce((a, b) => a + b, 0) / v.length));
    expect(json.best.overall!.mean).toBeCloseTo(bestMean, 12);
  });

  test('resume repairs a cut-off last line and runs only the missing trials', async () => {
    const out = path.join(tmp, 'resume-lib');
    const full = await tune({ scenes, params: ['lambda=6,18', 'T=1,3'], backend: 'bk', workers: 1, out, baseline: false });
    const file = path.join(out, TUNE_FILES.jsonl);
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    // Keep three whole trials and half of the fourth, as a kill during a write would.
    fs.writeFileSync(file, lines.slice(0, 3).join('\n') + '\n' + lines[3].slice(0, 25));
    const ran: string[] = [];
    const again = await tune({ scenes, params: ['lambda=6,18', 'T=1,3'], backend: 'bk', workers: 2, out, resume: true, baseline: false, onTrial: (t) => ran.push(t.key) });
    expect(again.skipped).toBe(3);
    expect(ran.sort()).toEqual(full.trials.map((t) => t.key).filter((k) => !lines.slice(0, 3).some((l) => JSON.parse(l).key === k)).sort());
    const log = readTrialLog(file, false);
    expect(log).toHaveLength(full.trials.length);
    expect(new Set(log.map((t) => t.key)).size).toBe(log.length);
    for (const t of again.trials) expect(t.objective).toBe(full.trials.find((u) => u.key === t.key)!.objective);
  });

  test('the default metric scores each scene on its own region: nonocc where the folder has the mask, every known pixel where it has none', async () => {
    const masked = await writeSceneFolder(path.join(tmp, 'regions', 'masked'), { seed: 41, width: 40, height: 30, ndisp: 8 });
    const unmasked = await writeSceneFolder(path.join(tmp, 'regions', 'unmasked'), { seed: 42, width: 40, height: 30, ndisp: 8 });
    fs.rmSync(path.join(unmasked, 'mask0nocc.png'));
    const r = await tune({ scenes: [masked, unmasked], params: ['lambda=4,8'], backend: 'bk', workers: 1 });
    expect(r.metric).toBe('bad1-scene');
    expect(new Set(r.trials.map((t) => t.scene))).toEqual(new Set(['masked', 'unmasked']));
    for (const t of r.trials) {
      expect(t.objective).toBe(t.bad.scene!['1']);
      if (t.scene === 'masked') expect(t.bad.scene).toEqual(t.bad.nonocc);
      else {
        expect(t.bad.nonocc).toBeUndefined();
        expect(t.bad.scene).toEqual(t.bad.all);
      }
    }
  });

  test('bad inputs fail before anything is written', async () => {
    const noGt = await writeSceneFolder(path.join(tmp, 'scenes-nogt', 'plain'), { seed: 3, groundTruth: false });
    const cases: [Parameters<typeof tune>[0], RegExp][] = [
      [{ scenes, params: ['sigma=1'] }, /unknown parameter 'sigma'/],
      [{ scenes, params: ['lambda=9:3:1'] }, /empty range/],
      [{ scenes: [noGt], params: ['lambda=5'] }, /plain: no ground truth, which --metric bad1-scene needs/],
      [{ scenes, params: ['lambda=5'], metric: 'bad1-disc' }, /no disc mask/],
      [{ scenes, params: ['lambda=5'], fixed: { lambda: 3 } }, /also given as a fixed option/],
      [{ scenes, params: ['lambda=5'], workers: 0 }, /--workers/],
    ];
    for (const [o, re] of cases) {
      const out = path.join(tmp, 'bad-out');
      await expect(tune({ ...o, out, backend: 'bk' })).rejects.toThrow(re);
      expect(fs.existsSync(out)).toBe(false);
    }
    // Energy needs no ground truth.
    const r = await tune({ scenes: [noGt], params: ['lambda=5'], metric: 'energy', backend: 'bk', workers: 1 });
    expect(r.trials[1].objective).toBe(r.trials[1].energy);
    expect(listFiles(path.join(tmp, 'scenes-nogt'))).toEqual(['plain/calib.txt', 'plain/im0.png', 'plain/im1.png']);
  });

  test('device backends run trials one after another in this thread, with the same scores as BK', async () => {
    const sc = ['synthetic:seed=1,width=24,height=16,ndisp=4'];
    const gpu = await tune({ scenes: sc, params: ['lambda=5,10'], backend: 'gpujs-cpu', workers: 2 });
    const bk = await tune({ scenes: sc, params: ['lambda=5,10'], backend: 'bk', workers: 2 });
    expect(gpu.parallel).toBe(1);
    expect(gpu.backend).toBe('gpujs-cpu');
    expect(bk.parallel).toBe(2);
    // Exact max-flow on every backend: the same labels, so the same scores.
    expect(gpu.trials.map((t) => t.objective)).toEqual(bk.trials.map((t) => t.objective));
  });
});

describe('progress', () => {
  test('plain lines off a terminal, one redrawn bar on a terminal, done/total and ETA in both', () => {
    const plain: string[] = [];
    const p = new Progress(4, 1, { isTTY: false, write: (s) => plain.push(s) });
    p.tick('a');
    p.tick('b');
    expect(plain[0]).toMatch(/^\[2\/4\] a \(ETA .+\)\n$/);
    expect(plain[1]).toMatch(/^\[3\/4\] b /);
    const tty: string[] = [];
    const q = new Progress(2, 0, { isTTY: true, write: (s) => tty.push(s) });
    q.tick('x');
    q.tick('y');
    expect(tty[0]).toMatch(/^\r\[#{12}-{12}\] 1\/2 50% ETA \S+/);
    expect(tty[1]).toMatch(/^\r\[#{24}\] 2\/2 100% ETA 0s/);
    expect(tty[2]).toBe('\n');
  });
});
