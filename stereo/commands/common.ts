import * as fs from 'fs';
import * as path from 'path';
import { decodeImage, detectFormat, readFileBytes } from '../../data/imageIO';

/** Where command output goes; tests capture it. */
export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

export const processIo: Io = {
  out: (l) => process.stdout.write(l + '\n'),
  err: (l) => process.stderr.write(l + '\n'),
};

/** Refuses an output path whose folder does not exist, before any work is done. */
export function checkOutputPath(file: string, option: string): void {
  const dir = path.dirname(path.resolve(file));
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new Error(`${option}: folder ${dir} does not exist (for ${file})`);
}

export function checkInputFile(file: string, what: string): void {
  if (!fs.existsSync(file)) throw new Error(`${what} ${file}: no such file`);
  if (!fs.statSync(file).isFile()) throw new Error(`${what} ${file}: not a file`);
}

/** An initial labeling from a disparity file (PFM in pixels, or an integer image / scale), rounded to labels. */
export async function readInitialLabels(file: string, scale: number, width: number, height: number, ndisp: number): Promise<Uint16Array> {
  checkInputFile(file, '--init');
  const raw = await readEstimate(file, scale, '--init-scale');
  if (raw.width !== width || raw.height !== height) throw new Error(`--init ${file}: ${raw.width}×${raw.height}, but the images are ${width}×${height}`);
  const out = new Uint16Array(width * height);
  for (let i = 0; i < out.length; i++) {
    const d = Math.round(raw.data[i]);
    out[i] = Number.isFinite(d) ? Math.min(ndisp - 1, Math.max(0, d)) : 0;
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
