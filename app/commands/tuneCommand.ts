import * as fs from 'fs';
import * as path from 'path';
import type { BackendName } from '../../stereo/params';
import type { Io } from './common';
import { paramsFromArgs, type ParamArgs } from './paramOptions';
import { checkOutputFolder, checkOutputPath } from './common';
import { checkOutputsApart, sceneInputs } from './outputGuard';
import type { TuneResult } from '../tune/tune';

export interface TuneArgs extends ParamArgs {
  scenes?: string[];
  param?: string[];
  random?: number;
  'search-seed': number;
  metric: string;
  workers?: number;
  'out-dir': string;
  resume: boolean;
  'scene-params': boolean;
  baseline: boolean;
  backend: string;
  queue?: string;
  plan?: string;
  collect?: string;
  json: boolean;
  quiet: boolean;
}

/** The closing lines of a study: the counts, the table of best settings, the files. */
async function report(r: TuneResult, a: TuneArgs, io: Io, how: string): Promise<number> {
  if (a.json) {
    io.out(JSON.stringify({ metric: r.metric, scenes: r.scenes, best: r.best, points: r.points, ran: r.ran, skipped: r.skipped, files: r.files }, null, 2));
    return 0;
  }
  const { bestTableLines } = await import('../tune/results');
  io.out(how);
  for (const l of bestTableLines(r.best, r.scenes, r.metric)) io.out(l);
  io.out(`wrote ${r.files.jsonl}, ${r.files.csv}, ${r.files.json}`);
  return 0;
}

/** `tune --collect DIR`: the rows of an index-mode study merged into the usual results. */
async function collectCommand(a: TuneArgs, io: Io, dir: string): Promise<number> {
  const out = a['out-dir'];
  checkOutputFolder(out, '--out-dir');
  if (path.resolve(out) === path.resolve(dir)) throw new Error(`--out-dir ${out}: give a folder other than the --collect folder (the rows stay as they are)`);
  const { TUNE_FILES, tuneResults } = await import('../tune/tune');
  const files = { jsonl: path.join(out, TUNE_FILES.jsonl), csv: path.join(out, TUNE_FILES.csv), json: path.join(out, TUNE_FILES.json) };
  if (fs.existsSync(files.jsonl)) throw new Error(`--out-dir ${out}: already holds ${TUNE_FILES.jsonl}; choose another folder`);
  const { collectRows } = await import('../tune/indexMode');
  const { writeFileAtomic } = await import('../../data/atomicWrite');
  const c = collectRows(dir, a.plan);
  for (const n of c.notices) io.err(`stereocut: ${n}`);
  fs.mkdirSync(out, { recursive: true });
  const records = c.plan.trials.map((t) => c.records.get(t.key)!);
  writeFileAtomic(files.jsonl, records.map((r) => JSON.stringify(r) + '\n').join(''));
  const backends = [...new Set(records.map((r) => r.backend))].sort().join('+');
  const r = tuneResults(c.plan, c.records, files, { ran: 0, backend: backends, parallel: 1 });
  return report(r, a, io, `${records.length} trials from ${c.rows} rows in ${dir}; backend ${backends}`);
}

export async function tuneCommand(a: TuneArgs, io: Io): Promise<number> {
  if (a.collect !== undefined) {
    if ((a.scenes ?? []).length > 0 || (a.param ?? []).length > 0) throw new Error('--collect: takes the rows and their plan only (no scenes, no --param)');
    return collectCommand(a, io, a.collect);
  }
  if ((a.scenes ?? []).length === 0) throw new Error('tune: give scene folders (or --collect DIR)');
  if ((a.param ?? []).length === 0) throw new Error('--param required (see stereocut tune --help)');
  const { params, initFile } = paramsFromArgs(a);
  if (initFile) throw new Error(`--init: tune takes wta or zero (got ${initFile})`);
  if (a.random !== undefined && (!Number.isInteger(a.random) || a.random < 1)) throw new Error(`--random: must be an integer ≥ 1 (got ${a.random})`);
  const study = {
    scenes: a.scenes ?? [],
    params: a.param ?? [],
    search: a.random !== undefined ? { random: a.random, seed: a['search-seed'] } : 'grid' as const,
    metric: a.metric,
    fixed: params,
    sceneParams: a['scene-params'],
    baseline: a.baseline,
  };
  if (a.plan !== undefined) {
    if (a.queue !== undefined) throw new Error('--plan: writes the trials for a batch scheduler and runs none; give it without --queue');
    checkOutputPath(a.plan, '--plan', 'json');
    const { planTune } = await import('../tune/plan');
    const { writePlan } = await import('../tune/indexMode');
    const plan = await planTune(study);
    writePlan(plan, a.plan);
    const n = plan.trials.length;
    if (a.json) io.out(JSON.stringify({ plan: a.plan, trials: n }, null, 2));
    else io.out(`wrote ${a.plan}: ${n} trials, index 0..${n - 1}; run each with stereocut trial --plan ${a.plan} --index I --out-dir ROWS, then stereocut tune --collect ROWS`);
    return 0;
  }
  checkOutputFolder(a['out-dir'], '--out-dir');
  const { TUNE_FILES } = await import('../tune/tune');
  const { sceneFoldersOf } = await import('../../data/scene');
  // A dataset folder stands for the scene folders in it; synthetic specs read nothing.
  const sceneDirs = sceneFoldersOf((a.scenes ?? []).filter((s) => fs.existsSync(s) && fs.statSync(s).isDirectory()), () => undefined);
  checkOutputsApart(Object.values(TUNE_FILES).map((f) => ({ name: '--out-dir', file: path.join(a['out-dir'], f) })), sceneDirs.flatMap(sceneInputs));
  let runner;
  let address;
  if (a.queue !== undefined) {
    if (a.workers !== undefined) throw new Error('--workers: with --queue the workers say how many trials they run (stereocut worker --concurrency N)');
    const { checkRedis, parseQueueUrl } = await import('../queue/redisQueue');
    address = parseQueueUrl(a.queue);
    // Before any scene is read or file written: an unreachable Redis leaves nothing behind.
    await checkRedis(address);
    runner = (await import('../queue/trialQueue')).queueRunner(address);
  }
  const { tune } = await import('../tune/tune');
  // Every finished trial is already in trials.jsonl: a stop loses only the trials running, and --resume skips the rest.
  const onSigint = (): void => {
    io.err(`stereocut: stopped; the finished trials are in ${a['out-dir']}/trials.jsonl: run the same command with --resume to continue`);
    process.exit(130);
  };
  process.once('SIGINT', onSigint);
  const progressToStderr = { isTTY: Boolean(process.stderr.isTTY), write: (s: string) => { process.stderr.write(s); } };
  const r = await tune({
    ...study,
    backend: a.backend as BackendName,
    workers: a.workers,
    runner,
    out: a['out-dir'],
    resume: a.resume,
    progress: a.quiet ? undefined : progressToStderr,
    onNotice: (l) => io.err(`note: ${l}`),
  }).finally(() => process.off('SIGINT', onSigint));
  const where = address ? ` through ${address.url}` : (r.parallel > 1 ? ` on ${r.parallel} worker threads` : '');
  return report(r, a, io, `${r.ran} trials run, ${r.skipped} taken from the log; backend ${r.backend}${where}`);
}
