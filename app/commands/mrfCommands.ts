import { readImage } from '../../data/imageIO';
import * as fs from 'fs';
import { encodeLabeling, encodeSmrf, readLabeling, readSmrf } from '../../data/smrf';
import { encodeResume, mrfRunKey, readResume, resumeFileOf } from '../checkpoint';
import { writeFilesAtomic } from '../../data/atomicWrite';
import { alphaExpansion, type CycleReport } from '../../expansion/alphaExpansion';
import { resolveParams, stereoEnergy, initialLabeling } from '../../stereo/match';
import { checkMatchOptions, checkMatchRange } from '../../stereo/matchOptions';
import { createMoveSolver } from '../../stereo/backends';
import { autoPngScale, disparityPngBytes } from '../disparityOutput';
import type { BackendName } from '../../stereo/params';
import { checkInputFile, checkOutputPath, Io } from './common';
import { paramsFromArgs, ParamArgs } from './paramOptions';
import { checkOutputsApart, checkOutputsDistinct } from './outputGuard';
import { labelRange, type RangeArgs } from './rangeOptions';
import type { GraphVariant } from '../../expansion/binaryStep';
import type { LabelOrder } from '../../expansion/labelOrder';

export interface ExportMrfArgs extends ParamArgs, RangeArgs {
  left: string;
  right: string;
  output: string;
  labels?: string;
}

/** Writes the energy match would minimise as SMRF1 (and optionally the initial labeling beside it). */
export async function exportMrfCommand(a: ExportMrfArgs, io: Io): Promise<number> {
  const { params, initFile } = paramsFromArgs(a);
  if (initFile) throw new Error(`--init: got '${initFile}', expected wta or zero (export-mrf writes those initial labelings only)`);
  checkInputFile(a.left, 'left image');
  checkInputFile(a.right, 'right image');
  checkOutputPath(a.output, '--output', 'smrf');
  if (a.labels) checkOutputPath(a.labels, '--labels', 'u16');
  const outputs = [{ name: '--output', file: a.output }, ...(a.labels ? [{ name: '--labels', file: a.labels }] : [])];
  checkOutputsApart(outputs, [{ name: 'left image', file: a.left }, { name: 'right image', file: a.right }]);
  checkOutputsDistinct(outputs);
  const left = await readImage(a.left);
  const right = await readImage(a.right);
  if (left.width !== right.width || left.height !== right.height) {
    throw new Error(`size mismatch: left ${a.left} is ${left.width}×${left.height}, right ${a.right} is ${right.width}×${right.height}`);
  }
  // SMRF stores the whole cost volume: never on demand here.
  const p = resolveParams({ ...params, costs: 'volume' });
  const range = labelRange(a, left.width);
  // The energy's options as match() checks them (λ and τ within 32 bits, …), refused under their flags before the costs.
  const checked = { ...params, ndisp: range.ndisp, minDisp: range.minDisp };
  checkMatchOptions(checked, 'export-mrf');
  checkMatchRange(checked, left.width, left.height, left.channels, 'export-mrf');
  const energy = stereoEnergy(left, right, range.ndisp, p, false, range.minDisp);
  // All or nothing: neither file is replaced unless both are written.
  writeFilesAtomic([{ file: a.output, bytes: encodeSmrf(energy) }, ...(a.labels ? [{ file: a.labels, bytes: encodeLabeling(initialLabeling(energy, p)) }] : [])]);
  io.out(`wrote ${a.output}: ${energy.width}×${energy.height}, ${energy.labels} labels${range.minDisp > 0 ? ` (label l = disparity ${range.minDisp} + l)` : ''}, ${energy.smoothness} T=${energy.truncation}, cost scale ×${energy.scale}`);
  if (a.labels) io.out(`wrote ${a.labels}: ${p.init} initial labeling (uint16)`);
  return 0;
}

export interface SolveMrfArgs {
  file: string;
  init?: string;
  order?: string;
  graph?: string;
  cycles?: string;
  seed?: number;
  'skip-unchanged'?: boolean;
  backend: string;
  verify: boolean;
  output?: string;
  checkpoint?: string;
  png?: string;
  json: boolean;
  quiet: boolean;
}

