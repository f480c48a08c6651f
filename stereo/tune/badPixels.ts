import type { Scene } from '../../data/sceneTypes';
import type { MaskName } from './objective';

/**
 * Bad-pixel percentage the Middlebury way: among the pixels of a region
 * whose ground truth is known, the share with |d − gt| > threshold.
 * 'all' is the scene's all-mask where it has one, else every pixel with
 * known ground truth. Undefined when the scene lacks the ground truth or the
 * mask, or the region is empty.
 */
export function badPixelPercent(scene: Scene, disparity: ArrayLike<number>, mask: MaskName, threshold: number): number | undefined {
  const gt = scene.groundTruth;
  if (!gt) return undefined;
  const m = scene.masks[mask];
  if (!m && mask !== 'all') return undefined;
  let n = 0;
  let bad = 0;
  for (let i = 0; i < gt.length; i++) {
    const g = gt[i];
    if (!Number.isFinite(g) || (m && !m[i])) continue;
    n++;
    if (Math.abs(disparity[i] - g) > threshold) bad++;
  }
  return n === 0 ? undefined : (100 * bad) / n;
}
