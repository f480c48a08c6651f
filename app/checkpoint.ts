import * as fs from 'fs';
import { createHash } from 'crypto';
import type { Raster } from '../data/raster';
import { encodeLabeling } from '../data/smrf';
import { writeFilesAtomic } from '../data/atomicWrite';
import { disparityPfmBytes } from './disparityOutput';
import { labelsToDisparity, type MatchOptions, type MatchResume } from '../stereo/match';
import type { MatchParams } from '../stereo/params';

/**
 * What a stopped run needs to continue exactly, kept beside its checkpoint
 * (`match --checkpoint ck.pfm` writes ck.pfm, the left view's disparity, and
 * ck.pfm.resume; `solve-mrf --checkpoint ck.u16` ck.u16 and ck.u16.resume): every view's labels (the left–right check's right view
 * too), the cycles run and the labels whose next move changes nothing,
 * with the run it belongs to (the pair's samples and the parameters) and
 * the checkpoint's own bytes (a digest each). Both files are written
 * together after every cycle (writeFilesAtomic), the state first.
 */

const FORMAT = 'stereocut-resume 1';

interface ResumeFile {
  format: string;
  run: string;
  checkpointSha256: string;
  cycle: number;
  unchanged: number[];
  /** Little-endian uint16 labels of every view, stacked, in base64. */
  labels: string;
}

export const resumeFileOf = (checkpoint: string): string => `${checkpoint}.resume`;

const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

/** Keys sorted at every level, so that equal values give equal text. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'undefined';
}

/** What identifies a run for resuming: the pair's samples, the label range and every parameter but the cycle count and the initial labeling. */
export function runKey(left: Raster, right: Raster, params: MatchParams, ndisp: number, minDisp: number): string {
  const h = createHash('sha256');
  for (const r of [left, right]) {
    h.update(`${r.width}x${r.height}x${r.channels}/${r.maxval};`);
    h.update(new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength));
  }
  const { cycles: _cycles, init: _init, ...rest } = params;
  h.update(canonical({ ...rest, ndisp, minDisp }));
  return h.digest('hex');
}

/** What identifies a solve-mrf run for resuming: the SMRF file's bytes and the move settings (order, graph, seed, skips). */
export function mrfRunKey(smrf: Uint8Array, settings: Record<string, unknown>): string {
  return createHash('sha256').update(smrf).update(canonical(settings)).digest('hex');
}

/** The text of the resume file written beside a checkpoint whose bytes are `checkpoint`. */
export function encodeResume(run: string, checkpoint: Uint8Array, state: MatchResume): string {
  const file: ResumeFile = {
    format: FORMAT, run, checkpointSha256: sha256(checkpoint), cycle: state.cycle, unchanged: state.unchanged,
    labels: encodeLabeling(state.labels).toString('base64'),
  };
  return JSON.stringify(file) + '\n';
}

/**
 * The state kept beside `checkpoint` for the run `run` of `labelCount`
 * labels (pixels × views labels in all): undefined when there is no resume
 * file, else the state, or why it cannot be used (another run's, another
 * checkpoint's, unreadable).
 */
export function readResume(checkpoint: string, run: string, pixels: number, labelCount: number): { state: MatchResume } | { why: string } | undefined {
  const file = resumeFileOf(checkpoint);
  if (!fs.existsSync(file)) return undefined;
  let r: ResumeFile;
  try {
    r = JSON.parse(fs.readFileSync(file, 'utf8')) as ResumeFile;
  } catch (err) {
    return { why: `${file} cannot be read (${err instanceof Error ? err.message.split('\n')[0] : String(err)})` };
  }
  if (r.format !== FORMAT || typeof r.labels !== 'string' || !Number.isInteger(r.cycle) || !Array.isArray(r.unchanged)) return { why: `${file} is not a ${FORMAT} file` };
  if (r.run !== run) return { why: `${file} belongs to another run (other images or parameters)` };
  if (r.checkpointSha256 !== sha256(fs.readFileSync(checkpoint))) return { why: `${file} belongs to another version of ${checkpoint}` };
  const bytes = Buffer.from(r.labels, 'base64');
  if (bytes.length !== 2 * pixels) return { why: `${file} holds ${bytes.length / 2} labels, the run ${pixels}` };
  const labels = new Uint16Array(pixels);
  for (let i = 0; i < pixels; i++) {
    labels[i] = bytes.readUInt16LE(2 * i);
    if (labels[i] >= labelCount) return { why: `${file}: label ${labels[i]} is outside 0..${labelCount - 1}` };
  }
  if (!r.unchanged.every((a) => Number.isInteger(a) && a >= 0 && a < labelCount)) return { why: `${file}: a label of its unchanged moves is outside 0..${labelCount - 1}` };
  return { state: { cycle: r.cycle, unchanged: r.unchanged, labels } };
}

/**
 * The onCycle of match() that writes the checkpoint (the left view's
 * disparity in pixels, PFM) and its resume file together after every cycle;
 * a cycle that cannot be resumed (coarse to fine) writes the checkpoint
 * alone and removes a resume file left from before.
 */
export function checkpointWriter(checkpoint: string, run: string, minDisp: number, width: number, height: number): NonNullable<MatchOptions['onCycle']> {
  return (_report, labels, state) => {
    const pfm = disparityPfmBytes(labelsToDisparity(labels, minDisp), width, height);
    writeFilesAtomic([...(state ? [{ file: resumeFileOf(checkpoint), bytes: encodeResume(run, pfm, state) }] : []), { file: checkpoint, bytes: pfm }]);
    if (!state) fs.rmSync(resumeFileOf(checkpoint), { force: true });
  };
}
