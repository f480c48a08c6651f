import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { sceneFoldersOf } from '../../data/scene';
import { makeFolder } from '../../data/folders';
import { checkBackend, placeBackend } from '../../graphcut/backends';
import type { BackendName, MatchParams } from '../params';
import { checkSceneForObjective, DEFAULT_METRIC, objectiveValue, parseObjective, RECORDED_THRESHOLDS } from './objective';
import { runOnWorkers } from './pool';
import { Progress, type ProgressSink } from './progress';
import { readTrialLog, TrialLog } from './records';
import { FolderLock } from './folderLock';
import { bestSettings, describePoint, summarisePoints, trialCsv, writeCsv, writeJson, type BestSettings, type PointSummary } from './results';
import { loadSceneSpec, parseSyntheticSpec, sceneLabel } from './scenes';
import { gridPoints, parseSearchSpace, randomPoints, type ParamPoint, type SearchSpace, type TunableName } from './space';
import { runTrial, SceneCache, trialKey, type TrialJob, type TrialRecord } from './trial';

export interface TuneOptions {
  /** Scene folders, dataset folders (every scene inside), or synthetic specs (`synthetic:seed=2`). */
  scenes: string[];
  /** NAME=SPEC strings (see space.ts) or a parsed space. */
  params: string[] | SearchSpace;
  /** Grid (default) or `count` seeded random points. */
  search?: 'grid' | { random: number; seed?: number };
  /** bad<t>-<nonocc|all|disc|scene> (default bad1-scene: each scene's own region) or energy. */
  metric?: string;
  /** Parameters held fixed for every trial (under the searched ones). */
  fixed?: Partial<MatchParams>;
  /** Start each scene from its own parameters in stereo/sceneParams.ts (default true). */
  sceneParams?: boolean;
  /** Also run each scene once with its own parameters, as the hand-set reference (default true). */
  baseline?: boolean;
  backend?: BackendName;
  /** Worker threads for CPU trials (default: one per core). GPU trials run one after another in this thread. */
  workers?: number;
  /** Folder for trials.jsonl, trials.csv and tune.json; without it nothing is written. */
  out?: string;
  /** Continue the trials.jsonl in `out`, skipping trials it already has. */
  resume?: boolean;
  progress?: ProgressSink;
  /** Called for every trial finished in this session. */
  onTrial?: (r: TrialRecord) => void;
  /** Told what a dataset folder holds that is not a scene (ignored). */
  onNotice?: (line: string) => void;
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
  backend: BackendName;
  parallel: number;
  files: { jsonl?: string; csv?: string; json?: string };
}

export const TUNE_FILES = { jsonl: 'trials.jsonl', csv: 'trials.csv', json: 'tune.json' } as const;

/** Scene specs → scene specs: a dataset folder stands for every scene folder in it (sceneFoldersOf; what else it holds is told to `notice`). */
function expandScenes(specs: string[], notice: (line: string) => void): string[] {
  if (specs.length === 0) throw new Error('tune: give at least one scene folder');
  const out: string[] = [];
  for (const s of specs) {
    if (parseSyntheticSpec(s) || !(fs.existsSync(s) && fs.statSync(s).isDirectory())) out.push(s);
    else out.push(...sceneFoldersOf([s], notice));
  }
  return out;
}

/** Which backend trials use and how they run: CPU (BK) trials in parallel, GPU trials serially here. */
async function resolveExecution(backend: BackendName): Promise<{ backend: BackendName; parallel: boolean }> {
  const place = await placeBackend(checkBackend(backend));
  if (place.runs === 'bk') return { backend: 'bk', parallel: true };
  return { backend: backend === 'auto' ? 'gpu' : backend, parallel: false };
}

/**
 * Searches parameters over scenes. Everything is checked (space, metric,
 * scenes, ground truth, output folder) before the first trial runs or any
 * file is written; then every finished trial is appended to trials.jsonl at
 * once, and the CSV / JSON summaries are written at the end.
 */
