import type { Raster } from '../data/raster';
import { censusGreyOfRaster, censusRowsInto, censusWords, DEFAULT_CENSUS_WINDOW, stereoCues, type StereoEnergyOptions } from '../costs';
import { cropRows } from './levelStrips';
import { ScratchArrays } from '../data/scratchArrays';

/**
 * The terms of a finer pyramid level that its bands do not change, made
 * once for the level rather than by each strip: the census codes of its
 * pair (census costs) and the smoothness weights of each view. A strip job
 * would otherwise convert its rows, its held rows and a halo again and
 * transform and weigh them, the left–right check's second view the same
 * rows once more (mirrored), and leave those arrays behind as garbage on
 * its thread. With threads, the terms are made in bands of rows into
 * shared memory while the coarsest level runs, when the threads are idle,
 * and every strip job of the level reads its rows from there
 * (levelStrips.ts StripJob) without a copy.
 *
 * Invariant: the terms are those the level's whole pair gives (a band's
 * rows made from a crop that holds every row their windows and edges
 * read), so a strip's energy is the level energy's rows.
 */

/** A level's terms: W × H pixels, row-major. */
export interface LevelTerms {
  width: number;
  height: number;
  /** Census codes of the pair (census costs): `words` a pixel (censusWords of the window). */
  codes?: { words: number; left: Int32Array; right: Int32Array };
  /** Smoothness weights of each view (view 1: the pair mirrored and swapped) as cues, one byte a pixel (costs/energyTerms.ts stereoCues): a quarter of the weights' memory. */
  cues: Uint8Array[];
}

/** Where a level's terms are written: arrays of W × H entries (codes: × words). */
export type TermsArrays = Omit<LevelTerms, 'width' | 'height'>;

/** Rows y0..y1 − 1 of a level's terms to be made apart, as a thread takes them (plain data; `into` in shared memory). */
export interface TermsBand {
  /** Rows top .. top + left.height − 1 of the level's pair: the band's rows and those its windows and edges read. */
  left: Raster;
  right: Raster;
  top: number;
  y0: number;
  y1: number;
  /** The level's energy options (the census window, the weights' λ and cue). */
  energy: StereoEnergyOptions;
  into: TermsArrays;
}

/** Makes bands of terms (threads); resolves once every band's rows are in place. */
export type TermsRunner = (bands: TermsBand[]) => Promise<unknown>;

/** Whether a thread's job is a band of terms (the strip threads also take strips and median bands). */
export function isTermsBand(job: object): job is TermsBand {
  return 'into' in job && 'energy' in job;
}

/** The census window of a level's energy, or undefined without census costs. */
function censusWindowOf(energy: StereoEnergyOptions): StereoEnergyOptions['censusWindow'] | undefined {
  return energy.kind === 'census' ? energy.censusWindow ?? DEFAULT_CENSUS_WINDOW : undefined;
}

/**
 * Arrays for the terms of a level of `n` pixels (TermsArrays): the census
 * codes of each image (census costs; `int32`, for image 0 or 1) and each
 * view's cues (`uint8`), as the level's energy options and views need them.
 */
export function termsArrays(n: number, energy: StereoEnergyOptions, views: 1 | 2, int32: (image: 0 | 1, length: number) => Int32Array, uint8: (view: 0 | 1, length: number) => Uint8Array): TermsArrays {
  const window = censusWindowOf(energy);
  const words = window ? censusWords(window) : 0;
  return {
    ...(window ? { codes: { words, left: int32(0, n * words), right: int32(1, n * words) } } : {}),
    cues: Array.from({ length: views }, (_, v) => uint8(v as 0 | 1, n)),
  };
}

