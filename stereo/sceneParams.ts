import type { MatchParams } from './params';

/**
 * Parameters for the Middlebury scenes `stereocut run` recognises by folder
 * name, in the spirit of Choi & Park's Table 2 (cost kind and static cue per
 * scene as the paper has them; λ, T and τ set on our cost scale, see the
 * README's "Per-scene parameters"). Options given on the command line
 * override them; unknown scenes get DEFAULT_PARAMS.
 */
export const SCENE_PARAMS: Record<string, Partial<MatchParams>> = {
  tsukuba: { cost: 'sad', lambda: 20, truncation: 2, cueFactor: 2 },
  venus: { cost: 'sad', lambda: 20, truncation: 2, cueFactor: 2 },
  teddy: { cost: 'sad+sgrad', lambda: 20, truncation: 2, cueFactor: 2 },
  cones: { cost: 'sad+sgrad', lambda: 20, truncation: 2, cueFactor: 2 },
};

/** Known parameters for a scene folder name (case-insensitive), or {}. */
export function sceneParamsFor(name: string): Partial<MatchParams> {
  return SCENE_PARAMS[name.toLowerCase()] ?? {};
}
