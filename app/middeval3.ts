import * as path from 'path';
import { writeFileAtomic } from '../data/atomicWrite';
import { writePfm } from '../data/imageIO';
import { makeFolder } from '../data/folders';

/**
 * Output in the layout of the Middlebury v3 SDK (MiddEval3): results sit
 * beside the input data, one folder per scene inside a set folder,
 *
 *   DIR/<set>/<Scene>/disp0<NAME>.pfm   disparity of the left view in pixels
 *                                       (little-endian PFM, INF = no value)
 *   DIR/<set>/<Scene>/time<NAME>.txt    running time in seconds, one number
 *
 * where <set> is trainingQ, trainingH, trainingF, testQ, testH or testF and
 * NAME is the algorithm name given to the SDK's runeval / makezip scripts, so
 * pointing the SDK at DIR evaluates our output unchanged.
 */

export const MIDDEVAL3_SETS = ['trainingQ', 'trainingH', 'trainingF', 'testQ', 'testH', 'testF'] as const;
export type MiddEval3Set = (typeof MIDDEVAL3_SETS)[number];

/** Algorithm names are part of file names the SDK globs for: letters and digits only. */
export function checkAlgorithmName(name: string): void {
  if (!/^[A-Za-z0-9]+$/.test(name)) throw new Error(`--middeval3-name: '${name}' must be letters and digits only (it becomes disp0${name}.pfm)`);
}

export function checkSetName(set: string): MiddEval3Set {
  if (!(MIDDEVAL3_SETS as readonly string[]).includes(set)) throw new Error(`--middeval3-set: unknown set '${set}' (expected ${MIDDEVAL3_SETS.join(', ')})`);
  return set as MiddEval3Set;
}

/**
 * Set and scene name of a scene folder: the SDK's own tree
 * (…/trainingQ/Adirondack) names both; a flattened copy named
 * Adirondack_TrainingQ does too. Otherwise the folder name is the scene and
 * `fallbackSet` the set; without one, an error says which option to give.
 */
export function middeval3Place(sceneDir: string, fallbackSet?: string): { set: MiddEval3Set; scene: string } {
  const abs = path.resolve(sceneDir);
  const base = path.basename(abs);
  const parent = path.basename(path.dirname(abs));
  const parentSet = MIDDEVAL3_SETS.find((s) => s === parent);
  if (parentSet) return { set: parentSet, scene: base };
  const m = /^(.+)_(training|test)([QHF])$/i.exec(base);
  if (m) return { set: `${m[2].toLowerCase()}${m[3].toUpperCase()}` as MiddEval3Set, scene: m[1] };
  if (fallbackSet === undefined) throw new Error(`--middeval3: cannot tell the MiddEval3 set of ${sceneDir} (not inside trainingQ/… nor named <Scene>_TrainingQ); pass --middeval3-set`);
  return { set: checkSetName(fallbackSet), scene: base };
}

export interface MiddEval3Entry {
  set: MiddEval3Set;
  scene: string;
  width: number;
  height: number;
  /** Disparity of the left view in pixels; non-finite values are written as INF (no estimate). */
  disparity: ArrayLike<number>;
  /** Running time in seconds (what the SDK's time column shows). */
  seconds: number;
}

export function middeval3Paths(root: string, set: string, scene: string, name: string): { dir: string; pfm: string; time: string } {
  const dir = path.join(root, set, scene);
  return { dir, pfm: path.join(dir, `disp0${name}.pfm`), time: path.join(dir, `time${name}.txt`) };
}

/** Writes one scene's disparity and time file; returns the paths written. */
export function writeMiddEval3(root: string, name: string, e: MiddEval3Entry): { pfm: string; time: string } {
  checkAlgorithmName(name);
  checkSetName(e.set);
  if (!(Number.isFinite(e.seconds) && e.seconds >= 0)) throw new Error(`--middeval3: running time of ${e.scene} is not a number of seconds (${e.seconds})`);
  if (e.disparity.length !== e.width * e.height) throw new Error(`--middeval3: ${e.scene} disparity has ${e.disparity.length} values for ${e.width}×${e.height}`);
  const p = middeval3Paths(root, e.set, e.scene, name);
  makeFolder(p.dir);
  const data = new Float32Array(e.disparity.length);
  for (let i = 0; i < data.length; i++) data[i] = Number.isFinite(e.disparity[i]) ? e.disparity[i] : Infinity;
  writePfm(p.pfm, e.width, e.height, data);
  writeFileAtomic(p.time, `${e.seconds.toFixed(3)}\n`);
  return p;
}
