import type { Scene } from '../../data/sceneTypes';

/** What tune minimises: bad-pixel % at a threshold over a mask (averaged over scenes), or the final energy. */
export type Objective =
  | { kind: 'bad'; threshold: number; mask: MaskName; text: string }
  | { kind: 'energy'; text: string };

/**
 * 'scene' is each scene's evaluation region as docs/reference-figures.md
 * and `stereocut accuracy` use it: nonocc where the dataset gives the mask
 * (v2 nonocc.png, MiddEval3 mask0nocc.png), every known pixel elsewhere (a
 * nonocc mask stereocut derived itself is not used).
 */
export type MaskName = 'nonocc' | 'all' | 'disc' | 'scene';

/** The default objective: every scene with ground truth has its own region, so it scores any scene folder the loader accepts. */
export const DEFAULT_METRIC = 'bad1-scene';
export const MASKS: readonly MaskName[] = ['nonocc', 'all', 'disc', 'scene'];
/** Thresholds recorded for every trial, so any of them can be ranked later without re-running. */
export const RECORDED_THRESHOLDS: readonly number[] = [0.5, 1, 2, 4];

export function parseObjective(text: string): Objective {
  if (text === 'energy') return { kind: 'energy', text };
  const m = /^bad(\d+(?:\.\d+)?)-(nonocc|all|disc|scene)$/.exec(text);
  if (!m) throw new Error(`--metric: unknown metric '${text}' (expected bad<threshold>-<nonocc|all|disc|scene>, e.g. bad1-nonocc, or energy)`);
  return { kind: 'bad', threshold: Number(m[1]), mask: m[2] as MaskName, text };
}

/** Refuses a scene that cannot be scored by the objective (before any trial runs or file is written). */
export function checkSceneForObjective(scene: Scene, where: string, o: Objective): void {
  if (o.kind !== 'bad') return;
  if (!scene.groundTruth) throw new Error(`scene ${where}: no ground truth, which --metric ${o.text} needs (--metric energy needs none)`);
  if (o.mask !== 'all' && o.mask !== 'scene' && !scene.masks[o.mask]) throw new Error(`scene ${where}: no ${o.mask} mask, which --metric ${o.text} needs`);
}

/** Per-mask, per-threshold bad-pixel percentages of one trial. */
export type BadTable = Partial<Record<MaskName, Record<string, number>>>;

/** Value of the objective for one trial's record. */
export function objectiveValue(o: Objective, bad: BadTable, energy: number): number {
  if (o.kind === 'energy') return energy;
  const v = bad[o.mask]?.[String(o.threshold)];
  if (v === undefined) throw new Error(`--metric ${o.text}: the trial has no ${o.mask} value at threshold ${o.threshold}`);
  return v;
}