/** Writes a band's rows of terms into its `into` arrays (the level's, at the band's rows), working in `arrays` (a thread's, kept from band to band); the rows written. */
export function makeTermsBand(b: TermsBand, arrays = new ScratchArrays()): number {
  const { width: W, height: rows } = b.left;
  const { codes, cues } = b.into;
  const window = censusWindowOf(b.energy);
  if (codes && window) {
    const at = b.y0 * W * codes.words;
    censusRowsInto(censusGreyOfRaster(b.left, 'left image', arrays), W, rows, window, b.y0 - b.top, b.y1 - b.top, codes.left, at, arrays);
    censusRowsInto(censusGreyOfRaster(b.right, 'right image', arrays), W, rows, window, b.y0 - b.top, b.y1 - b.top, codes.right, at, arrays);
  }
  // A view's weights of the crop: those of the band's rows are the whole pair's, since the crop holds the row below the band's last (or is the level's last).
  cues.forEach((into, view) => stereoCues(view === 0 ? b.left : b.right, view as 0 | 1, b.energy, b.y0 - b.top, b.y1 - b.top, into.subarray(b.y0 * W, b.y1 * W), arrays));
  return b.y1 - b.y0;
}

/**
 * The level's terms for `views` views: made here, or by `run` in `bands`
 * bands of rows into shared memory (each band's crop holds every row its
 * windows and edges read); into `given` when given (a pool's SharedStage's
 * arrays, for bands).
 */
export async function levelTerms(pair: { left: Raster; right: Raster }, energy: StereoEnergyOptions, views: 1 | 2, run?: TermsRunner, bands = 1, given?: TermsArrays): Promise<LevelTerms> {
  const { width: W, height: H } = pair.left;
  const window = censusWindowOf(energy);
  const words = window ? censusWords(window) : 0;
  if (given) {
    const n = W * H;
    const sizes = [...(window ? [given.codes?.left.length, given.codes?.right.length].map((l) => (l ?? 0) / words) : []), ...given.cues.map((c) => c.length)];
    if (sizes.some((l) => l !== n) || given.cues.length !== views || (window !== undefined) !== (given.codes !== undefined) || (given.codes && given.codes.words !== words)) {
      throw new Error(`levelTerms: arrays of ${sizes.join(', ')} entries and ${given.cues.length} views given for ${W}×${H} pixels, ${views} views${window ? `, ${words} census words a pixel` : ''}`);
    }
  }
  const shared = run && bands > 1;
  const into: TermsArrays = given ?? termsArrays(W * H, energy, views,
    (_, n) => (shared ? new Int32Array(new SharedArrayBuffer(4 * n)) : new Int32Array(n)),
    (_, n) => (shared ? new Uint8Array(new SharedArrayBuffer(n)) : new Uint8Array(n)));
  if (!run || bands < 2) {
    makeTermsBand({ ...pair, top: 0, y0: 0, y1: H, energy, into });
    return { width: W, height: H, ...into };
  }
  // Rows a band's crop holds beyond its own: the census window's half height, and the row below (the vertical edges).
  const ry = Math.max(1, window ? (window.height - 1) >> 1 : 0);
  const rows = Math.ceil(H / bands);
  const jobs: TermsBand[] = [];
  for (let y0 = 0; y0 < H; y0 += rows) {
    const y1 = Math.min(H, y0 + rows);
    const top = Math.max(0, y0 - ry);
    const bottom = Math.min(H, y1 + ry);
    jobs.push({ left: cropRows(pair.left, top, bottom), right: cropRows(pair.right, top, bottom), top, y0, y1, energy, into });
  }
  await run(jobs);
  return { width: W, height: H, ...into };
}

/** Rows top .. bottom − 1 of a level's terms for one view (a strip's crop), as views of them. */
export function termsRows(terms: LevelTerms, view: 0 | 1, top: number, bottom: number): { codes?: { left: Int32Array; right: Int32Array }; cues: Uint8Array } {
  const W = terms.width;
  const cues = terms.cues[view];
  if (!cues) throw new Error(`level terms: no weights of view ${view}`);
  const codes = terms.codes && { left: terms.codes.left.subarray(top * W * terms.codes.words, bottom * W * terms.codes.words), right: terms.codes.right.subarray(top * W * terms.codes.words, bottom * W * terms.codes.words) };
  return { ...(codes ? { codes } : {}), cues: cues.subarray(top * W, bottom * W) };
}
