import * as fs from 'fs';
import * as path from 'path';
import { framePairs, type FramePair } from '../../data/frameFiles';
import { checkedImageHeader } from '../../data/imageHeader';
import { readImage } from '../../data/imageIO';
import { sharedSamples } from '../../data/raster';
import { encodePng } from '../../data/pngEncode';
import { writeFilesAtomic, type FileContent } from '../../data/atomicWrite';
import { InputError } from '../../data/errors';
import { makeFolder } from '../../data/folders';
import { colorScaleImage } from '../../stereo/colorScale';
import { autoPngScale, disparityPfmBytes, disparityPngBytes, pngBits } from '../disparityOutput';
import { disparityInPixels } from '../../stereo/match';
import { checkMatchMemory } from '../../stereo/memoryPlan';
import type { BackendName } from '../../stereo/params';
import { createSequenceMatcher, type FrameResult } from '../../stereo/sequence';
import { checkOutputFolder, maxMemoryBytes, type Io } from './common';
import { StopRequest, yieldToEventLoop } from './interrupt';
import { paramsFromArgs, type ParamArgs } from './paramOptions';
import { labelRange, type RangeArgs } from './rangeOptions';

/**
 * `stereocut video LEFT RIGHT --out-dir OUT`: the frames of a sequence
 * (folders or printf patterns, data/frameFiles.ts) matched one after
 * another by a SequenceMatcher (stereo/sequence.ts), each frame's
 * disparity written to OUT as it finishes (OUT/<left frame's name>.png,
 * and .pfm / -color.png when asked), a line per frame and a summary.
 * Everything is checked before the first frame: the frame lists, every
 * frame's size from its header, the outputs apart from every input.
 */
export interface VideoArgs extends ParamArgs, RangeArgs {
  left: string;
  right: string;
  'out-dir': string;
  pfm: boolean;
  color: boolean;
  'png-scale'?: number;
  'max-memory'?: number;
  warm: boolean;
  'warm-cycles'?: string;
  keyframe?: number;
  json: boolean;
  quiet: boolean;
  backend: string;
  verify: boolean;
}

/** The files a frame writes: [option, file]. */
function frameOutputs(a: VideoArgs, f: FramePair): Array<[string, string]> {
  const at = (name: string): string => path.join(a['out-dir'], name);
  return [['--out-dir', at(`${f.stem}.png`)], ...(a.pfm ? [['--pfm', at(`${f.stem}.pfm`)] as [string, string]] : []), ...(a.color ? [['--color', at(`${f.stem}-color.png`)] as [string, string]] : [])];
}

/** A file's identities: device and inode when it exists, and its path with links resolved (of the nearest existing folder). */
function identities(file: string): string[] {
  const ids: string[] = [];
  try {
    const s = fs.statSync(file);
    ids.push(`inode ${s.dev}:${s.ino}`);
  } catch { /* a file still to be written */ }
  let head = path.resolve(file);
  const rest: string[] = [];
  for (;;) {
    try {
      ids.push(`path ${path.join(fs.realpathSync(head), ...rest)}`);
      return ids;
    } catch {
      const up = path.dirname(head);
      if (up === head) return [...ids, `path ${path.resolve(file)}`];
      rest.unshift(path.basename(head));
      head = up;
    }
  }
}

/** Every output apart from every input frame (by inode or resolved path, as the other commands check), in one pass over each. */
function checkFramesApart(outputs: Array<[string, string]>, frames: FramePair[]): void {
  const inputs = new Map<string, string>();
  for (const f of frames) for (const [file, what] of [[f.left, 'left frame'], [f.right, 'right frame']]) for (const id of identities(file)) inputs.set(id, `${what} ${file}`);
  for (const [option, file] of outputs) {
    const hit = identities(file).map((id) => inputs.get(id)).find((x) => x !== undefined);
    if (hit) throw new InputError(`${option}: ${file} is the ${hit}; an output never replaces an input, give another --out-dir`);
  }
}

const cyclesOf = (v: string | undefined): number | 'converge' | undefined => {
  if (v === undefined || v === 'converge') return v;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new InputError(`--warm-cycles: got '${v}', expected an integer ≥ 1 or converge`);
  return Number(v);
};

