/**
 * Progress of a run: on a terminal one bar redrawn in place
 * ("[#####-----] 12/48 25% ETA 1m03s"); otherwise one plain line per
 * finished trial, which reads well in logs and CI.
 */
export interface ProgressSink {
  isTTY: boolean;
  write: (s: string) => void;
}

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

export class Progress {
  private readonly start = Date.now();
  private done = 0;
  /** Trials running and failed elsewhere (a queue's workers), shown where known. */
  private counts: { running: number; failed: number } | undefined;
  constructor(private readonly total: number, private readonly alreadyDone: number, private readonly sink: ProgressSink | undefined) {}

  /** ETA from the trials finished in this session only (resumed ones took no time now). */
  eta(): number {
    if (this.done === 0) return NaN;
    const per = (Date.now() - this.start) / this.done;
    return per * (this.total - this.alreadyDone - this.done);
  }

  /** A queue's running and failed trials changed: shown with the next line (on a terminal, at once). */
  setCounts(c: { running: number; failed: number }): void {
    const changed = !this.counts || this.counts.running !== c.running || this.counts.failed !== c.failed;
    this.counts = c;
    if (changed && this.sink?.isTTY) this.draw();
  }

  tick(line: string): void {
    this.done++;
    this.draw(line);
  }

  private draw(line?: string): void {
    if (!this.sink) return;
    const finished = this.alreadyDone + this.done;
    const pct = this.total === 0 ? 100 : Math.floor((100 * finished) / this.total);
    const eta = formatDuration(this.eta());
    const counts = this.counts ? `, running ${this.counts.running}, failed ${this.counts.failed}` : '';
    if (this.sink.isTTY) {
      const width = 24;
      const fill = Math.round((width * finished) / Math.max(1, this.total));
      this.sink.write(`\r[${'#'.repeat(fill)}${'-'.repeat(width - fill)}] ${finished}/${this.total} ${pct}%${counts} ETA ${eta}  `);
      if (finished === this.total && line !== undefined) this.sink.write('\n');
    } else if (line !== undefined) {
      this.sink.write(`[${finished}/${this.total}] ${line} (${counts ? `${counts.slice(2)}, ` : ''}ETA ${eta})\n`);
    }
  }
}
