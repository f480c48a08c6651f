import * as fs from 'fs';
import * as path from 'path';
import { generateSyntheticScene } from '../../data/synthetic';
import { regionScore } from '../../data/metrics';
import { writeSceneOutputs } from '../report/sceneOutputs';
import { matchScene } from '../sceneMatch';
import { matchSummaryJson, matchSummaryLines } from '../summary';
import type { BackendName } from '../params';
import { Io } from './common';
import { paramsFromArgs, ParamArgs, progressReporter } from './paramOptions';
import { evaluationLines } from './scoreFormat';

export interface DemoArgs extends ParamArgs {
  out: string;
  width: number;
  height: number;
  ndisp?: number;
  json: boolean;
  backend: string;
  verify: boolean;
  progress?: boolean;
}

/** The main job on the built-in synthetic scene: match it, score it, write the disparity and error images. */
export async function demoCommand(a: DemoArgs, io: Io): Promise<number> {
  const { params, initFile } = paramsFromArgs(a);
  if (initFile) throw new Error('--init: demo takes wta or zero');
  for (const [name, v, min] of [['width', a.width, 32], ['height', a.height, 16]] as const) {
    if (!Number.isInteger(v) || v < min || v > 4096) throw new Error(`--${name}: must be an integer in ${min}..4096 (got ${v})`);
  }
  if (fs.existsSync(a.out) && !fs.statSync(a.out).isDirectory()) throw new Error(`--out: ${a.out} exists and is not a folder`);
  const ndisp = a.ndisp ?? Math.max(8, Math.round(a.width / 10));
  const scene = generateSyntheticScene({ width: a.width, height: a.height, ndisp, seed: a.seed ?? 1 });
  const m = await matchScene(scene, params, { backend: a.backend as BackendName, verify: a.verify, thresholds: [1, 2], onMove: progressReporter(a.progress, io.err) });
  fs.mkdirSync(a.out, { recursive: true });
  await writeSceneOutputs(a.out, a.out, scene, m.result);
  if (a.json) {
    io.out(JSON.stringify({ scene: 'synthetic', seed: a.seed ?? 1, evaluation: m.evaluation, out: a.out, ...matchSummaryJson(m.result) }, null, 2));
    return 0;
  }
  io.out(`synthetic scene (seed ${a.seed ?? 1}): ${scene.left.width}×${scene.left.height}, ${ndisp} disparities, exact ground truth`);
  for (const l of matchSummaryLines(m.result)) io.out(l);
  if (m.evaluation) for (const l of evaluationLines(m.evaluation)) io.out(l);
  const nonocc = m.evaluation && regionScore(m.evaluation, 'nonocc');
  if (nonocc) io.out(`bad pixels (nonocc, > 1 px): ${nonocc.bad[0].toFixed(2)}%`);
  io.out(`wrote ${path.join(a.out, 'disp.png')} (disparity PNG), disp.pfm, disp-color.png, error.png, metrics.json`);
  return 0;
}
