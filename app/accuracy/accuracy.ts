import type { ProgramStore } from '../../gpu/move/keptPrograms';
import { evaluateDisparity } from '../../data/metrics';
import type { Scene } from '../../data/sceneTypes';
import { matchScene } from '../../stereo/sceneMatch';
import { disparityInPixels } from '../../stereo/match';
import type { BackendName, MatchParams } from '../../stereo/params';
import { SGBM_REFERENCE, type SgbmFigure } from './sgbmReference';

/** The thresholds the benchmark reports, in px. */
export const ACCURACY_THRESHOLDS = [0.5, 1, 2] as const;

/**
 * The region a scene is scored on (docs/reference-figures.md): nonocc
 * where the dataset gives the mask, every pixel with ground truth elsewhere
 * (a nonocc mask derived by stereocut from the two ground truths is not used).
 */
export function accuracyRegion(scene: Scene): 'nonocc' | 'known' {
  return scene.masks.nonocc && !scene.nonoccDerived ? 'nonocc' : 'known';
}

export interface AccuracyRow {
  scene: string;
  region: 'nonocc' | 'known';
  /** Bad % at 0.5, 1, 2 px. */
  bad: [number, number, number];
  sgbm?: SgbmFigure;
  /** Whether the scene ran with its own parameters (sceneParams.ts). */
  sceneParams: boolean;
  params: MatchParams;
  /** Data costs (census codes and volume) and smoothness weights of every view matched (both with the left–right check); the whole match. */
  costsMs: number;
  totalMs: number;
}

export interface AccuracyOptions {
  backend: BackendName;
  /** Per-scene parameters for the scenes that have them (default false: the default setting everywhere). */
  sceneParams?: boolean;
  overrides?: Partial<MatchParams>;
  /** Where the device program is kept between the rows (its holder releases it). */
  programs?: ProgramStore;
}

/** Matches and scores one scene the benchmark's way. */
export async function accuracyRow(scene: Scene, o: AccuracyOptions): Promise<AccuracyRow> {
  if (!scene.groundTruth) throw new Error(`${scene.dir}: no ground truth to score against`);
  const m = await matchScene(scene, o.overrides ?? {}, { backend: o.backend, sceneParams: o.sceneParams ?? false, ...(o.programs ? { programs: o.programs } : {}) });
  const region = accuracyRegion(scene);
  const r = m.result;
  const e = evaluateDisparity(disparityInPixels(r), scene.groundTruth, r.width, r.height, { thresholds: [...ACCURACY_THRESHOLDS], masks: scene.masks, regions: [region] });
  const bad = e.regions[0].bad as [number, number, number];
  return {
    scene: scene.name, region, bad, sgbm: SGBM_REFERENCE[scene.name], sceneParams: m.sceneParams, params: r.params,
    costsMs: r.times.costsMs, totalMs: r.times.totalMs,
  };
}

export interface AccuracySummary {
  /** Means over the rows of bad % at each threshold. */
  mean: [number, number, number];
  /** Mean of SGBM's figure at 1 px over the rows that have one, and our mean over the same rows. */
  sgbmMean1?: number;
  oursMean1OnSgbmScenes?: number;
  /** Rows where we are not below SGBM at 1 px. */
  notBelowSgbm: string[];
}

export function summarise(rows: AccuracyRow[]): AccuracySummary {
  const mean = [0, 1, 2].map((i) => rows.reduce((s, r) => s + r.bad[i], 0) / Math.max(1, rows.length)) as [number, number, number];
  const withSgbm = rows.filter((r) => r.sgbm && r.sgbm.region === r.region);
  const out: AccuracySummary = { mean, notBelowSgbm: withSgbm.filter((r) => !(r.bad[1] < r.sgbm!.bad['1'])).map((r) => r.scene) };
  if (withSgbm.length > 0) {
    out.sgbmMean1 = withSgbm.reduce((s, r) => s + r.sgbm!.bad['1'], 0) / withSgbm.length;
    out.oursMean1OnSgbmScenes = withSgbm.reduce((s, r) => s + r.bad[1], 0) / withSgbm.length;
  }
  return out;
}
