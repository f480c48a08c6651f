import type { Argv } from 'yargs';
import { withParamOptions } from './paramOptions';
import { DEFAULT_METRIC } from '../tune/objective';

/** The options of `stereocut tune` (the shared energy options hold parameters fixed). */
export function tuneOptions<T>(y: Argv<T>) {
  return withParamOptions(y)
    .positional('scenes', { type: 'string', array: true, describe: 'scene folders, dataset folders, or synthetic[:seed=N,width=N,height=N,ndisp=N]' })
    .option('param', { alias: 'p', type: 'string', array: true, describe: 'NAME=a,b,c or NAME=start:end:step (random search also NAME=start:end); names: lambda, T, tau, cost, census-window, cue-factor, cue-threshold, cycles, window, lr-check, smoothness, border, order, graph, init' })
    .option('random', { type: 'number', describe: 'seeded random search with this many points (default: grid)' })
    .option('search-seed', { type: 'number', default: 1, describe: 'seed of the random search' })
    .option('metric', { type: 'string', default: DEFAULT_METRIC, describe: 'minimise bad<threshold>-<nonocc|all|disc|scene> averaged over scenes (scene: each scene\'s own region, nonocc where the dataset has the mask, every known pixel otherwise), or energy' })
    .option('workers', { type: 'number', describe: 'worker threads for CPU trials (default: one per core)' })
    .option('out-dir', { alias: 'out', type: 'string', default: 'stereocut-tune', describe: 'folder for trials.jsonl, trials.csv and tune.json (created if missing)' })
    .option('resume', { type: 'boolean', default: false, describe: 'continue the run in --out-dir, skipping trials already in trials.jsonl' })
    .option('scene-params', { type: 'boolean', default: true, describe: 'start known scenes from their own parameters (--no-scene-params: from the defaults)' })
    .option('baseline', { type: 'boolean', default: true, describe: 'also run every scene with its own parameters, as the hand-set reference' })
    .option('queue', { type: 'string', describe: 'run the trials on the workers of this BullMQ queue (redis://HOST:PORT/NAME; start them with stereocut worker); --resume collects what finished meanwhile' })
    .option('plan', { type: 'string', describe: 'write the list of trials here (.json) and run none: for stereocut trial --index on a batch scheduler; with --collect, the plan the rows belong to' })
    .option('collect', { type: 'string', describe: 'merge the rows stereocut trial wrote in this folder into --out-dir (missing and repeated rows named)' })
    .option('json', { type: 'boolean', default: false, describe: 'print the result as JSON' });
}
