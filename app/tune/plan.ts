import * as fs from 'fs';
import { sceneFoldersOf } from '../../data/scene';
import type { MatchParams } from '../../stereo/params';
import { checkSceneForObjective, DEFAULT_METRIC, objectiveValue, parseObjective, RECORDED_THRESHOLDS, type Objective } from './objective';
import { describePoint } from './results';
import { loadSceneSpec, parseSyntheticSpec, sceneContentHash, sceneLabel } from './scenes';
import { gridPoints, parseSearchSpace, randomPoints, type ParamPoint, type SearchSpace, type TunableName } from './space';
import { trialJobId } from './jobId';
import { trialKey, type TrialJob, type TrialRecord } from './trial';

/** What a tuning study is, before anything runs: the options of tune() that shape its trials. */
export interface PlanOptions {
  /** Scene folders, dataset folders (every scene inside), or synthetic specs (`synthetic:seed=2`). */
  scenes: string[];
  /** NAME=SPEC strings (see space.ts) or a parsed space. */
  params: string[] | SearchSpace;
  /** Grid (default) or `count` seeded random points. */
  search?: 'grid' | { random: number; seed?: number };
  /** bad<t>-<nonocc|all|disc|scene> (default bad1-nonocc) or energy. */
  metric?: string;
  /** Told each notice of the plan (files beside a dataset's scene folders). */
  onNotice?: (line: string) => void;
  /** Parameters held fixed for every trial (under the searched ones). */
  fixed?: Partial<MatchParams>;
  /** Start each scene from its own parameters in stereo/sceneParams.ts (default true). */
  sceneParams?: boolean;
  /** Also run each scene once with its own parameters, as the hand-set reference (default true). */
  baseline?: boolean;
}

/** A trial of a plan: the job and its content-derived id (jobId.ts). */
export interface PlannedTrial extends TrialJob {
  id: string;
}

export interface TunePlan {
  metric: string;
  objective: Objective;
  thresholds: number[];
  searched: TunableName[];
  /** The searched parameters as given (NAME=SPEC). */
  space: string[];
  search: 'grid' | { random: number; seed?: number };
  fixed: Partial<MatchParams>;
  sceneParams: boolean;
  scenes: { label: string; spec: string; hash: string }[];
  /** Baselines first, then point-major: the first points finish on every scene early, so a partial run already ranks settings. */
  trials: PlannedTrial[];
}

/** Scene specs → specs: a dataset folder stands for every scene folder in it (sceneFoldersOf; what else it holds is told to `notice`). */
function expandScenes(specs: string[], notice: (line: string) => void): string[] {
  if (specs.length === 0) throw new Error('tune: give at least one scene folder');
  const out: string[] = [];
  for (const s of specs) {
    if (parseSyntheticSpec(s) || !(fs.existsSync(s) && fs.statSync(s).isDirectory())) out.push(s);
    else out.push(...sceneFoldersOf([s], notice));
  }
  return out;
}

/**
 * Every trial of a study, checked (space, metric, scenes, ground truth)
 * before any runs: local runs, the queue and the index mode all start here,
 * so they run the same trials under the same ids. Each job's backend is
 * 'auto': where a trial runs decides what it runs on.
 */
export async function planTune(o: PlanOptions): Promise<TunePlan> {
  const space = Array.isArray(o.params) ? parseSearchSpace(o.params) : o.params;
  const searched = space.params.map((p) => p.name);
  const fixed = o.fixed ?? {};
  for (const n of searched) {
    if ((fixed as Record<string, unknown>)[n] !== undefined) throw new Error(`--param ${n}: also given as a fixed option; give it one way`);
  }
  const search = o.search ?? 'grid';
  const points: ParamPoint[] = search === 'grid' ? gridPoints(space) : randomPoints(space, search.random, search.seed ?? 1);
  const metric = o.metric ?? DEFAULT_METRIC;
  const objective = parseObjective(metric);
  const thresholds = [...RECORDED_THRESHOLDS];
  if (objective.kind === 'bad' && !thresholds.includes(objective.threshold)) thresholds.push(objective.threshold);
  thresholds.sort((a, b) => a - b);

  // Scenes: load each once here to name it and check it can be scored.
  const scenes: TunePlan['scenes'] = [];
  for (const spec of expandScenes(o.scenes, o.onNotice ?? (() => undefined))) {
    const scene = await loadSceneSpec(spec);
    const label = sceneLabel(spec, scene);
    if (scenes.some((s) => s.label === label)) throw new Error(`scene ${spec}: a second scene named '${label}'`);
    checkSceneForObjective(scene, spec, objective);
    scenes.push({ label, spec, hash: sceneContentHash(spec) });
  }

  const sceneParams = o.sceneParams ?? true;
  const base = { fixed, sceneParams, backend: 'auto' as const, metric, thresholds };
  const trials: PlannedTrial[] = [];
  const add = (s: TunePlan['scenes'][number], point: ParamPoint): void => {
    const job: TrialJob = { ...base, key: trialKey(s.label, point), sceneSpec: s.spec, scene: s.label, point, sceneHash: s.hash };
    trials.push({ ...job, id: trialJobId(job, s.hash) });
  };
  if (o.baseline ?? true) for (const s of scenes) add(s, {});
  for (const pt of points) for (const s of scenes) add(s, pt);
  return { metric, objective, thresholds, searched, space: space.params.map((p) => p.spec), search, fixed, sceneParams, scenes, trials };
}

/**
 * A trial's record as it came back from elsewhere (a queue's worker, an
 * index-mode row), made this study's: the identity
 * (key, scene label, spec, point) and the objective are the plan's, since
 * one job may stand for several trials (equal parameters, equal scene
 * content), and whoever ran it knew only the job.
 */
export function recordFor(j: PlannedTrial, value: unknown): TrialRecord {
  const r = value as Partial<TrialRecord> | null;
  if (!r || typeof r !== 'object' || typeof r.energy !== 'number' || typeof r.bad !== 'object' || r.bad === null || typeof r.params !== 'object') {
    throw new Error(`job ${j.id} (${j.scene} ${describePoint(j.point)}): the result is not a trial record`);
  }
  const rec = r as TrialRecord;
  return { ...rec, key: j.key, scene: j.scene, sceneSpec: j.sceneSpec, point: j.point, metric: j.metric, objective: objectiveValue(parseObjective(j.metric), rec.bad, rec.energy) };
}
