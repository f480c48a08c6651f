import * as fs from 'fs';
import * as path from 'path';
import { sharedSamples, type Raster } from './raster';
import type { Scene, SceneLayout, SceneMasks } from './sceneTypes';
import { readImage, disparityFromRaster } from './imageIO';
import { readCalib, type Calib } from './calib';
import { findNamedPair, PAIR_NAMINGS } from './pairNames';
import { optionError } from './errors';

/**
 * Loading Middlebury scene folders. A folder is recognised by the file names
 * of its stereo pair; ground truth and masks are loaded when present.
 *
 *   2001 tsukuba    scene1.row3.col3.ppm / col4.ppm, truedisp.row3.col3.pgm   gray/16, 16 labels
 *   2001 venus,     im2.ppm / im6.ppm, disp2.pgm / disp6.pgm                  gray/8,  20 labels
 *        sawtooth
 *   2001 map        im0.pgm / im1.pgm, disp0.pgm / disp1.pgm                  gray/8,  30 labels
 *   2003            im2.png / im6.png, disp2.png / disp6.png                  gray/4,  60 labels
 *   2005/2006       view1.png / view5.png, disp1.png / disp5.png              gray/2 (half) or /3 (third)
 *   2014 MiddEval3  im0.png / im1.png, disp0GT.pfm (+disp1GT.pfm), calib.txt, mask0nocc.png
 *   other pairs     left/right, im0/im1, view1/view5 (any image extension), NAME_L/NAME_R
 *                   (data/pairNames.ts): no ground truth; calib.txt used when present
 *
 * The 2001 label counts for sawtooth and map are the ranges customarily used
 * (Middlebury's v2 table had neither); they are reported as 'dataset convention'.
 */

export interface LoadSceneOptions {
  /** Number of disparity labels; overrides the dataset's own (ndispSource 'option'). */
  ndisp?: number;
  /** Smallest disparity (label 0); overrides the dataset's own (option --min-disp). */
  minDisp?: number;
  /** Largest disparity; the labels are minDisp..maxDisp (option --max-disp; not with ndisp). */
  maxDisp?: number;
  /** Ground-truth scale (gray / scale = disparity) for 2005/2006 folders whose size the rule below cannot place. */
  gtScale?: number;
}

interface LayoutSpec {
  layout: SceneLayout;
  label: string;
  left: string;
  right: string;
  gtLeft?: string;
  gtRight?: string;
  /** Fixed ground-truth scale; undefined = decided per folder (2005/2006) or 1 for PFM. */
  scale?: number;
  /** Dataset-convention label count; undefined = from calib or ground-truth maximum. */
  ndisp?: number;
}

const LAYOUTS: LayoutSpec[] = [
  { layout: 'middlebury2014', label: '2014/MiddEval3', left: 'im0.png', right: 'im1.png', gtLeft: 'disp0GT.pfm', gtRight: 'disp1GT.pfm', scale: 1 },
  { layout: 'middlebury2001', label: '2001 map', left: 'im0.pgm', right: 'im1.pgm', gtLeft: 'disp0.pgm', gtRight: 'disp1.pgm', scale: 8, ndisp: 30 },
  { layout: 'middlebury2001', label: '2001 tsukuba', left: 'scene1.row3.col3.ppm', right: 'scene1.row3.col4.ppm', gtLeft: 'truedisp.row3.col3.pgm', scale: 16, ndisp: 16 },
  { layout: 'middlebury2001', label: '2001 venus/sawtooth', left: 'im2.ppm', right: 'im6.ppm', gtLeft: 'disp2.pgm', gtRight: 'disp6.pgm', scale: 8, ndisp: 20 },
  { layout: 'middlebury2003', label: '2003 teddy/cones', left: 'im2.png', right: 'im6.png', gtLeft: 'disp2.png', gtRight: 'disp6.png', scale: 4, ndisp: 60 },
  { layout: 'middlebury2005', label: '2005/2006', left: 'view1.png', right: 'view5.png', gtLeft: 'disp1.png', gtRight: 'disp5.png' },
];

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The layout whose left and right images both exist in `dir` (a Middlebury one first, else a pair named otherwise), or undefined. */
function detectLayout(dir: string): LayoutSpec | undefined {
  const known = LAYOUTS.find((s) => isFile(path.join(dir, s.left)) && isFile(path.join(dir, s.right)));
  if (known || !isDir(dir)) return known;
  const pair = findNamedPair(dir);
  return pair ? { layout: 'pair', label: `pair (${pair.naming})`, left: pair.left, right: pair.right } : undefined;
}

