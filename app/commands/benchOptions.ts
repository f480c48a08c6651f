import type { Argv } from 'yargs';
import { TECHNIQUES } from '../bench/techniques';
import { BACKENDS } from '../../stereo/params';

export function benchOptions<T>(y: Argv<T>) {
  return y
    .positional('scenes', { type: 'string', array: true, describe: 'scene folders (default: tsukuba and teddy from $STEREO_DATA)' })
    .option('backend', { type: 'string', array: true, choices: BACKENDS as unknown as string[], describe: 'max-flow backends to compare (default bk)' })
    .option('techniques', { type: 'string', array: true, describe: `technique switches, applied cumulatively from the baseline (default all: ${TECHNIQUES.join(',')}); on a device, sweep and scan start from the lockstep push and level BFS, which only the ablation script has (node dist/bench/gpuAblation.js)` })
    .option('cycles', { type: 'number', default: 4, describe: 'α-expansion cycles per run' })
    .option('repeat', { type: 'number', default: 1, describe: 'runs per configuration (median reported)' })
    .option('baseline-k', { type: 'number', default: 8, describe: 'push-relabel iterations per round in the baseline' })
    .option('k', { type: 'number', default: 16, describe: 'push-relabel iterations per round once the K technique is on' })
    .option('json', { type: 'boolean', default: false, describe: 'print the result as JSON instead of tables' })
    .option('json-out', { type: 'string', describe: 'also save the JSON result here' })
    .option('markdown', { type: 'string', describe: 'write BENCHMARKS.md-style markdown here' })
    .option('from-json', { type: 'string', describe: 'render a saved JSON result instead of running' });
}
