import type { BackendName } from '../params';
import type { Io } from './common';
import { paramsFromArgs, type ParamArgs } from './paramOptions';
import { checkOutputFolder } from './common';
import { checkOutputsApart, sceneInputs } from './outputGuard';
import * as fs from 'fs';
import * as path from 'path';

export interface TuneArgs extends ParamArgs {
  scenes: string[];
  param: string[];
  random?: number;
  'search-seed': number;
  metric: string;
  workers?: number;
  'out-dir': string;
  resume: boolean;
  'scene-params': boolean;
  baseline: boolean;
  backend: string;
  json: boolean;
  quiet: boolean;
}

export async function tuneCommand(a: TuneArgs, io: Io): Promise<number> {
  const { params, initFile } = paramsFromArgs(a);
  if (initFile) throw new Error(`--init: tune takes wta or zero (got ${initFile})`);
  if (a.random !== undefined && (!Number.isInteger(a.random) || a.random < 1)) throw new Error(`--random: must be an integer ≥ 1 (got ${a.random})`);
  checkOutputFolder(a['out-dir'], '--out-dir');
  const { tune, TUNE_FILES } = await import('../tune/tune');
  const { listSceneDirs, sceneLayoutOf } = await import('../../data/scene');
  // A dataset folder stands for the scene folders in it; synthetic specs read nothing.
  const sceneDirs = (a.scenes ?? []).filter((s) => fs.existsSync(s) && fs.statSync(s).isDirectory()).flatMap((s) => (sceneLayoutOf(s) ? [s] : listSceneDirs(s)));
  checkOutputsApart(Object.values(TUNE_FILES).map((f) => ({ name: '--out-dir', file: path.join(a['out-dir'], f) })), sceneDirs.flatMap(sceneInputs));
  const { bestTableLines } = await import('../tune/results');
  // Every finished trial is already in trials.jsonl: a stop loses only the trials running, and --resume skips the rest.
  const onSigint = (): void => {
    io.err(`stereocut: stopped; the finished trials are in ${a['out-dir']}/trials.jsonl: run the same command with --resume to continue`);
    process.exit(130);
  };
  process.once('SIGINT', onSigint);
  const progressToStderr = { isTTY: Boolean(process.stderr.isTTY), write: (s: string) => { process.stderr.write(s); } };
  const r = await tune({
    scenes: a.scenes ?? [],
    params: a.param ?? [],
    search: a.random !== undefined ? { random: a.random, seed: a['search-seed'] } : 'grid',
    metric: a.metric,
    fixed: params,
    sceneParams: a['scene-params'],
    baseline: a.baseline,
    backend: a.backend as BackendName,
    workers: a.workers,
    out: a['out-dir'],
    resume: a.resume,
    progress: a.quiet ? undefined : progressToStderr,
    onNotice: (l) => io.err(`note: ${l}`),
  }).finally(() => process.off('SIGINT', onSigint));
  if (a.json) {
    io.out(JSON.stringify({ metric: r.metric, scenes: r.scenes, best: r.best, points: r.points, ran: r.ran, skipped: r.skipped, files: r.files }, null, 2));
    return 0;
  }
  io.out(`${r.ran} trials run, ${r.skipped} taken from the log; backend ${r.backend}${r.parallel > 1 ? ` on ${r.parallel} worker threads` : ''}`);
  for (const l of bestTableLines(r.best, r.scenes, r.metric)) io.out(l);
  io.out(`wrote ${r.files.jsonl}, ${r.files.csv}, ${r.files.json}`);
  return 0;
}
