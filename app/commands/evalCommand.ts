import * as fs from 'fs';
import { evaluateDisparity, errorImage, RegionName } from '../../data/metrics';
import { loadScene } from '../../data/scene';
import { detectFormat, readDisparityFile, readFileBytes, readImage, writePng } from '../../data/imageIO';
import type { SceneMasks } from '../../data/sceneTypes';
import type { Raster } from '../../data/raster';
import { checkInputFile, checkOutputPath, Io, readEstimate } from './common';
import { evaluationLines } from './scoreFormat';
import { checkOutputsApart, sceneInputs } from './outputGuard';
import * as path from 'path';

export interface EvalArgs {
  disparity: string;
  reference?: string;
  'disp-scale'?: number;
  'gt-scale'?: number;
  mask?: string[];
  threshold?: number[];
  'error-image'?: string;
  left?: string;
  json: boolean;
}

const NAMED_REGIONS: RegionName[] = ['nonocc', 'all', 'disc'];

/** Scores a disparity map against a scene folder's ground truth (with its masks) or a ground-truth file. */
export async function evalCommand(a: EvalArgs, io: Io): Promise<number> {
  checkInputFile(a.disparity, 'disparity');
  if (!a.reference) throw new Error('eval: give a Middlebury scene folder or a ground-truth file after the disparity map');
  if (!fs.existsSync(a.reference)) throw new Error(`reference ${a.reference}: no such file or folder`);
  if (a['error-image']) {
    checkOutputPath(a['error-image'], '--error-image', 'png');
    const reference = fs.statSync(a.reference).isDirectory() ? sceneInputs(a.reference) : [{ name: 'ground truth', file: a.reference }];
    const masks = (a.mask ?? []).filter((m) => !(NAMED_REGIONS as string[]).includes(m)).map((file) => ({ name: '--mask file', file }));
    checkOutputsApart([{ name: '--error-image', file: a['error-image'] }], [{ name: 'disparity map', file: a.disparity }, ...reference, ...masks]);
  }
  const dispScale = a['disp-scale'];
  const est = await readEstimate(a.disparity, dispScale);

  let groundTruth: Float32Array;
  let masks: SceneMasks = {};
  let nonoccDerived = false;
  let left: Raster | undefined;
  let refName = a.reference;
  if (fs.statSync(a.reference).isDirectory()) {
    const scene = await loadScene(a.reference);
    if (!scene.groundTruth) throw new Error(`${a.reference}: the scene has no ground truth to evaluate against`);
    groundTruth = scene.groundTruth;
    masks = scene.masks;
    nonoccDerived = scene.nonoccDerived;
    left = scene.left;
    refName = `${scene.name} (${scene.layout}, ground truth ${scene.groundTruthPath ?? ''})`;
  } else {
    const gtIsPfm = isPfm(a.reference);
    const gtScale = a['gt-scale'];
    if (!gtIsPfm && gtScale === undefined) throw new Error(`--gt-scale: ${a.reference} is an integer image; give its scale with --gt-scale N (old spelling --scale): grey = disparity × N, e.g. 4 for 2003 scenes`);
    const gtMap = await readDisparityFile(a.reference, gtScale ?? 1);
    groundTruth = gtMap.data;
    if (gtMap.width !== est.width || gtMap.height !== est.height) {
      throw new Error(`size mismatch: ${a.disparity} is ${est.width}×${est.height}, ${a.reference} is ${gtMap.width}×${gtMap.height}`);
    }
  }
  if (groundTruth.length !== est.width * est.height) {
    throw new Error(`size mismatch: ${a.disparity} is ${est.width}×${est.height}, the ground truth of ${a.reference} has ${groundTruth.length} pixels`);
  }

  // --mask: region names of the scene, or mask images (non-zero = evaluated).
  let regions: RegionName[] | undefined;
  const customMasks: { name: string; mask: Uint8Array }[] = [];
  if (a.mask && a.mask.length > 0) {
    regions = ['known'];
    for (const m of a.mask) {
      if ((NAMED_REGIONS as string[]).includes(m)) {
        if (!masks[m as keyof SceneMasks]) throw new Error(`--mask: ${refName} has no ${m} mask`);
        regions.push(m as RegionName);
        continue;
      }
      checkInputFile(m, '--mask');
      const r = await readImage(m);
      if (r.width !== est.width || r.height !== est.height) throw new Error(`--mask ${m}: ${r.width}×${r.height}, the disparity map is ${est.width}×${est.height}`);
      const mask = new Uint8Array(r.width * r.height);
      for (let p = 0; p < mask.length; p++) mask[p] = r.data[p * r.channels] !== 0 ? 1 : 0;
      // The region column shows the mask's file name; the JSON keeps the path as given.
      customMasks.push({ name: path.basename(m), mask });
    }
  }
  const evaluation = evaluateDisparity(est.data, groundTruth, est.width, est.height, { thresholds: a.threshold, masks, nonoccDerived, regions, customMasks });
  if (a['error-image']) {
    if (!left) throw new Error('--error-image: needs a scene folder (for the left image) as the reference');
    const t = evaluation.thresholds[0];
    await writePng(a['error-image'], errorImage(left, est.data, groundTruth, t, masks.nonocc));
  }
  if (a.json) {
    io.out(JSON.stringify({ disparity: a.disparity, reference: a.reference, ...evaluation }, null, 2));
  } else {
    io.out(`${a.disparity} against ${refName}`);
    for (const l of evaluationLines(evaluation)) io.out(l);
    if (a['error-image']) io.out(`wrote ${a['error-image']}`);
  }
  return 0;
}

const isPfm = (file: string): boolean => detectFormat(readFileBytes(file)) === 'pfm';
