import * as os from 'os';
import { censusWords } from '../costs';
import { BAND_RADIUS, levelShapes, pyramidLevels } from './coarseToFine';
import { MAX_VOLUME_ENTRIES, type MatchParams } from './params';
import type { MatchOptions } from './matchTypes';
import { PARAM_SCHEMA } from './paramSchema';

/**
 * What a match will hold in host memory at its peak, from the pair's size
 * alone (an image header gives it), so that a run too large for the
 * machine is refused before anything is decoded or computed. The figure
 * counts the large arrays by what they hold per pixel; small objects and
 * the runtime (about 100 MB) are in a fixed part:
 *
 *  - the pair at every level: samples as float32 and as integers (16·C B a
 *    pixel), census codes and smoothness weights (both views);
 *  - one level at a time on the host: a cost volume (4 B a label a pixel,
 *    both views) where it is built, else the banded costs of a finer level
 *    (4 B per band label, the band's pixel lists as much again) and the
 *    max-flow workspace (about 40 B a pixel, 80 with a grid graph).
 *
 * Measured against the peak resident memory of real runs (bench/scaling.ts)
 * it stays above them; it is an estimate, not a bound.
 */
export interface MemoryEstimate {
  bytes: number;
  /** The largest part, in words ("cost volume 24.6 GB"). */
  largest: string;
  /** What would lower it most: settings of the match's parameters, then what else would, in words ("fewer disparities"). */
  remedy: { settings: Partial<Pick<MatchParams, 'costs' | 'levels'>>; otherwise: string };
}

const RUNTIME_BYTES = 100 * 2 ** 20;
/** Labels per pixel of a finer level's band: 2r + 1 around a coarse disparity, plus the coarse map's local spread. */
const BAND_LABELS = 2 * BAND_RADIUS + 1 + 4;

/** The estimate of a matcher's pair (a Matcher's, a SequenceMatcher's frame) of this size: its options' disparities and backend, its resolved parameters. */
export function estimateForOptions(o: Pick<MatchOptions, 'ndisp' | 'minDisp' | 'backend'>, params: MatchParams, width: number, height: number, channels: number): MemoryEstimate {
  return estimateMatchMemory(width, height, channels, o.ndisp, o.minDisp ?? 0, params, o.backend === 'gpu');
}

export const gb = (bytes: number): string => `${(bytes / 1e9).toFixed(1)} GB`;

export function estimateMatchMemory(width: number, height: number, channels: number, ndisp: number, minDisp: number, p: MatchParams, costsOnDevice: boolean): MemoryEstimate {
  const views = p.lrCheck ? 2 : 1;
  const words = p.cost === 'census' ? censusWords(p.censusWindow ?? { width: 7, height: 7 }) : 0;
  const levels = pyramidLevels(width, height, p.levels);
  const shapes = levelShapes(width, height, minDisp, minDisp + ndisp - 1, levels);
  const perPixel = 16 * channels + views * (2 * words * 4 + 8);
  let pyramid = 0;
  for (const s of shapes) pyramid += s.width * s.height * perPixel;
  let largest: { bytes: number; what: string; remedy: MemoryEstimate['remedy'] } = { bytes: 0, what: '', remedy: { settings: {}, otherwise: '' } };
  shapes.forEach((s, k) => {
    const n = s.width * s.height;
    const labels = s.maxDisp - s.minDisp + 1;
    let bytes: number;
    let what: string;
    let remedy: MemoryEstimate['remedy'];
    if (k === levels - 1) {
      const volume = p.costs === 'volume' || (p.costs === 'auto' && !costsOnDevice && n * labels * views <= MAX_VOLUME_ENTRIES);
      bytes = (volume ? n * labels * views * 4 : 0) + n * views * 80;
      what = volume ? `a ${s.width}×${s.height}×${labels} cost volume${views > 1 ? ' per view' : ''}` : 'the max-flow graphs';
      remedy = volume ? { settings: { costs: 'on-demand', levels: 'auto' }, otherwise: 'fewer disparities' } : { settings: {}, otherwise: 'smaller images' };
    } else {
      bytes = n * (BAND_LABELS * 8 + 40 + 16);
      what = `the banded costs of the ${s.width}×${s.height} level`;
      remedy = { settings: {}, otherwise: 'smaller images' };
    }
    if (bytes > largest.bytes) largest = { bytes, what, remedy };
  });
  return { bytes: RUNTIME_BYTES + pyramid + largest.bytes, largest: `${largest.what}: ${gb(largest.bytes)}`, remedy: largest.remedy };
}

/** The memory a run may use unless told: 85 % of the machine's. */
export function defaultMemoryLimit(): number {
  return Math.floor(0.85 * os.totalmem());
}

/**
 * Refuses a match whose estimate passes `limit` bytes, with one line naming
 * `what` (the files or the pair), the estimate, its largest part and the
 * ways out. `option`: how the caller spells the limit's option, which says
 * how the ways out are spelled too: flags for a command line's `--max-memory`
 * ("--costs on-demand"), the library's names for `maxMemory` ("costs
 * 'on-demand'"). A RangeError: the limit is a value refused for this pair,
 * the library's kind of error for a value out of range.
 */
export function checkMatchMemory(what: string, estimate: MemoryEstimate, limit: number, option: string): void {
  if (estimate.bytes <= limit) return;
  const flags = option.startsWith('--');
  const settings = Object.entries(estimate.remedy.settings).map(([k, v]) => (flags ? `--${PARAM_SCHEMA[k as keyof MatchParams].flag} ${v}` : `${k} '${v}'`));
  const ways = [...settings, estimate.remedy.otherwise];
  const remedy = ways.length > 1 ? `${ways.slice(0, -1).join(', ')} or ${ways[ways.length - 1]}` : ways[0];
  throw new RangeError(`${what}: matching needs about ${gb(estimate.bytes)} of memory (${estimate.largest}), more than the ${gb(limit)} allowed (${option}); give ${remedy}, or a larger ${option}`);
}
