import { ProgramStore } from '../../gpu/move/keptPrograms';
import { loadScene, sceneFoldersOf } from '../../data/scene';
import { accuracyRow, summarise, type AccuracyRow } from '../accuracy/accuracy';
import type { BackendName } from '../../stereo/params';
import type { Io } from './common';
import { paramsFromArgs, type ParamArgs } from './paramOptions';
import { tableLines } from './scoreFormat';

export interface AccuracyArgs extends ParamArgs {
  scenes: string[];
  'scene-params': boolean;
  backend: string;
  json: boolean;
  quiet: boolean;
}

const f2 = (v: number | undefined): string => (v === undefined ? '–' : v.toFixed(2));

/** One scene's result as it ends: "[2/10] venus: nonocc bad>0.5 5.79%, >1 0.73%, >2 0.43% (SGBM >1 2.64%), 1.92 s". */
function sceneLine(r: AccuracyRow, k: number, n: number): string {
  const sg = r.sgbm && r.sgbm.region === r.region ? ` (SGBM >1 ${f2(r.sgbm.bad['1'])}%)` : '';
  return `[${k + 1}/${n}] ${r.scene}: ${r.region} bad>0.5 ${f2(r.bad[0])}%, >1 ${f2(r.bad[1])}%, >2 ${f2(r.bad[2])}%${sg}, ${(r.totalMs / 1000).toFixed(2)} s`;
}

/**
 * `stereocut accuracy`: the default setting (or with --scene-params the
 * per-scene table) on each scene, bad % at 0.5 / 1 / 2 px in the scene's
 * region beside OpenCV StereoSGBM's figures, the mean and the ratio; and how
 * much of each run the data costs took.
 */
export async function accuracyCommand(a: AccuracyArgs, io: Io): Promise<number> {
  const { params, initFile } = paramsFromArgs(a);
  if (initFile) throw new Error(`--init: accuracy takes wta or zero (got ${initFile})`);
  const scenes = [];
  for (const dir of sceneFoldersOf(a.scenes, (l) => io.err(`note: ${l}`))) {
    const s = await loadScene(dir);
    if (!s.groundTruth) throw new Error(`scene folder ${dir}: no ground truth to score against`);
    scenes.push(s);
  }
  const rows: AccuracyRow[] = [];
  const programs = new ProgramStore();
  try {
    for (const [k, s] of scenes.entries()) {
      const r = await accuracyRow(s, { backend: a.backend as BackendName, sceneParams: a['scene-params'], overrides: params, programs });
      rows.push(r);
      // A line as each scene ends, as `run` prints: a ten-scene run takes minutes on a CPU.
      if (!a.json && !a.quiet) io.out(sceneLine(r, k, scenes.length));
    }
  } finally {
    programs.release();
  }
  const sum = summarise(rows);
  if (a.json) {
    io.out(JSON.stringify({ rows, summary: sum }, null, 2));
    return 0;
  }
  const head = ['scene', 'region', 'bad>0.5', 'bad>1', 'bad>2', 'SGBM>0.5', 'SGBM>1', 'SGBM>2', 'ratio>1', 'costs s', 'costs %', 'total s', 'params'];
  const body = rows.map((r) => {
    const sg = r.sgbm && r.sgbm.region === r.region ? r.sgbm : undefined;
    return [
      r.scene, r.region, f2(r.bad[0]), f2(r.bad[1]), f2(r.bad[2]), f2(sg?.bad['0.5']), f2(sg?.bad['1']), f2(sg?.bad['2']),
      sg ? (r.bad[1] / sg.bad['1']).toFixed(2) : '–', (r.costsMs / 1000).toFixed(2),
      ((100 * r.costsMs) / r.totalMs).toFixed(1), (r.totalMs / 1000).toFixed(2), r.sceneParams ? 'per-scene' : 'default',
    ];
  });
  body.push(['mean', '', f2(sum.mean[0]), f2(sum.mean[1]), f2(sum.mean[2]), '', f2(sum.sgbmMean1), '', sum.sgbmMean1 ? (sum.oursMean1OnSgbmScenes! / sum.sgbmMean1).toFixed(2) : '–', '', '', '', '']);
  if (!a.quiet) io.out('');
  for (const l of tableLines(head, body)) io.out(l);
  io.out(`bad = |d − ground truth| > threshold, % of the region's pixels with ground truth; an invalid pixel counts as bad. SGBM: OpenCV 4.6 StereoSGBM, best mode and block per scene (app/accuracy/sgbmReference.ts).`);
  io.out(`costs % = data costs (census codes, cost volume) and smoothness weights, share of the whole match (both views with the left–right check, matched as one energy).`);
  if (sum.notBelowSgbm.length > 0) io.out(`not below SGBM at 1 px: ${sum.notBelowSgbm.join(', ')}`);
  return 0;
}
