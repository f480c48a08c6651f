import type { BenchResult, BenchRun } from './runBench';

/**
 * The benchmark's tables, shaped like Choi & Park's: Table 3 (time split per
 * scene for the full method, with its speedup over the baseline measured in
 * the same run), Table 4 (bad pixels, baseline vs full method) and Fig. 5
 * (cumulative speedup as each technique is switched on, averaged over scenes).
 */

export interface Table {
  title: string;
  head: string[];
  rows: string[][];
  notes: string[];
}

const sec = (ms: number | undefined): string => (ms === undefined ? '–' : `${(ms / 1000).toFixed(3)}s`);
const x = (r: number | undefined): string => (r === undefined || !Number.isFinite(r) ? '–' : `${r.toFixed(2)}X`);
const pct = (v: number | undefined): string => (v === undefined ? '–' : `${v.toFixed(2)}%`);
const ratio = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined || b === undefined || b === 0 ? undefined : a / b);
const mean = (v: (number | undefined)[]): number | undefined => {
  const d = v.filter((y): y is number => y !== undefined && Number.isFinite(y));
  return d.length === v.length && d.length > 0 ? d.reduce((s, y) => s + y, 0) / d.length : undefined;
};

function runsOf(b: BenchResult, backend: string, scene: string): BenchRun[] {
  return b.runs.filter((r) => r.backend === backend && r.scene === scene);
}

/** Backend names as the runs report them (e.g. bk, pushrelabel-webgpu), in run order. */
function backendsOf(b: BenchResult): string[] {
  return [...new Set(b.runs.map((r) => r.backend))];
}

export function table3(b: BenchResult, backend: string): Table {
  const hasSplit = b.runs.some((r) => r.backend === backend && r.times.pushRelabelMs !== undefined);
  const hasFused = b.runs.some((r) => r.backend === backend && (r.times.fusedMs ?? 0) > 0);
  const cols: [string, (r: BenchRun) => number | undefined][] = [];
  if (hasSplit) {
    cols.push(['push+relabel', (r) => r.times.pushRelabelMs], ['global relabel', (r) => r.times.globalRelabelMs]);
    if (hasFused) cols.push(['fused calls', (r) => r.times.fusedMs]);
  }
  cols.push(['max-flow', (r) => r.times.flowMs], ['graph build', (r) => r.times.buildMs], ['total', (r) => r.times.totalMs]);
  const rows: string[][] = [];
  const speedups: (number | undefined)[][] = cols.map(() => []);
  for (const scene of b.scenes) {
    const runs = runsOf(b, backend, scene);
    if (runs.length === 0) continue;
    const base = runs[0];
    const full = runs[runs.length - 1];
    rows.push([scene, ...cols.map(([, f]) => sec(f(full)))]);
    rows.push(['', ...cols.map(([, f], i) => {
      const s = ratio(f(base), f(full));
      speedups[i].push(s);
      return x(s);
    })]);
  }
  rows.push(['AVG', ...speedups.map((s) => x(mean(s)))]);
  const notes = [`Full method (${b.techniques.length ? 'all techniques' : 'baseline'}), ${b.cycles} cycles; second row: speedup over the baseline in the same run.`];
  if (!hasSplit) {
    notes.push(backend === 'bk'
      ? 'BK has no push/relabel phases: max-flow, graph build and total only.'
      : `${backend} runs push-relabel rounds and global relabels in the same device calls, so its max-flow time is not split.`);
  }
  return { title: `Table 3 (${backend}): time per scene, full method`, head: ['scene', ...cols.map(([n]) => n)], rows, notes };
}

export function table4(b: BenchResult, backend: string): Table {
  const rows: string[][] = [];
  const diffs: (number | undefined)[] = [];
  for (const scene of b.scenes) {
    const runs = runsOf(b, backend, scene);
    if (runs.length === 0) continue;
    const base = runs[0];
    const full = runs[runs.length - 1];
    const d = base.badNonocc !== undefined && full.badNonocc !== undefined ? full.badNonocc - base.badNonocc : undefined;
    diffs.push(d);
    rows.push([scene, pct(base.badNonocc), pct(full.badNonocc), d === undefined ? '–' : `${d >= 0 ? '+' : ''}${d.toFixed(2)}%`, pct(base.badAll), pct(full.badAll)]);
  }
  const md = mean(diffs);
  rows.push(['AVG', '', '', md === undefined ? '–' : `${md >= 0 ? '+' : ''}${md.toFixed(2)}%`, '', '']);
  return {
    title: `Table 4 (${backend}): bad pixels (> 1 px), baseline vs full method`,
    head: ['scene', 'baseline nonocc', 'full nonocc', 'difference', 'baseline all', 'full all'], rows,
    notes: ['The label order and the initial labeling change which local minimum α-expansion reaches, so accuracy may move a little either way.'],
  };
}

