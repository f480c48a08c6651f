import { ProgramStore } from '../../gpu/move/keptPrograms';
import { startDeviceReading } from './deviceEarly';
import * as fs from 'fs';
import * as path from 'path';
import { regionScore, type Evaluation, type RegionName } from '../../data/metrics';
import { SCENE_OUTPUT_FILES, SceneImagesAhead, writeSceneOutputs } from '../report/sceneOutputs';
import { ImageWriters, imageThreadsFor, machineCores } from '../report/outputThreads';
import { RunOutputs } from '../report/runOutputs';
import { sceneFoldersOf } from '../../data/scene';
import { evaluateScene, matchScene, type SceneMatch } from '../../stereo/sceneMatch';
import { matchSummaryJson } from '../summary';
import type { BackendName, MatchParams } from '../../stereo/params';
import { DEFAULT_CENSUS_WINDOW } from '../../costs';
import { checkOutputFolder, checkOutputPath, Io } from './common';
import { StopRequest, StoppedError, yieldToEventLoop } from './interrupt';
import { LiveMatch } from './liveProgress';
import { checkOutputsApart, sceneInputs } from './outputGuard';
import { paramsFromArgs, ParamArgs } from './paramOptions';
import { REGION_LEGEND, tableLines } from './scoreFormat';
import type { QueueAddress } from '../queue/redisQueue';

export interface RunArgs extends ParamArgs {
  scenes: string[];
  ndisp?: number;
  'out-dir'?: string;
  report?: string;
  middeval3?: string;
  'middeval3-name'?: string;
  'middeval3-set'?: string;
  threshold?: number[];
  json: boolean;
  quiet: boolean;
  'scene-params'?: boolean;
  'min-disp'?: number;
  'max-disp'?: number;
  backend: string;
  verify: boolean;
  progress?: boolean;
  queue?: string;
}

/** The queue of --queue, its Redis checked. */
async function checkedQueue(url: string): Promise<QueueAddress> {
  const { checkRedis, parseQueueUrl } = await import('../queue/redisQueue');
  const address = parseQueueUrl(url);
  await checkRedis(address);
  return address;
}

const pct = (v: number | undefined): string => (v === undefined ? '-' : v.toFixed(2));
const bad = (e: Evaluation | undefined, region: RegionName, i: number): number | undefined => (e ? regionScore(e, region)?.bad[i] : undefined);

/** True when 'known' and 'all' score the same on every scene with ground truth (the all mask covers every pixel with ground truth): one column says it. */
const knownIsAll = (results: SceneMatch[], thresholds: number[]): boolean =>
  results.every(({ evaluation: e }) => !e || thresholds.every((_, i) => bad(e, 'all', i) !== undefined && bad(e, 'known', i) === bad(e, 'all', i)));

/** The energy's main settings in one cell. */
function paramsText(p: MatchParams): string {
  const w = p.censusWindow ?? DEFAULT_CENSUS_WINDOW;
  const cost = p.cost === 'census' ? `census ${w.width}x${w.height}` : p.cost;
  return `${cost} λ=${p.lambda} T=${p.truncation} cue×${p.cueFactor}${p.lrCheck ? ' lr' : ''}`;
}

/** The table of a run: a row per scene, a column group per threshold (none when no scene has ground truth). */
export function runTableLines(results: SceneMatch[], thresholds: number[]): string[] {
  const scored = results.some((m) => m.evaluation);
  const regions: RegionName[] = !scored ? [] : knownIsAll(results, thresholds) ? ['nonocc', 'all', 'disc'] : ['nonocc', 'all', 'disc', 'known'];
  const head = ['scene', 'size', 'ndisp', ...thresholds.flatMap((t) => regions.map((r) => `${r}>${t}`)), 'energy', 'total s', 'params', 'backend'];
  const rows = results.map(({ scene, result: r, evaluation: e }) => [
    scene.name, `${r.width}×${r.height}`, r.minDisp > 0 ? `${r.minDisp}..${r.minDisp + r.ndisp - 1}` : String(r.ndisp),
    ...thresholds.flatMap((_, i) => regions.map((reg) => pct(bad(e, reg, i)))),
    String(r.finalEnergy.total), (r.times.totalMs / 1000).toFixed(2),
    paramsText(r.params), r.backend,
  ]);
  return tableLines(head, rows);
}

/**
 * Match + evaluate Middlebury scene folders: a line per scene as it
 * finishes, then one table row per scene (or JSON), optional per-scene
 * files, HTML report and MiddEval3 tree. Ctrl-C stops after the current
 * cycle and keeps what is finished: the scenes done are in the table and the
 * report, and the exit code is 130.
 */
