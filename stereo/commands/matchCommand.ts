import { readImage } from '../../data/imageIO';
import { disparityInPixels, labelsToDisparity, match } from '../match';
import { autoPngScale, writeDisparityPfm, writeDisparityPng } from '../disparityOutput';
import { matchSummaryJson, matchSummaryLines } from '../summary';
import type { BackendName } from '../params';
import { checkInputFile, checkOutputPath, Io, readInitialLabels } from './common';
import { paramsFromArgs, ParamArgs, progressReporter } from './paramOptions';
import { labelRange, type RangeArgs } from './rangeOptions';

export interface MatchArgs extends ParamArgs, RangeArgs {
  left: string;
  right: string;
  output: string;
  pfm?: string;
  scale?: number;
  'init-scale'?: number;
  checkpoint?: string;
  json: boolean;
  backend: string;
  verify: boolean;
  progress?: boolean;
}

export async function matchCommand(a: MatchArgs, io: Io): Promise<number> {
  const { params, initFile } = paramsFromArgs(a);
  checkInputFile(a.left, 'left image');
  checkInputFile(a.right, 'right image');
  checkOutputPath(a.output, '--output');
  if (a.pfm) checkOutputPath(a.pfm, '--pfm');
  if (a.checkpoint) checkOutputPath(a.checkpoint, '--checkpoint');
  if (a.scale !== undefined && (!Number.isFinite(a.scale) || a.scale <= 0)) throw new Error(`--scale: must be a positive number (got ${a.scale})`);
  const left = await readImage(a.left);
  const right = await readImage(a.right);
  if (left.width !== right.width || left.height !== right.height) {
    throw new Error(`size mismatch: left ${a.left} is ${left.width}×${left.height}, right ${a.right} is ${right.width}×${right.height}`);
  }
  const range = labelRange(a, left.width);
  const initialLabels = initFile ? await readInitialLabels(initFile, a['init-scale'] ?? 1, left.width, left.height, range.minDisp + range.ndisp) : undefined;
  // A checkpoint is replaced whole after each cycle (atomic write): a run stopped at any point leaves the last finished cycle's disparity.
  const checkpoint = a.checkpoint;
  const onCycle = checkpoint ? (_c: unknown, labels: Uint16Array): void => writeDisparityPfm(checkpoint, labelsToDisparity(labels, range.minDisp), left.width, left.height) : undefined;
  const r = await match(left, right, {
    ...params, ndisp: range.ndisp, minDisp: range.minDisp, initialLabels, backend: a.backend as BackendName, verify: a.verify, onMove: progressReporter(a.progress, io.err), onCycle,
  });
  const scale = a.scale ?? autoPngScale(r.minDisp + r.ndisp);
  await writeDisparityPng(a.output, r.disparity, r.width, r.height, scale);
  if (a.pfm) writeDisparityPfm(a.pfm, disparityInPixels(r), r.width, r.height);
  if (a.json) {
    io.out(JSON.stringify({ ...matchSummaryJson(r), output: a.output, pngScale: scale, pfm: a.pfm ?? null, checkpoint: checkpoint ?? null }, null, 2));
  } else {
    for (const l of matchSummaryLines(r)) io.out(l);
    io.out(`wrote ${a.output} (disparity × ${scale})${a.pfm ? ` and ${a.pfm} (disparity in pixels)` : ''}`);
    if (checkpoint) io.out(`checkpoint ${checkpoint}: disparity after cycle ${r.cycles.length}`);
  }
  return 0;
}
