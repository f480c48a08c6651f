/**
 * The GPU ablation: `stereocut bench`'s technique chain (Choi & Park's
 * Fig. 5 shape) with the kernel families no default of the product uses,
 * the lockstep push and the level BFS (kernels/ablationFamilies.ts), given
 * to its device runs, so that the chain starts from them and the sweep and
 * scan techniques are steps of it. The options, tables and JSON are the
 * `bench` command's:
 *
 *   node dist/bench/gpuAblation.js $STEREO_DATA/tsukuba $STEREO_DATA/teddy --backend gpu --techniques sweep,scan,block,blockbfs
 *
 * (`npm run build:bench` first). Without --techniques every technique runs.
 */
import yargs from 'yargs';
import { benchCommand, type BenchArgs } from '../app/commands/benchCommand';
import { benchOptions } from '../app/commands/benchOptions';
import { processIo } from '../app/commands/io';
import { ABLATION_FAMILIES } from './kernels/ablationFamilies';

const COMMAND = 'node dist/bench/gpuAblation.js';

async function main(argv: string[]): Promise<number> {
  let args: BenchArgs | undefined;
  await yargs(argv)
    .scriptName(COMMAND)
    .command('$0 [scenes..]', 'the bench command\'s technique chain from the lockstep push and level BFS: tables shaped like Choi & Park\'s Table 3, Table 4 and Fig. 5', (y) => benchOptions(y), (a) => { args = a as unknown as BenchArgs; })
    .strict()
    .parseAsync();
  if (!args) return 0; // --help or --version answered
  return benchCommand(args, processIo, argv, { command: COMMAND, families: ABLATION_FAMILIES });
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e: unknown) => {
  process.stderr.write(`gpuAblation: ${(e as Error).message}\n`);
  process.exitCode = 1;
});
