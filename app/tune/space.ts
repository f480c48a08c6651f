import { MAX_CENSUS_SIDE, parseCensusWindow } from '../../costs';
import { describeRule, numberAccepted, PARAM_SCHEMA, type NumberRule } from '../../stereo/paramSchema';
import { seededRandom } from '../../data/random';
import type { MatchParams } from '../../stereo/params';

/**
 * The search space of `stereocut tune`: which parameters vary and over what.
 *
 * A parameter is given as NAME=SPEC where SPEC is a list `a,b,c` or a range
 * `start:end:step` (inclusive; both expand to a finite list, which grid search
 * crosses), or, for random search only, `start:end` without a step: sampled
 * uniformly (integers for integer parameters, else 2 decimals for λ, 1 for
 * the cue factor and 3 for the others).
 */

/** The parameters a study may vary. */
const TUNABLE = [
  'lambda', 'truncation', 'tau', 'cost', 'cueFactor', 'cueThreshold', 'cycles', 'window',
  'smoothness', 'border', 'order', 'graph', 'init', 'censusWindow', 'lrCheck',
] as const satisfies ReadonlyArray<keyof MatchParams>;

export type TunableName = (typeof TUNABLE)[number];

export type ParamValue = number | string;
/** One setting of the searched parameters. */
export type ParamPoint = Partial<Record<TunableName, ParamValue>>;

/** A tunable parameter's values as a search space reads them. */
interface ParamSpec {
  kind: 'number' | 'integer' | 'enum';
  /** A number's rule, the schema's (stereo/paramSchema.ts). */
  rule?: NumberRule;
  values?: readonly string[];
  /** Non-numeric words a numeric parameter also accepts ('converge' for cycles). */
  words?: readonly string[];
  /** Decimals of a value drawn from an interval (default 3). */
  decimals?: number;
}

// λ and λ·cue factor may have at most 3 decimals (costScale, costs/smoothness.ts): drawn with 2 and 1, every pair of draws is an energy.
const DRAW_DECIMALS: Partial<Record<TunableName, number>> = { lambda: 2, cueFactor: 1 };

/**
 * A tunable parameter's values, from its entry in the parameters' schema
 * (stereo/paramSchema.ts), so that a study accepts what a match does: a
 * number under its rule, one of its choices, a census window by name
 * ("WxH"), the check on or off, a cycle count or 'converge'.
 */
function specOf(name: TunableName): ParamSpec {
  const s = PARAM_SCHEMA[name];
  switch (s.kind) {
    case 'number': return { kind: s.rule?.integer ? 'integer' : 'number', rule: s.rule ?? {}, decimals: DRAW_DECIMALS[name] };
    case 'choice': return { kind: 'enum', values: s.choices };
    case 'flag': return { kind: 'enum', values: ['on', 'off'] };
    case 'cycles': return { kind: 'integer', rule: { integer: true, min: 0 }, words: ['converge'] };
    case 'censusWindow': return { kind: 'enum', values: censusWindowNames() };
    case 'levels': throw new Error(`tune: ${name} is not a parameter a study varies`);
  }
}

const SPECS = Object.fromEntries(TUNABLE.map((name) => [name, specOf(name)])) as Record<TunableName, ParamSpec>;

/** Every census window a point may name, "WxH" with odd sides (as --census-window takes them). */
function censusWindowNames(): string[] {
  const out: string[] = [];
  for (let w = 1; w <= MAX_CENSUS_SIDE; w += 2) for (let h = 1; h <= MAX_CENSUS_SIDE; h += 2) if (w * h > 1) out.push(`${w}x${h}`);
  return out;
}

export const TUNABLE_NAMES = [...TUNABLE];

/** Accepted spellings → canonical names (the command-line option names and the paper's symbols). */
const ALIASES: Record<string, TunableName> = {
  T: 'truncation', 'λ': 'lambda', 'τ': 'tau', 'cue-factor': 'cueFactor', 'cue-threshold': 'cueThreshold',
  'census-window': 'censusWindow', 'lr-check': 'lrCheck',
};

