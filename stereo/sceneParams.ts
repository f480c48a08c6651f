import type { MatchParams } from './params';

/**
 * Per-scene parameters for the four Middlebury v2 scenes of the paper's
 * Table 4 (tsukuba, venus, teddy, cones), which `stereocut run` recognises by
 * folder name and uses unless --no-scene-params is given. Chosen with
 * `stereocut tune` on each scene alone (BENCHMARKS.md, "Accuracy"), so they are
 * fitted to the scene: every other folder, and every scene with
 * --no-scene-params, gets DEFAULT_PARAMS. Options given on the command line
 * override them.
 */
export const SCENE_PARAMS: Record<string, Partial<MatchParams>> = {
  tsukuba: { cost: 'census', censusWindow: { width: 9, height: 7 }, tau: 36, lambda: 10, cueThreshold: 16, cueFactor: 3, cycles: 3, lrCheck: false },
  venus: { cost: 'census', censusWindow: { width: 5, height: 5 }, tau: 10, lambda: 16, cueThreshold: 16, cycles: 3, lrCheck: false },
  teddy: { cost: 'census', censusWindow: { width: 9, height: 7 }, tau: 32, lambda: 4, cueThreshold: 12, cueFactor: 4, cycles: 2, lrCheck: true },
  cones: { cost: 'census', censusWindow: { width: 7, height: 7 }, tau: 26, lambda: 4, cueThreshold: 12, cycles: 2, lrCheck: true },
};

/** Known parameters for a scene folder name (case-insensitive), or {}. */
export function sceneParamsFor(name: string): Partial<MatchParams> {
  return SCENE_PARAMS[name.toLowerCase()] ?? {};
}
