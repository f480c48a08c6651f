import * as fs from 'fs';
import * as path from 'path';
import { InputError } from './errors';
import { IMAGE_EXTENSIONS } from './pairNames';

/**
 * The frames of a stereo sequence: a folder of images per camera, paired
 * by name in natural order (frame2 before frame10), or a printf-style
 * pattern per camera (`left/%04d.png`, `cam_L_%d.jpg`): the files of the
 * pattern's folder it matches, in the order of their numbers. Left and
 * right must hold as many frames; the i-th left frame pairs with the i-th
 * right one. Errors are InputErrors naming the folder or pattern.
 */

export interface FramePair {
  left: string;
  right: string;
  /** The left frame's name without its extension: the frame's outputs are named after it. */
  stem: string;
}

const PATTERN = /%(0?\d*)d/;

/** Natural order: digits compared as numbers. */
const naturalOrder = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });

/** The images of one camera: a folder's, or a pattern's (sorted by the number the pattern matches). */
export function frameFiles(source: string, what: string): string[] {
  if (PATTERN.test(path.basename(source))) return patternFiles(source, what);
  if (!fs.existsSync(source)) throw new InputError(`${what} ${source}: no such folder (give a folder of frames, or a pattern such as ${path.join(source, '%04d.png')})`);
  if (!fs.statSync(source).isDirectory()) throw new InputError(`${what} ${source}: not a folder (give a folder of frames, or a pattern with %d)`);
  const names = fs.readdirSync(source, { withFileTypes: true })
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && IMAGE_EXTENSIONS.includes(path.extname(e.name).toLowerCase()))
    .map((e) => e.name).sort(naturalOrder);
  if (names.length === 0) throw new InputError(`${what} ${source}: no images (${IMAGE_EXTENSIONS.join(' ')})`);
  return names.map((n) => path.join(source, n));
}

function patternFiles(pattern: string, what: string): string[] {
  const dir = path.dirname(pattern);
  const base = path.basename(pattern);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new InputError(`${what} ${pattern}: folder ${dir} does not exist`);
  const m = PATTERN.exec(base)!;
  const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const width = m[1].startsWith('0') ? Number(m[1].slice(1)) : 0;
  const digits = width > 0 ? `(\\d{${width},})` : '(\\d+)';
  const re = new RegExp(`^${escape(base.slice(0, m.index))}${digits}${escape(base.slice(m.index + m[0].length))}$`);
  const found = fs.readdirSync(dir).map((n) => ({ n, m: re.exec(n) })).filter((x) => x.m !== null)
    .map((x) => ({ n: x.n, k: Number(x.m![1]) })).sort((a, b) => a.k - b.k || naturalOrder(a.n, b.n));
  if (found.length === 0) throw new InputError(`${what} ${pattern}: no file of ${dir} matches the pattern`);
  return found.map((x) => path.join(dir, x.n));
}

/** The sequence's frame pairs, left and right paired in order; the counts must agree. */
export function framePairs(leftSource: string, rightSource: string): FramePair[] {
  const left = frameFiles(leftSource, 'left frames');
  const right = frameFiles(rightSource, 'right frames');
  if (left.length !== right.length) {
    throw new InputError(`left frames ${leftSource} has ${left.length} image${left.length === 1 ? '' : 's'}, right frames ${rightSource} has ${right.length}; each left frame pairs with the right frame in the same place in name order`);
  }
  const stems = left.map((f) => path.basename(f, path.extname(f)));
  const seen = new Map<string, string>();
  left.forEach((f, i) => {
    const other = seen.get(stems[i]);
    if (other) throw new InputError(`left frames ${leftSource}: ${path.basename(other)} and ${path.basename(f)} would write outputs of one name; keep one`);
    seen.set(stems[i], f);
  });
  return left.map((l, i) => ({ left: l, right: right[i], stem: stems[i] }));
}