/** The files besides the pair and the ground truth that loadScene reads when present: calib.txt and the masks. */
function sideFiles(spec: LayoutSpec): string[] {
  return spec.layout === 'middlebury2014' ? ['calib.txt', 'mask0nocc.png'] : spec.layout === 'pair' ? ['calib.txt'] : ['nonocc.png', 'all.png', 'disc.png'];
}

/**
 * Every file of a scene folder that loadScene would read, those present
 * (the pair, the ground truths, calib.txt, the masks), without reading any:
 * what no output may land on. Empty for a folder that is not a scene.
 */
export function sceneInputFiles(dir: string): string[] {
  const spec = detectLayout(dir);
  if (!spec) return [];
  const names = [spec.left, spec.right, spec.gtLeft, spec.gtRight, ...sideFiles(spec)].filter((f): f is string => f !== undefined);
  return names.map((f) => path.join(dir, f)).filter(isFile);
}

function lookedFor(): string {
  return `${LAYOUTS.map((s) => `${s.left}+${s.right} (${s.label})`).join(', ')}; or a pair named ${PAIR_NAMINGS}`;
}

/**
 * Ground-truth scale of a 2005/2006 folder. The folder name decides when it
 * says so ('ThirdSize' → 3, 'HalfSize' → 2, case-insensitive); otherwise the
 * image width does: the third-size images are 413–463 px wide and the
 * half-size ones 620–695 px, so width ≤ 560 → 3 and 560 < width < 1000 → 2.
 * Full-size folders (width ≥ 1000) need `gtScale`.
 */
export function middlebury2005Scale(dirName: string, width: number): number | undefined {
  if (/third/i.test(dirName)) return 3;
  if (/half/i.test(dirName)) return 2;
  if (width <= 560) return 3;
  if (width < 1000) return 2;
  return undefined;
}

function checkSize(r: Raster, ref: Raster, file: string, refFile: string): void {
  if (r.width !== ref.width || r.height !== ref.height) {
    throw new Error(`size mismatch: ${file} is ${r.width}x${r.height} but ${refFile} is ${ref.width}x${ref.height}`);
  }
}

/** 1 where the first channel equals `on` exactly (Middlebury masks use 255 for evaluated pixels). */
function maskFrom(r: Raster, accept: (v: number) => boolean): Uint8Array {
  const n = r.width * r.height;
  const m = new Uint8Array(n);
  for (let i = 0; i < n; i++) m[i] = accept(r.data[i * r.channels]) ? 1 : 0;
  return m;
}

/**
 * Non-occluded pixels from two ground truths (2005/2006 have no masks): a
 * left pixel x with known disparity d is non-occluded when x' = x − round(d)
 * lies in the image and the right ground truth at x' is known and within 1 px
 * of d, i.e. the surface point seen at x is the one the right camera sees.
 */
export function deriveNonocc(gtLeft: Float32Array, gtRight: Float32Array, width: number, height: number): Uint8Array {
  const m = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const d = gtLeft[i];
      if (!Number.isFinite(d)) continue;
      const xr = x - Math.round(d);
      if (xr < 0 || xr >= width) continue;
      const dr = gtRight[y * width + xr];
      if (Number.isFinite(dr) && Math.abs(dr - d) <= 1) m[i] = 1;
    }
  }
  return m;
}

