import type { MoveProgress } from '../../expansion/alphaExpansion';
import type { MatchEvent, MatchResult } from '../../stereo/match';
import { BAND_RADIUS, type LevelShape } from '../../stereo/coarseToFine';
import { checkLine, cycleLine, energyText, paramsLine } from '../summary';
import type { Io } from './common';

/** How a command shows a match while it runs. */
export interface LiveOptions {
  /** Print the account of the match (parameters, backend, energies per cycle) on `io.out` as each phase ends. */
  lines: boolean;
  /** Prefix of the progress bar ("teddy 2/3"). */
  label?: string;
  /** --progress: also a line per move on stderr. */
  moves?: boolean;
}

/** The 'auto' backend on a machine without a GPU is the normal case, not worth a notice (it stays in the record's fallbacks). */
const isNoAdapterNote = (note: string): boolean => /^no WebGPU adapter/.test(note);

const BAR_WIDTH = 24;
/** Redraws of the bar are at most this often: a terminal need not be written thousands of times a second. */
const BAR_INTERVAL_MS = 100;

/** A level's work for the time estimate: pixels × the labels each pixel's moves visit (all of them at the coarsest, the band's elsewhere). */
function levelWork(shapes: LevelShape[], level: number): number {
  const s = shapes[level];
  const labels = level === shapes.length - 1 ? s.maxDisp - s.minDisp + 1 : 2 * BAND_RADIUS + 3;
  return s.width * s.height * labels;
}

/** "left view: " or "right view (coarsest level): " before a line of a pyramid's coarsest level, whose views are matched apart; nothing otherwise. */
const viewPrefix = (view: 0 | 1 | undefined): string => (view === undefined ? '' : view === 0 ? 'left view: ' : 'right view (coarsest level): ');

export function progressBar(done: number, total: number, width = BAR_WIDTH): string {
  const fill = total > 0 ? Math.min(width, Math.round((width * done) / total)) : 0;
  return `[${'#'.repeat(fill)}${'-'.repeat(width - fill)}]`;
}

/**
 * The live view of one match: the phases and cycles as they end (lines on
 * io.out), a progress bar redrawn in place on a terminal (io.status), notices
 * on io.err. Give `onEvent` and `onMove` to match(), then call `finish`.
 */
export class LiveMatch {
  private readonly t0 = performance.now();
  private cycles: number | 'converge' = 4;
  private lastDraw = 0;
  private notesShown = 0;
  private backendAsked = 'auto';
  /** Coarse to fine: the levels, the work of those finished (levelWork), the level running. */
  private pyramid?: { shapes: LevelShape[]; doneWork: number; level: number };

  constructor(private readonly io: Io, private readonly o: LiveOptions) {}

  readonly onEvent = (e: MatchEvent): void => {
    switch (e.kind) {
      case 'start':
        this.cycles = e.params.cycles;
        this.backendAsked = e.backend;
        this.line(paramsLine(e.width, e.height, e.ndisp, e.params, e.init, e.minDisp));
        this.status('data costs…');
        break;
      case 'costs':
        this.status('solver setup…');
        break;
      case 'solver':
        this.line(`backend: ${e.backend} on ${e.device}`);
        this.notes(e.fallbacks);
        this.status('initial labeling…');
        break;
      case 'init':
        this.status('energy of the initial labeling…');
        break;
      case 'initialEnergy':
        this.line(`${viewPrefix(e.view)}energy after init: ${energyText(e.energy)}`);
        if (e.view !== 1) this.status('cycle 1…');
        break;
      case 'cycle':
        this.line(`${viewPrefix(e.view)}${cycleLine(e.report)}`);
        break;
      case 'leftRightCheck':
        this.line(checkLine(e.ms, e.inconsistent, e.filled));
        break;
      case 'level': {
        const s = e.shape;
        // A level starts when the one before it (if any) has ended.
        if (this.pyramid) this.pyramid.doneWork += levelWork(this.pyramid.shapes, this.pyramid.level);
        this.pyramid ??= { shapes: e.shapes, doneWork: 0, level: e.level };
        this.pyramid.level = e.level;
        const which = e.level === e.of - 1 ? 'coarsest' : e.level === 0 ? 'full size, within bands' : 'within bands';
        this.line(`level ${e.of - e.level}/${e.of} (${which}): ${s.width}×${s.height}, disparities ${s.minDisp}..${s.maxDisp}`);
        this.status(`level ${e.of - e.level}/${e.of}…`);
        break;
      }
      case 'levelDone': {
        const r = e.report;
        const of = this.pyramid?.shapes.length ?? r.level + 1;
        this.line(`level ${of - r.level}/${of} refined: energy ${r.initialEnergy.total} → ${r.finalEnergy.total}, ${r.cuts} cuts, ${r.meanBand.toFixed(1)} labels a pixel in the bands, costs ${(r.costsMs / 1000).toFixed(2)} s, moves ${(r.expansionMs / 1000).toFixed(2)} s`);
        break;
      }
    }
  };

