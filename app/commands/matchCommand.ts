import type { Raster } from '../../data/raster';
import { startDeviceReading } from './deviceEarly';
import { createMatcher, disparityInPixels, type Matcher } from '../../stereo/match';
import { checkpointWriter, readResume, resumeFileOf, runKey } from '../checkpoint';
import { checkedImageHeader } from '../../data/imageHeader';
import { checkMatchMemory } from '../../stereo/memoryPlan';
import { autoPngScale, disparityPfmBytes, disparityPngBytes, pngBits } from '../disparityOutput';
import { writeFilesAtomic } from '../../data/atomicWrite';
import { closingLines, matchSummaryJson } from '../summary';
import type { BackendName } from '../../stereo/params';
import { checkInputFile, checkOutputPath, Io, maxMemoryBytes, readInitialLabels } from './common';
import { planMatchOutputs, plannedFiles, writeMatchOutputs, type MatchOutputArgs } from './matchOutputs';
import { LiveMatch } from './liveProgress';
import { checkOutputsApart, checkOutputsDistinct } from './outputGuard';
import { paramsFromArgs, ParamArgs } from './paramOptions';
import { InputError } from '../../data/errors';
import { labelRange, type LabelRange, type RangeArgs } from './rangeOptions';

export interface MatchArgs extends ParamArgs, RangeArgs, MatchOutputArgs {
  left: string;
  right: string;
  output?: string;
  pfm?: string;
  'png-scale'?: number;
  'max-memory'?: number;
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
  if (a.output === undefined && a.pfm === undefined) throw new InputError('--output: give -o FILE.png, --pfm FILE.pfm, or both');
  if (a.output !== undefined) checkOutputPath(a.output, '--output', 'png');
  if (a.pfm) checkOutputPath(a.pfm, '--pfm', 'pfm');
  if (a.checkpoint) checkOutputPath(a.checkpoint, '--checkpoint', 'pfm');
  if (initFile) checkInputFile(initFile, '--init');
  const extra = planMatchOutputs(a, a.left);
  const checkpoints = a.checkpoint ? [a.checkpoint, resumeFileOf(a.checkpoint)].map((file) => ({ name: '--checkpoint', file })) : [];
  const outputs = [
    ...(a.output !== undefined ? [{ name: '--output', file: a.output }] : []), ...(a.pfm ? [{ name: '--pfm', file: a.pfm }] : []), ...checkpoints,
    ...plannedFiles(extra).map(([file, name]) => ({ name, file })),
  ];
  const inits = initFile ? [initFile, resumeFileOf(initFile)].map((file) => ({ name: '--init file', file })) : [];
  const calibration = extra.calib && extra.calib.source !== 'the options' ? [{ name: 'calibration', file: extra.calib.source }] : [];
  checkOutputsApart(outputs, [{ name: 'left image', file: a.left }, { name: 'right image', file: a.right }, ...inits, ...calibration]);
  checkOutputsDistinct(outputs);
  // The matcher, made once the disparity range is known (from the width, in the headers or the decoded pair: the same): it
  // checks and resolves the parameters, once.
  const maxMemory = maxMemoryBytes(a['max-memory']);
  let matcher: Matcher | undefined;
  const matcherFor = (range: LabelRange): Matcher => (matcher ??= createMatcher({ ...params, ...range }, { backend: a.backend as BackendName, verify: a.verify, maxMemory }));
  // The pair's size from the headers: a mismatch or a run too large for memory is refused before anything is decoded.
  const heads = [checkedImageHeader(a.left, 'left image'), checkedImageHeader(a.right, 'right image')];
  if (heads[0] && heads[1]) {
    const [l, r] = heads;
    if (l.width !== r.width || l.height !== r.height) throw new InputError(`size mismatch: left ${a.left} is ${l.width}×${l.height}, right ${a.right} is ${r.width}×${r.height}`);
    const range = labelRange(a, l.width);
    const m = matcherFor(range);
    checkMatchMemory(`${a.left}, ${a.right} (${l.width}×${l.height}, ${range.ndisp} disparities)`, m.memoryEstimate(l.width, l.height, l.channels), maxMemory, '--max-memory');
  }
  const reads = startDeviceReading(a.backend, [{ kind: 'image' as const, file: a.left, pair: true }, { kind: 'image' as const, file: a.right, pair: true }]);
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
  // A scale the user gave that 8 bits cannot hold gives a 16-bit PNG; only one beyond 16 bits is refused.
  const pngScale = a['png-scale'] ?? autoPngScale(maxDisp + 1);
  const bits = pngBits(maxDisp, pngScale);
  if (bits === 0) {
    throw new InputError(`--png-scale: got '${pngScale}', expected at most ${Math.floor(65535 / Math.max(1, maxDisp))}: the largest disparity ${maxDisp} × ${pngScale} is beyond 65535 in a 16-bit PNG`);
  }
  const initScale = a['init-scale'] ?? 1;
  // A checkpoint with its resume file continues the run exactly (every view's labels, the cycles run); else its map is an initial labeling.
  const m = matcherFor(range);
  const resolved = m.params;
  const run = runKey(left, right, resolved, range.ndisp, range.minDisp);
  const found = initFile ? readResume(initFile, run, left.width * left.height * (resolved.lrCheck ? 2 : 1), range.ndisp) : undefined;
  if (found && 'why' in found) io.err(`note: --init ${initFile}: ${found.why}; the run starts from its map alone, not where that run stopped`);
  const resume = found && 'state' in found ? found.state : undefined;
  if (resume && !a.quiet) io.err(`note: --init ${initFile}: resuming that run after its cycle ${resume.cycle} (${resumeFileOf(initFile!)})`);
  const initialLabels = initFile && !resume ? await readInitialLabels(initFile, initScale, left.width, left.height, maxDisp + 1) : undefined;
  // The checkpoint and its resume file are replaced whole after each cycle: a run stopped at any point leaves the last finished cycle's.
  const checkpoint = a.checkpoint;
  const onCycle = checkpoint ? checkpointWriter(checkpoint, run, range.minDisp, left.width, left.height) : undefined;
  // --quiet: no bar and no account of the run, notices and the result only.
  const live = new LiveMatch(a.quiet ? { out: io.out, err: io.err } : io, { lines: !a.json && !a.quiet, moves: a.progress });
  const r = await m.compute(left, right, {
    initialLabels, resume, initSource: initFile ? { file: initFile, scale: initScale } : undefined, onMove: live.onMove, onEvent: live.onEvent, onCycle,
  }).finally(() => { live.finish(); return m.dispose(); });
  live.finish(r);
  // All or nothing: neither file is replaced unless both are written.
  writeFilesAtomic([
    ...(a.output !== undefined ? [{ file: a.output, bytes: await disparityPngBytes(r.disparity, r.width, r.height, pngScale) }] : []),
    ...(a.pfm ? [{ file: a.pfm, bytes: disparityPfmBytes(disparityInPixels(r), r.width, r.height) }] : []),
  ]);
  const wrote = await writeMatchOutputs(extra, r, left, right, io);
  if (a.json) {
    const files = { color: a.color ?? null, depth: a.depth ?? null, ply: a.ply ?? null, confidence: a.confidence ?? null, calibration: extra.calib?.source ?? null };
    io.out(JSON.stringify({ ...matchSummaryJson(r), output: a.output ?? null, pngScale, pngBits: bits, pfm: a.pfm ?? null, checkpoint: checkpoint ?? null, ...files }, null, 2));
    return 0;
  }
  if (!a.quiet) for (const l of closingLines(r)) io.out(l);
  const written = [a.output !== undefined ? `${a.output} (disparity × ${pngScale}, ${bits}-bit)` : '', a.pfm ? `${a.pfm} (disparity in pixels)` : ''].filter(Boolean);
  io.out(`wrote ${written.join(' and ')}`);
  for (const l of wrote) io.out(l);
  if (checkpoint && !a.quiet && r.cycles.length > 0) io.out(`checkpoint ${checkpoint}: disparity after cycle ${r.cycles[r.cycles.length - 1].cycle}`);
  return 0;
}
