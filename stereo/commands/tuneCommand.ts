import type { Argv } from 'yargs';
import { tune } from '../tune/tune';
import { bestTableLines } from '../tune/results';
import type { BackendName } from '../params';
import type { Io } from './common';
import { paramsFromArgs, withParamOptions, type ParamArgs } from './paramOptions';

export interface TuneArgs extends ParamArgs {
  scenes: string[];
  param: string[];
  random?: number;
  'search-seed': number;
  metric: string;
  workers?: number;
  out: string;
  resume: boolean;
  'scene-params': boolean;
  baseline: boolean;
  backend: string;
  json: boolean;
}

/** The options of `stereocut tune` (the shared energy options hold parameters fixed). */
export function tuneOptions<T>(y: Argv<T>) {
  return withParamOptions(y)
    .positional('scenes', { type: 'string', array: true, describe: 'scene folders, dataset folders, or synthetic[:seed=N,width=N,height=N,ndisp=N]' })
    .option('param', { alias: 'p', type: 'string', array: true, demandOption: true, describe: 'NAME=a,b,c or NAME=start:end:step (random search also NAME=start:end); names: lambda, T, tau, cost, cue-factor, cue-threshold, cycles, window, smoothness, border, order, graph, init' })
    .option('random', { type: 'number', describe: 'seeded random search with this many points (default: grid)' })
    .option('search-seed', { type: 'number', default: 1, describe: 'seed of the random search' })
    .option('metric', { type: 'string', default: 'bad1-nonocc', describe: 'minimise bad<threshold>-<nonocc|all|disc> averaged over scenes, or energy' })
    .option('workers', { type: 'number', describe: 'worker threads for CPU trials (default: one per core)' })
    .option('out', { type: 'string', default: 'stereocut-tune', describe: 'folder for trials.jsonl, trials.csv and tune.json' })
    .option('resume', { type: 'boolean', default: false, describe: 'continue the run in --out, skipping trials already in trials.jsonl' })
    .option('scene-params', { type: 'boolean', default: true, describe: 'start known scenes from their own parameters (--no-scene-params: from the defaults)' })
    .option('baseline', { type: 'boolean', default: true, describe: 'also run every scene with its own parameters, as the hand-set reference' })
    .option('json', { type: 'boolean', default: false, describe: 'print the result as JSON' });
}

export async function tuneCommand(a: TuneArgs, io: Io): Promise<number> {
  const { params, initFile } = paramsFromArgs(a);
  if (initFile) throw new Error(`--init: tune takes wta or zero (got ${initFile})`);
  if (a.random !== undefined && (!Number.isInteger(a.random) || a.random < 1)) throw new Error(`--random: must be an integer ≥ 1 (got ${a.random})`);
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
    out: a.out,
    resume: a.resume,
    progress: progressToStderr,
  });
  if (a.json) {
    io.out(JSON.stringify({ metric: r.metric, scenes: r.scenes, best: r.best, points: r.points, ran: r.ran, skipped: r.skipped, files: r.files }, null, 2));
    return 0;
  }
  io.out(`${r.ran} trials run, ${r.skipped} taken from the log; backend ${r.backend}${r.parallel > 1 ? ` on ${r.parallel} worker threads` : ''}`);
  for (const l of bestTableLines(r.best, r.scenes, r.metric)) io.out(l);
  io.out(`wrote ${r.files.jsonl}, ${r.files.csv}, ${r.files.json}`);
  return 0;
}
