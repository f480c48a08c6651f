import { generateSyntheticScene } from '../data/synthetic';
import type { BandedMoveScratch } from '../expansion/bandedMoves';
import { solveStrip, stripImages, type StripJob } from './levelStrips';
import { levelTerms, termsRows } from './levelTerms';
import { DEFAULT_CENSUS_WINDOW, type StereoEnergyOptions } from '../costs';

/** Warm-up strips a thread runs, and their size: enough calls for V8 to optimise the move code, a few ms each. */
const ROUNDS = 8;
const W = 160;
const H = 40;
const NDISP = 24;

/**
 * A strip thread's first strips would run in V8's unoptimised tiers while
 * its compiler catches up (a fresh pool's first finer level took about
 * twice the thread time of a later one), and a match's first finer level
 * is one or two strips a thread. A thread therefore runs a few small
 * strips of a synthetic level when it starts, through the code a real one
 * takes (census costs from a level's codes, its weights, banded moves, both views),
 * while the match's coarsest level keeps the cores idle. Nothing of it
 * is kept but the compiled code and the scratch it grew.
 */
export async function warmUpStrips(scratch: BandedMoveScratch): Promise<void> {
  const s = generateSyntheticScene({ width: W, height: H, ndisp: NDISP, seed: 3 });
  // A finer level's kind of options: census costs on demand, a linear term (the values matter less than the code they run;
  // stereo/params.ts is not read here, since it would load the GPU runtime into every thread).
  const energy: StereoEnergyOptions = {
    ndisp: NDISP, minDisp: 0, kind: 'census', border: 'clamp', censusWindow: DEFAULT_CENSUS_WINDOW, lambda: 5,
    cueThreshold: 12, cueFactor: 2, smoothness: 'linear', truncation: 12, onDemand: true,
  };
  const terms = await levelTerms(s, energy, 2);
  const truth = s.groundTruth!;
  for (let round = 0; round < ROUNDS; round++) {
    const view = (round % 2) as 0 | 1;
    const lo = new Uint16Array(W * H);
    const hi = new Uint16Array(W * H);
    const labels = new Uint16Array(W * H);
    for (let q = 0; q < W * H; q++) {
      const d = Math.max(0, Math.min(NDISP - 1, Math.round(truth[q]) || 0));
      lo[q] = Math.max(0, d - 3);
      hi[q] = Math.min(NDISP - 1, d + 3);
      labels[q] = (round + q) % 3 === 0 ? hi[q] : lo[q];
    }
    const job: StripJob = {
      view, ...stripImages(s, view, 0, H, true), top: 0, energy, height: H, y0: 0, y1: H, own0: 0, own1: H, lo, hi, labels,
      ...termsRows(terms, view, 0, H), order: 'frequent', cycles: 1, seed: 1, skipUnchanged: true,
    };
    // Half of them, of both views, as a thread receives a job: through a structured clone, whose strings are not the interned
    // literals of this module (code compiled for those alone would be thrown away at the first real strip).
    await solveStrip(round % 4 < 2 ? job : structuredClone(job), scratch);
  }
}
