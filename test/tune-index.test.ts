import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../app/cli';
import { readTrialLog } from '../app/tune/records';
import type { TrialRecord } from '../app/tune/trial';
import { trialIndex } from '../app/commands/trialCommand';
import { spawnCli, writeSceneFolder } from './support/tuneSupport';

/**
 * The index mode: `tune --plan` lists the trials, `trial --index I` (or the
 * scheduler's variable) runs one and writes its row under the trial's id,
 * `tune --collect` merges the rows into the results of a local run, naming
 * missing and repeated rows.
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-tune-index-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const data = path.join(tmp, 'data');
// Two scenes × (the hand-set reference + 2 points) = 6 trials.
const space = [data, '-p', 'lambda=4,9', '--cycles', '1', '--no-lr-check'];
const plan = path.join(tmp, 'plan.json');
const rowsDir = path.join(tmp, 'rows');

async function inProcess(argv: string[], env?: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const saved = { ...process.env };
  if (env) Object.assign(process.env, env);
  try {
    const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  } finally {
    for (const k of Object.keys(env ?? {})) if (saved[k] === undefined) delete process.env[k];
  }
}

function spawned(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawnCli(args, undefined, { ...process.env, ...env });
    let stdout = '';
    let stderr = '';
    p.stdout!.on('data', (d) => { stdout += d; });
    p.stderr!.on('data', (d) => { stderr += d; });
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const rows = (records: TrialRecord[]) => records
  .map((r) => JSON.stringify({ key: r.key, params: r.params, bad: r.bad, energy: r.energy, objective: r.objective }))
  .sort();

beforeAll(async () => {
  await writeSceneFolder(path.join(data, 'one'), { seed: 41, width: 64, height: 48, ndisp: 10 });
  await writeSceneFolder(path.join(data, 'two'), { seed: 42, width: 64, height: 48, ndisp: 10 });
});

test('three trial processes (--index, JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX) and the rest, collected, give the rows of a local run', async () => {
  const local = await inProcess(['tune', ...space, '--backend', 'bk', '--workers', '1', '--out-dir', path.join(tmp, 'local'), '-q']);
  expect(local.code).toBe(0);
  const p = await inProcess(['tune', ...space, '--plan', plan]);
  expect(p.code).toBe(0);
  expect(p.stdout).toMatch(/wrote .*plan\.json: 6 trials, index 0\.\.5/);
  const cmd = ['trial', '--plan', plan, '--out-dir', rowsDir, '--backend', 'bk'];
  const three = await Promise.all([
    spawned([...cmd, '--index', '0'], {}),
    spawned(cmd, { JOB_COMPLETION_INDEX: '1' }),
    spawned(cmd, { AWS_BATCH_JOB_ARRAY_INDEX: '2' }),
  ]);
  for (const t of three) expect(t).toMatchObject({ code: 0, stderr: '' });
  expect(three.map((t) => /^trial (\d):/.exec(t.stdout)?.[1])).toEqual(['0', '1', '2']);

  // Three rows of six: collect names the missing ones and writes nothing.
  const early = await inProcess(['tune', '--collect', rowsDir, '--out-dir', path.join(tmp, 'early')]);
  expect(early.code).toBe(1);
  expect(early.stderr).toMatch(/^stereocut: --collect .*rows: 3 of 6 trials have no row: index 3 \(two lambda=4\), 4 \(one lambda=9\), 5 \(two lambda=9\); run them/);
  expect(fs.existsSync(path.join(tmp, 'early'))).toBe(false);

  for (const i of [3, 4, 5]) expect((await inProcess([...cmd, '--index', String(i), '-q'])).code).toBe(0);
  // A row copied under another name is a repeated row: named, kept once.
  const one = fs.readdirSync(rowsDir).find((n) => /^[0-9a-f]{64}\.json$/.test(n))!;
  fs.copyFileSync(path.join(rowsDir, one), path.join(rowsDir, 'copy.json'));
  const c = await inProcess(['tune', '--collect', rowsDir, '--out-dir', path.join(tmp, 'collected')]);
  expect(c.code).toBe(0);
  expect(c.stderr).toMatch(/copy\.json: a second row of trial \d/);
  expect(c.stdout).toMatch(/^6 trials from 7 rows in /);
  const merged = readTrialLog(path.join(tmp, 'collected', 'trials.jsonl'), false);
  expect(rows(merged)).toEqual(rows(readTrialLog(path.join(tmp, 'local', 'trials.jsonl'), false)));
  // The summaries are those of a local run: the same ranking.
  const summary = (dir: string) => JSON.parse(fs.readFileSync(path.join(tmp, dir, 'tune.json'), 'utf8')).points.map((x: { key: string; mean: number }) => [x.key, x.mean]);
  expect(summary('collected')).toEqual(summary('local'));
}, 600000);

test('the index and the plan are checked before the trial runs', async () => {
  expect(() => trialIndex(undefined, {})).toThrow('--index: required (or set JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX');
  expect(() => trialIndex(undefined, { JOB_COMPLETION_INDEX: 'x' })).toThrow("JOB_COMPLETION_INDEX: got 'x', expected an integer ≥ 0");
  expect(trialIndex(undefined, { AWS_BATCH_JOB_ARRAY_INDEX: '7' })).toBe(7);
  expect(trialIndex(2, { JOB_COMPLETION_INDEX: '5' })).toBe(2);
  const out = path.join(tmp, 'never');
  const far = await inProcess(['trial', '--plan', plan, '--index', '6', '--out-dir', out]);
  expect(far).toMatchObject({ code: 1, stderr: 'stereocut: --index: got 6, expected an integer in 0..5 (the plan has 6 trials)' });
  const notPlan = await inProcess(['trial', '--plan', path.join(data, 'one', 'calib.txt'), '--index', '0', '--out-dir', out]);
  expect(notPlan.code).toBe(1);
  expect(notPlan.stderr).toMatch(/^stereocut: --plan .*calib\.txt: not JSON$/);
  expect(fs.existsSync(out)).toBe(false);
  const intoScene = await inProcess(['trial', '--plan', plan, '--index', '0', '--out-dir', path.join(data, 'one')]);
  expect(intoScene).toMatchObject({ code: 1, stderr: expect.stringMatching(/^stereocut: --out-dir .*one: is the folder of scene one, an input; give another folder$/) });
  expect(fs.readdirSync(path.join(data, 'one')).sort()).toEqual(['calib.txt', 'disp0GT.pfm', 'im0.png', 'im1.png', 'mask0nocc.png']);
});

test('worker and trial --help show an example', async () => {
  for (const c of ['worker', 'trial']) {
    const r = await inProcess([c, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Examples:/);
  }
});
