import * as fs from 'fs';
import * as path from 'path';
import { writeFileAtomic } from '../../data/atomicWrite';
import type { BackendName, MatchParams } from '../../stereo/params';
import { jsonDigest } from './jobId';
import { parseObjective, RECORDED_THRESHOLDS } from './objective';
import { recordFor, type PlannedTrial, type TunePlan } from './plan';
import { trialExecutor } from './pool';
import { describePoint } from './results';
import { parseSyntheticSpec } from './scenes';
import { parseSearchSpace, type ParamPoint } from './space';
import { trialKey, type TrialRecord } from './trial';

/**
 * The index mode, for batch schedulers that hand each task a number
 * (Kubernetes Indexed Jobs, AWS Batch array jobs): a plan file lists the
 * trials; task I runs trial I and writes its row under the trial's id; the
 * rows are merged into the usual results afterwards. Every name is derived
 * from content, so a task run twice writes the same file, and rows of
 * another plan are told apart.
 */

const FORMAT = 'stereocut-tune-plan/1';

/** The plan as a file: scene folders relative to the file's folder, so the plan and the data can move together. */
interface PlanFile {
  format: typeof FORMAT;
  metric: string;
  thresholds: number[];
  space: string[];
  search: TunePlan['search'];
  fixed: Partial<MatchParams>;
  sceneParams: boolean;
  scenes: { label: string; spec: string; hash: string }[];
  trials: { id: string; scene: string; point: ParamPoint }[];
}

/** One finished trial of a plan: what `trial --index` writes. */
export interface TrialRow {
  plan: string;
  index: number;
  id: string;
  record: TrialRecord;
}

const ROW_NAME = /^[0-9a-f]{64}\.json$/;
const planCopyName = (digest: string): string => `plan-${digest.slice(0, 16)}.json`;

function planFileOf(plan: TunePlan, dir: string): PlanFile {
  return {
    format: FORMAT, metric: plan.metric, thresholds: plan.thresholds, space: plan.space, search: plan.search,
    fixed: plan.fixed, sceneParams: plan.sceneParams,
    scenes: plan.scenes.map((s) => ({ ...s, spec: parseSyntheticSpec(s.spec) ? s.spec : path.relative(dir, path.resolve(s.spec)) || '.' })),
    trials: plan.trials.map((t) => ({ id: t.id, scene: t.scene, point: t.point })),
  };
}

/** Writes the plan (atomically); returns its digest. */
export function writePlan(plan: TunePlan, file: string): string {
  const body = planFileOf(plan, path.dirname(path.resolve(file)));
  writeFileAtomic(file, JSON.stringify(body, null, 1) + '\n');
  return jsonDigest(body);
}

/** Reads a plan file; `option` names it in errors. */
export function readPlan(file: string, option = '--plan'): { plan: TunePlan; digest: string } {
  let body: PlanFile;
  try {
    body = JSON.parse(fs.readFileSync(file, 'utf8')) as PlanFile;
  } catch (e) {
    throw new Error(`${option} ${file}: ${e instanceof SyntaxError ? 'not JSON' : (e as Error).message}`);
  }
  if (body?.format !== FORMAT || !Array.isArray(body.trials) || !Array.isArray(body.scenes)) throw new Error(`${option} ${file}: not a stereocut tune plan (written by stereocut tune --plan)`);
  const dir = path.dirname(path.resolve(file));
  const scenes = body.scenes.map((s) => ({ ...s, spec: parseSyntheticSpec(s.spec) ? s.spec : path.resolve(dir, s.spec) }));
  const bySceneLabel = new Map(scenes.map((s) => [s.label, s]));
  const thresholds = body.thresholds ?? [...RECORDED_THRESHOLDS];
  const trials: PlannedTrial[] = body.trials.map((t, i) => {
    const s = bySceneLabel.get(t.scene);
    if (!s) throw new Error(`${option} ${file}: trial ${i} names scene '${t.scene}', which the plan does not list`);
    return {
      id: t.id, key: trialKey(t.scene, t.point),
      sceneSpec: s.spec, scene: t.scene, point: t.point, fixed: body.fixed, sceneParams: body.sceneParams,
      backend: 'auto', metric: body.metric, thresholds, sceneHash: s.hash,
    };
  });
  const space = parseSearchSpace(body.space);
  const plan: TunePlan = {
    metric: body.metric, objective: parseObjective(body.metric), thresholds, searched: space.params.map((p) => p.name), space: body.space,
    search: body.search, fixed: body.fixed, sceneParams: body.sceneParams, scenes, trials,
  };
  return { plan, digest: jsonDigest(body) };
}

/**
 * Runs trial `index` of the plan in `planFile` and writes its row as
 * DIR/<id>.json (atomically), and a copy of the plan beside the rows
 * (plan-<digest>.json), so that `tune --collect DIR` needs nothing else.
 */
