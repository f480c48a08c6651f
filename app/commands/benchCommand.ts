import * as fs from 'fs';
import { writeFilesAtomic } from '../../data/atomicWrite';
import { runBench, type BenchResult } from '../bench/runBench';
import type { KernelFamilies } from '../../gpu/maxflow/pushRelabelKernels';
import { allTables, benchMarkdown, parseBenchJson, tableText } from '../bench/tables';
import type { BackendName } from '../../stereo/params';
import { checkOutputPath, type Io } from './common';
import { checkOutputsApart, checkOutputsDistinct, sceneInputs } from './outputGuard';

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
  quiet: boolean;
}

/**
 * Who runs the bench: the command its result names (`stereocut`, or a
 * script's command line) and the kernel families its device steps may use
 * besides the product's (the ablation script's lockstep push and level BFS).
 */
export interface BenchCaller {
  command: string;
  families?: KernelFamilies;
}

export async function benchCommand(a: BenchArgs, io: Io, argv: string[] = process.argv.slice(2), caller: BenchCaller = { command: 'stereocut' }): Promise<number> {
  if (a['json-out']) checkOutputPath(a['json-out'], '--json-out', 'json');
  if (a.markdown) checkOutputPath(a.markdown, '--markdown', 'md');
  const outputs = [['--json-out', a['json-out']], ['--markdown', a.markdown]].filter((o): o is [string, string] => o[1] !== undefined).map(([name, file]) => ({ name, file }));
  checkOutputsApart(outputs, [...(a['from-json'] ? [{ name: '--from-json file', file: a['from-json'] }] : []), ...(a.scenes ?? []).flatMap(sceneInputs)]);
  checkOutputsDistinct(outputs);
  let result: BenchResult;
  let done = 0;
  if (a['from-json']) {
    const f = a['from-json'];
    if (!fs.existsSync(f)) throw new Error(`--from-json ${f}: no such file`);
    result = parseBenchJson(fs.readFileSync(f, 'utf8'), f);
  } else {
    result = await runBench({
      scenes: a.scenes, backends: a.backend as BackendName[] | undefined, techniques: a.techniques,
      cycles: a.cycles, repeat: a.repeat, k: { baseline: a['baseline-k'], tuned: a.k },
      command: [caller.command, ...argv].join(' '), families: caller.families,
      // Each finished run: redrawn in place on a terminal, a plain line otherwise; nothing with --quiet.
      onRun: a.quiet ? undefined : (r) => {
        const line = `${r.scene} ${r.backend} ${r.label}: ${(r.times.totalMs / 1000).toFixed(2)} s`;
        if (io.status) io.status(`${++done} runs done; last ${line}`);
        else if (!a.json) io.err(line);
      },
    });
    io.status?.('');
  }
  const json = JSON.stringify(result, null, 2) + '\n';
  // All or nothing: neither file is replaced unless both are written.
  writeFilesAtomic([...(a['json-out'] ? [{ file: a['json-out'], bytes: json }] : []), ...(a.markdown ? [{ file: a.markdown, bytes: benchMarkdown(result) }] : [])]);
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
