import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readTrialLog } from '../app/tune/records';
import { TUNE_FILES } from '../app/tune/tune';
import type { TrialRecord } from '../app/tune/trial';
import { listFiles, runCli, spawnCli, writeSceneFolder } from './support/tuneSupport';
import { FULL_TESTS } from './support/testScope';
import { main } from '../app/cli';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-tune-cli-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const data = path.join(tmp, 'data');
// By default 12 points (enough to stop a run midway); 24 under STEREOCUT_FULL_TESTS=1.
const LAMBDAS = FULL_TESTS ? 'lambda=2:24:2' : 'lambda=4:24:4';
const GRID = ['-p', LAMBDAS, '-p', 'T=1,2'];
const TOTAL = 2 + (FULL_TESTS ? 12 : 6) * 2 * 2; // hand-set reference per scene + points × 2 scenes

beforeAll(async () => {
  await writeSceneFolder(path.join(data, 'one'), { seed: 21, width: 64, height: 48, ndisp: 10 });
  await writeSceneFolder(path.join(data, 'two'), { seed: 22, width: 64, height: 48, ndisp: 10 });
});

// One view per trial (no left–right check): what is tested is the trial log across a kill, not the energy.
const args = (out: string, ...more: string[]) => ['tune', data, ...GRID, '--no-lr-check', '--backend', 'bk', '--workers', '2', '--out', out, ...more];
const small = (out: string) => ['tune', data, '-p', 'lambda=5,10', '--backend', 'bk', '--workers', '1', '--out', out];

/** Starts a tune, waits until its log has `lines` trials, and kills it with SIGKILL. Returns the trials the log held. */
async function killMidway(out: string, lines: number): Promise<number> {
  const p = spawnCli(args(out));
  const file = path.join(out, TUNE_FILES.jsonl);
  const exited = new Promise<void>((resolve) => p.on('exit', () => resolve()));
  for (;;) {
    await new Promise((r) => setTimeout(r, 5));
    const n = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').length - 1 : 0;
    if (n >= lines || p.exitCode !== null) break;
  }
  p.kill('SIGKILL');
  await exited;
  return fs.readFileSync(file, 'utf8').split('\n').length - 1;
}

const stable = (t: TrialRecord) => ({ ...t, timeMs: 0 });

/** The command line run by main() in this process, with stdout and stderr captured. */
async function inProcess(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('stereocut tune, killed and resumed', () => {
  test('the resumed run has exactly the trials of an uninterrupted one, none twice, same values', async () => {
    const killed = path.join(tmp, 'killed');
    const had = await killMidway(killed, 8);
    expect(had).toBeGreaterThanOrEqual(8);
    expect(had).toBeLessThan(TOTAL); // it really was stopped midway
    expect(fs.existsSync(path.join(killed, TUNE_FILES.csv))).toBe(false);

    const resumed = await runCli(args(killed, '--resume'));
    expect(resumed.stderr).not.toMatch(/stereocut:/);
    expect(resumed.code).toBe(0);
    const m = /(\d+) trials run, (\d+) taken from the log/.exec(resumed.stdout)!;
    expect(Number(m[1]) + Number(m[2])).toBe(TOTAL);
    expect(Number(m[2])).toBeGreaterThanOrEqual(had - 1); // at most a cut-off last line is dropped

    const full = path.join(tmp, 'full');
    const once = await runCli(args(full));
    expect(once.code).toBe(0);

    const a = readTrialLog(path.join(killed, TUNE_FILES.jsonl), false);
    const b = readTrialLog(path.join(full, TUNE_FILES.jsonl), false);
    expect(a).toHaveLength(TOTAL);
    expect(new Set(a.map((t) => t.key)).size).toBe(TOTAL);
    expect(a.map((t) => t.key).sort()).toEqual(b.map((t) => t.key).sort());
    const byKey = new Map(b.map((t) => [t.key, t]));
    for (const t of a) expect(stable(t)).toEqual(stable(byKey.get(t.key)!));

    // The summaries of both runs agree, and with their logs.
    const ja = JSON.parse(fs.readFileSync(path.join(killed, TUNE_FILES.json), 'utf8'));
    const jb = JSON.parse(fs.readFileSync(path.join(full, TUNE_FILES.json), 'utf8'));
    expect(ja.trials.map(stable)).toEqual(jb.trials.map(stable));
    expect(ja.best).toEqual(jb.best);
    const csvA = fs.readFileSync(path.join(killed, TUNE_FILES.csv), 'utf8').split('\n');
    const csvB = fs.readFileSync(path.join(full, TUNE_FILES.csv), 'utf8').split('\n');
    const dropTime = (l: string) => l.split(',').filter((_, i) => i !== csvA[0].split(',').indexOf('time_ms')).join(',');
    expect(csvA.map(dropTime)).toEqual(csvB.map(dropTime));
    expect(once.stdout).toContain('overall best');
  }, 300_000); // three spawned tunes with two worker threads each: on a loaded two-core machine this passes jest's default 120 s

  test('running into a folder that has a log needs --resume', async () => {
    // In this process: what is tested is the refusal, not the process boundary (the test above spawns and kills).
    const out = path.join(tmp, 'twice');
    expect((await inProcess(small(out))).code).toBe(0);
    const before = fs.readFileSync(path.join(out, TUNE_FILES.jsonl), 'utf8');
    const r = await inProcess(small(out));
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim()).toMatch(/^stereocut: --out .*twice: already holds trials.jsonl; pass --resume/);
    expect(fs.readFileSync(path.join(out, TUNE_FILES.jsonl), 'utf8')).toBe(before);
  });
});

describe('stereocut tune, bad input', () => {
  test('unknown parameter, empty range, missing ground truth: one named line, non-zero exit, no files', async () => {
    const noGt = await writeSceneFolder(path.join(tmp, 'nogt', 'bare'), { seed: 23, width: 40, height: 30, ndisp: 8, groundTruth: false });
    const out = path.join(tmp, 'bad-out');
    const cases: [string[], RegExp][] = [
      [['tune', data, '-p', 'lamda=1,2', '--out', out], /^stereocut: --param: unknown parameter 'lamda'/],
      [['tune', data, '-p', 'lambda=30:10:5', '--out', out], /^stereocut: --param lambda=30:10:5: empty range \(start 30 > end 10\)$/],
      [['tune', noGt, '-p', 'lambda=10', '--out', out], /^stereocut: scene .*bare: no ground truth, which --metric bad1-scene needs \(--metric energy needs none\)$/],
      [['tune', data, '-p', 'lambda=10', '--metric', 'bad1-somewhere', '--out', out], /^stereocut: --metric: unknown metric 'bad1-somewhere'/],
    ];
    // In this process (the refusals come before any trial): the same one-line contract as the spawned command line, without a process start per case.
    for (const [argv, re] of cases) {
      const r = await inProcess([...argv, '--backend', 'bk']);
      expect(r.code).not.toBe(0);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr.trim()).toMatch(re);
      expect(fs.existsSync(out)).toBe(false);
    }
    expect(listFiles(path.join(tmp, 'nogt'))).toEqual(['bare/calib.txt', 'bare/im0.png', 'bare/im1.png']);
  });
});
