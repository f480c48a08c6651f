/**
 * Trials per minute of `stereocut tune --queue` with sets of worker
 * processes, on one machine:
 *
 *   node dist/bench/queueThroughput.js [--set WORKERS]... [--points N] [SCENE...]
 *
 * WORKERS is a comma list of worker processes, each BACKEND or
 * BACKENDxCONCURRENCY: `bk` (one process, one trial at a time), `bk,bk`
 * (two), `gpu,bkx15` (one GPU worker beside a 15-thread BK worker). Default:
 * the sets bk, bk×2 and bk×4 processes. A redis-server from PATH is started
 * on a free loopback port; each set gets a queue of its own (so no result is
 * reused), its workers are started and warmed up (a trial per slot) before
 * the clock starts, and the clock stops when `tune` has every row (the
 * coordinator's start, planning included). The study: N points of λ
 * (default 12) on each scene, one cycle, no hand-set reference; scenes
 * default to two synthetic 160×120 scenes. Prints a row per set: trials,
 * seconds, trials per minute, and the ratio to the first set.
 */
import { spawn, spawnSync, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { redisServerPath, startRedis } from '../test/support/redisServer';

const BIN = path.join(__dirname, '..', '..', 'bin', 'stereocut.js');

/** Starts a process and resolves once a line of its stderr (or stdout) matches `ready`. */
function startUntil(cmd: string, args: string[], ready: RegExp): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    const hear = (d: Buffer): void => {
      text += d.toString();
      if (ready.test(text)) resolve(p);
    };
    p.stdout!.on('data', hear);
    p.stderr!.on('data', hear);
    p.on('exit', (code) => reject(new Error(`${path.basename(cmd)} ${args[0] ?? ''} exited (${code}) before it was ready: ${text.trim().split('\n').slice(-2).join(' | ')}`)));
  });
}

const stop = (p: ChildProcess): Promise<void> => new Promise((resolve) => {
  if (p.exitCode !== null || p.signalCode !== null) return resolve();
  p.on('exit', () => resolve());
  p.kill('SIGTERM');
});

function parseSet(text: string): { backend: string; concurrency: number }[] {
  return text.split(',').map((w) => {
    const m = /^([a-z-]+)(?:x(\d+))?$/.exec(w.trim());
    if (!m) throw new Error(`--set ${text}: expected BACKEND or BACKENDxCONCURRENCY, comma-separated (e.g. bk,bk or gpu,bkx15)`);
    return { backend: m[1], concurrency: Number(m[2] ?? 1) };
  });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const sets: string[] = [];
  const scenes: string[] = [];
  let points = 12;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--set') sets.push(argv[++i]);
    else if (argv[i] === '--points') points = Number(argv[++i]);
    else scenes.push(argv[i]);
  }
  if (!Number.isInteger(points) || points < 1) throw new Error('--points: an integer ≥ 1');
  if (sets.length === 0) sets.push('bk', 'bk,bk', 'bk,bk,bk,bk');
  if (scenes.length === 0) scenes.push('synthetic:seed=1,width=160,height=120,ndisp=16', 'synthetic:seed=2,width=160,height=120,ndisp=16');
  const redisBin = redisServerPath();
  if (!redisBin) throw new Error('redis-server not found on PATH (Debian: apt-get install redis-server)');
  const redis = await startRedis(redisBin);
  const port = redis.port;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-queue-bench-'));
  const lambdas = Array.from({ length: points }, (_, i) => 3 + i).join(',');
  console.log(`${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), load average ${os.loadavg()[0].toFixed(1)} at the start; ${scenes.length} scenes × ${points} points, one cycle, a fresh queue per set, workers warmed up`);
  console.log('workers | trials | seconds | trials/min | ratio');
  console.log('---|---:|---:|---:|---:');
  let first: number | undefined;
  try {
    for (const [k, set] of sets.entries()) {
      const url = `redis://127.0.0.1:${port}/bench-${process.pid}-${k}`;
      const spec = parseSet(set);
      const workers = await Promise.all(spec.map((w) => startUntil(process.execPath, [BIN, 'worker', '--queue', url, '--backend', w.backend, '--concurrency', String(w.concurrency), '-q'], /taking jobs/)));
      // Warm-up: as many trials as the set runs at once, so that each worker has loaded its threads and a scene before the clock starts.
      const slots = spec.reduce((n, w) => n + w.concurrency, 0);
      const warm = spawnSync(process.execPath, [BIN, 'tune', scenes[0], '-p', `lambda=${Array.from({ length: slots }, (_, i) => 100 + i).join(',')}`, '--cycles', '1', '--no-baseline', '--queue', url, '--out-dir', path.join(tmp, `warm-${k}`), '-q'], { encoding: 'utf8' });
      if (warm.status !== 0) throw new Error(`warm-up failed: ${warm.stderr.trim()}`);
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [BIN, 'tune', ...scenes, '-p', `lambda=${lambdas}`, '--cycles', '1', '--no-baseline', '--queue', url, '--out-dir', path.join(tmp, String(k)), '--json', '-q'], { encoding: 'utf8' });
      const seconds = (performance.now() - t0) / 1000;
      await Promise.all(workers.map(stop));
      if (r.status !== 0) throw new Error(`tune --queue failed: ${r.stderr.trim()}`);
      const trials = (JSON.parse(r.stdout) as { ran: number }).ran;
      const perMin = (60 * trials) / seconds;
      first ??= perMin;
      console.log(`${set} | ${trials} | ${seconds.toFixed(1)} | ${perMin.toFixed(1)} | ${(perMin / first).toFixed(2)}`);
    }
  } finally {
    await redis.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
