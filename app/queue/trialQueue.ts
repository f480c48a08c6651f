import { recordFor, type PlannedTrial } from '../tune/plan';
import { describePoint } from '../tune/results';
import type { TrialRunner } from '../tune/tune';
import { runQueued } from './coordinator';
import type { QueueAddress } from './redisQueue';

/**
 * Trials on a BullMQ queue's workers (`stereocut worker`): one job per
 * distinct trial id, the results collected as they complete. Trials that
 * fail (for their input, or after their attempts) are named in one error at
 * the end, once every other trial is in.
 */
export function queueRunner(a: QueueAddress): TrialRunner {
  const backends = new Set<string>();
  return {
    get backend() { return backends.size ? [...backends].sort().join('+') : 'none'; },
    parallel: () => 1,
    run: async (todo, onRecord, progress) => {
      const byId = new Map<string, PlannedTrial[]>();
      for (const j of todo) byId.set(j.id, [...(byId.get(j.id) ?? []), j]);
      const jobs = [...byId.values()].map((js) => {
        const { id, ...job } = js[0];
        return { id, name: 'trial' as const, data: job };
      });
      const failures = await runQueued(a, jobs, (id, value) => {
        for (const j of byId.get(id) ?? []) {
          const r = recordFor(j, value);
          backends.add(r.backend);
          onRecord(r);
        }
      }, (c) => progress.setCounts(c));
      if (failures.length === 0) return;
      const named = failures.slice(0, 3).map((f) => {
        const j = byId.get(f.id)![0];
        return `${j.scene} ${describePoint(j.point)}: ${f.reason}`;
      });
      const trials = failures.reduce((n, f) => n + byId.get(f.id)!.length, 0);
      throw new Error(`${trials} of ${todo.length} trials failed on the workers of ${a.url} (${named.join('; ')}${failures.length > 3 ? '; …' : ''}); the finished ones are kept: the same command with --resume tries the failed ones again`);
    },
  };
}
