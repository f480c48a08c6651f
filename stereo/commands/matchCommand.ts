import type { Raster } from '../../data/raster';
import { startDeviceReading } from './deviceEarly';
import { disparityInPixels, labelsToDisparity, match } from '../match';
import { autoPngScale, writeDisparityPfm, writeDisparityPng } from '../disparityOutput';
import { closingLines, matchSummaryJson } from '../summary';
import type { BackendName } from '../params';
import { checkInputFile, checkOutputPath, Io, readInitialLabels } from './common';
import { LiveMatch } from './liveProgress';
import { paramsFromArgs, ParamArgs } from './paramOptions';
import { optionName } from './optionValues';
import { labelRange, type RangeArgs } from './rangeOptions';

export interface MatchArgs extends ParamArgs, RangeArgs {
  left: string;
  right: string;
  output: string;
  pfm?: string;
  'png-scale'?: number;
  'init-scale'?: number;
  checkpoint?: string;
  json: boolean;
  quiet: boolean;
  backend: string;
  verify: boolean;
  progress?: boolean;
}

export async function matchCommand(a: MatchArgs, io: Io): Promise<number> {
  const { params, initFile } = paramsFromArgs(a);
  checkInputFile(a.left, 'left image');
  checkInputFile(a.right, 'right image');
  checkOutputPath(a.output, '--output', 'png');
  if (a.pfm) checkOutputPath(a.pfm, '--pfm', 'pfm');
  if (a.checkpoint) checkOutputPath(a.checkpoint, '--checkpoint', 'pfm');
  if (initFile) checkInputFile(initFile, '--init');
  const reads = startDeviceReading(a.backend, [{ kind: 'image' as const, file: a.left }, { kind: 'image' as const, file: a.right }]);
  let left: Raster;
  let right: Raster;
  try {
    left = await reads.result(0);
    right = await reads.result(1);
  } finally {
    reads.close();
  }
  if (left.width !== right.width || left.height !== right.height) {
    throw new Error(`size mismatch: left ${a.left} is ${left.width}×${left.height}, right ${a.right} is ${right.width}×${right.height}`);
  }
  const range = labelRange(a, left.width);
  const maxDisp = range.minDisp + range.ndisp - 1;
  const pngScale = a['png-scale'] ?? autoPngScale(maxDisp + 1);
  if (Math.round(maxDisp * pngScale) > 255) {
    throw new Error(`${optionName('png-scale')}: got '${pngScale}', expected at most ${Math.floor(255 / Math.max(1, maxDisp))}: the largest disparity ${maxDisp} × ${pngScale} is beyond 255 in an 8-bit PNG`);
  }
  const initScale = a['init-scale'] ?? 1;
  const initialLabels = initFile ? await readInitialLabels(initFile, initScale, left.width, left.height, maxDisp + 1) : undefined;
  // A checkpoint is replaced whole after each cycle (atomic write): a run stopped at any point leaves the last finished cycle's disparity.
  const checkpoint = a.checkpoint;
  const onCycle = checkpoint ? (_c: unknown, labels: Uint16Array): void => writeDisparityPfm(checkpoint, labelsToDisparity(labels, range.minDisp), left.width, left.height) : undefined;
  // --quiet: no bar and no account of the run, notices and the result only.
  const live = new LiveMatch(a.quiet ? { out: io.out, err: io.err } : io, { lines: !a.json && !a.quiet, moves: a.progress });
  const r = await match(left, right, {
    ...params, ndisp: range.ndisp, minDisp: range.minDisp, initialLabels, initSource: initFile ? { file: initFile, scale: initScale } : undefined,
    backend: a.backend as BackendName, verify: a.verify, onMove: live.onMove, onEvent: live.onEvent, onCycle,
  }).finally(() => live.finish());
  live.finish(r);
  await writeDisparityPng(a.output, r.disparity, r.width, r.height, pngScale);
  if (a.pfm) writeDisparityPfm(a.pfm, disparityInPixels(r), r.width, r.height);
  if (a.json) {
    io.out(JSON.stringify({ ...matchSummaryJson(r), output: a.output, pngScale, pfm: a.pfm ?? null, checkpoint: checkpoint ?? null }, null, 2));
    return 0;
  }
  if (!a.quiet) for (const l of closingLines(r)) io.out(l);
  io.out(`wrote ${a.output} (disparity × ${pngScale})${a.pfm ? ` and ${a.pfm} (disparity in pixels)` : ''}`);
  if (checkpoint && !a.quiet) io.out(`checkpoint ${checkpoint}: disparity after cycle ${r.cycles.length}`);
  return 0;
}