function maxFinite(a: Float32Array): number {
  let m = -Infinity;
  for (let i = 0; i < a.length; i++) if (Number.isFinite(a[i]) && a[i] > m) m = a[i];
  return m;
}

/** Ground truth in pixels from a GT file: PFM as is (inf = unknown), integer files gray / scale with 0 = unknown. */
function gtFromRaster(r: Raster, file: string, scale: number): Float32Array {
  if (file.endsWith('.pfm')) {
    if (r.channels !== 1) throw new Error(`${file}: ground-truth PFM must have 1 channel, has ${r.channels}`);
    return r.data.slice();
  }
  return disparityFromRaster(r, scale, file).data;
}

async function readOptional(file: string): Promise<Raster | undefined> {
  return isFile(file) ? readImage(file) : undefined;
}

/**
 * MiddEval3 folders: the labels span calib.txt's vmin..vmax widened by this
 * many pixels on each side (vmin and vmax bound the ground truth; the margin
 * keeps pixels at the bounds from being pinned to the end labels).
 */
export const CALIB_RANGE_MARGIN = 2;

/**
 * Refuses a calib.txt whose disparity range cannot be one of an image
 * `width` pixels wide (disparities lie in 0..width − 1), naming the file and
 * the key, rather than clamping it into range or leaving a later step to
 * name an option the user never gave.
 */
function checkCalibRange(calib: Calib, calibPath: string, width: number): void {
  const { vmin, vmax } = calib;
  if (vmin !== undefined && vmin < 0) throw new Error(`${calibPath}: vmin = ${vmin} is below 0`);
  if (vmax !== undefined && vmax >= width) throw new Error(`${calibPath}: vmax = ${vmax} is not below the image width ${width}`);
  if (vmin !== undefined && vmax !== undefined && vmin > vmax) throw new Error(`${calibPath}: vmin = ${vmin} is above vmax = ${vmax}`);
}

