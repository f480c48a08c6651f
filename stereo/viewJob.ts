import type { MatchResult, ViewJob } from './matchTypes';

/* The strip thread's side of a coarsest-level view (matchTypes.ts ViewJob): matched there as on the match's own thread. */

/** Whether a thread's job is a view of the coarsest level (the strip threads also take strips and bands). */
export function isViewJob(job: object): job is ViewJob {
  return 'viewLeft' in job && 'plan' in job;
}

/** A view job's match, on the thread that runs it. */
export async function matchViewJob(job: ViewJob): Promise<MatchResult> {
  if (job.plan.place.runs !== 'bk') throw new Error(`a view on a strip thread runs BK on the host, not ${job.plan.place.runs}`);
  // Loaded by the first view job alone: a strip thread that never runs one does not load the matcher's modules.
  const { matchViews } = await import('./matchViews');
  const { result } = await matchViews(job.viewLeft, job.viewRight, 1, { ndisp: job.ndisp, minDisp: job.minDisp, backend: 'bk' }, job.plan);
  return result;
}