export function canonicalParamName(name: string): TunableName {
  if ((TUNABLE_NAMES as string[]).includes(name)) return name as TunableName;
  const a = ALIASES[name];
  if (a) return a;
  throw new Error(`--param: unknown parameter '${name}' (expected ${TUNABLE_NAMES.join(', ')}; T, cue-factor, cue-threshold, census-window, lr-check also accepted)`);
}

/** A parameter's domain: a finite list, or a continuous interval (random search only). */
export type Domain =
  | { kind: 'list'; values: ParamValue[] }
  | { kind: 'interval'; lo: number; hi: number; integer: boolean };

export interface SearchSpace {
  /** In the order given; each name once. */
  params: { name: TunableName; domain: Domain; spec: string }[];
}

/** Numbers keep at most 12 significant digits, so 0.1+0.2 steps print as 0.3 and keys stay stable. */
export function cleanNumber(v: number): number {
  return Number(v.toPrecision(12));
}

function parseNumber(name: TunableName, s: string, full: string): number {
  const t = s.trim();
  const v = Number(t);
  if (t === '' || !Number.isFinite(v)) throw new Error(`--param ${full}: '${s}' is not a number`);
  return v;
}

function checkValue(name: TunableName, v: ParamValue, full: string): ParamValue {
  const spec = SPECS[name];
  if (spec.kind === 'enum') {
    if (!spec.values!.includes(String(v))) throw new Error(`--param ${full}: unknown ${name} '${String(v)}' (expected ${spec.values!.join(', ')})`);
    return String(v);
  }
  if (typeof v === 'string') {
    if (spec.words?.includes(v)) return v;
    return checkValue(name, parseNumber(name, v, full), full);
  }
  // The rule and its words are the schema's, as a match's check of the value would say them.
  if (!numberAccepted(v, spec.rule)) throw new Error(`--param ${full}: ${name}: got ${v}, expected ${describeRule(spec.rule)}`);
  return cleanNumber(v);
}

/** Parses one NAME=SPEC. */
export function parseParamSpec(text: string): { name: TunableName; domain: Domain; spec: string } {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new Error(`--param ${text}: expected NAME=VALUES, e.g. lambda=10,20,40 or lambda=10:40:10`);
  const name = canonicalParamName(text.slice(0, eq).trim());
  const body = text.slice(eq + 1).trim();
  if (body === '') throw new Error(`--param ${text}: empty list of values`);
  const spec = SPECS[name];
  if (body.includes(':')) {
    if (spec.kind === 'enum') throw new Error(`--param ${text}: ${name} takes a list of values, not a range`);
    const parts = body.split(':');
    if (parts.length < 2 || parts.length > 3) throw new Error(`--param ${text}: a range is start:end or start:end:step`);
    const lo = parseNumber(name, parts[0], text);
    const hi = parseNumber(name, parts[1], text);
    if (lo > hi) throw new Error(`--param ${text}: empty range (start ${lo} > end ${hi})`);
    checkValue(name, lo, text);
    checkValue(name, hi, text);
    if (parts.length === 2) return { name, domain: { kind: 'interval', lo, hi, integer: spec.kind === 'integer' }, spec: text };
    const step = parseNumber(name, parts[2], text);
    if (!(step > 0)) throw new Error(`--param ${text}: the step must be > 0 (got ${step})`);
    const values: ParamValue[] = [];
    // Index-based stepping: no accumulated rounding error, and `end` is reached when it lies on the grid.
    for (let i = 0; ; i++) {
      const v = cleanNumber(lo + i * step);
      if (v > hi + 1e-9 * Math.max(1, Math.abs(hi))) break;
      if (i > 100000) throw new Error(`--param ${text}: more than 100000 values`);
      if (spec.kind === 'integer' && !Number.isInteger(v)) continue;
      values.push(checkValue(name, v, text));
    }
    if (values.length === 0) throw new Error(`--param ${text}: empty range (no ${spec.kind === 'integer' ? 'integer ' : ''}value between ${lo} and ${hi})`);
    return { name, domain: { kind: 'list', values }, spec: text };
  }
  const items = body.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw new Error(`--param ${text}: empty item in the list`);
  const values: ParamValue[] = [];
  for (const it of items) {
    const v = checkValue(name, spec.kind === 'enum' ? it : (spec.words?.includes(it) ? it : parseNumber(name, it, text)), text);
    if (!values.includes(v)) values.push(v);
  }
  return { name, domain: { kind: 'list', values }, spec: text };
}

