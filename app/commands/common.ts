import * as fs from 'fs';
import * as path from 'path';
import { decodeImage, detectFormat, readFileBytes } from '../../data/imageIO';
import { InputError } from '../../data/errors';
import { defaultMemoryLimit } from '../../stereo/memoryPlan';

export type { Io } from './io';

/** The format an output option writes, named by the file extensions it takes. */
export type OutputFormat = 'png' | 'pfm' | 'html' | 'json' | 'md' | 'smrf' | 'u16' | 'ply';
const EXTENSIONS: Record<OutputFormat, string[]> = {
  png: ['.png'], pfm: ['.pfm'], html: ['.html', '.htm'], json: ['.json'], md: ['.md', '.markdown'], smrf: ['.smrf'], u16: ['.u16'], ply: ['.ply'],
};
/** Extensions that name an image or document format: an output with one of these must be that format. */
const KNOWN_EXTENSIONS = ['.png', '.pfm', '.ppm', '.pgm', '.pnm', '.jpg', '.jpeg', '.gif', '.bmp', '.tif', '.tiff', '.webp', '.html', '.htm', '.json', '.md', '.txt', '.csv', '.smrf', '.u16', '.ply'];

/**
 * Refuses an output path before any work is done: its folder must exist and
 * be writable, the path must not be a folder, and its extension must name
 * the format written (`format`; binary formats of our own, smrf and u16,
 * take any extension that does not name another format).
 */
export function checkOutputPath(file: string, option: string, format?: OutputFormat): void {
  const dir = path.dirname(path.resolve(file));
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new Error(`${option}: folder ${dir} does not exist (for ${file})`);
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) throw new Error(`${option}: ${file} is a folder; give a file name`);
  try {
    fs.accessSync(dir, fs.constants.W_OK);
  } catch {
    throw new Error(`${option}: folder ${dir} is not writable (for ${file})`);
  }
  if (format === undefined) return;
  const ext = path.extname(file).toLowerCase();
  const wanted = EXTENSIONS[format];
  const ownBinary = format === 'smrf' || format === 'u16';
  if (wanted.includes(ext) || (ownBinary && !KNOWN_EXTENSIONS.includes(ext))) return;
  throw new Error(`${option}: ${file} ${ext ? `ends in ${ext}` : 'has no extension'}, but this writes ${format.toUpperCase()}; give a name ending in ${wanted.join(' or ')}`);
}

/**
 * Refuses a folder option (--out-dir) whose path is a file, or whose
 * missing part cannot be made; the folder itself is created when missing.
 * The first missing level is made and removed again: a file system that
 * refuses folders (procfs, read-only) is known only by trying.
 */
