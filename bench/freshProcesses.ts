/**
 * Wall time of fresh `stereocut run SCENE --backend gpu --out-dir DIR -q`
 * processes, for several launchers side by side: this build's, with its
 * code cache off and on, and those named after `--` (another built
 * checkout's bin/stereocut.js, for a before and after):
 *
 *   node dist/bench/freshProcesses.js RUNS SCENE_FOLDER... [-- NAME=BIN ...]
 *
 * Each launcher keeps a pipeline store and a code cache of its own (in a
 * temporary folder), warmed by one run per scene; then the launchers run
 * in rotating order, RUNS rounds per scene. The files the launchers wrote
 * for a scene are compared (all but metrics.json, which holds the times);
 * prints a table of medians and every run. $FRESH_BACKEND names another
 * backend (e.g. bk, to try the script on a machine without a GPU).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { median } from '../app/bench/median';

interface Launcher { name: string; bin: string; env: Record<string, string> }

function usage(): never {
  throw new Error('usage: node dist/bench/freshProcesses.js RUNS SCENE_FOLDER... [-- NAME=BIN ...]');
}

function main(): void {
  const argv = process.argv.slice(2);
  const runs = Number(argv[0]);
  if (!Number.isInteger(runs) || runs < 1) usage();
  const split = argv.indexOf('--');
  const scenes = argv.slice(1, split < 0 ? undefined : split);
  if (scenes.length === 0) usage();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-fresh-'));
  const own = path.join(__dirname, '..', '..', 'bin', 'stereocut.js');
  const given = split < 0 ? [] : argv.slice(split + 1).map((a) => {
    const [name, bin] = a.split('=');
    if (!name || !bin) usage();
    return { name, bin: path.resolve(bin) };
  });
  const named = [...given, { name: 'this build, code cache off', bin: own, off: true }, { name: 'this build', bin: own }];
  const launchers: Launcher[] = named.map((l, i) => ({
    name: l.name,
    bin: l.bin,
    env: {
      STEREOCUT_PIPELINE_CACHE: path.join(tmp, `pipelines-${i}.json`),
      STEREOCUT_CODE_CACHE: 'off' in l && l.off ? 'off' : path.join(tmp, `code-${i}`),
    },
  }));
  const outDir = (i: number): string => path.join(tmp, `out-${i}`);
  const wall = (i: number, scene: string): number => {
    const l = launchers[i];
    const t = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [l.bin, 'run', scene, '--backend', process.env.FRESH_BACKEND ?? 'gpu', '--out-dir', outDir(i), '-q'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...l.env } });
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (r.status !== 0) throw new Error(`${l.name} on ${scene} exited ${r.status}: ${String(r.stderr).trim()}`);
    return ms;
  };
  try {
    for (const scene of scenes) launchers.forEach((_, i) => wall(i, scene));
    const times = new Map<string, number[]>();
    for (let round = 0; round < runs; round++) {
      for (const scene of scenes) {
        for (let j = 0; j < launchers.length; j++) {
          const i = (round + j) % launchers.length;
          const key = `${path.basename(scene)}\t${launchers[i].name}`;
          times.set(key, [...(times.get(key) ?? []), wall(i, scene)]);
        }
      }
    }
    console.log('| scene | launcher | median ms | runs (ms) |');
    console.log('|---|---|---:|---|');
    for (const [key, t] of times) {
      const [scene, name] = key.split('\t');
      console.log(`| ${scene} | ${name} | ${median(t).toFixed(0)} | ${t.map((x) => x.toFixed(0)).join(', ')} |`);
    }
    for (const scene of scenes.map((s) => path.basename(s))) {
      const first = path.join(outDir(0), scene);
      for (const f of fs.readdirSync(first).filter((n) => n !== 'metrics.json')) {
        const same = launchers.every((_, i) => fs.readFileSync(path.join(outDir(i), scene, f)).equals(fs.readFileSync(path.join(first, f))));
        if (!same) console.log(`${scene}/${f}: the launchers wrote different files`);
      }
    }
    console.log(`\nfiles compared (all but metrics.json); node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${new Date().toISOString()}`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main();
