/**
 * The work of one cost thread (costs/parallelCosts.ts): loaded by the
 * worker's bootstrap, which reports the job finished or failed.
 */
import { DataCostMatcher } from './dataCost';
import type { CostJob } from './parallelCosts';
import { wtaOverLabels, wtaVolumeRange } from './wta';

export function runCostJob(job: CostJob): void {
  if (job.kind === 'volume') {
    new DataCostMatcher(job.left, job.right, job.options).volumeRows(new Int32Array(job.out), job.ndisp, job.y0, job.y1);
  } else if (job.kind === 'wta') {
    const best = new Float64Array(job.best).fill(Infinity);
    wtaVolumeRange(new Int32Array(job.volume), job.width, job.height, job.labels, job.window, job.from, job.to, best, new Uint16Array(job.label));
  } else {
    const matcher = new DataCostMatcher(job.left, job.right, job.options);
    const best = new Float64Array(job.best).fill(Infinity);
    wtaOverLabels((d, buf) => matcher.slice(d, buf), job.width, job.height, job.window, job.from, job.to, best, new Uint16Array(job.label));
  }
}
