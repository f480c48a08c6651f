import { DEFAULT_CENSUS_WINDOW } from '../costs';
import type { CycleReport } from '../expansion/alphaExpansion';
import type { EnergyBreakdown } from '../data/energy';
import type { InitRecord, MatchResult } from '../stereo/match';
import type { MatchParams } from '../stereo/params';

const ms = (v: number): string => `${v.toFixed(1)} ms`;

/** "wta (9×9 window)", "zero", "file d.pfm (grey / 4)": the initial labeling as it ran. */
export function initText(init: InitRecord): string {
  if (init.kind === 'wta') return `wta (${init.window}×${init.window} window)`;
  if (init.kind === 'zero') return 'zero';
  if (init.file === undefined) return 'a given map';
  return `file ${init.file}${init.scale !== undefined && init.scale !== 1 ? ` (grey / ${init.scale})` : ''}`;
}

/** Every parameter that shaped the run, on one line (the header of a match). */
export function paramsLine(width: number, height: number, ndisp: number, p: MatchParams & { tau: number }, init: InitRecord, minDisp = 0): string {
  const range = minDisp > 0 ? `disparities ${minDisp}..${minDisp + ndisp - 1}` : `${ndisp} disparities`;
  const w = p.censusWindow ?? DEFAULT_CENSUS_WINDOW;
  const cost = p.cost === 'census' ? `census ${w.width}x${w.height}` : p.cost;
  const post = `${p.lrCheck ? `, left-right check${p.lrFill ? ' and fill' : ''}` : ''}${p.subpixel ? ', sub-pixel' : ''}`;
  return `${width}×${height} pixels, ${range}; cost ${cost} τ=${p.tau} border ${p.border}, λ=${p.lambda}, ${p.smoothness} T=${p.truncation}, ` +
    `cue ${p.cueThreshold}/×${p.cueFactor}, init ${initText(init)}, graph ${p.graph}, order ${p.order}${p.order === 'random' ? ` seed ${p.seed}` : ''}, ` +
    `cycles ${p.cycles}${p.skipUnchanged ? '' : ', every move run'}, costs ${p.costs}${post}`;
}

export const energyText = (e: EnergyBreakdown): string => `${e.total} (data ${e.data}, smoothness ${e.smoothness})`;

export function cycleLine(c: CycleReport): string {
  return `cycle ${c.cycle}: energy ${energyText(c.energy)}, ` +
    `${c.labelsChanged}/${c.cuts} cuts changed ${c.pixelsChanged} pixels${c.skipped ? `, ${c.skipped} moves skipped (nothing changed since)` : ''}, build ${ms(c.buildMs)}, max-flow ${ms(c.flowMs)}`;
}

export function timeLine(r: MatchResult): string {
  const t = r.times;
  const extra = `${t.checkMs !== undefined ? `, left–right check ${ms(t.checkMs)}` : ''}${t.subpixelMs !== undefined ? `, sub-pixel ${ms(t.subpixelMs)}` : ''}`;
  return `time: costs ${ms(t.costsMs)}, solver setup ${ms(t.setupMs)}, init ${ms(t.initMs)}, graph build ${ms(t.buildMs)}, max-flow ${ms(t.flowMs)}, expansion total ${ms(t.expansionMs)}${extra}, total ${ms(t.totalMs)} (${r.cuts} cuts)`;
}

/** What the left–right check did (the right view's match and the marked pixels). */
export function checkLine(ms_: number, inconsistent: number, filled: boolean): string {
  return `left-right check: ${inconsistent} inconsistent pixels ${filled ? 'filled from their row' : 'left invalid'} (${ms(ms_)}; the right view was matched too, its energy added to the left's)`;
}

/** Lines after the expansion: undone moves, the phase times. */
export function closingLines(r: MatchResult): string[] {
  const lines: string[] = [];
  if (r.rejectedMoves > 0) lines.push(`${r.rejectedMoves} non-submodular moves that would have raised the energy were undone`);
  lines.push(timeLine(r));
  return lines;
}

/**
 * The whole account of a finished match, notices included (the command
 * line's live view prints the same lines as each phase ends, and the notices
 * on stderr, leaving out the ones that describe the normal case).
 */
export function matchSummaryLines(r: MatchResult): string[] {
  const w = r.clockWarmup;
  return [
    `backend: ${r.backend} on ${r.device}`,
    ...r.fallbacks.map((f) => `note: ${f}`),
    ...(w ? [w.dispatches > 0 ? `GPU clock warm-up: ${w.dispatches} spin dispatches queued before the costs` : `GPU clock warm-up skipped: ${w.skipped}`] : []),
    paramsLine(r.width, r.height, r.ndisp, r.params, r.init, r.minDisp) + (r.costScale !== 1 ? `; energies × ${r.costScale}` : ''),
    `energy after init: ${energyText(r.initialEnergy)}`,
    ...r.cycles.map(cycleLine),
    ...(r.inconsistentPixels !== undefined && r.times.checkMs !== undefined ? [checkLine(r.times.checkMs, r.inconsistentPixels, r.params.lrFill)] : []),
    ...closingLines(r),
  ];
}

/**
 * The parameters of a run as recorded (--json, metrics.json, the report):
 * every parameter with the value that ran, ndisp included, and the initial
 * labeling as it ran (init 'file' with initFile and initScale when a map was
 * given), so that the record alone reproduces the run.
 */
export function recordedParams(r: MatchResult): Record<string, unknown> {
  const init = r.init.kind === 'given'
    ? { init: r.init.file !== undefined ? 'file' : 'given', ...(r.init.file !== undefined ? { initFile: r.init.file, initScale: r.init.scale ?? 1 } : {}) }
    : { init: r.init.kind };
  return { ndisp: r.ndisp, ...r.params, ...init };
}

/** The JSON form of a match (no pixel arrays). */
export function matchSummaryJson(r: MatchResult): Record<string, unknown> {
  return {
    width: r.width, height: r.height, ndisp: r.ndisp, params: recordedParams(r), costScale: r.costScale,
    backend: r.backend, device: r.device, fallbacks: r.fallbacks, ...(r.clockWarmup ? { clockWarmup: r.clockWarmup } : {}), cuts: r.cuts, rejectedMoves: r.rejectedMoves,
    initialEnergy: r.initialEnergy, finalEnergy: r.finalEnergy,
    cycles: r.cycles.map((c) => ({ ...c })), times: r.times,
  };
}
