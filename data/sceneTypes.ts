import type { Raster } from './raster';

/** Which Middlebury layout a scene folder follows, 'pair' for a pair named otherwise (data/pairNames.ts), or the built-in synthetic scene. */
export type SceneLayout = 'middlebury2001' | 'middlebury2003' | 'middlebury2005' | 'middlebury2014' | 'pair' | 'synthetic';

/** Evaluation masks, 1 = pixel evaluated in that region. Absent where the scene has none. */
export interface SceneMasks {
  nonocc?: Uint8Array;
  all?: Uint8Array;
  disc?: Uint8Array;
}

/** A rectified stereo pair with what is known about it. */
export interface Scene {
  /** Folder name (or "synthetic"). */
  name: string;
  /** Folder it was loaded from ("" for generated scenes). */
  dir: string;
  layout: SceneLayout;
  left: Raster;
  right: Raster;
  /** Files the pair came from (for messages and reports). */
  leftPath: string;
  rightPath: string;
  /**
   * Ground-truth disparity of the left view in pixels, row-major W·H;
   * +Infinity = unknown (the files' "0 = unknown" and PFM's inf both map here).
   */
  groundTruth?: Float32Array;
  /** Ground truth of the right view where the scene has one (2001 venus/sawtooth/map, 2003, 2005/2006). */
  groundTruthRight?: Float32Array;
  groundTruthPath?: string;
  /** Integer scale of the ground-truth file (gray / scale = disparity), 1 for PFM. */
  groundTruthScale: number;
  /** Number of disparity labels: disparities minDisp..minDisp + ndisp − 1. */
  ndisp: number;
  /** Disparity of label 0 (undefined = 0). */
  minDisp?: number;
  /** Where the range came from. */
  ndispSource: 'dataset convention' | 'calib ndisp' | 'calib vmin/vmax' | 'ground-truth maximum' | 'generator' | 'option';
  masks: SceneMasks;
  /** True when masks.nonocc was derived from left-right consistency of the two ground truths (2005/2006). */
  nonoccDerived: boolean;
}