export async function runIndexedTrial(planFile: string, index: number, outDir: string, backend: BackendName): Promise<{ row: TrialRow; file: string }> {
  const { plan, digest } = readPlan(planFile);
  if (!Number.isInteger(index) || index < 0 || index >= plan.trials.length) {
    throw new Error(`--index: got ${index}, expected an integer in 0..${plan.trials.length - 1} (the plan has ${plan.trials.length} trials)`);
  }
  const input = plan.scenes.find((s) => !parseSyntheticSpec(s.spec) && path.resolve(s.spec) === path.resolve(outDir));
  if (input) throw new Error(`--out-dir ${outDir}: is the folder of scene ${input.label}, an input; give another folder`);
  const j = plan.trials[index];
  const executor = await trialExecutor(backend, 1);
  let record: TrialRecord;
  try {
    record = recordFor(j, await executor.run(j));
  } catch (e) {
    throw new Error(`trial ${index} (${j.scene} ${describePoint(j.point)}): ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    await executor.close();
  }
  fs.mkdirSync(outDir, { recursive: true });
  const copy = path.join(outDir, planCopyName(digest));
  if (!fs.existsSync(copy)) writeFileAtomic(copy, fs.readFileSync(planFile));
  const row: TrialRow = { plan: digest, index, id: j.id, record };
  const file = path.join(outDir, `${j.id}.json`);
  writeFileAtomic(file, JSON.stringify(row) + '\n');
  return { row, file };
}

/** The same trial's two rows agree on everything but the time it took and where it ran. */
const sameResult = (a: TrialRecord, b: TrialRecord): boolean =>
  a.energy === b.energy && JSON.stringify(a.bad) === JSON.stringify(b.bad) && JSON.stringify(a.params) === JSON.stringify(b.params);

/**
 * Merges the rows in `dir` into the plan's records (by key, in plan order).
 * The plan is `planFile`, else the one plan copy in `dir`. Rows of another
 * plan and repeated rows of one trial are named in `notices`; a trial
 * without a row, or rows of one trial that disagree, are an error naming
 * them (nothing is merged then).
 */
export function collectRows(dir: string, planFile?: string): { plan: TunePlan; records: Map<string, TrialRecord>; rows: number; notices: string[] } {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new Error(`--collect ${dir}: no such folder`);
  const names = fs.readdirSync(dir).sort();
  let file = planFile;
  if (file === undefined) {
    const copies = names.filter((n) => /^plan-[0-9a-f]{16}\.json$/.test(n));
    if (copies.length !== 1) throw new Error(`--collect ${dir}: ${copies.length === 0 ? 'holds no plan copy (plan-*.json, written by stereocut trial)' : `holds ${copies.length} plans (${copies.join(', ')})`}; name the plan with --plan`);
    file = path.join(dir, copies[0]);
  }
  const { plan, digest } = readPlan(file);
  const notices: string[] = [];
  const byId = new Map<string, { record: TrialRecord; file: string }>();
  let rows = 0;
  const foreign: string[] = [];
  for (const n of names) {
    if (!n.endsWith('.json') || n.startsWith('plan-')) continue;
    const p = path.join(dir, n);
    let row: TrialRow;
    try {
      row = JSON.parse(fs.readFileSync(p, 'utf8')) as TrialRow;
    } catch {
      throw new Error(`--collect ${p}: not a JSON row`);
    }
    if (typeof row?.id !== 'string' || typeof row.plan !== 'string' || typeof row.record !== 'object') throw new Error(`--collect ${p}: not a trial row (written by stereocut trial)`);
    if (row.plan !== digest) { foreign.push(n); continue; }
    if (!ROW_NAME.test(n) || n !== `${row.id}.json`) notices.push(`${n}: a row of trial ${row.index} under a name of its own (its name is ${row.id}.json)`);
    rows++;
    const had = byId.get(row.id);
    if (had) {
      if (!sameResult(had.record, row.record)) throw new Error(`--collect ${dir}: ${had.file} and ${n} are rows of one trial (${row.id.slice(0, 12)}…) with different results`);
      notices.push(`${n}: a second row of trial ${row.index} (as ${had.file}); one is kept`);
      continue;
    }
    byId.set(row.id, { record: row.record, file: n });
  }
  if (foreign.length) notices.push(`${foreign.length} row(s) of another plan left out: ${foreign.slice(0, 3).join(', ')}${foreign.length > 3 ? ', …' : ''}`);
  const missing = plan.trials.map((t, i) => ({ t, i })).filter(({ t }) => !byId.has(t.id));
  if (missing.length) {
    const named = missing.slice(0, 5).map(({ t, i }) => `${i} (${t.scene} ${describePoint(t.point)})`).join(', ');
    throw new Error(`--collect ${dir}: ${missing.length} of ${plan.trials.length} trials have no row: index ${named}${missing.length > 5 ? ', …' : ''}; run them with stereocut trial --index I`);
  }
  const records = new Map<string, TrialRecord>();
  for (const t of plan.trials) records.set(t.key, recordFor(t, byId.get(t.id)!.record));
  return { plan, records, rows, notices };
}