/** Parses a list of NAME=SPEC; a name given twice is an error. */
export function parseSearchSpace(specs: readonly string[]): SearchSpace {
  if (specs.length === 0) throw new Error('--param: give at least one parameter to search, e.g. --param lambda=10,20,40');
  const params: SearchSpace['params'] = [];
  for (const s of specs) {
    const p = parseParamSpec(s);
    if (params.some((q) => q.name === p.name)) throw new Error(`--param ${s}: ${p.name} is given twice`);
    params.push(p);
  }
  return { params };
}

/** Canonical text of a point: names sorted, `name=value` joined by ';' (stable across runs and key order). */
export function pointKey(point: ParamPoint): string {
  return (Object.keys(point) as TunableName[]).sort().map((k) => `${k}=${String(point[k])}`).join(';');
}

/** Every point of a space whose domains are all lists (the cartesian product, first parameter slowest). */
export function gridPoints(space: SearchSpace): ParamPoint[] {
  for (const p of space.params) {
    if (p.domain.kind !== 'list') throw new Error(`--param ${p.spec}: grid search needs a list or a range with a step (start:end:step)`);
  }
  let points: ParamPoint[] = [{}];
  for (const p of space.params) {
    const values = (p.domain as { values: ParamValue[] }).values;
    const next: ParamPoint[] = [];
    for (const pt of points) for (const v of values) next.push({ ...pt, [p.name]: v });
    points = next;
  }
  return points;
}

function sampleDomain(d: Domain, rnd: () => number, decimals: number): ParamValue {
  if (d.kind === 'list') return d.values[Math.min(d.values.length - 1, Math.floor(rnd() * d.values.length))];
  if (d.integer) return d.lo + Math.min(d.hi - d.lo, Math.floor(rnd() * (d.hi - d.lo + 1)));
  const unit = 10 ** decimals;
  return cleanNumber(Math.round((d.lo + rnd() * (d.hi - d.lo)) * unit) / unit);
}

/**
 * `count` distinct points drawn with a seeded generator: the same seed and
 * space give the same points in the same order (what --resume relies on).
 * When the space has fewer points than asked, all of them are returned.
 */
export function randomPoints(space: SearchSpace, count: number, seed: number): ParamPoint[] {
  if (!Number.isInteger(count) || count < 1) throw new Error(`--random: the number of trials must be an integer ≥ 1 (got ${count})`);
  if (!Number.isInteger(seed)) throw new Error(`--search-seed: must be an integer (got ${seed})`);
  const finite = space.params.every((p) => p.domain.kind === 'list' || p.domain.integer);
  if (finite) {
    let size = 1;
    for (const p of space.params) size *= p.domain.kind === 'list' ? p.domain.values.length : p.domain.hi - p.domain.lo + 1;
    if (size <= count) {
      const all = gridPoints({ params: space.params.map((p) => (p.domain.kind === 'list' ? p : {
        ...p, domain: { kind: 'list' as const, values: Array.from({ length: p.domain.hi - p.domain.lo + 1 }, (_, i) => (p.domain as { lo: number }).lo + i) },
      })) });
      return all;
    }
  }
  const rnd = seededRandom(seed);
  const seen = new Set<string>();
  const out: ParamPoint[] = [];
  for (let attempts = 0; out.length < count && attempts < count * 1000; attempts++) {
    const pt: ParamPoint = {};
    for (const p of space.params) pt[p.name] = sampleDomain(p.domain, rnd, SPECS[p.name].decimals ?? 3);
    const k = pointKey(pt);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(pt);
  }
  return out;
}

/** A point as MatchParams overrides. */
export function pointToParams(point: ParamPoint): Partial<MatchParams> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(point)) {
    if (k === 'censusWindow') out[k] = parseCensusWindow(String(v));
    else if (k === 'lrCheck') out[k] = v === 'on';
    else out[k] = v;
  }
  return out as Partial<MatchParams>;
}