export async function videoCommand(a: VideoArgs, io: Io): Promise<number> {
  const { params, initFile } = paramsFromArgs(a);
  if (initFile !== undefined) throw new InputError(`--init: got '${initFile}', expected wta or zero (each frame after the first starts from the previous frame's labels)`);
  const warmCycles = cyclesOf(a['warm-cycles']);
  const keyframe = a.keyframe ?? 0;
  if (!Number.isInteger(keyframe) || keyframe < 0) throw new InputError(`--keyframe: got '${keyframe}', expected an integer ≥ 0 (0: none)`);
  const frames = framePairs(a.left, a.right);
  checkOutputFolder(a['out-dir'], '--out-dir');
  // Every frame's size from its header: a mismatch is refused before any frame is matched.
  let first: { width: number; height: number; channels: number } | undefined;
  for (const f of frames) {
    const [l, r] = [checkedImageHeader(f.left, 'left frame'), checkedImageHeader(f.right, 'right frame')];
    if (l && r && (l.width !== r.width || l.height !== r.height)) throw new InputError(`size mismatch: left frame ${f.left} is ${l.width}×${l.height}, right frame ${f.right} is ${r.width}×${r.height}`);
    first ??= l;
  }
  const outputs = frames.flatMap((f) => frameOutputs(a, f));
  checkFramesApart(outputs, frames);
  const maxMemory = maxMemoryBytes(a['max-memory']);
  first ??= await readImage(frames[0].left, sharedSamples);
  const range = labelRange(a, first.width);
  // The sequence's options are checked as it is made; its frames' memory before any is decoded or matched (it starts nothing until its first frame).
  const sequence = createSequenceMatcher({ ...params, ndisp: range.ndisp, minDisp: range.minDisp, backend: a.backend as BackendName, verify: a.verify, maxMemory, warm: a.warm, warmCycles, keyframe });
  checkMatchMemory(`${frames[0].left} (${first.width}×${first.height}, ${range.ndisp} disparities)`, sequence.memoryEstimate(first.width, first.height, first.channels), maxMemory, '--max-memory');
  if (!fs.existsSync(a['out-dir'])) makeFolder(a['out-dir']);
  const stop = new StopRequest(() => io.err('stereocut: stopping after the current frame; the finished frames are kept (Ctrl-C again to quit at once)'));
  const unlisten = stop.listen();
  const rows: Array<{ frame: string; r: FrameResult }> = [];
  const t0 = performance.now();
  try {
    for (const [k, f] of frames.entries()) {
      const [left, right] = [await readImage(f.left, sharedSamples), await readImage(f.right, sharedSamples)];
      if (left.width !== right.width || left.height !== right.height) throw new InputError(`size mismatch: left frame ${f.left} is ${left.width}×${left.height}, right frame ${f.right} is ${right.width}×${right.height}`);
      labelRange(a, left.width);
      const frame = await sequence.compute(left, right);
      const r = frame.result;
      const maxDisp = r.minDisp + r.ndisp - 1;
      const scale = a['png-scale'] ?? autoPngScale(maxDisp + 1);
      if (pngBits(maxDisp, scale) === 0) throw new InputError(`--png-scale: got '${scale}', expected at most ${Math.floor(65535 / Math.max(1, maxDisp))}`);
      const files: FileContent[] = [];
      for (const [option, file] of frameOutputs(a, f)) {
        const bytes = option === '--out-dir' ? await disparityPngBytes(r.disparity, r.width, r.height, scale)
          : option === '--pfm' ? disparityPfmBytes(disparityInPixels(r), r.width, r.height)
            : await encodePng(colorScaleImage(disparityInPixels(r), r.width, r.height, r.minDisp, maxDisp).image, 8);
        files.push({ file, bytes });
      }
      writeFilesAtomic(files);
      rows.push({ frame: f.stem, r: frame });
      if (!a.json && !a.quiet) io.out(frameLine(k, frames.length, f.stem, frame));
      await yieldToEventLoop();
      if (stop.requested && k + 1 < frames.length) break;
    }
  } finally {
    unlisten();
    await sequence.dispose();
  }
  const seconds = (performance.now() - t0) / 1000;
  const count = (s: string): number => rows.filter((x) => x.r.start === s).length;
  const summary = { frames: rows.length, of: frames.length, seconds, fps: rows.length / seconds, warm: count('warm'), cold: count('cold'), fallback: count('fallback') };
  if (a.json) {
    io.out(JSON.stringify({
      ...summary, outDir: a['out-dir'], backend: rows[0]?.r.result.backend ?? null,
      rows: rows.map(({ frame, r }) => ({
        frame, start: r.start, initialEnergy: r.result.initialEnergy.total, finalEnergy: r.result.finalEnergy.total, cycles: r.result.cycles.length, cuts: r.result.cuts, ms: r.ms,
        warmEnergy: r.result.warmStart?.warmEnergy ?? null, freshEnergy: r.result.warmStart?.freshEnergy ?? null, ...(r.keyframe ? { keyframe: r.keyframe } : {}),
      })),
    }, null, 2));
  } else {
    io.out(`${rows.length}${rows.length < frames.length ? ` of ${frames.length}` : ''} frames in ${seconds.toFixed(2)} s: ${summary.fps.toFixed(2)} frames/s (${summary.warm} warm, ${summary.cold} cold, ${summary.fallback} fallback); wrote ${a['out-dir']}`);
  }
  return rows.length < frames.length ? 130 : 0;
}

/** A frame's line: how it started, its energies, cycles and time. */
function frameLine(k: number, n: number, stem: string, f: FrameResult): string {
  const r = f.result;
  const w = r.warmStart;
  const why = f.start === 'fallback' && f.keyframe ? ` (keyframe: fresh ${f.keyframe.freshEnergy} below warm)`
    : f.start === 'fallback' && w ? ` (warm start ${w.warmEnergy} above fresh ${w.freshEnergy})` : '';
  return `frame ${k + 1}/${n} ${stem}: ${f.start}${why}, energy ${r.initialEnergy.total} → ${r.finalEnergy.total}, ${r.cycles.length} cycle${r.cycles.length === 1 ? '' : 's'}, ${(f.ms / 1000).toFixed(2)} s`;
}
