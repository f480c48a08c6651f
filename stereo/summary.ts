import type { MatchResult } from './match';

const ms = (v: number): string => `${v.toFixed(1)} ms`;

/** Human-readable account of a match: energies per cycle, labels that changed, time per phase, backend. */
export function matchSummaryLines(r: MatchResult): string[] {
  const lines: string[] = [];
  lines.push(`backend: ${r.backend} on ${r.device}`);
  for (const f of r.fallbacks) lines.push(`note: ${f}`);
  const w = r.clockWarmup;
  if (w) lines.push(w.dispatches > 0 ? `GPU clock warm-up: ${w.dispatches} spin dispatches queued before the costs` : `GPU clock warm-up skipped: ${w.skipped}`);
  lines.push(`size ${r.width}×${r.height}, ${r.ndisp} disparities, cost ${r.params.cost}, λ=${r.params.lambda}, T=${r.params.truncation}, graph ${r.params.graph}, order ${r.params.order}, init ${r.params.init}` +
    (r.costScale !== 1 ? `, cost scale ×${r.costScale}` : ''));
  lines.push(`energy after init: ${r.initialEnergy.total} (data ${r.initialEnergy.data}, smoothness ${r.initialEnergy.smoothness})`);
  for (const c of r.cycles) {
    lines.push(`cycle ${c.cycle}: energy ${c.energy.total} (data ${c.energy.data}, smoothness ${c.energy.smoothness}), ` +
      `${c.labelsChanged}/${c.cuts} cuts changed ${c.pixelsChanged} pixels${c.skipped ? `, ${c.skipped} moves skipped (nothing changed since)` : ''}, build ${ms(c.buildMs)}, max-flow ${ms(c.flowMs)}`);
  }
  if (r.rejectedMoves > 0) lines.push(`${r.rejectedMoves} non-submodular moves that would have raised the energy were undone`);
  const t = r.times;
  lines.push(`time: costs ${ms(t.costsMs)}, solver setup ${ms(t.setupMs)}, init ${ms(t.initMs)}, graph build ${ms(t.buildMs)}, max-flow ${ms(t.flowMs)}, expansion total ${ms(t.expansionMs)}, total ${ms(t.totalMs)} (${r.cuts} cuts)`);
  return lines;
}

/** The JSON form of a match (no pixel arrays). */
export function matchSummaryJson(r: MatchResult): Record<string, unknown> {
  return {
    width: r.width, height: r.height, ndisp: r.ndisp, params: r.params, costScale: r.costScale,
    backend: r.backend, device: r.device, fallbacks: r.fallbacks, ...(r.clockWarmup ? { clockWarmup: r.clockWarmup } : {}), cuts: r.cuts, rejectedMoves: r.rejectedMoves,
    initialEnergy: r.initialEnergy, finalEnergy: r.finalEnergy,
    cycles: r.cycles.map((c) => ({ ...c })), times: r.times,
  };
}