  readonly onMove = (m: MoveProgress): void => {
    const seconds = ((performance.now() - this.t0) / 1000).toFixed(1);
    // A finer pyramid level reports strips (stereo/levelStrips.ts), each all of its moves, with α −1.
    const strip = m.alpha < 0;
    if (this.o.moves) this.io.err(strip ? `strip ${m.index + 1}/${m.count}: ${m.changed} pixels changed, ${seconds} s` : `cycle ${m.cycle} move ${m.index + 1}/${m.count} (α=${m.alpha}): ${m.changed} pixels changed, ${seconds} s`);
    if (!this.io.status) return;
    const now = performance.now();
    if (now - this.lastDraw < BAR_INTERVAL_MS && m.index + 1 < m.count) return;
    this.lastDraw = now;
    const of = this.cycles === 'converge' ? '' : `/${this.cycles}`;
    const total = strip ? m.count : typeof this.cycles === 'number' ? this.cycles * m.count : 0;
    const done = strip ? m.index + 1 : (m.cycle - 1) * m.count + m.index + 1;
    const bar = total > 0 ? `${progressBar(done, total)} ` : '';
    const level = m.level !== undefined && m.levels !== undefined ? `level ${m.levels - m.level}/${m.levels} ` : '';
    const step = strip ? `strip ${m.index + 1}/${m.count}` : `cycle ${m.cycle}${of} move ${m.index + 1}/${m.count}`;
    this.status(`${level}${bar}${step}${this.timeLeft(total > 0 ? done / total : 0)}`);
  };

  /**
   * ", about N s left" from the work done so far: the levels finished plus
   * `fraction` of the one running, each level's work its pixels times the
   * labels a move visits (levelWork), at the pace of the run so far.
   */
  private timeLeft(fraction: number): string {
    const py = this.pyramid;
    if (!py) return '';
    const total = py.shapes.reduce((s, _, k) => s + levelWork(py.shapes, k), 0);
    const done = py.doneWork + fraction * levelWork(py.shapes, py.level);
    if (done <= 0) return '';
    const elapsed = (performance.now() - this.t0) / 1000;
    return `, about ${Math.ceil((elapsed * (total - done)) / done)} s left`;
  }

  /** Erases the bar and shows the notices that came after the solver setup (a device lost mid-run). */
  finish(r?: MatchResult): void {
    this.io.status?.('');
    if (!r) return;
    this.notes(r.fallbacks);
    const w = r.clockWarmup;
    if (w && w.dispatches > 0 && this.backendAsked === 'gpu') this.io.err(`note: GPU clock warm-up: ${w.dispatches} spin dispatches queued before the costs`);
  }

  private notes(all: string[]): void {
    for (const note of all.slice(this.notesShown)) if (!(isNoAdapterNote(note) && this.backendAsked === 'auto')) this.io.err(`note: ${note}`);
    this.notesShown = all.length;
  }

  private line(l: string): void {
    if (this.o.lines) this.io.out(l);
  }

  private status(what: string): void {
    if (!this.io.status) return;
    const seconds = ((performance.now() - this.t0) / 1000).toFixed(1);
    this.io.status(`${this.o.label ? `${this.o.label} ` : ''}${what} ${seconds} s`);
  }
}
