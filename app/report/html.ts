import * as fs from 'fs';
import * as path from 'path';
import { writeFileAtomic } from '../../data/atomicWrite';
import type { PhaseTimes } from '../../stereo/match';

/**
 * A self-contained HTML report of a dataset run: one section per scene with
 * its images, metrics table (bad-pixel % over nonocc / all / disc at several
 * thresholds), energy per cycle (table and a small inline SVG plot), time per
 * phase, backend and device, and the parameters. No scripts, no external
 * styles or fonts, every image embedded as a data: URI: the one file opens
 * anywhere, offline, copied or mailed. Only the links to a scene's data files
 * (PFM, metrics JSON; written by the run's --out-dir) point outside it.
 */

/** A file of a scene's outputs. */
export interface ReportFile {
  label: string;
  /** Path relative to the report's folder. */
  file: string;
}

/** An image of a scene, embedded in the page. */
export interface ReportImage {
  label: string;
  /** The PNG file's bytes. */
  png: Uint8Array;
}

export interface ReportCycle {
  cycle: number;
  energy: number;
  data: number;
  smoothness: number;
  labelsChanged: number;
  pixelsChanged: number;
  buildMs: number;
  flowMs: number;
}

export interface ReportScene {
  name: string;
  width: number;
  height: number;
  ndisp: number;
  images: ReportImage[];
  /** Other files (PFM, metrics JSON), linked for download; none when they were not kept. */
  links: ReportFile[];
  /** bad-pixel % per mask per threshold; absent without ground truth. */
  bad?: Partial<Record<'nonocc' | 'all' | 'disc', Record<string, number>>>;
  thresholds: number[];
  initialEnergy: number;
  cycles: ReportCycle[];
  /** Energies are integers in these units (see MatchResult.costScale). */
  costScale: number;
  times: PhaseTimes;
  backend: string;
  device: string;
  /** Every parameter as it ran (summary.ts recordedParams): the section alone reproduces the run. */
  params: Record<string, unknown>;
}

export interface ReportOptions {
  title?: string;
  /** A line under the title (command, date). */
  subtitle?: string;
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
/** Relative URL of a path relative to the report: forward slashes, each segment percent-encoded. */
const href = (rel: string): string => rel.split(/[\\/]/).map(encodeURIComponent).join('/');
const ms = (v: number): string => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(1)} ms`);

const imageSrc = (im: ReportImage): string => `data:image/png;base64,${Buffer.from(im.png.buffer, im.png.byteOffset, im.png.byteLength).toString('base64')}`;

/** Energy per cycle as a polyline, starting from the initial energy (cycle 0). */
function energySvg(s: ReportScene): string {
  const ys = [s.initialEnergy, ...s.cycles.map((c) => c.energy)];
  if (ys.length < 2) return '';
  const W = 320;
  const H = 120;
  const pad = 28;
  const lo = Math.min(...ys);
  const hi = Math.max(...ys);
  const span = hi - lo || 1;
  const pts = ys.map((y, i) => `${(pad + (i * (W - 2 * pad)) / (ys.length - 1)).toFixed(1)},${(H - pad - ((y - lo) * (H - 2 * pad)) / span).toFixed(1)}`);
  const labels = ys.map((_, i) => `<text x="${(pad + (i * (W - 2 * pad)) / (ys.length - 1)).toFixed(1)}" y="${H - 8}" font-size="10" text-anchor="middle">${i}</text>`).join('');
  return `<svg class="plot" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="energy per cycle">` +
    `<polyline fill="none" stroke="#1f5fa8" stroke-width="2" points="${pts.join(' ')}"/>` +
    pts.map((p) => `<circle cx="${p.split(',')[0]}" cy="${p.split(',')[1]}" r="3" fill="#1f5fa8"/>`).join('') +
    `<text x="4" y="14" font-size="10">${esc(String(hi))}</text><text x="4" y="${H - pad + 4}" font-size="10">${esc(String(lo))}</text>${labels}</svg>`;
}

function metricsTable(s: ReportScene): string {
  if (!s.bad || Object.keys(s.bad).length === 0) return '<p class="note">No ground truth: no metrics.</p>';
  const masks = (['nonocc', 'all', 'disc'] as const).filter((m) => s.bad![m]);
  const head = `<tr><th>bad pixels (%)</th>${s.thresholds.map((t) => `<th>&gt; ${t} px</th>`).join('')}</tr>`;
  const rows = masks.map((m) => `<tr><th>${m}</th>${s.thresholds.map((t) => {
    const v = s.bad![m]![String(t)];
    return `<td>${v === undefined ? '–' : v.toFixed(2)}</td>`;
  }).join('')}</tr>`).join('');
  return `<table class="metrics">${head}${rows}</table>`;
}

function cyclesTable(s: ReportScene): string {
  const rows = s.cycles.map((c) => `<tr><td>${c.cycle}</td><td>${c.energy}</td><td>${c.data}</td><td>${c.smoothness}</td><td>${c.labelsChanged}</td><td>${c.pixelsChanged}</td><td>${ms(c.buildMs)}</td><td>${ms(c.flowMs)}</td></tr>`).join('');
  return `<table><tr><th>cycle</th><th>energy</th><th>data</th><th>smoothness</th><th>labels changed</th><th>pixels changed</th><th>graph build</th><th>max-flow</th></tr>` +
    `<tr><td>init</td><td>${s.initialEnergy}</td><td colspan="6"></td></tr>${rows}</table>`;
}

function timesTable(t: PhaseTimes): string {
  const phases: [string, number][] = [['costs', t.costsMs], ['solver setup', t.setupMs], ['initial labeling', t.initMs], ['graph build', t.buildMs], ['max-flow', t.flowMs], ['expansion (all moves)', t.expansionMs], ['total', t.totalMs]];
  return `<table>${phases.map(([k, v]) => `<tr><th>${k}</th><td>${ms(v)}</td></tr>`).join('')}</table>`;
}

function paramsTable(p: Record<string, unknown>): string {
  return `<table>${Object.entries(p).filter(([, v]) => v !== undefined).map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(String(v))}</td></tr>`).join('')}</table>`;
}

