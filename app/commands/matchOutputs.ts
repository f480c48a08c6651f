import * as path from 'path';
import { writeFileAtomic } from '../../data/atomicWrite';
import { encodePng } from '../../data/pngEncode';
import { writePfm, writePng } from '../../data/imageIO';
import { writePly } from '../../data/ply';
import type { Raster } from '../../data/raster';
import { colorScaleImage } from '../../stereo/colorScale';
import { confidenceMap } from '../../stereo/confidence';
import { calibBeside, checkCalibration, depthPngRaster, readCalibration, toDepth, toPointCloud, type StereoCalibration } from '../../stereo/depth';
import { disparityInPixels, type MatchResult } from '../../stereo/match';
import { checkOutputPath } from './common';
import type { Io } from './io';

/**
 * match's outputs beyond the disparity: the colour map with its scale
 * (--color), depth (--depth, PFM or 16-bit PNG), the point cloud (--ply)
 * and the confidence (--confidence, PNG or PFM). Everything is checked
 * before the match (planMatchOutputs), written after it, each file under a
 * temporary name renamed when complete.
 */

export interface MatchOutputArgs {
  color?: string;
  depth?: string;
  ply?: string;
  confidence?: string;
  calib?: string;
  focal?: number;
  baseline?: number;
  doffs?: number;
  cx?: number;
  cy?: number;
}

export interface MatchOutputPlan {
  args: MatchOutputArgs;
  /** The calibration (cx, cy still undefined where the image centre is to be used), and where it came from. */
  calib?: { values: Omit<StereoCalibration, 'cx' | 'cy'> & { cx?: number; cy?: number }; source: string };
}

/** The option whose extension says PNG or PFM: which one. */
function pngOrPfm(file: string, option: string): 'png' | 'pfm' {
  checkOutputPath(file, option);
  const ext = path.extname(file).toLowerCase();
  if (ext === '.png' || ext === '.pfm') return ext.slice(1) as 'png' | 'pfm';
  throw new Error(`${option}: ${file} ${ext ? `ends in ${ext}` : 'has no extension'}; give a name ending in .pfm or .png`);
}

/** Refuses bad output names and calibrations before any work; `left` is the left image's path (its folder may hold calib.txt). */
export function planMatchOutputs(a: MatchOutputArgs, left: string): MatchOutputPlan {
  if (a.color) checkOutputPath(a.color, '--color', 'png');
  if (a.depth) pngOrPfm(a.depth, '--depth');
  if (a.ply) checkOutputPath(a.ply, '--ply', 'ply');
  if (a.confidence) pngOrPfm(a.confidence, '--confidence');
  const given = (['focal', 'baseline', 'doffs', 'cx', 'cy'] as const).filter((k) => a[k] !== undefined);
  if (a.calib !== undefined && given.length > 0) throw new Error(`--calib: give either --calib or --${given[0]} (with the other camera values), not both`);
  if (given.length > 0) {
    for (const k of ['focal', 'baseline'] as const) if (a[k] === undefined) throw new Error(`--${k}: required with --${given.find((g) => g !== k)} (the camera: --focal F --baseline B [--doffs D] [--cx X --cy Y])`);
    if ((a.cx === undefined) !== (a.cy === undefined)) throw new Error(`--${a.cx === undefined ? 'cx' : 'cy'}: give --cx and --cy together (default: the image centre)`);
  }
  const wantsCalib = a.depth !== undefined || a.ply !== undefined;
  if (!wantsCalib) {
    if (a.calib !== undefined || given.length > 0) throw new Error(`--${a.calib !== undefined ? 'calib' : given[0]}: a calibration is used by --depth and --ply; give one of them`);
    return { args: a };
  }
  if (given.length > 0) {
    const values = { focal: a.focal as number, baseline: a.baseline as number, doffs: a.doffs ?? 0, cx: a.cx, cy: a.cy };
    checkCalibration({ ...values, cx: values.cx ?? 0, cy: values.cy ?? 0 }, '--focal/--baseline');
    return { args: a, calib: { values, source: 'the options' } };
  }
  const file = a.calib ?? calibBeside(left);
  if (!file) throw new Error(`--${a.depth !== undefined ? 'depth' : 'ply'}: needs the camera: --calib FILE (a MiddEval3 calib.txt), --focal F --baseline B, or a calib.txt beside the left image`);
  return { args: a, calib: { values: readCalibration(file), source: file } };
}

/** The files of `plan` that are written, with their options (for the output-onto-input checks). */
export function plannedFiles(plan: MatchOutputPlan): Array<[string, string]> {
  const a = plan.args;
  const out: Array<[string, string]> = [];
  for (const [option, file] of [['--color', a.color], ['--depth', a.depth], ['--ply', a.ply], ['--confidence', a.confidence]] as const) if (file !== undefined) out.push([file, option]);
  return out;
}

/** Writes the planned outputs of `r`; returns a line per file for the account. */
export async function writeMatchOutputs(plan: MatchOutputPlan, r: MatchResult, left: Raster, right: Raster, io: Io): Promise<string[]> {
  const a = plan.args;
  const lines: string[] = [];
  const { width: W, height: H } = r;
  if (a.color) {
    const top = r.minDisp + r.ndisp - 1;
    await writePng(a.color, colorScaleImage(disparityInPixels(r), W, H, r.minDisp, top).image);
    lines.push(`wrote ${a.color} (turbo colour map, disparity ${r.minDisp}..${top}, scale on the right; invalid pixels black)`);
  }
  if (plan.calib) {
    const v = plan.calib.values;
    const calib: StereoCalibration = { ...v, cx: v.cx ?? (W - 1) / 2, cy: v.cy ?? (H - 1) / 2 };
    const camera = `f ${calib.focal}, baseline ${calib.baseline}, doffs ${calib.doffs}, principal point (${calib.cx}, ${calib.cy}) from ${plan.calib.source}`;
    if (a.depth) {
      const depth = toDepth(r, calib);
      if (a.depth.toLowerCase().endsWith('.pfm')) {
        writePfm(a.depth, W, H, depth);
        lines.push(`wrote ${a.depth} (depth in the baseline's unit, inf where unknown; ${camera})`);
      } else {
        const { raster, beyond } = depthPngRaster(depth, W, H, 1);
        writeFileAtomic(a.depth, await encodePng(raster, 16));
        lines.push(`wrote ${a.depth} (16-bit depth in mm, taking the baseline in mm; 0 where unknown; ${camera})`);
        if (beyond > 0) io.err(`note: --depth: ${beyond} pixels are farther than 65535 mm, beyond a 16-bit PNG; written as 0 (unknown): the PFM keeps them`);
      }
    }
    if (a.ply) {
      const cloud = toPointCloud(r, calib, left);
      writePly(a.ply, cloud, ['made by stereocut match', `camera ${camera}`, 'x right, y down, z forward, in the baseline\'s unit']);
      lines.push(`wrote ${a.ply} (${cloud.count} points of ${W * H} pixels, binary PLY; ${camera})`);
    }
  }
  if (a.confidence) {
    const c = confidenceMap({ left, right, result: r });
    if (a.confidence.toLowerCase().endsWith('.pfm')) writePfm(a.confidence, W, H, c);
    else await writePng(a.confidence, { width: W, height: H, channels: 1, data: c.map((v) => v * 255), maxval: 255 });
    lines.push(`wrote ${a.confidence} (confidence ${a.confidence.toLowerCase().endsWith('.pfm') ? '0–1' : '0–255'}: left–right agreement × cost margin × distance to a disparity edge)`);
  }
  return lines;
}