export async function runCommand(a: RunArgs, io: Io): Promise<number> {
  const { params, initFile } = paramsFromArgs(a);
  if (initFile) throw new Error(`--init: got '${initFile}', expected wta or zero (a disparity file belongs to one pair: use match)`);
  const outDir = a['out-dir'];
  if (outDir !== undefined) checkOutputFolder(outDir, '--out-dir');
  // The report's extension and the MiddEval3 names are checked by RunOutputs; here, that both can be written at all.
  // A report inside --out-dir itself may name a folder that --out-dir makes.
  if (a.report !== undefined && !(reportInOutDir(a.report, outDir) && !fs.existsSync(outDir!))) checkOutputPath(a.report, '--report');
  if (a.middeval3 !== undefined) checkOutputFolder(a.middeval3, '--middeval3');
  checkRunOutputs(a);
  // Threads for the scenes' images, started now: they load their modules while this thread reads the scenes and sets the device up.
  // An unreachable queue is refused before any scene is read or file written.
  const queue = a.queue === undefined ? undefined : await checkedQueue(a.queue);
  const threads = outDir !== undefined || a.report !== undefined ? imageThreadsFor(machineCores()) : 0;
  const writers = threads > 0 ? new ImageWriters(threads) : undefined;
  try {
    return await runScenes(a, io, params, writers, queue);
  } finally {
    writers?.close();
  }
}

/** Whether the report's folder is --out-dir (made by the run when missing). */
function reportInOutDir(report: string, outDir: string | undefined): boolean {
  return outDir !== undefined && path.dirname(path.resolve(report)) === path.resolve(outDir);
}

/**
 * Refuses, before any scene is read, a run whose files (per scene under
 * --out-dir, the report and its images, the MiddEval3 tree) would land on
 * a file a scene is read from: MiddEval3's disp0GT.pfm under
 * --middeval3-name GT, a scene folder's own files under --out-dir.
 */
function checkRunOutputs(a: RunArgs): void {
  const outDir = a['out-dir'];
  const scenes = sceneFoldersOf(a.scenes.filter((dir) => fs.existsSync(dir) && fs.statSync(dir).isDirectory()), () => undefined);
  const planned = new RunOutputs({ report: a.report, middeval3: a.middeval3, middeval3Name: a['middeval3-name'], middeval3Set: a['middeval3-set'], reportFolderMade: a.report !== undefined && reportInOutDir(a.report, outDir) });
  const outputs = planned.plannedFiles(scenes);
  if (outDir !== undefined) {
    for (const dir of scenes) for (const f of SCENE_OUTPUT_FILES) outputs.push({ name: '--out-dir', file: path.join(outDir, path.basename(path.resolve(dir)), f) });
  }
  checkOutputsApart(outputs, scenes.flatMap(sceneInputs));
}

/** Two scenes of one name would write the same files (a folder per scene name): refused, naming both (trainingQ/Adirondack and trainingH/Adirondack). */
function refuseSharedNames(dirs: string[]): void {
  const byName = new Map<string, string>();
  for (const d of dirs) {
    const name = path.basename(path.resolve(d));
    const other = byName.get(name);
    if (other !== undefined) throw new Error(`scene folder ${d}: its outputs would go where those of ${other} go (both are named ${name}); run them apart`);
    byName.set(name, d);
  }
}

