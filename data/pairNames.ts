import * as fs from 'fs';
import * as path from 'path';

/**
 * Stereo pairs named the way cameras and other datasets name them, for
 * folders that follow none of the Middlebury layouts (data/scene.ts tries
 * those first): left/right, im0/im1, view1/view5 (any image extension the
 * readers take, any case), or one `NAME_L.ext` / `NAME_R.ext` pair. Such a
 * folder has no ground truth; a calib.txt beside the images is used.
 */

/** Extensions of the formats data/imageIO.ts reads. */
export const IMAGE_EXTENSIONS = ['.png', '.jpg', '.jpeg', '.ppm', '.pgm', '.pnm', '.pfm'];

/** The base names of a pair, left first. */
const NAMED_PAIRS: ReadonlyArray<readonly [string, string]> = [['left', 'right'], ['im0', 'im1'], ['view1', 'view5']];

export interface NamedPair {
  left: string;
  right: string;
  /** How the pair was recognised, for messages. */
  naming: string;
}

/** What the pair namings look for, for the message of a folder without one. */
export const PAIR_NAMINGS = 'left+right, im0+im1, view1+view5 (any of .png .jpg .jpeg .ppm .pgm .pnm .pfm), NAME_L+NAME_R';

const isImageName = (f: string): boolean => IMAGE_EXTENSIONS.includes(path.extname(f).toLowerCase());

/**
 * The pair in `dir` under one of the namings (file names relative to `dir`),
 * or undefined. Two images of one side (left.png and left.jpg, or two
 * `_L`/`_R` pairs) are an error naming them: which is meant cannot be told.
 */
export function findNamedPair(dir: string, files: string[] = listFiles(dir)): NamedPair | undefined {
  const images = files.filter(isImageName);
  const stem = (f: string): string => path.basename(f, path.extname(f)).toLowerCase();
  for (const [l, r] of NAMED_PAIRS) {
    const lefts = images.filter((f) => stem(f) === l);
    const rights = images.filter((f) => stem(f) === r);
    if (lefts.length === 0 || rights.length === 0) continue;
    for (const side of [lefts, rights]) {
      if (side.length > 1) throw new Error(`${dir}: ${side.join(' and ')} could each be the pair's image; keep one`);
    }
    return { left: lefts[0], right: rights[0], naming: `${l}/${r}` };
  }
  const pairs: NamedPair[] = [];
  for (const f of images) {
    const m = /^(.*)_L(\.[^.]+)$/i.exec(f);
    if (!m) continue;
    const want = `${m[1]}_${f[m[1].length + 1] === 'l' ? 'r' : 'R'}`.toLowerCase();
    const rights = images.filter((g) => stem(g) === want);
    if (rights.length > 1) throw new Error(`${dir}: ${rights.join(' and ')} could each be the right image of ${f}; keep one`);
    if (rights.length === 1) pairs.push({ left: f, right: rights[0], naming: '_L/_R' });
  }
  if (pairs.length > 1) throw new Error(`${dir}: several _L/_R pairs (${pairs.map((p) => `${p.left}+${p.right}`).join(', ')}); put each pair in a folder of its own`);
  return pairs[0];
}

function listFiles(dir: string): string[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile() || e.isSymbolicLink()).map((e) => e.name).sort();
  } catch {
    return [];
  }
}