export function checkOutputFolder(dir: string, option: string): void {
  if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory()) throw new Error(`${option}: ${dir} exists and is not a folder`);
  let parent = path.resolve(dir);
  let first: string | undefined;
  while (!fs.existsSync(parent)) {
    first = parent;
    parent = path.dirname(parent);
  }
  if (!fs.statSync(parent).isDirectory()) throw new Error(`${option}: ${parent} is not a folder (for ${dir})`);
  try {
    fs.accessSync(parent, fs.constants.W_OK);
  } catch {
    throw new Error(`${option}: folder ${parent} is not writable (for ${dir})`);
  }
  if (first === undefined) return;
  try {
    fs.mkdirSync(first);
  } catch (err) {
    throw new Error(`${option}: cannot make folder ${first} (for ${dir}): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  fs.rmdirSync(first);
}

/** The file a path names: its device and inode when it exists, else its resolved path (links followed where they lead somewhere). */
function fileIdentity(file: string): string {
  try {
    const st = fs.statSync(file);
    return `inode ${st.dev}:${st.ino}`;
  } catch {
    return `path ${path.resolve(file)}`;
  }
}

/**
 * Refuses, before any work, an output that would land on an input or on
 * another output: paths are compared resolved, and existing files by device
 * and inode (a hard link or a symbolic link to an input is that input).
 * `outputs` are [file, option] pairs; `inputs` [file, what, option] where
 * the option, if any, may write over that input (an input read whole before
 * that output's first write: a checkpoint continued from with --init).
 */
export function checkOutputsApart(outputs: Array<[string, string]>, inputs: Array<[string, string, string?]>): void {
  const inputIds = inputs.map(([f, what, mayReplace]) => [fileIdentity(f), f, what, mayReplace] as const);
  const seen = new Map<string, string>();
  for (const [file, option] of outputs) {
    const id = fileIdentity(file);
    const input = inputIds.find(([i, , , mayReplace]) => i === id && mayReplace !== option);
    if (input) throw new Error(`${option}: ${file} is the ${input[2]} ${input[1]}; an output never replaces an input`);
    const other = seen.get(id);
    if (other) throw new Error(`${option}: ${file} is also given to ${other}; give each output a file of its own`);
    seen.set(id, option);
  }
}

/** --max-memory in GB as bytes, or the default limit (stereo/memoryPlan.ts). */
export function maxMemoryBytes(gbGiven: number | undefined): number {
  if (gbGiven === undefined) return defaultMemoryLimit();
  if (!Number.isFinite(gbGiven) || gbGiven <= 0) throw new InputError(`--max-memory: got '${gbGiven}', expected a number of GB > 0`);
  return gbGiven * 1e9;
}

export function checkInputFile(file: string, what: string): void {
  if (!fs.existsSync(file)) throw new Error(`${what} ${file}: no such file`);
  if (!fs.statSync(file).isFile()) throw new Error(`${what} ${file}: not a file`);
}

/**
 * An initial labeling from a disparity file (PFM in pixels, or an integer
 * image / scale), rounded to disparities 0..ndisp − 1. A value that is no
 * disparity of that range (NaN, inf for unknown, beyond half a pixel
 * outside it) refuses the file, naming the first such pixel and the count:
 * never clamped into range.
 */
export async function readInitialLabels(file: string, scale: number, width: number, height: number, ndisp: number): Promise<Uint16Array> {
  checkInputFile(file, '--init');
  const raw = await readEstimate(file, scale, '--init-scale');
  if (raw.width !== width || raw.height !== height) throw new Error(`--init ${file}: ${raw.width}×${raw.height}, but the images are ${width}×${height}`);
  const out = new Uint16Array(width * height);
  let bad = 0;
  let first = -1;
  for (let i = 0; i < out.length; i++) {
    const d = Math.round(raw.data[i]);
    if (Number.isFinite(d) && d >= 0 && d < ndisp) out[i] = d;
    else if (bad++ === 0) first = i;
  }
  if (bad > 0) {
    const v = raw.data[first];
    const shown = Number.isFinite(v) ? String(Math.round(v * 1000) / 1000) : `${v} (no disparity)`;
    throw new Error(`--init ${file}: pixel (${first % width}, ${Math.floor(first / width)}) holds ${shown}, outside the disparities 0..${ndisp - 1}${bad > 1 ? `, as do ${bad - 1} more pixels` : ''}`);
  }
  return out;
}

/**
 * A disparity estimate: PFM values are pixels; an integer image holds
 * disparity × scale, and 0 is disparity 0 (not "unknown": that convention is
 * for ground truth only). `scale` is required for integer images (the error
 * names `option`).
 */
export async function readEstimate(file: string, scale: number | undefined, option = '--disp-scale'): Promise<{ width: number; height: number; data: Float32Array }> {
  checkInputFile(file, 'disparity');
  const bytes = readFileBytes(file);
  const pfm = detectFormat(bytes) === 'pfm';
  if (!pfm && scale === undefined) {
    throw new Error(`${option}: ${file} is an integer image; say what grey value one pixel of disparity is (stereocut match prints it)`);
  }
  const r = await decodeImage(bytes, file);
  const data = new Float32Array(r.width * r.height);
  for (let i = 0; i < data.length; i++) data[i] = pfm ? r.data[i * r.channels] : r.data[i * r.channels] / (scale as number);
  return { width: r.width, height: r.height, data };
}