/** runCommand's work once its options are read: `writers` draw and write the scenes' images. */
async function runScenes(a: RunArgs, io: Io, params: Partial<MatchParams>, writers: ImageWriters | undefined, queue: QueueAddress | undefined): Promise<number> {
  const outDir = a['out-dir'];
  const extra = new RunOutputs({ report: a.report, middeval3: a.middeval3, middeval3Name: a['middeval3-name'], middeval3Set: a['middeval3-set'], writers, reportFolderMade: a.report !== undefined && reportInOutDir(a.report, outDir) });
  const sceneOptions = { ndisp: a.ndisp, minDisp: a['min-disp'], maxDisp: a['max-disp'] };
  // A dataset root stands for the scene folders inside it.
  const dirs = sceneFoldersOf(a.scenes, (l) => io.err(`note: ${l}`));
  if (outDir !== undefined || a.report !== undefined) refuseSharedNames(dirs);
  const reads = startDeviceReading(a.backend, dirs.map((dir) => ({ kind: 'scene' as const, dir, options: sceneOptions })));
  // Load and check every scene before matching any, so a bad folder fails before output is written.
  const scenes = [];
  try {
    for (const [i, dir] of dirs.entries()) {
      extra.checkScene(dir);
      scenes.push(await reads.result(i));
    }
  } finally {
    reads.close();
  }
  const thresholds = a.threshold ?? [1];
  // With --queue the workers match every scene first; the loop below scores and writes them as it does its own.
  const queued = queue === undefined ? undefined : await (await import('../queue/sceneQueue')).matchOnQueue(
    queue, scenes, params, { load: sceneOptions, sceneParams: a['scene-params'] !== false, verify: a.verify },
    (m, k) => { if (!a.json && !a.quiet) io.err(`[${k + 1}/${scenes.length}] ${m.scene.name}: matched on ${m.result.backend} (${m.result.device})`); },
  );
  const results: SceneMatch[] = [];
  const stop = new StopRequest(() => io.err('stereocut: stopping after the current cycle; the finished scenes are kept (Ctrl-C again to quit at once)'));
  const unlisten = stop.listen();
  // The device program of the last scene's shape, for the next scene of that size (released at the end).
  const programs = new ProgramStore();
  try {
    for (const [k, scene] of scenes.entries()) {
      const label = `${scene.name} ${k + 1}/${scenes.length}`;
      const live = new LiveMatch(a.quiet ? { out: io.out, err: io.err } : io, { lines: false, label, moves: a.progress });
      const onCycle = async (): Promise<void> => {
        await yieldToEventLoop();
        if (stop.requested) throw new StoppedError();
      };
      // The images that do not depend on the match are drawn on the image threads meanwhile, and written only after it.
      const ahead = outDir !== undefined && writers ? new SceneImagesAhead(path.join(outDir, scene.name), scene, writers) : undefined;
      const m = await (queued ? Promise.resolve(queued[k]) : matchScene(scene, params, {
        backend: a.backend as BackendName, verify: a.verify, thresholds, onMove: live.onMove, onEvent: live.onEvent, onCycle, sceneParams: a['scene-params'] !== false, evaluate: false, programs,
      })).catch((e: unknown) => {
        ahead?.discard();
        throw e;
      }).finally(() => live.finish());
      live.finish(m.result);
      // The scene's files are started first, so that the image threads draw while this thread scores the match.
      const sceneDir = outDir !== undefined ? path.join(outDir, scene.name) : undefined;
      const written = sceneDir !== undefined ? writeSceneOutputs(sceneDir, sceneDir, scene, m.result, undefined, writers, ahead) : undefined;
      written?.catch(() => undefined);
      m.evaluation = evaluateScene(scene, m.result, thresholds);
      results.push(m);
      const outputs = await written;
      // The report embeds the images just written, and links the scene's other files there.
      await extra.add(scene, m.result, sceneDir !== undefined && outputs ? { dir: sceneDir, outputs } : undefined);
      if (!a.json && !a.quiet) {
        const scores = thresholds.map((t, i) => `nonocc>${t} ${pct(bad(m.evaluation, 'nonocc', i))}%`).join(', ');
        const own = m.sceneParams ? ', per-scene parameters' : '';
        io.out(`[${k + 1}/${scenes.length}] ${scene.name}: ${m.evaluation ? scores : 'no ground truth'}, energy ${m.result.finalEnergy.total}, ${(m.result.times.totalMs / 1000).toFixed(2)} s on ${m.result.backend}${own}`);
      }
      await yieldToEventLoop();
      if (stop.requested && k + 1 < scenes.length) throw new StoppedError();
    }
  } catch (e) {
    if (!(e instanceof StoppedError)) throw e;
  } finally {
    unlisten();
    programs.release();
  }
  const stopped = results.length < scenes.length;
  const reportFile = results.length > 0 ? extra.finish(`${results.length} scene(s)${stopped ? ` of ${scenes.length}; stopped by Ctrl-C` : ''}`) : undefined;
  if (a.json) {
    io.out(JSON.stringify(results.map((m) => ({
      scene: m.scene.name, dir: m.scene.dir, layout: m.scene.layout, ndisp: m.scene.ndisp, minDisp: m.scene.minDisp ?? 0, ndispSource: m.scene.ndispSource,
      sceneParams: m.sceneParams,
      evaluation: m.evaluation ?? null, ...matchSummaryJson(m.result),
    })), null, 2));
  } else {
    if (!a.quiet && results.length) io.out('');
    for (const l of runTableLines(results, thresholds)) io.out(l);
    if (!a.quiet && results.some((m) => m.evaluation)) io.out(REGION_LEGEND);
    for (const { scene, evaluation } of results) if (evaluation?.note) io.out(`${scene.name}: ${evaluation.note}`);
    const own = results.filter((m) => m.sceneParams).map((m) => m.scene.name);
    if (own.length > 0) io.out(`per-scene parameters (stereo/sceneParams.ts) for ${own.join(', ')}; the others got the defaults (--no-scene-params: the defaults for all)`);
    if (outDir !== undefined) io.out(`wrote per-scene outputs under ${outDir}`);
    if (reportFile) io.out(`wrote ${reportFile}`);
    if (a.middeval3) io.out(`wrote MiddEval3 results under ${a.middeval3}`);
  }
  if (stopped) {
    io.err(`stereocut: stopped by Ctrl-C after ${results.length} of ${scenes.length} scenes`);
    return 130;
  }
  return 0;
}