export async function loadScene(dir: string, options: LoadSceneOptions = {}): Promise<Scene> {
  if (!isDir(dir)) throw new Error(`${dir}: scene folder not found`);
  if (options.ndisp !== undefined && !(Number.isInteger(options.ndisp) && options.ndisp >= 1)) {
    throw optionError(typeof options.ndisp === 'number' ? 'range' : 'type', 'loadScene', 'ndisp', options.ndisp, 'an integer ≥ 1');
  }
  if (options.gtScale !== undefined && !(options.gtScale > 0 && Number.isFinite(options.gtScale))) {
    throw optionError(typeof options.gtScale === 'number' ? 'range' : 'type', 'loadScene', 'gtScale', options.gtScale, 'a finite number > 0');
  }
  for (const [key, v] of [['minDisp', options.minDisp], ['maxDisp', options.maxDisp]] as const) {
    if (v !== undefined && !(Number.isInteger(v) && v >= 0)) throw optionError(typeof v === 'number' ? 'range' : 'type', 'loadScene', key, v, 'an integer ≥ 0');
  }
  if (options.maxDisp !== undefined && options.ndisp !== undefined) throw optionError('range', 'loadScene', 'maxDisp', options.maxDisp, 'no maxDisp when ndisp is given (give one of them)');
  const spec = detectLayout(dir);
  if (!spec) throw new Error(`${dir}: not a recognised scene folder; looked for ${lookedFor()}`);
  const name = path.basename(path.resolve(dir));
  const leftPath = path.join(dir, spec.left);
  const rightPath = path.join(dir, spec.right);
  const gtLeftPath = spec.gtLeft ? path.join(dir, spec.gtLeft) : undefined;
  const gtRightPath = spec.gtRight ? path.join(dir, spec.gtRight) : undefined;

  const [left, right, gtL, gtR] = await Promise.all([
    // The pair in shared memory: a large pair's finer levels are read by a pool's threads (data/raster.ts sharedSamples).
    readImage(leftPath, sharedSamples),
    readImage(rightPath, sharedSamples),
    gtLeftPath ? readOptional(gtLeftPath) : Promise.resolve(undefined),
    gtRightPath ? readOptional(gtRightPath) : Promise.resolve(undefined),
  ]);
  checkSize(right, left, rightPath, leftPath);
  if (left.channels !== right.channels) {
    throw new Error(`channel mismatch: ${leftPath} has ${left.channels} channels but ${rightPath} has ${right.channels}`);
  }
  if (gtL && gtLeftPath) checkSize(gtL, left, gtLeftPath, leftPath);
  if (gtR && gtRightPath) checkSize(gtR, left, gtRightPath, leftPath);

  let scale = spec.scale;
  if (spec.layout === 'middlebury2005') {
    scale = options.gtScale ?? middlebury2005Scale(name, left.width);
    if (scale === undefined) {
      throw new Error(`${dir}: cannot tell the ground-truth scale of a ${left.width}-px-wide 2005/2006 folder (half size is /2, third size /3); pass the gtScale option`);
    }
  } else if (options.gtScale !== undefined && spec.layout !== 'middlebury2014') {
    scale = options.gtScale;
  }
  const groundTruthScale = scale ?? 1;
  const groundTruth = gtL && gtLeftPath ? gtFromRaster(gtL, gtLeftPath, groundTruthScale) : undefined;
  const groundTruthRight = gtR && gtRightPath ? gtFromRaster(gtR, gtRightPath, groundTruthScale) : undefined;

  const masks: SceneMasks = {};
  let nonoccDerived = false;
  let ndisp: number | undefined = spec.ndisp;
  let minDisp = 0;
  let ndispSource: Scene['ndispSource'] = 'dataset convention';

  if (spec.layout === 'middlebury2014' || spec.layout === 'pair') {
    const calibPath = path.join(dir, 'calib.txt');
    if (isFile(calibPath)) {
      const calib = readCalib(calibPath);
      if ((calib.width !== undefined && calib.width !== left.width) || (calib.height !== undefined && calib.height !== left.height)) {
        throw new Error(`size mismatch: ${calibPath} says ${calib.width}x${calib.height} but ${leftPath} is ${left.width}x${left.height}`);
      }
      checkCalibRange(calib, calibPath, left.width);
      if (calib.ndisp !== undefined) {
        ndisp = calib.ndisp;
        ndispSource = 'calib ndisp';
      }
      if (calib.vmin !== undefined && calib.vmax !== undefined) {
        // vmin/vmax bound the ground truth tightly; the margin keeps a sub-pixel or rounding excess in range.
        minDisp = Math.max(0, Math.floor(calib.vmin) - CALIB_RANGE_MARGIN);
        const top = Math.min(Math.ceil(calib.vmax) + CALIB_RANGE_MARGIN, left.width - 1);
        ndisp = top - minDisp + 1;
        ndispSource = 'calib vmin/vmax';
      }
    }
    const maskPath = path.join(dir, 'mask0nocc.png');
    const m = spec.layout === 'middlebury2014' ? await readOptional(maskPath) : undefined;
    if (m) {
      checkSize(m, left, maskPath, leftPath);
      // 255 = non-occluded, 128 = occluded (still evaluated in 'all'), 0 = invalid.
      masks.nonocc = maskFrom(m, (v) => v === 255);
      masks.all = maskFrom(m, (v) => v === 255 || v === 128);
    }
  } else {
    // Middlebury v2 evaluation masks: 255 = evaluated in that region (disc.png's 128 = non-occluded, not near a discontinuity).
    for (const [i, key] of (['nonocc', 'all', 'disc'] as const).entries()) {
      const p = path.join(dir, sideFiles(spec)[i]);
      const m = await readOptional(p);
      if (m) {
        checkSize(m, left, p, leftPath);
        masks[key] = maskFrom(m, (v) => v === 255);
      }
    }
  }

  if (spec.layout === 'middlebury2005' && !masks.nonocc && groundTruth && groundTruthRight) {
    masks.nonocc = deriveNonocc(groundTruth, groundTruthRight, left.width, left.height);
    nonoccDerived = true;
  }

  if (ndisp === undefined) {
    if (!groundTruth) {
      if (options.ndisp === undefined && options.maxDisp === undefined) {
        throw new Error(`${dir}: no ground truth or calib.txt to set the disparity range; pass the ndisp or maxDisp option (--ndisp, --max-disp)`);
      }
    } else {
      const mx = maxFinite(groundTruth);
      if (!Number.isFinite(mx)) throw new Error(`${gtLeftPath}: ground truth has no known pixel`);
      ndisp = Math.ceil(mx) + 1;
      ndispSource = 'ground-truth maximum';
    }
  }
  if (options.ndisp !== undefined) {
    ndisp = options.ndisp;
    minDisp = 0;
    ndispSource = 'option';
  }
  if (options.minDisp !== undefined || options.maxDisp !== undefined) {
    const top = options.maxDisp ?? (options.ndisp !== undefined ? options.ndisp - 1 : minDisp + (ndisp as number) - 1);
    const bottom = options.minDisp ?? (options.ndisp !== undefined ? 0 : minDisp);
    if (bottom > top) throw optionError('range', 'loadScene', 'minDisp', bottom, `at most the largest disparity ${top}`);
    if (top >= left.width) throw optionError('range', 'loadScene', options.maxDisp !== undefined ? 'maxDisp' : 'ndisp', options.maxDisp ?? options.ndisp, `a largest disparity below the image width ${left.width} (it is ${top})`);
    minDisp = bottom;
    ndisp = top - bottom + 1;
    ndispSource = 'option';
  }

  return {
    name,
    dir,
    layout: spec.layout,
    left,
    right,
    leftPath,
    rightPath,
    groundTruth,
    groundTruthRight,
    groundTruthPath: groundTruth ? gtLeftPath : undefined,
    groundTruthScale,
    ndisp: ndisp as number,
    ...(minDisp > 0 ? { minDisp } : {}),
    ndispSource,
    masks,
    nonoccDerived,
  };
}

