import type { ProgramStore } from '../../gpu/move/keptPrograms';
import { disparityInPixels, match } from '../../stereo/match';
import { DEFAULT_PARAMS, type BackendName, type MatchParams } from '../../stereo/params';
import { sceneParamsFor } from '../../stereo/sceneParams';
import type { Scene } from '../../data/sceneTypes';
import { InputError } from '../../data/errors';
import { loadSceneSpec, sceneContentHash, sceneLabel } from './scenes';
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
  /** sceneContentHash of the scene the trial was planned on; where given, a scene with other content is refused. */
  sceneHash?: string;
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

/** Caches loaded scenes (and their content hashes) per thread: every trial on a scene reuses its images. */
export class SceneCache {
  private readonly scenes = new Map<string, Promise<Scene>>();
  private readonly hashes = new Map<string, string>();
  get(spec: string): Promise<Scene> {
    let s = this.scenes.get(spec);
    if (!s) {
      s = loadSceneSpec(spec);
      this.scenes.set(spec, s);
      // A scene that cannot be read now may be readable for a later job (a long-lived queue worker).
      s.catch(() => this.scenes.delete(spec));
    }
    return s;
  }
  /** Forgets a scene, so that it is hashed and read again (its files changed since). */
  forget(spec: string): void {
    this.scenes.delete(spec);
    this.hashes.delete(spec);
  }
  hash(spec: string): string {
    let h = this.hashes.get(spec);
    if (h === undefined) {
      h = sceneContentHash(spec);
      this.hashes.set(spec, h);
    }
    return h;
  }
}

/**
 * The job's scene, or an InputError: the scene cannot be read here, or it
 * is not the scene the trial was planned on (another folder under the same
 * path on this machine). Such a trial fails the same way wherever it runs.
 */
async function trialScene(job: TrialJob, cache: SceneCache): Promise<Scene> {
  let scene: Scene;
  try {
    if (job.sceneHash !== undefined && cache.hash(job.sceneSpec) !== job.sceneHash) cache.forget(job.sceneSpec);
    if (job.sceneHash !== undefined && cache.hash(job.sceneSpec) !== job.sceneHash) {
      throw new Error(`its files differ from those the trial was planned on (sha256 ${cache.hash(job.sceneSpec).slice(0, 12)}…, planned ${job.sceneHash.slice(0, 12)}…)`);
    }
    scene = await cache.get(job.sceneSpec);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw new InputError(msg.includes(job.sceneSpec) ? msg : `scene ${job.sceneSpec}: ${msg}`);
  }
  if (sceneLabel(job.sceneSpec, scene) !== job.scene) throw new InputError(`scene ${job.sceneSpec}: loads as '${sceneLabel(job.sceneSpec, scene)}', expected '${job.scene}'`);
  return scene;
}

/** One trial; `programs` is where its runner keeps the device program between its trials (one pair size and device setting: the trials of a sweep). */
export async function runTrial(job: TrialJob, cache: SceneCache, programs?: ProgramStore): Promise<TrialRecord> {
  const scene = await trialScene(job, cache);
  const params = trialParams(job);
  const t0 = performance.now();
  const r = await match(scene.left, scene.right, { ...params, ndisp: scene.ndisp, minDisp: scene.minDisp ?? 0, backend: job.backend, ...(programs ? { programs } : {}) });
  const timeMs = performance.now() - t0;
  const bad: BadTable = badTable(scene, disparityInPixels(r), job.thresholds);
  const energy = r.finalEnergy.total / r.costScale;
  return {
    key: job.key, scene: job.scene, sceneSpec: job.sceneSpec, point: job.point, params: r.params, metric: job.metric,
    objective: objectiveValue(parseObjective(job.metric), bad, energy),
    bad, energy, cycles: r.cycles.length, timeMs, backend: r.backend, device: r.device,
  };
}
