import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { ChildProcess } from 'child_process';
import { Job, Queue } from 'bullmq';
import { main } from '../app/cli';
import { readTrialLog } from '../app/tune/records';
import { planTune } from '../app/tune/plan';
import { Progress } from '../app/tune/progress';
import { parseQueueUrl } from '../app/queue/redisQueue';
import { queueRunner } from '../app/queue/trialQueue';
import type { TrialRecord } from '../app/tune/trial';
import { freePort, redisServerPath, startRedis, type RedisServer } from './support/redisServer';
import { spawnCli, writeSceneFolder } from './support/tuneSupport';

/**
 * tune --queue against a real redis-server and real worker processes: the
 * same rows as a local run, nothing lost when a worker is SIGKILLed
 * mid-trial, a resumed coordinator collecting from Redis, input failures
 * failed once (not retried), and an unreachable Redis refused in one line
 * with nothing written.
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-tune-queue-'));
const data = path.join(tmp, 'data');
const bin = redisServerPath();
let redis: RedisServer | undefined;
const workers: ChildProcess[] = [];

// Two scenes × (the hand-set reference + 6 points) = 14 trials, one cycle each, one view.
const study = (out: string, ...more: string[]) => ['tune', data, '-p', 'lambda=4,8,12', '-p', 'T=1,2', '--cycles', '1', '--no-lr-check', '--out-dir', out, ...more];
const TRIALS = 14;

async function inProcess(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** What must agree between a queue run and a local one: which trial, every parameter, every score, the energy. */
const rows = (records: TrialRecord[]) => records
  .map((r) => JSON.stringify({ key: r.key, params: r.params, bad: r.bad, energy: r.energy, objective: r.objective, cycles: r.cycles }))
  .sort();

/** A worker process; `lines` collects its stdout (a line per finished trial). */
function startWorker(url: string, lines: string[], lockSeconds = 5): ChildProcess {
  const p = spawnCli(['worker', '--queue', url, '--concurrency', '1', '--backend', 'bk', '--lock-seconds', String(lockSeconds)]);
  p.stdout!.on('data', (d: Buffer) => lines.push(...d.toString().split('\n').filter((l) => l.startsWith('trial '))));
  p.stderr!.on('data', () => undefined);
  workers.push(p);
  return p;
}

const stopWorker = (p: ChildProcess): Promise<void> => new Promise((resolve) => {
  if (p.exitCode !== null || p.signalCode !== null) return resolve();
  p.on('exit', () => resolve());
  p.kill('SIGTERM');
});

let local: TrialRecord[] = [];

beforeAll(async () => {
  await writeSceneFolder(path.join(data, 'one'), { seed: 31, width: 64, height: 48, ndisp: 10 });
  await writeSceneFolder(path.join(data, 'two'), { seed: 32, width: 64, height: 48, ndisp: 10 });
  const r = await inProcess(study(path.join(tmp, 'local'), '--backend', 'bk', '--workers', '1', '-q'));
  expect(r.stderr).toBe('');
  local = readTrialLog(path.join(tmp, 'local', 'trials.jsonl'), false);
  expect(local).toHaveLength(TRIALS);
  if (bin) redis = await startRedis(bin);
}, 240000);

