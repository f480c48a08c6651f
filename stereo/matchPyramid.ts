import type { Raster } from '../data/raster';
import { optionError } from '../data/errors';
import type { ExpansionResult } from '../expansion/alphaExpansion';
import { halfSize, levelShapes, pyramidLevels, refineLevel, type LevelReport, type LevelShape } from './coarseToFine';
import type { StripRunner } from './levelStrips';
import { levelCensusCodes, type LevelCodes } from './levelCodes';
import { censusWords, DEFAULT_CENSUS_WINDOW } from '../costs';
import { stripPool, stripThreads } from './stripRunner';
import { checkNdisp, type MatchParams } from './params';
import { energyOptions } from './matchEnergy';
import { matchViews, startEvent } from './matchViews';
import type { MatchOptions, MatchResult } from './matchTypes';

/**
 * matchViews at the pyramid's coarsest level, then each finer level refined
 * within bands (stereo/coarseToFine.ts); matchViews itself when the pyramid
 * has one level. A given initial map keeps the pair at one level unless
 * the levels are given. `resolved`: the options' parameters (the Matcher's).
 */
export async function matchPyramid(left: Raster, right: Raster, views: 1 | 2, options: MatchOptions, resolved: MatchParams): Promise<{ result: MatchResult; others: Uint16Array[] }> {
  const t0 = performance.now();
  const given = options.initialLabels !== undefined || options.resume !== undefined || options.warmStart !== undefined;
  const levels = given && resolved.levels === 'auto' ? 1 : pyramidLevels(left.width, left.height, resolved.levels);
  if (levels === 1) return matchViews(left, right, views, options, resolved);
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
  // The finer levels' pairs in the pool's shared memory (data/sharedStage.ts), so that their strips and codes read views
  // (slots 2k and 2k + 1: level k's left and right); the coarsest level's pair is this thread's alone. A level's pair is
  // let go once the next finer level starts (matchLevels).
  const stage = pool.pairStage?.hold() ?? null;
  const pairs: Array<LevelPair | undefined> = [stage ? { left: stage.raster(0, left), right: stage.raster(1, right) } : { left, right }];
  for (let k = 1; k < levels; k++) {
    const finer = pairOf(pairs, k - 1);
    const into = (slot: number, channels: number): Float32Array | undefined =>
      (stage && k < levels - 1 ? stage.array(slot, Float32Array, shapes[k].width * shapes[k].height * channels) : undefined);
    pairs.push({ left: halfSize(finer.left, into(2 * k, left.channels)), right: halfSize(finer.right, into(2 * k + 1, right.channels)) });
  }
  // Census costs: with threads, every finer level's codes are made on them now, while the coarsest level runs
  // (stereo/levelCodes.ts), in bands for half the threads: the others are left to the host's side of that level.
  const window = resolved.censusWindow ?? DEFAULT_CENSUS_WINDOW;
  // With the stage, level k's codes are in its slots after the pairs' (2 (levels − 1) + 2k and + 1), kept from one match
  // to the next like the pairs.
  const codesInto = (k: number): { left: Int32Array; right: Int32Array } | undefined => {
    if (!stage) return undefined;
    const n = shapes[k].width * shapes[k].height * censusWords(window);
    const slot = 2 * (levels - 1) + 2 * k;
    return { left: stage.array(slot, Int32Array, n), right: stage.array(slot + 1, Int32Array, n) };
  };
  const early: Array<Promise<LevelCodes> | undefined> = resolved.cost === 'census' && pool.codes
    ? Array.from({ length: levels - 1 }, (_, k) => levelCensusCodes(pairOf(pairs, k), window, pool.codes, Math.max(2, pool.threads >> 1), codesInto(k))) : [];
  // Awaited level by level; a match that fails before a level leaves its codes' failure handled.
  for (const c of early) c?.catch(() => undefined);
  const codesOf = (k: number): Promise<LevelCodes> | undefined => {
    if (resolved.cost !== 'census') return undefined;
    // Handed over once: a level's codes are let go when its strips are done.
    const codes = early[k];
    early[k] = undefined;
    return codes ?? levelCensusCodes(pairOf(pairs, k), window);
  };
  try {
    return await matchLevels(pairs, views, options, resolved, shapes, { run: pool.run, inFlight: pool.threads }, codesOf, t0);
  } finally {
    stage?.release();
    await own?.close();
  }
}

/** A pyramid level's pair. */
type LevelPair = { left: Raster; right: Raster };

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

