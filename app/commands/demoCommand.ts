import * as path from 'path';
import { generateSyntheticScene } from '../../data/synthetic';
import { makeFolder } from '../../data/folders';
import { regionScore } from '../../data/metrics';
import { writeSceneOutputs } from '../report/sceneOutputs';
import { matchScene } from '../../stereo/sceneMatch';
import { autoPngScale } from '../disparityOutput';
import { closingLines, matchSummaryJson } from '../summary';
import type { BackendName } from '../../stereo/params';
import { checkOutputFolder, Io } from './common';
import { LiveMatch } from './liveProgress';
import { paramsFromArgs, ParamArgs } from './paramOptions';
import { evaluationLines } from './scoreFormat';

export interface DemoArgs extends ParamArgs {
  'out-dir': string;
  'scene-seed': number;
  width: number;
  height: number;
  ndisp?: number;
  json: boolean;
  quiet: boolean;
  backend: string;
  verify: boolean;
  progress?: boolean;
}

/** The main job on the built-in synthetic scene: match it, score it, write the disparity and error images. */
export async function demoCommand(a: DemoArgs, io: Io): Promise<number> {
  const { params, initFile } = paramsFromArgs(a);
  if (initFile) throw new Error(`--init: got '${initFile}', expected wta or zero (demo makes its own scene)`);
  const out = a['out-dir'];
  checkOutputFolder(out, '--out-dir');
  const ndisp = a.ndisp ?? Math.max(8, Math.round(a.width / 10));
  const seed = a['scene-seed'];
  const scene = generateSyntheticScene({ width: a.width, height: a.height, ndisp, seed });
  if (!a.json && !a.quiet) io.out(`synthetic scene (scene seed ${seed}): ${scene.left.width}×${scene.left.height}, ${ndisp} disparities, exact ground truth`);
  const live = new LiveMatch(a.quiet ? { out: io.out, err: io.err } : io, { lines: !a.json && !a.quiet, moves: a.progress });
  const m = await matchScene(scene, params, {
    backend: a.backend as BackendName, verify: a.verify, thresholds: [1, 2], onMove: live.onMove, onEvent: live.onEvent,
  }).finally(() => live.finish());
  live.finish(m.result);
  makeFolder(out);
  const section = await writeSceneOutputs(out, out, scene, m.result);
  const written = [...section.images, ...section.links].map((f) => f.file);
  const pngScale = autoPngScale(m.result.ndisp);
  if (a.json) {
    io.out(JSON.stringify({ scene: 'synthetic', sceneSeed: seed, evaluation: m.evaluation, out, files: written, pngScale, ...matchSummaryJson(m.result) }, null, 2));
    return 0;
  }
  if (!a.quiet) {
    for (const l of closingLines(m.result)) io.out(l);
    if (m.evaluation) for (const l of evaluationLines(m.evaluation)) io.out(l);
  }
  const nonocc = m.evaluation && regionScore(m.evaluation, 'nonocc');
  if (nonocc) io.out(`bad pixels (nonocc, > 1 px): ${nonocc.bad[0].toFixed(2)}%`);
  io.out(`wrote under ${out}${path.sep}: ${written.map((f) => (f === 'disp.png' ? `disp.png (disparity × ${pngScale})` : f)).join(', ')}`);
  return 0;
}