afterAll(async () => {
  await Promise.all(workers.map(stopWorker));
  await redis?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('queue URLs', () => {
  test("the README's form with a password: the password goes to Redis, never into messages", () => {
    const a = parseQueueUrl('redis://:SECRET@HOST:6379/study');
    expect(a).toMatchObject({ name: 'study', where: 'HOST:6379', url: 'redis://:***@HOST:6379/study', connection: { host: 'HOST', port: 6379, password: 'SECRET' } });
    expect(parseQueueUrl('rediss://u:p@[::1]/q.1')).toMatchObject({ name: 'q.1', where: '::1:6379', connection: { host: '::1', username: 'u', password: 'p', tls: {} } });
    for (const bad of ['http://h/q', 'redis://h:1', 'redis://h:1/a/b', 'redis://h:1/q?x=1', 'not a url']) expect(() => parseQueueUrl(bad)).toThrow(/^--queue: got '/);
  });
});

describe('an unreachable Redis', () => {
  test('tune --queue and worker: one line naming the URL, exit 1, nothing written', async () => {
    const url = `redis://127.0.0.1:${await freePort()}/nobody`;
    const out = path.join(tmp, 'unreachable');
    const t = await inProcess(study(out, '--queue', url));
    expect(t.code).toBe(1);
    expect(t.stderr.split('\n')).toEqual([expect.stringMatching(new RegExp(`^stereocut: --queue ${url}: cannot reach Redis at 127\\.0\\.0\\.1:\\d+ \\(.*ECONNREFUSED`))]);
    expect(fs.existsSync(out)).toBe(false);
    const w = await inProcess(['worker', '--queue', url]);
    expect(w.code).toBe(1);
    expect(w.stderr.split('\n')).toEqual([expect.stringContaining(`--queue ${url}: cannot reach Redis`)]);
    const bad = await inProcess(study(out, '--queue', 'redis://127.0.0.1:6379'));
    expect(bad.stderr).toBe("stereocut: --queue: got 'redis://127.0.0.1:6379', expected a queue name after the port (redis://HOST:PORT/NAME; letters, digits, _ . -)");
  });
});

(bin ? describe : describe.skip)(`tune --queue on a real redis-server${bin ? '' : ' (skipped: redis-server not installed; apt-get install redis-server)'}`, () => {
  const url = (name: string) => `redis://127.0.0.1:${redis!.port}/${name}`;
  const queues: Queue[] = [];
  /** A BullMQ handle on a test's queue, to look at its jobs (closed after the tests). */
  const inspect = (name: string): Queue => {
    const q = new Queue(name, { connection: parseQueueUrl(url(name)).connection });
    q.on('error', () => undefined);
    queues.push(q);
    return q;
  };
  afterAll(() => Promise.all(queues.map((q) => q.close())));

  test('three worker processes give the rows of a local run; a resumed coordinator collects them from Redis without adding any', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 3; i++) startWorker(url('same'), lines);
    const r = await inProcess(study(path.join(tmp, 'queued'), '--queue', url('same'), '-q'));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/14 trials run, 0 taken from the log; backend bk through redis:/);
    const queued = readTrialLog(path.join(tmp, 'queued', 'trials.jsonl'), false);
    expect(rows(queued)).toEqual(rows(local));
    expect(lines).toHaveLength(TRIALS); // every job ran once
    await Promise.all(workers.splice(0).map(stopWorker));

    // The coordinator "killed" after 5 trials: --resume, with no worker left, takes the other 9 from Redis.
    const resumed = path.join(tmp, 'resumed');
    fs.mkdirSync(resumed);
    fs.writeFileSync(path.join(resumed, 'trials.jsonl'), fs.readFileSync(path.join(tmp, 'queued', 'trials.jsonl'), 'utf8').split('\n').slice(0, 5).join('\n') + '\n');
    const again = await inProcess(study(resumed, '--queue', url('same'), '--resume', '-q'));
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' });
    expect(again.stdout).toMatch(/9 trials run, 5 taken from the log/);
    expect(rows(readTrialLog(path.join(resumed, 'trials.jsonl'), false))).toEqual(rows(local));
    expect(await inspect('same').getJobCounts('completed', 'waiting', 'active', 'failed')).toEqual({ completed: TRIALS, waiting: 0, active: 0, failed: 0 });
  }, 300000);

  test('a worker SIGKILLed mid-trial loses nothing: its job goes to another worker, every trial is present once', async () => {
    const name = 'killed';
    const q = inspect(name);
    const lines: string[] = [];
    // A shorter lock: the killed worker's job is taken back once its lock has expired and another worker's stalled-job
    // check (as often as the lock's length) sees it. The trials run on the workers' threads, so their main threads renew
    // the locks of running jobs on time.
    const victim = startWorker(url(name), lines, 3);
    startWorker(url(name), lines, 3);
    startWorker(url(name), lines, 3);
    const out = path.join(tmp, 'killed');
    const run = inProcess(study(out, '--queue', url(name), '-q'));
    // Wait until the victim holds a job (BullMQ records the worker's host:pid as processedBy), then kill it.
    let taken: string | undefined;
    for (let i = 0; i < 2400 && taken === undefined; i++) {
      const active = await q.getActive();
      taken = active.find((j) => j.processedBy?.endsWith(`:${victim.pid}`))?.id;
      if (taken === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    expect(taken).toBeDefined();
    victim.kill('SIGKILL');
    const r = await run;
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const records = readTrialLog(path.join(out, 'trials.jsonl'), false);
    expect(records).toHaveLength(TRIALS);
    expect(new Set(records.map((x) => x.key)).size).toBe(TRIALS);
    expect(rows(records)).toEqual(rows(local));
    const job = await Job.fromId(q, taken!);
    expect(job!.stalledCounter).toBeGreaterThanOrEqual(1); // taken back after its lock expired…
    expect(job!.processedBy).not.toMatch(new RegExp(`:${victim.pid}$`)); // …and finished by another worker
    await Promise.all(workers.splice(0).map(stopWorker));
  }, 300000);

  test('a trial that fails for its input fails once, with its message, and the coordinator names it', async () => {
    const name = 'input';
    const lines: string[] = [];
    startWorker(url(name), lines);
    const plan = await planTune({ scenes: [path.join(data, 'one')], params: ['lambda=6'], baseline: false, fixed: { cycles: 1, lrCheck: false } });
    // As if a worker's machine held other files under the scene's path.
    const trial = { ...plan.trials[0], sceneHash: '0'.repeat(64), id: 'f'.repeat(64) };
    const got: TrialRecord[] = [];
    await expect(queueRunner(parseQueueUrl(url(name))).run([trial], (r) => got.push(r), new Progress(1, 0, undefined)))
      .rejects.toThrow(/1 of 1 trials failed on the workers of redis:.*one lambda=6: .*files differ from those the trial was planned on/);
    expect(got).toEqual([]);
    const job = await Job.fromId(inspect(name), trial.id);
    expect(await job!.getState()).toBe('failed');
    expect(job!.attemptsMade).toBe(1); // not retried
    await Promise.all(workers.splice(0).map(stopWorker));
  }, 120000);

  test('run SCENES --queue: one scene a job, the same table and files as a local run', async () => {
    startWorker(url('scenes'), []);
    const scenes = [path.join(data, 'one'), path.join(data, 'two')];
    const runArgs = (out: string, ...more: string[]) => ['run', ...scenes, '--cycles', '1', '--backend', 'bk', '--out-dir', out, '--json', ...more];
    const here = await inProcess(runArgs(path.join(tmp, 'run-local')));
    const there = await inProcess(runArgs(path.join(tmp, 'run-queued'), '--queue', url('scenes')));
    expect({ code: there.code, stderr: there.stderr.split('\n').filter((l) => !/^\[\d\/2\] (one|two): matched on bk/.test(l)).join('') }).toEqual({ code: 0, stderr: '' });
    // Everything but the times (the phases', the cycles' build and flow milliseconds).
    const stable = (text: string): unknown => JSON.parse(text, (k, v: unknown) => (k === 'times' || /Ms$/.test(k) ? undefined : v));
    expect(stable(there.stdout)).toEqual(stable(here.stdout));
    for (const s of ['one', 'two']) {
      for (const f of ['disp.png', 'disp.pfm', 'error.png']) {
        expect(fs.readFileSync(path.join(tmp, 'run-queued', s, f))).toEqual(fs.readFileSync(path.join(tmp, 'run-local', s, f)));
      }
    }
    await Promise.all(workers.splice(0).map(stopWorker));
  }, 240000);
});