/** matchPyramid's levels, coarsest first, the finer levels' strips run by `strips.run`, as many built at once as `strips.inFlight` (the threads; 0, this thread, builds one at a time), reading level k's census codes from `codesOf(k)` (census costs). */
async function matchLevels(pairs: Array<LevelPair | undefined>, views: 1 | 2, options: MatchOptions, resolved: MatchParams, shapes: LevelShape[], strips: { run: StripRunner; inFlight: number }, codesOf: (level: number) => Promise<LevelCodes> | undefined, t0: number): Promise<{ result: MatchResult; others: Uint16Array[] }> {
  const { left } = pairOf(pairs, 0);
  const levels = shapes.length;
  const coarsest = shapes[levels - 1];
  const minDisp = options.minDisp ?? 0;
  const emit = options.onEvent ?? (() => undefined);
  emit({ kind: 'level', level: levels - 1, of: levels, shape: coarsest, shapes });
  const coarsestPair = pairOf(pairs, levels - 1);
  const coarse = await matchViews(coarsestPair.left, coarsestPair.right, views, {
    ...options, ndisp: coarsest.maxDisp - coarsest.minDisp + 1, minDisp: coarsest.minDisp, onCycle: undefined,
    onEvent: (e) => { if (e.kind !== 'start') emit(e); },
    onMove: options.onMove ? (m) => options.onMove!({ ...m, level: levels - 1, levels }) : undefined,
  }, { ...resolved, levels: 1 });
  const params = coarse.result.params;
  let maps = [coarse.result.disparity, ...coarse.others];
  let size = { width: coarsest.width, height: coarsest.height };
  const reports: LevelReport[] = [];
  let last: Omit<ExpansionResult, 'labels'> | undefined;
  // Every level has the coarsest's λ and cue, so the same cost scale.
  const costScale = coarse.result.costScale;
  for (let k = levels - 2; k >= 0; k--) {
    // The coarser level's pair is done with (its maps carry on): let it go before this level's strips hold their memory.
    pairs[k + 1] = undefined;
    const shape = shapes[k];
    emit({ kind: 'level', level: k, of: levels, shape, shapes });
    const ndisp = shape.maxDisp - shape.minDisp + 1;
    const onDemand = { ...resolved, costs: 'on-demand' as const, truncation: levelTruncation(resolved, 2 ** (levels - 1 - k)) };
    checkNdisp(ndisp, shape.width, shape.minDisp);
    const pair = pairOf(pairs, k);
    const energy = energyOptions(pair.left, ndisp, onDemand, false, shape.minDisp, 1);
    const done = await refineLevel(k, shape, pair, energy, views, { maps, ...size }, {
      params, ...strips, codes: await codesOf(k),
      onMove: options.onMove ? (m) => options.onMove!({ ...m, levels }) : undefined,
      onLevel: (report) => emit({ kind: 'levelDone', report }),
    });
    if (k === 0 && options.onCycle) for (const c of done.result.cycles) await options.onCycle(c, done.maps[0].map((d) => d - minDisp));
    maps = done.maps;
    size = { width: shape.width, height: shape.height };
    reports.push(done.report);
    last = done.result;
  }
  const report = last!;
  const levelMs = reports.reduce((s, r) => s + r.costsMs + r.expansionMs, 0);
  const ct = coarse.result.times;
  const totalMs = performance.now() - t0;
  return {
    result: {
      ...report,
      width: left.width,
      height: left.height,
      ndisp: options.ndisp,
      minDisp,
      disparity: maps[0],
      params,
      init: coarse.result.init,
      costScale,
      times: {
        costsMs: ct.costsMs + reports.reduce((s, r) => s + r.costsMs, 0), setupMs: ct.setupMs, initMs: ct.initMs,
        buildMs: ct.buildMs + report.cycles.reduce((s, c) => s + c.buildMs, 0), flowMs: ct.flowMs + report.cycles.reduce((s, c) => s + c.flowMs, 0),
        expansionMs: ct.expansionMs + reports.reduce((s, r) => s + r.expansionMs, 0), totalMs: Math.max(totalMs, ct.totalMs + levelMs),
      },
      // The finer levels' moves run on the host (BK on the pixels whose band holds α), whatever ran the coarsest.
      backend: coarse.result.backend === report.backend ? report.backend : `${coarse.result.backend} + ${report.backend}`,
      device: coarse.result.device === report.device ? report.device : `${coarse.result.device}; finer levels: ${report.device}`,
      fallbacks: coarse.result.fallbacks,
      ...(coarse.result.clockWarmup ? { clockWarmup: coarse.result.clockWarmup } : {}),
      pyramid: {
        shapes: shapes.slice().reverse(),
        coarsest: { initialEnergy: coarse.result.initialEnergy, finalEnergy: coarse.result.finalEnergy, cuts: coarse.result.cuts, times: ct, backend: coarse.result.backend },
        levels: reports,
      },
    },
    others: maps.slice(1),
  };
}
