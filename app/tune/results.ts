import { writeFileAtomic } from '../../data/atomicWrite';
import { MASKS, type MaskName } from './objective';
import { pointKey, type ParamPoint, type TunableName } from './space';
import type { TrialRecord } from './trial';

/** A point's results over the scenes. */
export interface PointSummary {
  point: ParamPoint;
  key: string;
  /** Mean objective over the scenes it has finished on. */
  mean: number;
  perScene: Record<string, number>;
  complete: boolean;
}

export interface BestSettings {
  /** The point with the lowest mean over all scenes (complete points only). */
  overall?: PointSummary;
  /** Per scene: the best trial, and the scene's own (hand-set) parameters where they were run. */
  perScene: Record<string, { point: ParamPoint; objective: number; handSet?: number }>;
  /** Leave-one-scene-out check of `overall` (two or more scenes, complete points only). */
  leaveOneOut?: LeaveOneOut;
}

/**
 * Leave-one-scene-out: for each scene, the point with the lowest mean over
 * the *other* scenes, scored on the scene left out. Its mean is what the
 * chosen setting can be expected to do on a pair it was not chosen on; the
 * gap to the in-sample mean of `overall` shows how much the choice is fitted.
 */
export interface LeaveOneOut {
  mean: number;
  perScene: Record<string, { point: ParamPoint; objective: number }>;
}

export function leaveOneOut(points: PointSummary[], scenes: string[]): LeaveOneOut | undefined {
  const complete = points.filter((p) => p.complete);
  if (scenes.length < 2 || complete.length === 0) return undefined;
  const perScene: LeaveOneOut['perScene'] = {};
  let sum = 0;
  for (const held of scenes) {
    let best: PointSummary | undefined;
    let bestMean = Infinity;
    for (const p of complete) {
      let m = 0;
      for (const sc of scenes) if (sc !== held) m += p.perScene[sc];
      m /= scenes.length - 1;
      if (m < bestMean || (m === bestMean && best && p.key < best.key)) { best = p; bestMean = m; }
    }
    perScene[held] = { point: best!.point, objective: best!.perScene[held] };
    sum += best!.perScene[held];
  }
  return { mean: sum / scenes.length, perScene };
}

/** The hand-set baseline is the empty point: the scene's own parameters with nothing searched. */
export const BASELINE_KEY = '';

export function summarisePoints(records: TrialRecord[], scenes: string[]): PointSummary[] {
  const byPoint = new Map<string, PointSummary>();
  for (const r of records) {
    const k = pointKey(r.point);
    if (k === BASELINE_KEY) continue;
    let s = byPoint.get(k);
    if (!s) {
      s = { point: r.point, key: k, mean: NaN, perScene: {}, complete: false };
      byPoint.set(k, s);
    }
    s.perScene[r.scene] = r.objective;
  }
  const out = [...byPoint.values()];
  for (const s of out) {
    const vals = scenes.filter((sc) => s.perScene[sc] !== undefined).map((sc) => s.perScene[sc]);
    s.mean = vals.reduce((a, b) => a + b, 0) / vals.length;
    s.complete = vals.length === scenes.length;
  }
  return out.sort((a, b) => (Number(b.complete) - Number(a.complete)) || a.mean - b.mean || a.key.localeCompare(b.key));
}

export function bestSettings(records: TrialRecord[], scenes: string[]): BestSettings {
  const points = summarisePoints(records, scenes);
  const perScene: BestSettings['perScene'] = {};
  for (const sc of scenes) {
    let best: TrialRecord | undefined;
    let handSet: number | undefined;
    for (const r of records) {
      if (r.scene !== sc) continue;
      if (pointKey(r.point) === BASELINE_KEY) { handSet = r.objective; continue; }
      if (!best || r.objective < best.objective || (r.objective === best.objective && pointKey(r.point) < pointKey(best.point))) best = r;
    }
    if (best) perScene[sc] = { point: best.point, objective: best.objective, handSet };
  }
  const loo = leaveOneOut(points, scenes);
  return { overall: points.find((p) => p.complete), perScene, ...(loo ? { leaveOneOut: loo } : {}) };
}