export function figure5(b: BenchResult, backend: string): Table {
  const perScene = b.scenes.map((s) => runsOf(b, backend, s)).filter((r) => r.length > 0);
  if (perScene.length === 0) return { title: `Fig. 5 (${backend})`, head: [], rows: [], notes: ['no runs'] };
  const steps = perScene[0];
  const rows: string[][] = [];
  let prev: number | undefined;
  const best = Math.max(...steps.map((_, i) => mean(perScene.map((runs) => ratio(runs[0].times.totalMs, runs[i]?.times.totalMs))) ?? 0));
  steps.forEach((st, i) => {
    const cum = mean(perScene.map((runs) => ratio(runs[0].times.totalMs, runs[i]?.times.totalMs)));
    const step = cum !== undefined && prev !== undefined ? cum / prev : undefined;
    const bar = cum === undefined ? '' : '█'.repeat(Math.max(1, Math.round((30 * cum) / (best || 1))));
    rows.push([st.label, x(cum), i === 0 ? '' : x(step), bar]);
    prev = cum;
  });
  return {
    title: `Fig. 5 (${backend}): cumulative speedup of the total time, mean over ${b.scenes.join(', ')}`,
    head: ['step', 'cumulative', 'this step', ''], rows,
    notes: ['Each step adds one technique to all before it; ratios are baseline time / step time per scene, averaged.'],
  };
}

export function allTables(b: BenchResult): Table[] {
  const out: Table[] = [];
  for (const be of backendsOf(b)) out.push(table3(b, be), table4(b, be), figure5(b, be));
  return out;
}

export function tableText(t: Table): string[] {
  const w = t.head.map((h, i) => Math.max(h.length, ...t.rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 || i === cells.length - 1 && t.head[i] === '' ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ').trimEnd();
  return [t.title, line(t.head), ...t.rows.map(line), ...t.notes.map((n) => `  ${n}`)];
}

export function tableMarkdown(t: Table): string[] {
  const cell = (c: string) => c.replace(/\|/g, '\\|');
  return [`### ${t.title}`, '', `| ${t.head.map(cell).join(' | ')} |`, `|${t.head.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`,
    ...t.rows.map((r) => `| ${r.map(cell).join(' | ')} |`), '', ...t.notes.map((n) => `${n}`), ''];
}

/** BENCHMARKS.md from a bench result: where and how it was measured, then the tables and the raw runs. */
export function benchMarkdown(b: BenchResult): string {
  const devices = [...new Set(b.runs.map((r) => `${r.backend} on ${r.device}`))];
  const lines = [
    '# Benchmarks',
    '',
    'Generated by `stereocut bench` from its JSON output; do not edit by hand (re-run the command below, or `stereocut bench --from-json FILE --markdown BENCHMARKS.md`).',
    '',
    `- Command: \`${b.command}\``,
    `- Date: ${b.date}`,
    `- Commit: ${b.commit}`,
    `- Device: ${devices.join('; ')}`,
    `- Host: ${b.host.cpu}, ${b.host.cores} cores, Node ${b.host.node}, ${b.host.platform}`,
    `- Scenes: ${b.scenes.join(', ')}; ${b.cycles} cycles; per-scene parameters; median of ${b.repeat} run(s)`,
    `- Techniques (cumulative): ${b.techniques.join(', ')}; K ${b.k.baseline} → ${b.k.tuned}`,
    '',
  ];
  for (const t of allTables(b)) lines.push(...tableMarkdown(t));
  lines.push('### All runs', '', '| scene | backend | step | total | max-flow | build | energy | bad nonocc | cuts |', '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const r of b.runs) {
    lines.push(`| ${r.scene} | ${r.backend} | ${r.label} | ${sec(r.times.totalMs)} | ${sec(r.times.flowMs)} | ${sec(r.times.buildMs)} | ${r.energy} | ${pct(r.badNonocc)} | ${r.cuts} |`);
  }
  return lines.join('\n') + '\n';
}

/** Reads a bench JSON written by --json / --json-out, with a one-line error naming the file. */
export function parseBenchJson(text: string, file: string): BenchResult {
  let v: BenchResult;
  try {
    v = JSON.parse(text) as BenchResult;
  } catch {
    throw new Error(`${file}: not JSON`);
  }
  if (v.version !== 1 || !Array.isArray(v.runs) || !Array.isArray(v.scenes)) throw new Error(`${file}: not a stereocut bench result (version 1 with runs and scenes)`);
  return v;
}
