import * as fs from 'fs';
import type { Argv } from 'yargs';
import { writeFileAtomic } from '../../data/atomicWrite';
import { runBench, type BenchResult } from '../bench/runBench';
import { allTables, parseBenchJson, tableText, writeBenchMarkdown } from '../bench/tables';
import { TECHNIQUES } from '../bench/techniques';
import { BACKENDS, type BackendName } from '../params';
import { checkOutputPath, type Io } from './common';

export interface BenchArgs {
  scenes?: string[];
  backend?: string[];
  techniques?: string[];
  cycles: number;
  repeat: number;
  'baseline-k': number;
  k: number;
  json: boolean;
  'json-out'?: string;
  markdown?: string;
  'from-json'?: string;
}

export function benchOptions<T>(y: Argv<T>) {
  return y
    .positional('scenes', { type: 'string', array: true, describe: 'scene folders (default: tsukuba and teddy from $STEREO_DATA or ../shared/data)' })
    .option('backend', { type: 'string', array: true, choices: BACKENDS as unknown as string[], describe: 'max-flow backends to compare (default bk)' })
    .option('techniques', { type: 'string', array: true, describe: `technique switches, applied cumulatively from the baseline (default all: ${TECHNIQUES.join(',')})` })
    .option('cycles', { type: 'number', default: 4, describe: 'α-expansion cycles per run' })
    .option('repeat', { type: 'number', default: 1, describe: 'runs per configuration (median reported)' })
    .option('baseline-k', { type: 'number', default: 8, describe: 'push-relabel iterations per round in the baseline' })
    .option('k', { type: 'number', default: 16, describe: 'push-relabel iterations per round once the K technique is on' })
    .option('json', { type: 'boolean', default: false, describe: 'print the result as JSON instead of tables' })
    .option('json-out', { type: 'string', describe: 'also save the JSON result here' })
    .option('markdown', { type: 'string', describe: 'write BENCHMARKS.md-style markdown here' })
    .option('from-json', { type: 'string', describe: 'render a saved JSON result instead of running' });
}

export async function benchCommand(a: BenchArgs, io: Io, argv: string[] = process.argv.slice(2)): Promise<number> {
  if (a['json-out']) checkOutputPath(a['json-out'], '--json-out');
  if (a.markdown) checkOutputPath(a.markdown, '--markdown');
  let result: BenchResult;
  if (a['from-json']) {
    const f = a['from-json'];
    if (!fs.existsSync(f)) throw new Error(`--from-json ${f}: no such file`);
    result = parseBenchJson(fs.readFileSync(f, 'utf8'), f);
  } else {
    result = await runBench({
      scenes: a.scenes, backends: a.backend as BackendName[] | undefined, techniques: a.techniques,
      cycles: a.cycles, repeat: a.repeat, k: { baseline: a['baseline-k'], tuned: a.k },
      command: ['stereocut', ...argv].join(' '),
      onRun: a.json ? undefined : (r) => io.err(`${r.scene} ${r.backend} ${r.label}: ${(r.times.totalMs / 1000).toFixed(2)} s`),
    });
  }
  const json = JSON.stringify(result, null, 2) + '\n';
  if (a['json-out']) writeFileAtomic(a['json-out'], json);
  if (a.markdown) writeBenchMarkdown(a.markdown, result);
  if (a.json) {
    io.out(json.trimEnd());
    return 0;
  }
  for (const t of allTables(result)) {
    for (const l of tableText(t)) io.out(l);
    io.out('');
  }
  if (a['json-out']) io.out(`wrote ${a['json-out']}`);
  if (a.markdown) io.out(`wrote ${a.markdown}`);
  return 0;
}