/** Minimises an SMRF1 energy by α-expansion and reports the energy per cycle. */
export async function solveMrfCommand(a: SolveMrfArgs, io: Io): Promise<number> {
  checkInputFile(a.file, 'SMRF file');
  if (a.output) checkOutputPath(a.output, '--output', 'u16');
  if (a.png) checkOutputPath(a.png, '--png', 'png');
  if (a.checkpoint) checkOutputPath(a.checkpoint, '--checkpoint', 'u16');
  if (a.init !== undefined && a.init !== 'zero') checkInputFile(a.init, '--init');
  const outputs = [['--output', a.output], ['--png', a.png], ['--checkpoint', a.checkpoint], ['--checkpoint', a.checkpoint && resumeFileOf(a.checkpoint)]]
    .filter((o): o is [string, string] => typeof o[1] === 'string').map(([name, file]) => ({ name, file }));
  const inits = a.init !== undefined && a.init !== 'zero' ? [a.init, resumeFileOf(a.init)].map((file) => ({ name: '--init file', file })) : [];
  checkOutputsApart(outputs, [{ name: 'SMRF file', file: a.file }, ...inits]);
  checkOutputsDistinct(outputs);
  // Said before the work, not after it: a run without an output is allowed (the energies are the result), but never by surprise.
  if (!a.output && !a.png && !a.checkpoint) io.err('note: no -o, --png or --checkpoint given: the labeling is not written, only the energies are printed');
  const energy = readSmrf(a.file);
  const p = resolveParams(paramsFromArgs({ order: a.order, graph: a.graph, cycles: a.cycles, seed: a.seed, 'skip-unchanged': a['skip-unchanged'] }).params);
  const initFile = a.init !== undefined && a.init !== 'zero' ? a.init : undefined;
  // A checkpoint with its resume file continues the run exactly (the cycles run, the moves known to change nothing); else it is an initial labeling.
  const run = a.checkpoint || initFile ? mrfRunKey(fs.readFileSync(a.file), { order: p.order, graph: p.graph, seed: p.seed, skipUnchanged: p.skipUnchanged }) : '';
  const found = initFile ? readResume(initFile, run, energy.width * energy.height, energy.labels) : undefined;
  if (found && 'why' in found) io.err(`note: --init ${initFile}: ${found.why}; the run starts from its labeling alone, not where that run stopped`);
  const resume = found && 'state' in found ? found.state : undefined;
  if (resume && !a.quiet) io.err(`note: --init ${initFile}: resuming that run after its cycle ${resume.cycle} (${resumeFileOf(initFile!)})`);
  const init = resume ? resume.labels : initFile ? readLabeling(initFile, energy.width, energy.height, energy.labels) : new Uint16Array(energy.width * energy.height);
  const solver = await createMoveSolver(energy, { backend: a.backend as BackendName, graph: p.graph as GraphVariant, verify: a.verify });
  // The account of the run is printed as it happens: the backend, then the energy after every cycle.
  const say = (l: string): void => { if (!a.json && !a.quiet) io.out(l); };
  say(`backend: ${solver.backend} on ${solver.device}`);
  const t0 = performance.now();
  let r;
  try {
    // Replaced whole (atomic write) after each cycle: a stopped run leaves the last finished cycle's labeling.
    const checkpoint = a.checkpoint;
    const onCycle = (c: CycleReport, labels: Uint16Array, unchanged: number[]): void => {
      say(`cycle ${c.cycle}: energy ${c.energy.total}, ${c.labelsChanged}/${c.cuts} labels changed ${c.pixelsChanged} pixels, max-flow ${c.flowMs.toFixed(1)} ms`);
      if (!checkpoint) return;
      const bytes = encodeLabeling(labels);
      writeFilesAtomic([{ file: resumeFileOf(checkpoint), bytes: encodeResume(run, bytes, { cycle: c.cycle, unchanged, labels }) }, { file: checkpoint, bytes }]);
    };
    r = await alphaExpansion(energy, init, solver, {
      order: p.order as LabelOrder, cycles: p.cycles, seed: p.seed, skipUnchanged: p.skipUnchanged, onCycle,
      resume: resume ? { cycle: resume.cycle, unchanged: resume.unchanged } : undefined,
      onStart: (e) => say(`energy after init: ${e.total}`),
    });
  } finally {
    solver.dispose?.();
  }
  const ms = performance.now() - t0;
  writeFilesAtomic([
    ...(a.output ? [{ file: a.output, bytes: encodeLabeling(r.labels) }] : []),
    ...(a.png ? [{ file: a.png, bytes: await disparityPngBytes(r.labels, energy.width, energy.height, autoPngScale(energy.labels)) }] : []),
  ]);
  if (a.json) {
    io.out(JSON.stringify({
      file: a.file, width: energy.width, height: energy.height, labels: energy.labels, backend: r.backend, device: r.device,
      params: { init: a.init ?? 'zero', order: p.order, graph: p.graph, cycles: p.cycles, seed: p.seed, skipUnchanged: p.skipUnchanged },
      initialEnergy: r.initialEnergy, cycles: r.cycles, finalEnergy: r.finalEnergy, cuts: r.cuts, ms,
      output: a.output ?? null, png: a.png ?? null, checkpoint: a.checkpoint ?? null,
    }, null, 2));
  } else {
    io.out(`final energy ${r.finalEnergy.total} (data ${r.finalEnergy.data}, smoothness ${r.finalEnergy.smoothness}) in ${ms.toFixed(1)} ms`);
    if (a.output) io.out(`wrote ${a.output} (uint16 labels)`);
    if (a.png) io.out(`wrote ${a.png} (label × ${autoPngScale(energy.labels)})`);
  }
  return 0;
}
