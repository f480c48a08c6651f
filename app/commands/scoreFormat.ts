import type { Evaluation } from '../../data/metrics';

/** "nonocc 2.04%  all 3.10%  disc 9.87%" at the first threshold, plus the average error of the first region. */
export function evaluationLines(e: Evaluation): string[] {
  const lines: string[] = [];
  const head = ['region', 'pixels', ...e.thresholds.map((t) => `bad>${t}`), 'avg err', 'rms'];
  const rows = e.regions.map((r) => [r.region, String(r.pixels), ...r.bad.map((b) => `${b.toFixed(2)}%`), r.avgError.toFixed(3), r.rms.toFixed(3)]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (cells: string[]): string => cells.map((c, i) => c.padStart(widths[i])).join('  ');
  lines.push(fmt(head));
  for (const r of rows) lines.push(fmt(r));
  if (e.regions.some((r) => r.region === 'known')) lines.push(REGION_LEGEND.replace(' (shown only where it differs from all)', ''));
  if (e.note) lines.push(`note: ${e.note}`);
  return lines;
}

/** What the region names mean (they are Middlebury's, and two of them often agree). */
export const REGION_LEGEND = 'regions: nonocc = not occluded, all = the scene\'s all mask (no border), disc = near depth discontinuities, ' +
  'known = every pixel with ground truth (shown only where it differs from all); bad = % of the region off by more than the threshold in pixels';

/** A plain text table with right-aligned columns. */
export function tableLines(head: string[], rows: string[][]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [fmt(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(fmt)];
}
