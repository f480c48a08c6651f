import * as fs from 'fs';

/** Middlebury 2014 / MiddEval3 calib.txt: camera matrices, baseline, disparity range. */
export interface Calib {
  cam0?: number[][];
  cam1?: number[][];
  doffs?: number;
  baseline?: number;
  width?: number;
  height?: number;
  ndisp?: number;
  isint?: number;
  vmin?: number;
  vmax?: number;
  dyavg?: number;
  dymax?: number;
  /** Every key as written (trimmed), including ones not listed above. */
  raw: Record<string, string>;
}

const SCALAR_KEYS = ['doffs', 'baseline', 'width', 'height', 'ndisp', 'isint', 'vmin', 'vmax', 'dyavg', 'dymax'] as const;

function parseMatrix(text: string, key: string, name: string): number[][] {
  const m = /^\[(.*)\]$/s.exec(text);
  if (!m) throw new Error(`${name}: ${key} should be a bracketed matrix like [f 0 cx; 0 f cy; 0 0 1], got '${text}'`);
  const rows = m[1].split(';').map((row) => row.trim().split(/\s+/).filter((t) => t.length > 0).map(Number));
  if (rows.length !== 3 || rows.some((r) => r.length !== 3 || r.some((v) => !Number.isFinite(v)))) {
    throw new Error(`${name}: ${key} is not a 3x3 matrix of numbers: '${text}'`);
  }
  return rows;
}

/**
 * Parse calib.txt text. Tolerates spaces anywhere around keys, '=' and values
 * (some copies write ' doffs= 53.271 ' or 'cam0=[ 1038.018 0 ... ]'), blank
 * lines and Windows line endings.
 */
export function parseCalib(text: string, name: string): Calib {
  const calib: Calib = { raw: {} };
  const lines = text.split(/\r?\n|\r/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`${name}: line ${i + 1} is not 'key = value': '${line}'`);
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    calib.raw[key] = value;
    if (key === 'cam0' || key === 'cam1') {
      calib[key] = parseMatrix(value, key, name);
    } else if ((SCALAR_KEYS as readonly string[]).includes(key)) {
      const v = Number(value);
      if (value === '' || !Number.isFinite(v)) throw new Error(`${name}: ${key} = '${value}' is not a number`);
      calib[key as (typeof SCALAR_KEYS)[number]] = v;
    }
  }
  if (calib.ndisp !== undefined && !(Number.isInteger(calib.ndisp) && calib.ndisp >= 1)) {
    throw new Error(`${name}: ndisp = ${calib.ndisp} is not a positive integer`);
  }
  return calib;
}

export function readCalib(filePath: string): Calib {
  let text: string;
  try {
    text = fs.readFileSync(filePath, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOENT' ? `${filePath}: file not found` : `${filePath}: cannot read (${(err as Error).message})`);
  }
  return parseCalib(text, filePath);
}
