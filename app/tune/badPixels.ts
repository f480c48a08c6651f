import { evaluateDisparity, type RegionName } from '../../data/metrics';
import type { Scene } from '../../data/sceneTypes';
import type { BadTable, MaskName } from './objective';

/**
 * Bad-pixel percentages the Middlebury way (data/metrics.ts): among the
 * pixels of a region whose ground truth is known, the share with
 * |d − gt| > threshold. 'all' is the scene's all-mask where it has one, else
 * every pixel with known ground truth (MiddEval3 and synthetic scenes have
 * no all.png). Regions the scene lacks are left out; no ground truth, {}.
 */
export function badTable(scene: Scene, disparity: ArrayLike<number>, thresholds: number[]): BadTable {
  if (!scene.groundTruth) return {};
  const wanted: [MaskName, RegionName][] = [];
  if (scene.masks.nonocc) wanted.push(['nonocc', 'nonocc']);
  wanted.push(['all', scene.masks.all ? 'all' : 'known']);
  if (scene.masks.disc) wanted.push(['disc', 'disc']);
  wanted.push(['scene', scene.masks.nonocc && !scene.nonoccDerived ? 'nonocc' : 'known']);
  const e = evaluateDisparity(disparity, scene.groundTruth, scene.left.width, scene.left.height, {
    thresholds, masks: scene.masks, regions: [...new Set(wanted.map(([, r]) => r))],
  });
  const out: BadTable = {};
  for (const [mask, region] of wanted) {
    const score = e.regions.find((r) => r.region === region)!;
    if (score.pixels === 0) continue;
    out[mask] = Object.fromEntries(thresholds.map((t, i) => [String(t), score.bad[i]]));
  }
  return out;
}

/** One bad-pixel percentage, or undefined where the scene cannot give it. */
export function badPixelPercent(scene: Scene, disparity: ArrayLike<number>, mask: MaskName, threshold: number): number | undefined {
  return badTable(scene, disparity, [threshold])[mask]?.[String(threshold)];
}
