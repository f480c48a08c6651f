import { disparityInPixels, match } from '../match';
import { DEFAULT_PARAMS, type BackendName, type MatchParams } from '../params';
import { sceneParamsFor } from '../sceneParams';
import type { Scene } from '../../data/sceneTypes';
import { loadSceneSpec, sceneLabel } from './scenes';
import { objectiveValue, parseObjective, type BadTable } from './objective';
import { pointKey, pointToParams, type ParamPoint } from './space';
import { badTable } from './badPixels';

/** One unit of work: a parameter point on one scene. Plain data, so it crosses to worker threads. */
export interface TrialJob {
  key: string;
  sceneSpec: string;
  scene: string;
  point: ParamPoint;
  /** Parameters fixed for the whole run (command-line options), under the point. */
  fixed: Partial<MatchParams>;
  /** Start from the scene's own parameters (stereo/sceneParams.ts) before the fixed ones. */
  sceneParams: boolean;
  backend: BackendName;
  metric: string;
  thresholds: number[];
}

/** What a finished trial records (one JSONL line). */
export interface TrialRecord {
  key: string;
  scene: string;
  sceneSpec: string;
  point: ParamPoint;
  /** Every parameter the match ran with. */
  params: MatchParams;
  metric: string;
  objective: number;
  bad: BadTable;
  /** Final energy in cost units (the integer energy divided by the cost scale). */
  energy: number;
  cycles: number;
  timeMs: number;
  backend: string;
  device: string;
}

/** The stable identity of a trial: scene label and the point's canonical text. */
export function trialKey(scene: string, point: ParamPoint): string {
  return `${scene}|${pointKey(point)}`;
}

/** Parameters of a trial: defaults, then the scene's own, then the fixed options, then the point. */
export function trialParams(job: Pick<TrialJob, 'scene' | 'point' | 'fixed' | 'sceneParams'>): MatchParams {
  return {
    ...DEFAULT_PARAMS,
    ...(job.sceneParams ? sceneParamsFor(job.scene) : {}),
    ...job.fixed,
    ...pointToParams(job.point),
  } as MatchParams;
}

/** Caches loaded scenes per thread: every trial on a scene reuses its images. */
export class SceneCache {
  private readonly scenes = new Map<string, Promise<Scene>>();
  get(spec: string): Promise<Scene> {
    let s = this.scenes.get(spec);
    if (!s) {
      s = loadSceneSpec(spec);
      this.scenes.set(spec, s);
    }
    return s;
  }
}

export async function runTrial(job: TrialJob, cache: SceneCache): Promise<TrialRecord> {
  const scene = await cache.get(job.sceneSpec);
  if (sceneLabel(job.sceneSpec, scene) !== job.scene) throw new Error(`scene ${job.sceneSpec}: loads as '${sceneLabel(job.sceneSpec, scene)}', expected '${job.scene}'`);
  const params = trialParams(job);
  const t0 = performance.now();
  const r = await match(scene.left, scene.right, { ...params, ndisp: scene.ndisp, minDisp: scene.minDisp ?? 0, backend: job.backend });
  const timeMs = performance.now() - t0;
  const bad: BadTable = badTable(scene, disparityInPixels(r), job.thresholds);
  const energy = r.finalEnergy.total / r.costScale;
  return {
    key: job.key, scene: job.scene, sceneSpec: job.sceneSpec, point: job.point, params: r.params, metric: job.metric,
    objective: objectiveValue(parseObjective(job.metric), bad, energy),
    bad, energy, cycles: r.cycles.length, timeMs, backend: r.backend, device: r.device,
  };
}
