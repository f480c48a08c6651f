import { optionError } from '../data/errors';
import type { ExpansionResult } from '../expansion/alphaExpansion';
import { levelShapes, pyramidLevels, refineLevel, type LevelBands, type LevelReport, type LevelShape } from './coarseToFine';
import { halfSize, mirrorRaster, type Raster } from '../data/raster';
import { sumEnergy } from '../data/energy';
import type { StripRunner } from './levelStrips';
import { levelTerms, termsArrays, type LevelTerms, type TermsArrays } from './levelTerms';
import type { StereoEnergyOptions } from '../costs';
import { stripPool, stripThreads } from './stripRunner';
import { checkNdisp, type MatchParams } from './params';
import { energyOptions, matchViews, startEvent } from './matchViews';
import type { MatchEvent, MatchOptions, MatchPlan, MatchResult, PhaseTimes, ViewRunner } from './matchTypes';

/**
 * matchViews at the pyramid's coarsest level, then each finer level refined
 * within bands (stereo/coarseToFine.ts); matchViews itself when the pyramid
 * has one level. A given initial map keeps the pair at one level unless
 * the levels are given. `plan`: the Matcher's parameters and backend placement.
 */
export async function matchPyramid(left: Raster, right: Raster, views: 1 | 2, options: MatchOptions, plan: MatchPlan): Promise<{ result: MatchResult; others: Uint16Array[] }> {
  const resolved = plan.params;
  const t0 = performance.now();
  const given = options.initialLabels !== undefined || options.resume !== undefined || options.warmStart !== undefined;
  const levels = given && resolved.levels === 'auto' ? 1 : pyramidLevels(left.width, left.height, resolved.levels);
  if (levels === 1) return matchViews(left, right, views, options, plan);
  if (given) throw optionError('range', 'match', 'levels', resolved.levels, "1 or 'auto' with initialLabels, resume or warmStart (a given initial map is matched at one level)");
  const minDisp = options.minDisp ?? 0;
  checkNdisp(options.ndisp, left.width, minDisp);
  const shapes = levelShapes(left.width, left.height, minDisp, minDisp + options.ndisp - 1, levels);
  const coarsest = shapes[levels - 1];
  if (coarsest.width < 16 || coarsest.height < 16 || coarsest.maxDisp >= coarsest.width || coarsest.maxDisp === coarsest.minDisp) {
    throw optionError('range', 'match', 'levels', resolved.levels, `fewer levels: ${levels} leave a ${coarsest.width}×${coarsest.height} pair with disparities ${coarsest.minDisp}..${coarsest.maxDisp} at the coarsest (at least 16×16 pixels, 2 disparities below the width)`);
  }
  const emit = options.onEvent ?? (() => undefined);
  emit(startEvent(left, options, resolved));
  // The finer levels' threads start now and load while the coarsest level runs.
  const own = options.stripPool ? undefined : stripPool(stripThreads(left.width * left.height));
  const pool = options.stripPool ?? own!;
  // The finer levels' pairs, terms and bands in the pool's shared memory (data/sharedStage.ts), so that their strips and
  // bands read views, kept from one match to the next: level k's in slots SLOTS·k + LevelSlot. The coarsest level's pair is
  // this thread's alone. A level's pair is let go once the next finer level starts (matchLevels).
  const stage = pool.pairStage?.hold() ?? null;
  const slot = (k: number, s: LevelSlot): number => SLOTS * k + s;
  const pairs: Array<LevelPair | undefined> = [stage ? { left: stage.raster(slot(0, LevelSlot.Left), left), right: stage.raster(slot(0, LevelSlot.Right), right) } : { left, right }];
  for (let k = 1; k < levels; k++) {
    const finer = pairOf(pairs, k - 1);
    const into = (s: LevelSlot, channels: number): Float32Array | undefined =>
      (stage && k < levels - 1 ? stage.array(slot(k, s), Float32Array, shapes[k].width * shapes[k].height * channels) : undefined);
    pairs.push({ left: halfSize(finer.left, into(LevelSlot.Left, left.channels)), right: halfSize(finer.right, into(LevelSlot.Right, right.channels)) });
  }
  // Where BK runs the coarsest level on the host, its right view goes to a strip thread now, before the finer levels'
  // terms take the threads: a task waiting for a thread is handed on by this thread's event loop, which BK holds.
  const rightOnThread = views === 2 && pool.view && plan.place.runs === 'bk'
    ? rightViewOnThread(pool.view, pairOf(pairs, levels - 1), shapes[levels - 1], oneLevel(plan)) : undefined;
  rightOnThread?.catch(() => undefined);
  // Each finer level's energy options (its disparities and T).
  const energies = shapes.slice(0, levels - 1).map((shape, k) => levelEnergyOptions(pairOf(pairs, k).left, shape, resolved, levels, k));
  // With threads, every finer level's terms (census codes, weights) are made on them now, while the coarsest level runs
  // (stereo/levelTerms.ts), in bands for half the threads: the others are left to the host's side of that level.
  const termsInto = (k: number): TermsArrays | undefined => stage ? termsArrays(shapes[k].width * shapes[k].height, energies[k], views,
    (image, n) => stage.array(slot(k, LevelSlot.CodesLeft + image), Int32Array, n),
    (view, n) => stage.array(slot(k, LevelSlot.Cues + view), Uint8Array, n)) : undefined;
  const early: Array<Promise<LevelTerms> | undefined> = pool.terms
    ? Array.from({ length: levels - 1 }, (_, k) => levelTerms(pairOf(pairs, k), energies[k], views, pool.terms, Math.max(2, pool.threads >> 1), termsInto(k))) : [];
  // Awaited level by level; a match that fails before a level leaves its terms' failure handled.
  for (const t of early) t?.catch(() => undefined);
  const termsOf = (k: number): Promise<LevelTerms> => {
    // Handed over once: a level's terms are let go when its strips are done.
    const terms = early[k];
    early[k] = undefined;
    return terms ?? levelTerms(pairOf(pairs, k), energies[k], views);
  };
  const bandsOf = (k: number) => (view: 0 | 1): LevelBands | undefined => {
    if (!stage) return undefined;
    const n = shapes[k].width * shapes[k].height;
    const s = LevelSlot.Bands + 3 * view;
    return { lo: stage.array(slot(k, s), Uint16Array, n), hi: stage.array(slot(k, s + 1), Uint16Array, n), start: stage.array(slot(k, s + 2), Uint16Array, n) };
  };
  try {
    return await matchLevels(pairs, views, options, plan, shapes, energies, { run: pool.run, inFlight: pool.threads }, rightOnThread, termsOf, bandsOf, t0);
  } finally {
    stage?.release();
    await own?.close();
  }
}

