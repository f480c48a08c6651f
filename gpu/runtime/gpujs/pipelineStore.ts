import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { writeFileAtomic } from '../../../data/atomicWrite';
import { makeFolder } from '../../../data/folders';
import { WRAPPED_GPU_JS_RELEASE } from './release';

/**
 * The WebGPU pipelines a solver built, remembered on disk by the program
 * they belong to, so that a later process can start creating them before
 * it needs them.
 *
 * A fresh process used to meet its pipelines in four waves, one after the
 * other: the census kernel, the device WTA, the energy, the moves' plan
 * (each wave a few to 17 pipelines created together, and the host's work of
 * the next wave only starting once the last one was made). Dawn's Node
 * binding keeps no pipeline cache between processes. What a program
 * compiles depends only on its key (the energy's shape and the device
 * options: gpu/move/deviceProgram.ts acquireProgram), so its pipelines are
 * recorded under that key (the WGSL and the bind group layout's counts),
 * and the next process that acquires a program of the same key asks for
 * all of them at once, while it builds the rest (pipelinePrewarm.ts
 * warmUpPipelineGroup).
 *
 * The translations of its kernels from JavaScript to WGSL (gpu.js parses
 * each kernel's source) are kept with them, so that the next process also
 * skips that work: a translation is a function of its key, which holds the
 * kernel's source and every setting the translation reads.
 *
 * Only a head start: a recorded pipeline that the run never asks for costs
 * a background compile, one it asks for that was not recorded is built as
 * always, and the pipelines that run are always the ones gpu.js builds
 * (Dawn hands its build the pipeline made ahead for the same descriptor).
 * So a missing, unreadable, stale or foreign file changes no result: it is
 * ignored (and replaced at the next save).
 *
 * The file: STEREOCUT_PIPELINE_CACHE names it (`off` keeps none), else
 * $XDG_CACHE_HOME/stereocut/webgpu-pipelines.json (~/.cache when unset).
 * Written once, when the process exits, and only if a group was added or
 * changed; bounded to MAX_PIPELINE_GROUPS groups, the least recently used
 * dropped first.
 */

/** A pipeline as gpu.js's WebGPU build creates it: the WGSL and the bind group's array arguments and array constants (kernelLayoutEntries). */
export interface PipelineSource {
  code: string;
  arrays: number;
  constants: number;
}

/** A kernel's translation to WGSL under its key (sharedBuilds.ts translationKey: everything gpu.js's translation reads). */
export interface StoredTranslation {
  key: string;
  returnType: string | null;
  componentCount: number;
  translatedBody: string;
  translatedFunctions: string;
}

/** What a program of one key built: its pipelines and its kernels' translations. */
export interface PipelineGroup {
  sources: PipelineSource[];
  translations: StoredTranslation[];
}

/** The variable naming the file (or `off`). */
export const PIPELINE_CACHE_VARIABLE = 'STEREOCUT_PIPELINE_CACHE';
/** Programs remembered: a run of one scene uses one; a parameter sweep over sizes a few. */
export const MAX_PIPELINE_GROUPS = 16;
/** Pipelines (and translations) per group beyond which a group stops growing (a program builds about 25). */
export const MAX_GROUP_PIPELINES = 64;
/** The file's format; another format, gpu.js release or shape is ignored as a whole. */
const FORMAT = 2;

interface StoreFile {
  format: number;
  gpuJs: string;
  /** Least recently used first. */
  groups: Array<{ key: string } & PipelineGroup>;
}

/** What this process did with the store (tests and the fresh-process bench read it). */
export const pipelineStore = {
  /** The file read at first use: null when none was read (off, absent, unreadable or foreign: `readError` says which for the last two). */
  loadedFrom: null as string | null,
  readError: null as string | null,
  /** Pipelines, and translations, recorded by this process that the file did not hold. */
  recorded: 0,
  recordedTranslations: 0,
  /** Saves done, and the error of the last failed one (a cache: never fatal). */
  saves: 0,
  saveError: null as string | null,
};

let groups: Map<string, PipelineGroup> | null = null;
let current: { key: string; group: PipelineGroup; codes: Set<string>; translationKeys: Set<string> } | null = null;
let dirty = false;
let exitHookInstalled = false;

/** The file of the store, or null when it is off. */
export function pipelineStorePath(env: NodeJS.ProcessEnv = process.env): string | null {
  const named = env[PIPELINE_CACHE_VARIABLE];
  if (named !== undefined && named !== '') return named === 'off' || named === '0' ? null : named;
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'stereocut', 'webgpu-pipelines.json');
}

const isSource = (s: unknown): s is PipelineSource => {
  const o = s as PipelineSource;
  return !!o && typeof o.code === 'string' && Number.isInteger(o.arrays) && o.arrays >= 0 && Number.isInteger(o.constants) && o.constants >= 0;
};
const isTranslation = (t: unknown): t is StoredTranslation => {
  const o = t as StoredTranslation;
  return !!o && typeof o.key === 'string' && (o.returnType === null || typeof o.returnType === 'string') && Number.isInteger(o.componentCount)
    && typeof o.translatedBody === 'string' && typeof o.translatedFunctions === 'string';
};