const fmt = (v: number | undefined): string => (v === undefined || Number.isNaN(v) ? '–' : (Math.abs(v) >= 1000 ? v.toFixed(0) : v.toFixed(2)));

export function describePoint(p: ParamPoint): string {
  const k = pointKey(p);
  return k === BASELINE_KEY ? '(scene parameters)' : k.replace(/;/g, ' ');
}

/** The closing table: per scene hand-set vs best, and the best setting overall. */
export function bestTableLines(best: BestSettings, scenes: string[], metric: string): string[] {
  const lines: string[] = [];
  const rows = scenes.map((sc) => {
    const b = best.perScene[sc];
    const overall = best.overall?.perScene[sc];
    return [sc, fmt(b?.handSet), fmt(b?.objective), b ? describePoint(b.point) : '–', fmt(overall)];
  });
  const head = ['scene', `hand-set ${metric}`, `best ${metric}`, 'best settings', 'overall best'];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 3 || i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ').trimEnd();
  lines.push(line(head));
  for (const r of rows) lines.push(line(r));
  const bestMean = scenes.every((sc) => best.perScene[sc]) ? scenes.reduce((a, sc) => a + best.perScene[sc].objective, 0) / scenes.length : undefined;
  const hsAll = scenes.map((sc) => best.perScene[sc]?.handSet);
  if (bestMean !== undefined && hsAll.every((v) => v !== undefined)) {
    lines.push(`per-scene best settings: mean ${metric} ${fmt(bestMean)} vs hand-set ${fmt((hsAll as number[]).reduce((a, b) => a + b, 0) / scenes.length)}`);
  }
  if (best.overall) {
    const hs = scenes.map((sc) => best.perScene[sc]?.handSet);
    const hsMean = hs.every((v) => v !== undefined) ? (hs as number[]).reduce((a, b) => a + b, 0) / hs.length : undefined;
    lines.push(`overall best (mean ${metric} ${fmt(best.overall.mean)}${hsMean !== undefined ? ` vs hand-set ${fmt(hsMean)}` : ''}): ${describePoint(best.overall.point)}`);
  }
  if (best.leaveOneOut) {
    lines.push(`leave-one-scene-out: mean ${metric} ${fmt(best.leaveOneOut.mean)} (each scene scored with the best setting of the other scenes; in-sample ${fmt(best.overall?.mean)})`);
    for (const sc of scenes) {
      const l = best.leaveOneOut.perScene[sc];
      if (l) lines.push(`  ${sc}: ${fmt(l.objective)} with ${describePoint(l.point)}`);
    }
  }
  return lines;
}

function csvCell(v: unknown): string {
  const s = v === undefined || v === null ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The columns of the trial CSV: identity, every searched parameter (as run), objective, bad-pixel table, energy, time. */
export function trialCsv(records: TrialRecord[], names: TunableName[], thresholds: number[]): string {
  const badCols: [MaskName, string][] = [];
  for (const m of MASKS) for (const t of thresholds) badCols.push([m, String(t)]);
  const head = ['key', 'scene', ...names, 'metric', 'objective', ...badCols.map(([m, t]) => `bad${t}_${m}`), 'energy', 'cycles', 'time_ms', 'backend', 'device'];
  const rows = records.map((r) => [
    r.key, r.scene, ...names.map((n) => (r.params as unknown as Record<string, unknown>)[n]), r.metric, r.objective,
    ...badCols.map(([m, t]) => r.bad[m]?.[t]), r.energy, r.cycles, r.timeMs.toFixed(1), r.backend, r.device,
  ]);
  return [head, ...rows].map((row) => row.map(csvCell).join(',')).join('\n') + '\n';
}

export function writeCsv(file: string, text: string): void {
  writeFileAtomic(file, text);
}

export function writeJson(file: string, value: unknown): void {
  writeFileAtomic(file, JSON.stringify(value, null, 2) + '\n');
}