/** Sub-folders of `root` (sorted by name) that hold a recognised scene; `root` itself when it is one. */
export function listSceneDirs(root: string): string[] {
  return datasetScenes(root).scenes;
}

/** The scene folders of a dataset root (sorted by name; the root itself when it is one) and the entries beside them that are not scenes. */
function datasetScenes(root: string): { scenes: string[]; ignored: string[] } {
  if (!isDir(root)) throw new Error(`${root}: dataset folder not found`);
  if (detectLayout(root)) return { scenes: [root], ignored: [] };
  const scenes: string[] = [];
  const ignored: string[] = [];
  for (const e of fs.readdirSync(root).sort()) {
    const p = path.join(root, e);
    if (e.startsWith('.')) continue;
    (isDir(p) && detectLayout(p) !== undefined ? scenes : ignored).push(p);
  }
  return { scenes, ignored };
}

/**
 * Scene folders from folders given on a command line: a scene folder stands
 * for itself, any other folder for the scene folders inside it (a dataset
 * root). Files and folders beside a root's scenes are ignored, each named
 * once through `notice`; a root without a scene, or a path that is no
 * folder, is an error naming it.
 */
export function sceneFoldersOf(paths: string[], notice: (line: string) => void): string[] {
  const out: string[] = [];
  for (const p of paths) {
    if (!isDir(p)) throw new Error(`scene folder ${p}: no such folder`);
    const { scenes, ignored } = datasetScenes(p);
    if (scenes.length === 0) throw new Error(`${p}: neither a scene folder nor a folder of scene folders; looked for ${lookedFor()}`);
    if (ignored.length > 0) notice(`${p}: ignored, no scene in them: ${ignored.map((f) => path.basename(f)).join(', ')}`);
    out.push(...scenes);
  }
  return out;
}

/** The layout name a folder would load as, or undefined. */
export function sceneLayoutOf(dir: string): SceneLayout | undefined {
  return detectLayout(dir)?.layout;
}
