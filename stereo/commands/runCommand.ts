import * as fs from 'fs';
import * as path from 'path';
import { loadScene } from '../../data/scene';
import { regionScore } from '../../data/metrics';
import { writeSceneOutputs } from '../report/sceneOutputs';
import { RunOutputs } from '../report/runOutputs';
import { matchScene, type SceneMatch } from '../sceneMatch';
import { matchSummaryJson } from '../summary';
import type { BackendName, MatchParams } from '../params';
import { DEFAULT_CENSUS_WINDOW } from '../../costs';
import { Io } from './common';
import { paramsFromArgs, ParamArgs, progressReporter } from './paramOptions';
import { tableLines } from './scoreFormat';

export interface RunArgs extends ParamArgs {
  scenes: string[];
  ndisp?: number;
  out?: string;
  report?: string;
  inline?: boolean;
  middeval3?: string;
  'middeval3-name'?: string;
  'middeval3-set'?: string;
  threshold?: number[];
  json: boolean;
  'scene-params'?: boolean;
  'min-disp'?: number;
  'max-disp'?: number;
  backend: string;
  verify: boolean;
  progress?: boolean;
}

const pct = (v: number | undefined): string => (v === undefined ? '-' : v.toFixed(2));

/** The energy's main settings in one cell. */
function paramsText(p: MatchParams): string {
  const cost = p.cost === 'census' ? `census ${(p.censusWindow ?? DEFAULT_CENSUS_WINDOW).width}x${(p.censusWindow ?? DEFAULT_CENSUS_WINDOW).height}` : p.cost;
  return `${cost} λ=${p.lambda} T=${p.truncation} cue×${p.cueFactor}${p.lrCheck ? ' lr' : ''}`;
}

/** Match + evaluate Middlebury scene folders: one table row per scene (or JSON), optional per-scene files, HTML report and MiddEval3 tree. */
export async function runCommand(a: RunArgs, io: Io): Promise<number> {
  const { params, initFile } = paramsFromArgs(a);
  if (initFile) throw new Error(`--init: run takes wta or zero (a disparity file belongs to one pair: use match)`);
  if (a.ndisp !== undefined && (!Number.isInteger(a.ndisp) || a.ndisp <= 0)) throw new Error(`--ndisp: must be a positive integer (got ${a.ndisp})`);
  if (a.out !== undefined && fs.existsSync(a.out) && !fs.statSync(a.out).isDirectory()) throw new Error(`--out: ${a.out} exists and is not a folder`);
  const extra = new RunOutputs({ report: a.report, inline: a.inline, middeval3: a.middeval3, middeval3Name: a['middeval3-name'], middeval3Set: a['middeval3-set'] });
  // Load and check every scene before matching any, so a bad folder fails before output is written.
  const scenes = [];
  for (const dir of a.scenes) {
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new Error(`scene folder ${dir}: no such folder`);
    extra.checkScene(dir);
    scenes.push(await loadScene(dir, { ndisp: a.ndisp, minDisp: a['min-disp'], maxDisp: a['max-disp'] }));
  }
  const thresholds = a.threshold ?? [1];
  const results: SceneMatch[] = [];
  for (const scene of scenes) {
    const m = await matchScene(scene, params, {
      backend: a.backend as BackendName, verify: a.verify, thresholds, onMove: progressReporter(a.progress, io.err), sceneParams: a['scene-params'] !== false,
    });
    results.push(m);
    if (a.out !== undefined) {
      const dir = path.join(a.out, scene.name);
      await writeSceneOutputs(dir, a.out, scene, m.result);
    }
    await extra.add(scene, m.result);
  }
  const reportFile = extra.finish(`${scenes.length} scene(s)`);
  if (a.json) {
    io.out(JSON.stringify(results.map((m) => ({
      scene: m.scene.name, dir: m.scene.dir, layout: m.scene.layout, ndisp: m.scene.ndisp, minDisp: m.scene.minDisp ?? 0, ndispSource: m.scene.ndispSource,
      sceneParams: m.sceneParams,
      evaluation: m.evaluation ?? null, ...matchSummaryJson(m.result),
    })), null, 2));
  } else {
    const t = thresholds[0];
    const head = ['scene', 'size', 'ndisp', `nonocc>${t}`, `all>${t}`, `disc>${t}`, `known>${t}`, 'energy', 'total s', 'params', 'backend'];
    const rows = results.map(({ scene, result: r, evaluation: e }) => [
      scene.name, `${r.width}×${r.height}`, r.minDisp > 0 ? `${r.minDisp}..${r.minDisp + r.ndisp - 1}` : String(r.ndisp),
      pct(e && regionScore(e, 'nonocc')?.bad[0]), pct(e && regionScore(e, 'all')?.bad[0]), pct(e && regionScore(e, 'disc')?.bad[0]),
      pct(e && regionScore(e, 'known')?.bad[0]), String(r.finalEnergy.total), (r.times.totalMs / 1000).toFixed(2),
      paramsText(r.params), r.backend,
    ]);
    for (const l of tableLines(head, rows)) io.out(l);
    for (const { scene, evaluation } of results) if (evaluation?.note) io.out(`${scene.name}: ${evaluation.note}`);
    const own = results.filter((m) => m.sceneParams).map((m) => m.scene.name);
    if (own.length > 0) io.out(`per-scene parameters (stereo/sceneParams.ts) for ${own.join(', ')}; the others got the defaults (--no-scene-params: the defaults for all)`);
    if (a.out !== undefined) io.out(`wrote per-scene outputs under ${a.out}`);
    if (reportFile) io.out(`wrote ${reportFile}`);
    if (a.middeval3) io.out(`wrote MiddEval3 results under ${a.middeval3}`);
  }
  return 0;
}
