import { createHash } from 'crypto';
import { trialParams, type TrialJob } from './trial';

/**
 * Identity of work that may run on another machine: a sha256 of what the
 * result depends on, so that the same work asked twice (a resumed
 * coordinator, a second plan, two points that resolve to the same
 * parameters) is one job, and a worker that sees other bytes under the same
 * path refuses the job instead of scoring the wrong scene.
 */

/** Keys of a JSON value's objects sorted, so that equal values print equal. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * A trial's job id: sha256 of its scene's content hash, every parameter it
 * runs with (defaults, scene parameters, fixed options and the point,
 * resolved) and the thresholds its row records. The backend is not part of
 * it: every backend gives the same cut, and the worker chooses its own.
 */
export function trialJobId(job: Pick<TrialJob, 'scene' | 'point' | 'fixed' | 'sceneParams' | 'thresholds'>, sceneHash: string): string {
  const text = canonicalJson({ kind: 'trial', scene: sceneHash, params: trialParams(job), thresholds: job.thresholds });
  return createHash('sha256').update(text).digest('hex');
}

/** sha256 of any JSON value, canonically printed (a plan's identity, a scene job's). */
export function jsonDigest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
