import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { BackendName } from '../../stereo/params';
import { objectiveValue } from './objective';
import { runOnExecutor, trialExecutor } from './pool';
import { Progress, type ProgressSink } from './progress';
import { readTrialLog, TrialLog } from './records';
import { bestSettings, describePoint, summarisePoints, trialCsv, writeCsv, writeJson, type BestSettings, type PointSummary } from './results';
import type { TunableName } from './space';
import { makeFolder } from '../../data/folders';
import { FolderLock } from './folderLock';
import { planTune, type PlanOptions, type PlannedTrial, type TunePlan } from './plan';
import type { TrialRecord } from './trial';

export interface TuneOptions extends PlanOptions {
  backend?: BackendName;
  /** Worker threads for CPU trials (default: one per core). GPU trials run one after another in this thread. */
  workers?: number;
  /** Where the trials run (default: here, as `backend` and `workers` say); a queue's coordinator passes its own. */
  runner?: TrialRunner;
  /** Folder for trials.jsonl, trials.csv and tune.json; without it nothing is written. */
  out?: string;
  /** Continue the trials.jsonl in `out`, skipping trials it already has. */
  resume?: boolean;
  progress?: ProgressSink;
  /** Called for every trial finished in this session. */
  onTrial?: (r: TrialRecord) => void;
}

/**
 * Where a study's trials run. Every runner computes a trial with runTrial()
 * (trial.ts); runners differ only in where that happens.
 */
export interface TrialRunner {
  /** The backend trials run on, as the closing line names it. */
  readonly backend: string;
  /** Trials at a time (1 where they run one after another). */
  parallel(todo: number): number;
  /** Runs `todo` (each on the runner's backend), handing each record to `onRecord` as it arrives; `progress` hears of running and failed trials. */
  run(todo: PlannedTrial[], onRecord: (r: TrialRecord) => void, progress: Progress): Promise<void>;
}

export interface TuneResult {
  metric: string;
  scenes: string[];
  searched: TunableName[];
  /** All trials (resumed ones included) in plan order. */
  trials: TrialRecord[];
  /** Trials run in this session, and skipped because the log had them. */
  ran: number;
  skipped: number;
  points: PointSummary[];
  best: BestSettings;
  backend: string;
  parallel: number;
  files: { jsonl?: string; csv?: string; json?: string };
}

export const TUNE_FILES = { jsonl: 'trials.jsonl', csv: 'trials.csv', json: 'tune.json' } as const;

/** Trials here, as trialExecutor places them (BK on worker threads, a GPU backend on this thread). */
async function localRunner(backend: BackendName, workers: number | undefined): Promise<TrialRunner> {
  const size = workers ?? os.availableParallelism();
  if (!Number.isInteger(size) || size < 1) throw new Error(`--workers: must be an integer ≥ 1 (got ${String(workers)})`);
  const executor = await trialExecutor(backend, size);
  return {
    backend: executor.backend,
    parallel: (n) => Math.min(executor.size, Math.max(1, n)),
    run: (todo, onRecord) => runOnExecutor(todo, executor, onRecord),
  };
}

/**
 * Searches parameters over scenes. Everything is checked (space, metric,
 * scenes, ground truth, output folder) before the first trial runs or any
 * file is written; then every finished trial is appended to trials.jsonl at
 * once, and the CSV / JSON summaries are written at the end.
 */
export async function tune(o: TuneOptions): Promise<TuneResult> {
  const plan = await planTune(o);
  const runner = o.runner ?? await localRunner(o.backend ?? 'auto', o.workers);
  const { metric, objective } = plan;
  const jobs = plan.trials;

  let files: TuneResult['files'] = {};
  if (o.out) {
    files = { jsonl: path.join(o.out, TUNE_FILES.jsonl), csv: path.join(o.out, TUNE_FILES.csv), json: path.join(o.out, TUNE_FILES.json) };
    if (fs.existsSync(o.out) && !fs.statSync(o.out).isDirectory()) throw new Error(`--out ${o.out}: exists and is not a folder`);
    if (!o.resume && fs.existsSync(files.jsonl!)) throw new Error(`--out ${o.out}: already holds ${TUNE_FILES.jsonl}; pass --resume to continue it, or choose another folder`);
  } else if (o.resume) {
    throw new Error('--resume: needs --out, the folder of the run to continue');
  }

  const done = new Map<string, TrialRecord>();
  if (o.out && o.resume && files.jsonl) {
    const planned = new Set(jobs.map((j) => j.key));
    for (const r of readTrialLog(files.jsonl, true)) {
      // Trials of another plan stay in the log but are not part of this run's results.
      if (planned.has(r.key) && !done.has(r.key)) done.set(r.key, { ...r, metric, objective: objectiveValue(objective, r.bad, r.energy) });
    }
  }
  const todo = jobs.filter((j) => !done.has(j.key));

  // One tune at a time on a folder: a second (a --resume started twice) would run every trial again beside the first.
  if (o.out) makeFolder(o.out);
  const lock = o.out ? FolderLock.acquire(o.out, '--out') : undefined;
  const log = files.jsonl ? new TrialLog(files.jsonl) : undefined;
  const progress = new Progress(jobs.length, done.size, o.progress);
  const onRecord = (r: TrialRecord) => {
    log?.append(r);
    done.set(r.key, r);
    o.onTrial?.(r);
    progress.tick(`${r.scene} ${describePoint(r.point)}: ${metric} ${r.objective.toFixed(3)} (${(r.timeMs / 1000).toFixed(1)} s)`);
  };
  try {
    await runner.run(todo, onRecord, progress);
  } finally {
    log?.close();
    lock?.release();
  }
  return tuneResults(plan, done, files, { ran: todo.length, backend: runner.backend, parallel: runner.parallel(todo.length) });
}

/**
 * The results of a plan whose every trial is in `done` (by key): the ranking,
 * the best settings, and trials.csv and tune.json where `files` names them
 * (trials.jsonl is the caller's).
 */
export function tuneResults(plan: TunePlan, done: Map<string, TrialRecord>, files: TuneResult['files'], run: { ran: number; backend: string; parallel: number }): TuneResult {
  const labels = plan.scenes.map((s) => s.label);
  const trials = plan.trials.map((j) => done.get(j.key)!);
  const result: TuneResult = {
    metric: plan.metric, scenes: labels, searched: plan.searched, trials, ran: run.ran, skipped: trials.length - run.ran,
    points: summarisePoints(trials, labels), best: bestSettings(trials, labels),
    backend: run.backend, parallel: run.parallel, files,
  };
  if (files.csv) writeCsv(files.csv, trialCsv(trials, plan.searched, plan.thresholds));
  if (files.json) {
    writeJson(files.json, {
      metric: plan.metric, scenes: plan.scenes.map((s) => ({ name: s.label, spec: s.spec })),
      space: plan.space, search: plan.search, fixed: plan.fixed, sceneParams: plan.sceneParams,
      backend: run.backend, thresholds: plan.thresholds, best: result.best, points: result.points, trials,
    });
  }
  return result;
}
