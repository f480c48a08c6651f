/**
 * Whole runs in one warm process, as `stereocut run` makes them (the scene's
 * parameters when it has them, else the default; costs, init, every cycle,
 * the left–right check when on), side by side for several device settings:
 *
 *   node dist/bench/wholeRuns.js OUT.json REPS SCENE_FOLDER...
 *
 * $WHOLE_RUN_CONFIGS: JSON {name: device schedule flags} (gpu/move/moveSettings
 * fields, e.g. {"default": {}, "block": {"push": "block", "bfs": "block"}});
 * default {"default": {}}. $WHOLE_RUN_PARAMS: JSON parameter overrides for
 * every scene (e.g. {"cycles": 4}). Each scene is run once per config to
 * warm up (kernel builds, plan compiles), then REPS times per config,
 * alternating. Every run's energies per cycle are recorded: all configs
 * must give the same (the device moves are exact). Prints a table; the
 * JSON is rewritten after every run.
 */
import { ProgramStore } from '../gpu/move/keptPrograms';
import * as fs from 'fs';
import type { GpuMoveSettings } from '../gpu/move/moveSettings';
import { matchScene } from '../stereo/sceneMatch';
import { ABLATION_FAMILIES } from './kernels/ablationFamilies';
import type { MatchParams } from '../stereo/params';

interface Row {
  scene: string;
  config: string;
  rep: number;
  wallMs: number;
  totalMs: number;
  energies: number[];
  bad1: number | null;
  sceneParams: boolean;
  fallbacks: string[];
  times: Record<string, number>;
  /** the device solver's counters summed over the cycles (calls, rounds, iterations…) */
  stats: Record<string, number>;
}

async function main(): Promise<void> {
  const [out, repsArg, ...folders] = process.argv.slice(2);
  const reps = Number(repsArg);
  if (!out || !Number.isInteger(reps) || reps < 0 || folders.length === 0) throw new Error('usage: node dist/bench/wholeRuns.js OUT.json REPS SCENE_FOLDER...');
  const configs = JSON.parse(process.env.WHOLE_RUN_CONFIGS ?? '{"default":{}}') as Record<string, GpuMoveSettings>;
  const params = JSON.parse(process.env.WHOLE_RUN_PARAMS ?? '{}') as Partial<MatchParams>;
  const rows: Row[] = [];
  // One store for the process: a run takes the device program the run before it kept, as a warm process does.
  const programs = new ProgramStore();
  const once = async (folder: string, name: string, rep: number): Promise<void> => {
    const t0 = performance.now();
    // The benchmarks' kernel families (the lockstep push, the level BFS) are at hand for a config that names them.
    const m = await matchScene(folder, params, { backend: 'gpu', thresholds: [1], gpu: { families: ABLATION_FAMILIES, ...configs[name] }, programs });
    const wallMs = performance.now() - t0;
    const r = m.result;
    const bad1 = m.evaluation?.regions.find((g) => g.region === 'nonocc')?.bad[0] ?? null;
    const stats: Record<string, number> = {};
    for (const c of r.cycles) for (const [k, v] of Object.entries(c.stats)) stats[k] = (stats[k] ?? 0) + v;
    rows.push({
      scene: m.scene.name, config: name, rep, wallMs, totalMs: r.times.totalMs, energies: [r.initialEnergy.total, ...r.cycles.map((c) => c.energy.total)], bad1,
      sceneParams: m.sceneParams, fallbacks: r.fallbacks, times: { ...r.times } as unknown as Record<string, number>, stats,
    });
    fs.writeFileSync(out, JSON.stringify(rows, null, 1));
  };
  for (const folder of folders) {
    for (const name of Object.keys(configs)) await once(folder, name, -1);
    for (let rep = 0; rep < reps; rep++) for (const name of Object.keys(configs)) await once(folder, name, rep);
  }
  const median = (v: number[]): number => { const s = [...v].sort((a, b) => a - b); return s.length === 0 ? NaN : s[s.length >> 1]; };
  console.log('wall: matchScene (scene read, match, evaluation); match: match()\'s own total (costs to the last cycle and the left–right check)');
  console.log('scene       config        warm-up ms  median wall  median match  match runs (ms)        energies equal  median phases (ms): costs setup init expansion check');
  for (const scene of [...new Set(rows.map((r) => r.scene))]) {
    const ref = rows.find((r) => r.scene === scene)!.energies.join(',');
    for (const name of Object.keys(configs)) {
      const mine = rows.filter((r) => r.scene === scene && r.config === name);
      const timed = mine.filter((r) => r.rep >= 0).map((r) => r.wallMs);
      const matchMs = mine.filter((r) => r.rep >= 0).map((r) => r.totalMs);
      const equal = mine.every((r) => r.energies.join(',') === ref);
      const phase = (k: string): string => median(mine.filter((r) => r.rep >= 0).map((r) => r.times[k] ?? 0)).toFixed(0);
      const phases = ['costsMs', 'setupMs', 'initMs', 'expansionMs', 'checkMs'].map(phase).join(' ');
      console.log(`${scene.padEnd(11)} ${name.padEnd(13)} ${mine[0].wallMs.toFixed(0).padStart(10)} ${median(timed).toFixed(0).padStart(12)} ${median(matchMs).toFixed(0).padStart(13)}  ${matchMs.map((t) => t.toFixed(0)).join(' ').padEnd(22)} ${(equal ? 'yes' : 'NO').padEnd(15)} ${phases}`);
    }
  }
}

// The WebGPU device keeps the process alive: leave once the table is out.
main().then(() => process.exit(0), (e: unknown) => {
  console.error(e instanceof Error ? e.stack ?? e.message : String(e));
  process.exit(1);
});