/** A pyramid level's pair. */
type LevelPair = { left: Raster; right: Raster };

/** Slots of a finer level's arrays in the pool's pair stage, SLOTS a level: its pair, census codes, each view's weights (as cues) and bands (lo, hi, labels). */
enum LevelSlot { Left = 0, Right = 1, CodesLeft = 2, CodesRight = 3, Cues = 4, Bands = 6 }
const SLOTS = 12;

/** The energy options of finer level k of `levels`: on demand, its disparities, T for its size (levelTruncation). */
function levelEnergyOptions(left: Raster, shape: LevelShape, resolved: MatchParams, levels: number, k: number): StereoEnergyOptions {
  const ndisp = shape.maxDisp - shape.minDisp + 1;
  checkNdisp(ndisp, shape.width, shape.minDisp);
  const onDemand = { ...resolved, costs: 'on-demand' as const, truncation: levelTruncation(resolved, 2 ** (levels - 1 - k)) };
  return energyOptions(left, ndisp, onDemand, false, shape.minDisp, 1);
}

/** Level k's pair, while it is kept. */
function pairOf(pairs: ReadonlyArray<LevelPair | undefined>, k: number): LevelPair {
  const pair = pairs[k];
  if (!pair) throw new Error(`coarse to fine: level ${k}'s pair was let go before its use`);
  return pair;
}

/**
 * T of a level f times finer than the coarsest (f = 2, 4, …). T is in
 * disparities, which grow ×f: a quadratic term's T grows ×f² so that it
 * stands for the same jump. A linear term's grows ×3f: within a finer
 * level's bands the jumps the truncation is there for are already barred
 * (each pixel keeps a few labels around the coarse disparity), and there a
 * ramp across the band must stay cheaper than a step (chosen with each of
 * three ×2 scenes left out in turn; BENCHMARKS.md, "Large images").
 */
export function levelTruncation(p: Pick<MatchParams, 'smoothness' | 'truncation'>, f: number): number {
  if (p.smoothness === 'quadratic') return p.truncation * f * f;
  if (p.smoothness === 'linear') return p.truncation * 3 * f;
  return p.truncation;
}

