/**
 * Two builds side by side: each scene matched by one matcher of the default
 * setting, `reps` + 1 times in one process, for this build and for other
 * built checkouts named after `--`:
 *
 *   node dist/bench/buildPairs.js BACKEND REPS ROUNDS SCENE_FOLDER... [-- NAME=DIST ...]
 *
 * DIST: another checkout's dist/ folder (its stereo/match.js and
 * data/scene.js are loaded). Every build runs in a process of its own, one
 * after the other, ROUNDS times in turn. Per build and scene it prints the
 * final energy and a hash of the disparity map (which must agree between
 * builds: the cuts are exact), the first match of the process (kernels,
 * shaders and plans compiled) and the median of the next REPS (warm).
 * Run as `node dist/bench/buildPairs.js … --one NAME DIST …` it is one
 * build's process.
 */
import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as path from 'path';
import { median } from '../app/bench/median';
import type { BackendName } from '../stereo/params';

interface Row { build: string; scene: string; energy: number; map: string; firstMs: number; warmMs: number[] }

/** One build's process: the rows as JSON lines on stdout. */
async function one(name: string, dist: string, backend: string, reps: number, scenes: string[]): Promise<void> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { createMatcher } = require(path.join(dist, 'stereo', 'match')) as typeof import('../stereo/match');
  const { loadScene } = require(path.join(dist, 'data', 'scene')) as typeof import('../data/scene');
  /* eslint-enable @typescript-eslint/no-require-imports */
  for (const dir of scenes) {
    const s = await loadScene(dir);
    const matcher = createMatcher({ ndisp: s.ndisp, minDisp: s.minDisp ?? 0 }, { backend: backend as BackendName });
    const times: number[] = [];
    let energy = NaN;
    let map = '';
    try {
      for (let i = 0; i <= reps; i++) {
        const t0 = performance.now();
        const r = await matcher.compute(s.left, s.right);
        times.push(performance.now() - t0);
        energy = r.finalEnergy.total;
        map = createHash('sha1').update(Buffer.from(r.disparity.buffer, r.disparity.byteOffset, r.disparity.byteLength)).digest('hex').slice(0, 12);
      }
    } finally {
      await matcher.dispose();
    }
    const row: Row = { build: name, scene: path.basename(path.resolve(dir)), energy, map, firstMs: times[0], warmMs: times.slice(1) };
    process.stdout.write(`${JSON.stringify(row)}\n`);
  }
}

function main(argv: string[]): void {
  if (argv[0] === '--one') {
    const [, name, dist, backend, reps, ...scenes] = argv;
    one(name, dist, backend, Number(reps), scenes).then(() => process.exit(0), (e: unknown) => { console.error(e); process.exit(1); });
    return;
  }
  const split = argv.indexOf('--');
  const [backend, repsText, roundsText, ...scenes] = split < 0 ? argv : argv.slice(0, split);
  const builds: Array<[string, string]> = [['this', path.join(__dirname, '..')], ...(split < 0 ? [] : argv.slice(split + 1)).map((a): [string, string] => {
    const eq = a.indexOf('=');
    if (eq <= 0) throw new Error(`buildPairs: '${a}': expected NAME=DIST`);
    return [a.slice(0, eq), path.resolve(a.slice(eq + 1))];
  })];
  const reps = Number(repsText);
  const rounds = Number(roundsText);
  if (!backend || !(Number.isInteger(reps) && reps >= 1) || !(Number.isInteger(rounds) && rounds >= 1) || scenes.length === 0) {
    console.error('usage: node dist/bench/buildPairs.js BACKEND REPS ROUNDS SCENE_FOLDER... [-- NAME=DIST ...]');
    process.exit(2);
  }
  const rows: Row[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const [name, dist] of builds) {
      const r = spawnSync(process.execPath, [__filename, '--one', name, dist, backend, String(reps), ...scenes], { encoding: 'utf8', maxBuffer: 1 << 26 });
      if (r.status !== 0) throw new Error(`buildPairs: build ${name} exited ${String(r.status)}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      for (const line of r.stdout.split('\n')) if (line.startsWith('{')) rows.push(JSON.parse(line) as Row);
    }
  }
  console.log('| scene | build | final energy | map | first (ms), each round | warm median (ms), each round | same labels as this build |');
  console.log('|---|---|---:|---|---|---|---|');
  for (const dir of scenes) {
    const scene = path.basename(path.resolve(dir));
    const ours = rows.find((r) => r.scene === scene && r.build === 'this');
    for (const [name] of builds) {
      const mine = rows.filter((r) => r.scene === scene && r.build === name);
      const same = mine.every((r) => r.energy === ours?.energy && r.map === ours?.map);
      console.log(`| ${scene} | ${name} | ${mine[0]?.energy} | ${mine[0]?.map} | ${mine.map((r) => r.firstMs.toFixed(0)).join(', ')} | ${mine.map((r) => median(r.warmMs).toFixed(0)).join(', ')} | ${same ? 'yes' : 'NO'} |`);
    }
  }
}

main(process.argv.slice(2));
