import type { Raster } from '../data/raster';
import { leftRightCheck, mirrorRows } from './leftRightCheck';
import { refineSubpixel } from './subpixel';
import { checkMatchMemory, defaultMemoryLimit, estimateMatchMemory } from './memoryPlan';
import { matchArguments } from './matchOptions';
import { resolveParams } from './params';
import { matchPyramid } from './matchPyramid';
import type { MatchOptions, MatchResult } from './matchTypes';

/*
 * match() and what its callers use with it: the parameters (params.ts),
 * the energy of a pair (matchEnergy.ts), its starting labels
 * (startingLabels.ts), one level's match of one or both views
 * (matchViews.ts), coarse to fine (matchPyramid.ts) and the types
 * (matchTypes.ts).
 */
export type { InitRecord, MatchEvent, MatchOptions, MatchResult, MatchResume, PhaseTimes } from './matchTypes';
export { resolveParams } from './params';
export { costOptions, costsLeftToDevice, costsOnDemand, stereoEnergy, volumeTooLarge } from './matchEnergy';
export { initialLabeling, startingLabels } from './startingLabels';
export { labelsToDisparity, warmUpForBackend } from './matchViews';
export { levelTruncation } from './matchPyramid';

/**
 * Disparity of a rectified pair by α-expansion: data costs, smoothness
 * weights, an initial labeling, then `cycles` cycles of expansion moves.
 */
export async function match(leftImage: Raster | string, rightImage: Raster | string, options: MatchOptions): Promise<MatchResult> {
  const { left, right } = await matchArguments(leftImage, rightImage, options);
  const resolved = resolveParams(options);
  if (left.width === right.width && left.height === right.height && Number.isInteger(options.ndisp) && options.ndisp > 0) {
    const estimate = estimateMatchMemory(left.width, left.height, left.channels, options.ndisp, options.minDisp ?? 0, resolved, options.backend === 'gpu');
    checkMatchMemory(`match: the ${left.width}×${left.height} pair with ${options.ndisp} disparities`, estimate, options.maxMemory ?? defaultMemoryLimit(), 'maxMemory');
  }
  const r = await checkedMatch(left, right, options);
  if (!r.params.subpixel) return r;
  const t0 = performance.now();
  const p = r.params;
  const subpixel = refineSubpixel(left, right, r.disparity, r.minDisp, r.ndisp, { kind: p.cost, tau: p.tau, border: p.border, censusWindow: p.censusWindow }, p.window);
  const ms = performance.now() - t0;
  return { ...r, subpixel, times: { ...r.times, subpixelMs: ms, totalMs: r.times.totalMs + ms } };
}

/**
 * The integer disparity of the left view, with the left–right check when
 * asked for. The check's right view (the mirrored, swapped pair: its
 * left-view disparity, mirrored back, is the right view's) is matched
 * together with the left one, as one energy of the two views stacked
 * (costs/energyTerms.ts stackEnergies): each move solves both views' cuts
 * for its label at once, so the device runs one move per label instead of
 * two. The views share the label order, the cycles and the reported
 * energies (their sum); each view's map is that of its own energy.
 */
async function checkedMatch(left: Raster, right: Raster, options: MatchOptions): Promise<MatchResult> {
  const checked = resolveParams(options).lrCheck;
  const { result: r, others } = await matchPyramid(left, right, checked ? 2 : 1, options);
  if (!checked) return r;
  const t0 = performance.now();
  const dispRight = mirrorRows(others[0], r.width, r.height);
  const check = leftRightCheck(r.disparity, dispRight, r.width, r.height, r.params.lrFill);
  const checkMs = performance.now() - t0;
  options.onEvent?.({ kind: 'leftRightCheck', ms: checkMs, inconsistent: check.invalid, filled: r.params.lrFill });
  return { ...r, disparity: check.disparity, inconsistentPixels: check.invalid, inconsistent: check.marked, times: { ...r.times, totalMs: r.times.totalMs + checkMs, checkMs } };
}

/** The disparity in pixels a result stands for: the sub-pixel map where refined, else the integer one (what PFM outputs and scores use). */
export function disparityInPixels(r: Pick<MatchResult, 'disparity' | 'subpixel'>): ArrayLike<number> {
  return r.subpixel ?? r.disparity;
}