/** matchPyramid's levels, coarsest first, the finer levels' strips run by `strips.run`, as many built at once as `strips.inFlight` (the threads; 0, this thread, builds one at a time), reading level k's terms from `termsOf(k)` and its bands into `bandsOf(k)`'s arrays. */
async function matchLevels(pairs: Array<LevelPair | undefined>, views: 1 | 2, options: MatchOptions, plan: MatchPlan, shapes: LevelShape[], energies: StereoEnergyOptions[], strips: { run: StripRunner; inFlight: number }, rightOnThread: Promise<MatchResult> | undefined, termsOf: (level: number) => Promise<LevelTerms>, bandsOf: (level: number) => (view: 0 | 1) => LevelBands | undefined, t0: number): Promise<{ result: MatchResult; others: Uint16Array[] }> {
  const { left } = pairOf(pairs, 0);
  const levels = shapes.length;
  const coarsest = shapes[levels - 1];
  const minDisp = options.minDisp ?? 0;
  const emit = options.onEvent ?? (() => undefined);
  emit({ kind: 'level', level: levels - 1, of: levels, shape: coarsest, shapes });
  const { first: coarse, right: coarseRight } = await matchCoarsest(pairOf(pairs, levels - 1), views, coarsest, options, plan, levels, rightOnThread);
  const params = coarse.result.params;
  const rightMap = coarseRight?.then((r) => r.result.disparity);
  rightMap?.catch(() => undefined);
  let maps: Array<Uint16Array | Promise<Uint16Array>> = [coarse.result.disparity, ...(rightMap ? [rightMap] : [])];
  let size = { width: coarsest.width, height: coarsest.height };
  const reports: LevelReport[] = [];
  let last: Omit<ExpansionResult, 'labels'> | undefined;
  // Every level has the coarsest's λ and cue, so the same cost scale.
  const costScale = coarse.result.costScale;
  let finest: Uint16Array[] = [];
  try {
    for (let k = levels - 2; k >= 0; k--) {
      // The coarser level's pair is done with (its maps carry on): let it go before this level's strips hold their memory.
      pairs[k + 1] = undefined;
      const shape = shapes[k];
      emit({ kind: 'level', level: k, of: levels, shape, shapes });
      const bands = bandsOf(k);
      const done = await refineLevel(k, shape, pairOf(pairs, k), energies[k], views, { maps, ...size }, {
        params, ...strips, terms: await termsOf(k), bands,
        onMove: options.onMove ? (m) => options.onMove!({ ...m, levels }) : undefined,
        onLevel: (report) => emit({ kind: 'levelDone', report }),
      });
      if (k === 0 && options.onCycle) for (const c of done.result.cycles) await options.onCycle(c, done.maps[0].map((d) => d - minDisp));
      maps = done.maps;
      finest = done.maps;
      size = { width: shape.width, height: shape.height };
      reports.push(done.report);
      last = done.result;
    }
  } finally {
    // Nothing of the right view's coarsest match runs on once this match has returned or failed.
    await coarseRight?.catch(() => undefined);
  }
  // The right view's coarsest map was awaited by the next level's strips, so its match is done.
  const coarsestResult = coarseRight ? combinedCoarsest(coarse.result, (await coarseRight).result) : coarse.result;
  const report = last!;
  const ct = coarsestResult.times;
  const totalMs = performance.now() - t0;
  return {
    result: {
      ...report,
      width: left.width,
      height: left.height,
      ndisp: options.ndisp,
      minDisp,
      disparity: finest[0],
      params,
      init: coarsestResult.init,
      costScale,
      times: {
        costsMs: ct.costsMs + reports.reduce((s, r) => s + r.costsMs, 0), setupMs: ct.setupMs, initMs: ct.initMs,
        buildMs: ct.buildMs + report.cycles.reduce((s, c) => s + c.buildMs, 0), flowMs: ct.flowMs + report.cycles.reduce((s, c) => s + c.flowMs, 0),
        expansionMs: ct.expansionMs + reports.reduce((s, r) => s + r.expansionMs, 0), totalMs,
      },
      // The finer levels' moves run on the host (BK on the pixels whose band holds α), whatever ran the coarsest.
      backend: coarsestResult.backend === report.backend ? report.backend : `${coarsestResult.backend} + ${report.backend}`,
      device: coarsestResult.device === report.device ? report.device : `${coarsestResult.device}; finer levels: ${report.device}`,
      fallbacks: coarsestResult.fallbacks,
      ...(coarsestResult.clockWarmup ? { clockWarmup: coarsestResult.clockWarmup } : {}),
      pyramid: {
        shapes: shapes.slice().reverse(),
        coarsest: { initialEnergy: coarsestResult.initialEnergy, finalEnergy: coarsestResult.finalEnergy, cuts: coarsestResult.cuts, times: ct, backend: coarsestResult.backend },
        levels: reports,
      },
    },
    others: finest.slice(1),
  };
}

