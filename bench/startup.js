#!/usr/bin/env node
// Start-up time of the command line: each command below is run as a fresh
// process `runs` times (after one warm-up run that fills the OS file cache),
// and the table gives the median, the fastest and the slowest wall time.
// Usage: node bench/startup.js [runs] [other/bin/stereocut.js]   (needs `npm run build` first)
// A second launcher (another checkout, built) adds its --help row to the same table, so that both
// are timed under the same load.
const { spawnSync } = require('child_process');
const path = require('path');

const bin = path.join(__dirname, '..', 'bin', 'stereocut.js');
const runs = Number(process.argv[2] ?? 20);
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`bench/startup.js: runs must be an integer ≥ 1 (got ${process.argv[2]})`);
  process.exit(1);
}

const other = process.argv[3];
const cases = [
  ['node -e ""', [process.execPath, '-e', '']],
  ['stereocut --version', [process.execPath, bin, '--version']],
  ['stereocut --help', [process.execPath, bin, '--help']],
  ['stereocut match --help', [process.execPath, bin, 'match', '--help']],
  ['stereocut tune --help', [process.execPath, bin, 'tune', '--help']],
  ['node -e "require(\'gpu.js\')"', [process.execPath, '-e', "require('gpu.js')"]],
  // gpu.js as the project loads it: without its WebGL backends (gpu/runtime/gpujs/gpuJs.ts).
  ['gpu.js through dist/gpu/runtime/gpujs/gpuJs', [process.execPath, '-e', `require(${JSON.stringify(path.join(__dirname, '..', 'dist', 'gpu', 'runtime', 'gpujs', 'gpuJs.js'))})`]],
  // Everything `run` loads and parses before its first scene: it stops at the missing folder.
  ['stereocut run MISSING-FOLDER --backend bk (exit 1)', [process.execPath, bin, 'run', path.join(__dirname, 'no-such-scene-folder'), '--backend', 'bk'], 1],
  ...(other ? [[`${other} --help`, [process.execPath, other, '--help']]] : []),
];

// `status`: the exit code the command must give (0 unless a case says otherwise).
const time = ([cmd, ...args], status = 0) => {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== status) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}, expected ${status}: ${r.stderr}`);
  return ms;
};

const rows = cases.map(([name, argv, status]) => {
  time(argv, status);
  const t = Array.from({ length: runs }, () => time(argv, status)).sort((a, b) => a - b);
  const median = runs % 2 ? t[(runs - 1) / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
  return [name, String(runs), median.toFixed(0), t[0].toFixed(0), t[runs - 1].toFixed(0)];
});
const head = ['command', 'runs', 'median ms', 'min ms', 'max ms'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
console.log(line(head));
console.log(`|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
for (const r of rows) console.log(line(r));
console.log(`\nnode ${process.version}, ${require('os').cpus().length} cores (${require('os').cpus()[0].model}), ${new Date().toISOString()}`);
