import { checkBackend } from '../../gpu/runtime/backends';
import type { Io } from './common';
import { checkOutputFolder } from './common';
import { valueError } from './optionValues';

export interface TrialArgs {
  plan: string;
  index?: number;
  'out-dir': string;
  backend: string;
  json: boolean;
  quiet: boolean;
}

/** Variables batch schedulers set to the task's number, in the order they are read. */
export const INDEX_VARIABLES = ['JOB_COMPLETION_INDEX', 'AWS_BATCH_JOB_ARRAY_INDEX'] as const;

/** The trial's index: --index, else the first scheduler variable that is set. */
export function trialIndex(option: number | undefined, env: NodeJS.ProcessEnv): number {
  if (option !== undefined) return option;
  for (const name of INDEX_VARIABLES) {
    const v = env[name];
    if (v === undefined || v === '') continue;
    if (!/^\d+$/.test(v.trim())) throw valueError(name, v, 'an integer ≥ 0');
    return Number(v.trim());
  }
  throw new Error(`--index: required (or set ${INDEX_VARIABLES.join(' or ')}, as Kubernetes Indexed Jobs and AWS Batch array jobs do)`);
}

/** `stereocut trial --plan FILE --index I --out-dir DIR`: one trial of a plan, its row written under its id. */
export async function trialCommand(a: TrialArgs, io: Io): Promise<number> {
  const index = trialIndex(a.index, process.env);
  const backend = checkBackend(a.backend);
  checkOutputFolder(a['out-dir'], '--out-dir');
  const { runIndexedTrial } = await import('../tune/indexMode');
  const { describePoint } = await import('../tune/results');
  const { row, file } = await runIndexedTrial(a.plan, index, a['out-dir'], backend);
  if (a.json) io.out(JSON.stringify({ file, ...row }, null, 2));
  else if (!a.quiet) io.out(`trial ${index}: ${row.record.scene} ${describePoint(row.record.point)}: ${row.record.metric} ${row.record.objective.toFixed(3)}, energy ${row.record.energy}; wrote ${file}`);
  else io.out(file);
  return 0;
}