/**
 * The pyramid's coarsest level: matchViews on its pair. With both views (the
 * left–right check) each view is matched apart, as an energy of its own:
 * the left view, then the right view (the mirrored, swapped pair) while the
 * next level's left strips run on the host's threads; or, given as
 * `onThread` (rightViewOnThread: BK on the host), on a strip thread beside
 * the left one. The views share no term, so each view's energy is its part
 * of the views matched as one; the label order of a cycle ('frequent') is
 * then each view's own. `first` is the left view's match (or both views',
 * at one view); `right` settles with the right view's.
 */
async function matchCoarsest(pair: LevelPair, views: 1 | 2, shape: LevelShape, options: MatchOptions, plan: MatchPlan, levels: number, onThread?: Promise<MatchResult>): Promise<{ first: { result: MatchResult; others: Uint16Array[] }; right?: Promise<{ result: MatchResult }> }> {
  const emit = options.onEvent ?? (() => undefined);
  const apart = views === 2;
  const ndisp = shape.maxDisp - shape.minDisp + 1;
  const levelPlan = oneLevel(plan);
  // The right view tells its energies, as the next level's lines and bar go on; the phases and the bar are the left view's.
  const tell = (view: 0 | 1) => (e: MatchEvent): void => {
    if (e.kind === 'start') return;
    const energies = e.kind === 'cycle' || e.kind === 'initialEnergy';
    if (!energies) {
      if (view === 0) emit(e);
    } else emit(apart ? { ...e, view } : e);
  };
  const one = (left: Raster, right: Raster, view: 0 | 1): ReturnType<typeof matchViews> => matchViews(left, right, apart ? 1 : views, {
    ...options, ndisp, minDisp: shape.minDisp, onCycle: undefined,
    // The device is busy from the left view on: no second clock warm-up.
    ...(view === 1 ? { warmUpClocks: false } : {}),
    onEvent: tell(view),
    onMove: options.onMove && view === 0 ? (m) => options.onMove!({ ...m, level: levels - 1, levels }) : undefined,
  }, levelPlan);
  // On a thread, the right view's energies are told when it returns.
  const right = apart && onThread ? onThread.then((result) => {
    tell(1)({ kind: 'initialEnergy', energy: result.initialEnergy });
    for (const report of result.cycles) tell(1)({ kind: 'cycle', report, of: result.params.cycles });
    return { result };
  }) : undefined;
  // Awaited by the next level's strips; a failure there is reported by them (this keeps it from being unhandled meanwhile).
  right?.catch(() => undefined);
  let first: { result: MatchResult; others: Uint16Array[] };
  try {
    first = await one(pair.left, pair.right, 0);
  } catch (e) {
    // Nothing of the right view runs on once the match has failed.
    await right?.catch(() => undefined);
    throw e;
  }
  if (!apart) return { first };
  if (right) return { first, right };
  const after = one(mirrorRaster(pair.right), mirrorRaster(pair.left), 1);
  after.catch(() => undefined);
  return { first, right: after };
}

/** The plan of the coarsest level, an ordinary match at one level. */
function oneLevel(plan: MatchPlan): MatchPlan {
  return { ...plan, params: { ...plan.params, levels: 1 } };
}

/** The right view of the coarsest level (`pair`, of `shape`), matched by BK on a strip thread (stereo/viewJob.ts). */
function rightViewOnThread(view: ViewRunner, pair: LevelPair, shape: LevelShape, plan: MatchPlan): Promise<MatchResult> {
  return view({ viewLeft: mirrorRaster(pair.right), viewRight: mirrorRaster(pair.left), ndisp: shape.maxDisp - shape.minDisp + 1, minDisp: shape.minDisp, plan });
}

/** The coarsest level's account of its views matched apart (matchCoarsest), as of one match of both: energies and cuts summed, times added (the views' own times, whether they ran in turn or at once). */
function combinedCoarsest(left: MatchResult, right: MatchResult): MatchResult {
  const times = Object.fromEntries(Object.entries(left.times).map(([k, v]) => [k, v + (right.times[k as keyof PhaseTimes] ?? 0)])) as unknown as PhaseTimes;
  return {
    ...left,
    initialEnergy: sumEnergy(left.initialEnergy, right.initialEnergy),
    finalEnergy: sumEnergy(left.finalEnergy, right.finalEnergy),
    cuts: left.cuts + right.cuts,
    rejectedMoves: left.rejectedMoves + right.rejectedMoves,
    times,
    backend: left.backend === right.backend ? left.backend : `${left.backend} + ${right.backend}`,
    device: left.device === right.device ? left.device : `${left.device}; right view: ${right.device}`,
    fallbacks: [...left.fallbacks, ...right.fallbacks.filter((f) => !left.fallbacks.includes(f))],
  };
}