/** The groups in the file at `file`, least recently used first; empty when it is absent, unreadable or of another format or gpu.js release. */
function readGroups(file: string): { groups: Map<string, PipelineGroup>; error: string | null } {
  const found = new Map<string, PipelineGroup>();
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { groups: found, error: code === 'ENOENT' ? null : `${file}: ${(err as Error).message}` };
  }
  try {
    const parsed = JSON.parse(text) as StoreFile;
    if (parsed?.format !== FORMAT || parsed.gpuJs !== WRAPPED_GPU_JS_RELEASE || !Array.isArray(parsed.groups)) return { groups: found, error: `${file}: another format or gpu.js release` };
    for (const g of parsed.groups) {
      if (typeof g?.key === 'string' && Array.isArray(g.sources) && g.sources.every(isSource) && Array.isArray(g.translations) && g.translations.every(isTranslation)) {
        found.set(g.key, { sources: g.sources.slice(0, MAX_GROUP_PIPELINES), translations: g.translations.slice(0, MAX_GROUP_PIPELINES) });
      }
    }
    return { groups: found, error: null };
  } catch (err) {
    return { groups: found, error: `${file}: ${(err as Error).message}` };
  }
}

function loaded(): Map<string, PipelineGroup> {
  if (groups) return groups;
  const file = pipelineStorePath();
  if (file === null) return (groups = new Map());
  const read = readGroups(file);
  pipelineStore.readError = read.error;
  pipelineStore.loadedFrom = read.error === null && read.groups.size > 0 ? file : null;
  return (groups = read.groups);
}

/**
 * A program of `key` is being built from now on: the pipelines and
 * translations it recorded in an earlier process (to start creating at
 * once), empty for a key not met before or with the store off. Every
 * pipeline and translation made after this call is recorded under `key`
 * (recordPipeline, recordTranslation) until the next call.
 */
export function beginPipelineGroup(key: string): PipelineGroup {
  const all = loaded();
  const group = all.get(key) ?? { sources: [], translations: [] };
  // Most recently used last (the store drops from the front).
  all.delete(key);
  all.set(key, group);
  current = { key, group, codes: new Set(group.sources.map(sourceKey)), translationKeys: new Set(group.translations.map((t) => t.key)) };
  return { sources: group.sources.slice(), translations: group.translations.slice() };
}

const sourceKey = (s: PipelineSource): string => `${s.arrays}:${s.constants}:${s.code}`;

/** Records a pipeline the current group's program built (nothing before the first beginPipelineGroup, or past MAX_GROUP_PIPELINES). */
export function recordPipeline(source: PipelineSource): void {
  if (!current || pipelineStorePath() === null) return;
  const k = sourceKey(source);
  if (current.codes.has(k) || current.group.sources.length >= MAX_GROUP_PIPELINES) return;
  current.codes.add(k);
  current.group.sources.push({ code: source.code, arrays: source.arrays, constants: source.constants });
  pipelineStore.recorded++;
  changed();
}

/** Records a translation the current group's program made (as recordPipeline). */
export function recordTranslation(t: StoredTranslation): void {
  if (!current || pipelineStorePath() === null) return;
  if (current.translationKeys.has(t.key) || current.group.translations.length >= MAX_GROUP_PIPELINES) return;
  current.translationKeys.add(t.key);
  current.group.translations.push({ key: t.key, returnType: t.returnType, componentCount: t.componentCount, translatedBody: t.translatedBody, translatedFunctions: t.translatedFunctions });
  pipelineStore.recordedTranslations++;
  changed();
}

/** Something to save: the file is written when the process exits. */
function changed(): void {
  dirty = true;
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => savePipelineStore());
  }
}

/**
 * Writes the groups this process added or changed into the file (merged
 * with what another process wrote there meanwhile; at most
 * MAX_PIPELINE_GROUPS, the least recently used dropped). Runs by itself
 * when the process exits; never throws (saveError keeps the reason).
 */
export function savePipelineStore(): void {
  const file = pipelineStorePath();
  if (!dirty || file === null || !groups) return;
  try {
    const merged = readGroups(file).groups;
    for (const [key, group] of groups) {
      merged.delete(key);
      merged.set(key, group);
    }
    const kept = [...merged.entries()].filter(([, g]) => g.sources.length + g.translations.length > 0).slice(-MAX_PIPELINE_GROUPS);
    const out: StoreFile = { format: FORMAT, gpuJs: WRAPPED_GPU_JS_RELEASE, groups: kept.map(([key, g]) => ({ key, ...g })) };
    makeFolder(path.dirname(file));
    writeFileAtomic(file, JSON.stringify(out));
    dirty = false;
    pipelineStore.saves++;
    pipelineStore.saveError = null;
  } catch (err) {
    pipelineStore.saveError = err instanceof Error ? err.message : String(err);
  }
}

/** Forgets what this process read and recorded, as a new process would start (tests). */
export function resetPipelineStore(): void {
  groups = null;
  current = null;
  dirty = false;
  Object.assign(pipelineStore, { loadedFrom: null, readError: null, recorded: 0, recordedTranslations: 0, saves: 0, saveError: null });
}
