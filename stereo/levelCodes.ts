import type { Raster } from '../data/raster';
import { censusGreyOfRaster, censusRowsInto, censusWords, type CensusWindow } from '../costs';
import { cropRows } from './levelStrips';

/**
 * The census codes of a finer pyramid level's pair, made once for the
 * level rather than by each strip: a strip job would otherwise transform
 * its rows, its held rows and a halo again, and the left–right check's
 * second view the same rows once more (mirrored), about an eighth of a
 * level's thread time. With threads, the codes are made in bands of rows
 * into shared memory while the coarsest level runs, when the threads are
 * idle, and every strip job of the level reads its rows from there
 * (levelStrips.ts StripJob.codes) without a copy.
 *
 * Invariant: the codes are those the level's whole pair gives (a band's
 * rows transformed from a crop that holds every row their windows read),
 * so a strip's costs are the level energy's, as with its own codes.
 */

/** The codes of a level's pair: censusWords(window) words a pixel, row-major. */
export interface LevelCodes {
  width: number;
  height: number;
  words: number;
  left: Int32Array;
  right: Int32Array;
}

/** Rows y0..y1 − 1 of a level's codes to be made apart, as a thread takes them (plain data; `into` in shared memory). */
export interface CodesBand {
  /** Rows top .. top + left.height − 1 of the level's pair: the band's rows and those its windows read. */
  left: Raster;
  right: Raster;
  top: number;
  y0: number;
  y1: number;
  window: CensusWindow;
  into: { left: Int32Array; right: Int32Array };
}

/** Makes bands of codes (threads); resolves once every band's rows are in place. */
export type CodesRunner = (bands: CodesBand[]) => Promise<unknown>;

/** Whether a thread's job is a band of codes (the strip threads also take strips and median bands). */
export function isCodesBand(job: object): job is CodesBand {
  return 'into' in job && 'window' in job;
}

/** Writes a band's rows of codes into its `into` arrays (the level's, at the band's rows); the rows written. */
export function makeCodesBand(b: CodesBand): number {
  const { width: W, height: rows } = b.left;
  const at = b.y0 * W * censusWords(b.window);
  censusRowsInto(censusGreyOfRaster(b.left, 'left image'), W, rows, b.window, b.y0 - b.top, b.y1 - b.top, b.into.left, at);
  censusRowsInto(censusGreyOfRaster(b.right, 'right image'), W, rows, b.window, b.y0 - b.top, b.y1 - b.top, b.into.right, at);
  return b.y1 - b.y0;
}

/**
 * The level's codes: made here, or by `run` in `bands` bands of rows into
 * shared memory (each band's crop holds every row its windows read, as a
 * strip's does); into `given` when given (W × H × censusWords entries each:
 * a pool's SharedStage's, for bands).
 */
export async function levelCensusCodes(pair: { left: Raster; right: Raster }, window: CensusWindow, run?: CodesRunner, bands = 1, given?: { left: Int32Array; right: Int32Array }): Promise<LevelCodes> {
  const { width: W, height: H } = pair.left;
  const words = censusWords(window);
  if (given && (given.left.length !== W * H * words || given.right.length !== W * H * words)) {
    throw new Error(`levelCensusCodes: arrays of ${given.left.length} and ${given.right.length} codes given for ${W}×${H}×${words}`);
  }
  if (!run || bands < 2) {
    const into = given ?? { left: new Int32Array(W * H * words), right: new Int32Array(W * H * words) };
    makeCodesBand({ ...pair, top: 0, y0: 0, y1: H, window, into });
    return { width: W, height: H, words, ...into };
  }
  const shared = (): Int32Array => new Int32Array(new SharedArrayBuffer(4 * W * H * words));
  const into = given ?? { left: shared(), right: shared() };
  const ry = (window.height - 1) >> 1;
  const rows = Math.ceil(H / bands);
  const jobs: CodesBand[] = [];
  for (let y0 = 0; y0 < H; y0 += rows) {
    const y1 = Math.min(H, y0 + rows);
    const top = Math.max(0, y0 - ry);
    const bottom = Math.min(H, y1 + ry);
    jobs.push({ left: cropRows(pair.left, top, bottom), right: cropRows(pair.right, top, bottom), top, y0, y1, window, into });
  }
  await run(jobs);
  return { width: W, height: H, words, ...into };
}

/** Rows top .. bottom − 1 of a level's codes (a strip's crop), as views of them. */
export function codesRows(codes: LevelCodes, top: number, bottom: number): { left: Int32Array; right: Int32Array } {
  const row = codes.width * codes.words;
  return { left: codes.left.subarray(top * row, bottom * row), right: codes.right.subarray(top * row, bottom * row) };
}