export async function tune(o: TuneOptions): Promise<TuneResult> {
  const space = Array.isArray(o.params) ? parseSearchSpace(o.params) : o.params;
  const searched = space.params.map((p) => p.name);
  for (const n of searched) {
    if (o.fixed && (o.fixed as Record<string, unknown>)[n] !== undefined) throw new Error(`--param ${n}: also given as a fixed option; give it one way`);
  }
  const search = o.search ?? 'grid';
  const points: ParamPoint[] = search === 'grid' ? gridPoints(space) : randomPoints(space, search.random, search.seed ?? 1);
  const metric = o.metric ?? DEFAULT_METRIC;
  const objective = parseObjective(metric);
  const thresholds = [...RECORDED_THRESHOLDS];
  if (objective.kind === 'bad' && !thresholds.includes(objective.threshold)) thresholds.push(objective.threshold);
  thresholds.sort((a, b) => a - b);
  const workers = o.workers ?? os.availableParallelism();
  if (!Number.isInteger(workers) || workers < 1) throw new Error(`--workers: must be an integer ≥ 1 (got ${String(o.workers)})`);
  const exec = await resolveExecution(o.backend ?? 'auto');

  // Scenes: load each once here to name it and check it can be scored.
  const specs = expandScenes(o.scenes, o.onNotice ?? (() => undefined));
  const labels: string[] = [];
  for (const spec of specs) {
    const scene = await loadSceneSpec(spec);
    const label = sceneLabel(spec, scene);
    if (labels.includes(label)) throw new Error(`scene ${spec}: a second scene named '${label}'`);
    checkSceneForObjective(scene, spec, objective);
    labels.push(label);
  }

  let files: TuneResult['files'] = {};
  if (o.out) {
    files = { jsonl: path.join(o.out, TUNE_FILES.jsonl), csv: path.join(o.out, TUNE_FILES.csv), json: path.join(o.out, TUNE_FILES.json) };
    if (fs.existsSync(o.out) && !fs.statSync(o.out).isDirectory()) throw new Error(`--out ${o.out}: exists and is not a folder`);
    if (!o.resume && fs.existsSync(files.jsonl!)) throw new Error(`--out ${o.out}: already holds ${TUNE_FILES.jsonl}; pass --resume to continue it, or choose another folder`);
  } else if (o.resume) {
    throw new Error('--resume: needs --out, the folder of the run to continue');
  }

  const jobs: TrialJob[] = [];
  const base = { fixed: o.fixed ?? {}, sceneParams: o.sceneParams ?? true, backend: exec.backend, metric, thresholds };
  for (let s = 0; s < specs.length; s++) {
    if (o.baseline ?? true) jobs.push({ ...base, key: trialKey(labels[s], {}), sceneSpec: specs[s], scene: labels[s], point: {} });
  }
  // Point-major order: the first points finish on every scene early, so a partial run already ranks settings.
  for (const pt of points) {
    for (let s = 0; s < specs.length; s++) jobs.push({ ...base, key: trialKey(labels[s], pt), sceneSpec: specs[s], scene: labels[s], point: pt });
  }

  // One tune at a time on a folder: a second (a --resume started twice) would run every trial again beside the first.
  if (o.out) makeFolder(o.out);
  const lock = o.out ? FolderLock.acquire(o.out, '--out') : undefined;
  try {
    return await tuneLocked(o, { jobs, files, metric, objective, thresholds, specs, labels, searched, space, search, exec, workers });
  } finally {
    lock?.release();
  }
}

/** What tune() has checked and planned before it takes the folder's lock. */
interface TunePlan {
  jobs: TrialJob[];
  files: TuneResult['files'];
  metric: string;
  objective: ReturnType<typeof parseObjective>;
  thresholds: number[];
  specs: string[];
  labels: string[];
  searched: TunableName[];
  space: SearchSpace;
  search: NonNullable<TuneOptions['search']>;
  exec: { backend: BackendName; parallel: boolean };
  workers: number;
}

/** The trials of a plan (those the log has skipped on --resume), then the summaries. */
async function tuneLocked(o: TuneOptions, plan: TunePlan): Promise<TuneResult> {
  const { jobs, files, metric, objective, thresholds, specs, labels, searched, space, search, exec, workers } = plan;
  const done = new Map<string, TrialRecord>();
  if (o.out && o.resume && files.jsonl) {
    const planned = new Set(jobs.map((j) => j.key));
    for (const r of readTrialLog(files.jsonl, true)) {
      // Trials of another plan stay in the log but are not part of this run's results.
      if (planned.has(r.key) && !done.has(r.key)) done.set(r.key, { ...r, metric, objective: objectiveValue(objective, r.bad, r.energy) });
    }
  }
  const todo = jobs.filter((j) => !done.has(j.key));

  const log = files.jsonl ? new TrialLog(files.jsonl) : undefined;
  const progress = new Progress(jobs.length, done.size, o.progress);
  const onRecord = (r: TrialRecord) => {
    log?.append(r);
    done.set(r.key, r);
    o.onTrial?.(r);
    progress.tick(`${r.scene} ${describePoint(r.point)}: ${metric} ${r.objective.toFixed(3)} (${(r.timeMs / 1000).toFixed(1)} s)`);
  };
  try {
    if (exec.parallel) {
      await runOnWorkers(todo, workers, onRecord);
    } else {
      const cache = new SceneCache();
      for (const j of todo) onRecord(await runTrial(j, cache));
    }
  } finally {
    log?.close();
  }

  const trials = jobs.map((j) => done.get(j.key)!);
  const result: TuneResult = {
    metric, scenes: labels, searched, trials, ran: todo.length, skipped: jobs.length - todo.length,
    points: summarisePoints(trials, labels), best: bestSettings(trials, labels),
    backend: exec.backend, parallel: exec.parallel ? Math.min(workers, Math.max(1, todo.length)) : 1, files,
  };
  if (files.csv) writeCsv(files.csv, trialCsv(trials, searched, thresholds));
  if (files.json) {
    writeJson(files.json, {
      metric, scenes: labels.map((l, i) => ({ name: l, spec: specs[i] })),
      space: space.params.map((p) => p.spec), search, fixed: o.fixed ?? {}, sceneParams: o.sceneParams ?? true,
      backend: exec.backend, thresholds, best: result.best, points: result.points, trials,
    });
  }
  return result;
}