/** The summary table at the top: one row per scene. */
function overview(scenes: ReportScene[]): string {
  const ths = scenes[0]?.thresholds ?? [];
  const t1 = ths.includes(1) ? '1' : String(ths[0]);
  const rows = scenes.map((s, i) => `<tr><td><a href="#scene-${i + 1}">${esc(s.name)}</a></td><td>${s.width}×${s.height}</td><td>${s.ndisp}</td>` +
    (['nonocc', 'all', 'disc'] as const).map((m) => `<td>${s.bad?.[m]?.[t1] === undefined ? '–' : s.bad[m]![t1].toFixed(2)}</td>`).join('') +
    `<td>${s.cycles.length ? s.cycles[s.cycles.length - 1].energy : s.initialEnergy}</td><td>${ms(s.times.totalMs)}</td><td>${esc(s.backend)}</td></tr>`).join('');
  return `<table class="overview"><tr><th>scene</th><th>size</th><th>labels</th><th>nonocc &gt;${t1}</th><th>all &gt;${t1}</th><th>disc &gt;${t1}</th><th>final energy</th><th>time</th><th>backend</th></tr>${rows}</table>`;
}

export function renderReport(scenes: ReportScene[], o: ReportOptions = {}): string {
  const title = o.title ?? 'stereocut report';
  const sections = scenes.map((s, i) => `
<section id="scene-${i + 1}">
<h2>${esc(s.name)} <small>${s.width}×${s.height}, ${s.ndisp} labels</small></h2>
<div class="images">${s.images.map((im) => `<figure><img src="${imageSrc(im)}" alt="${esc(`${s.name}: ${im.label}`)}" width="${s.width}" height="${s.height}"><figcaption>${esc(im.label)}</figcaption></figure>`).join('')}</div>
${s.links.length ? `<p>Files: ${s.links.map((l) => `<a href="${href(l.file)}">${esc(l.label)}</a>`).join(' · ')}</p>` : ''}
<div class="cols">
<div><h3>Metrics</h3>${metricsTable(s)}<h3>Time per phase</h3>${timesTable(s.times)}<p>Backend <b>${esc(s.backend)}</b> on ${esc(s.device)}</p></div>
<div><h3>Energy per cycle</h3>${energySvg(s)}${cyclesTable(s)}<p class="note">${s.costScale === 1 ? 'Energies in cost units.' : `Energies in units of 1/${s.costScale} of a cost unit (every term × ${s.costScale}, so that λ and the cue factor stay integers).`}</p></div>
<div><h3>Parameters</h3>${paramsTable(s.params)}</div>
</div>
</section>`).join('\n');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.4em 0}th,td{border:1px solid #ccc;padding:2px 8px;text-align:right}th{background:#f4f4f4}
.overview td:first-child,th{text-align:left}.images{display:flex;flex-wrap:wrap;gap:10px}figure{margin:0}figcaption{font-size:12px;color:#555}
img{image-rendering:pixelated;max-width:100%;height:auto;border:1px solid #ddd}.cols{display:flex;flex-wrap:wrap;gap:2em}.note{color:#666;font-size:12px}
section{border-top:2px solid #ddd;margin-top:1.5em}
</style></head><body>
<h1>${esc(title)}</h1>
${o.subtitle ? `<p class="note">${esc(o.subtitle)}</p>` : ''}
${overview(scenes)}
${sections}
</body></html>
`;
}

/** Writes the report (atomically); every linked file must already exist beside it. */
export function writeReport(file: string, scenes: ReportScene[], o: ReportOptions = {}): void {
  const dir = path.dirname(path.resolve(file));
  for (const s of scenes) {
    for (const f of s.links) {
      if (!fs.existsSync(path.join(dir, f.file))) throw new Error(`report ${file}: ${f.file} (${s.name}, ${f.label}) does not exist beside it`);
    }
  }
  writeFileAtomic(file, renderReport(scenes, o));
}
