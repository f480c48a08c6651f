import yargs, { Argv } from 'yargs';
import { processIo, Io } from './commands/common';
import { withParamOptions } from './commands/paramOptions';
import { matchCommand, MatchArgs } from './commands/matchCommand';
import { exportMrfCommand, ExportMrfArgs, solveMrfCommand, SolveMrfArgs } from './commands/mrfCommands';
import { evalCommand, EvalArgs } from './commands/evalCommand';
import { runCommand, RunArgs } from './commands/runCommand';
import { demoCommand, DemoArgs } from './commands/demoCommand';
import { tuneCommand, tuneOptions, TuneArgs } from './commands/tuneCommand';
import { benchCommand, benchOptions, BenchArgs } from './commands/benchCommand';
import { BACKENDS } from './params';
import { accuracyCommand, AccuracyArgs } from './commands/accuracyCommand';

/** match and export-mrf need a disparity range: without one it is a usage error, as a missing required option is. */
function needsRange(a: { ndisp?: unknown; 'max-disp'?: unknown }): true {
  if (a.ndisp === undefined && a['max-disp'] === undefined) throw new Error('Missing required argument: ndisp (or give --max-disp)');
  return true;
}

/**
 * The command line. Every command's handler returns an exit code; every
 * error becomes one line "stereocut: <message>" and exit code 1 (2 for
 * usage errors), and no command leaves a partly written output file (all
 * writers write to a temporary name and rename at the end).
 */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  let code = 0;
  let failure: string | undefined;
  const run = (fn: () => Promise<number>) => async () => { code = await fn(); };
  let task: (() => Promise<void>) | undefined;

  const parser = yargs(argv)
    .scriptName('stereocut')
    .usage('$0 <command> [options]\n\nDisparity maps by α-expansion graph cuts, scored the Middlebury way.')
    .command('match <left> <right>', 'disparity map of a rectified stereo pair', (y: Argv) => withParamOptions(y)
      .positional('left', { type: 'string', describe: 'left image (PNG, JPEG, PPM/PGM, PFM)' })
      .positional('right', { type: 'string', describe: 'right image' })
      .option('ndisp', { type: 'number', describe: 'number of disparities (labels 0..ndisp−1); or give --max-disp' })
      .option('min-disp', { type: 'number', describe: 'smallest disparity: label l is disparity min-disp + l (default 0)' })
      .option('max-disp', { type: 'number', describe: 'largest disparity (instead of --ndisp)' })
      .check(needsRange)
      .option('output', { alias: 'o', type: 'string', demandOption: true, describe: 'disparity PNG to write' })
      .option('pfm', { type: 'string', describe: 'also write the disparity in pixels as PFM' })
      .option('scale', { type: 'number', describe: 'PNG grey = disparity × scale (default: fill 0–255)' })
      .option('init-scale', { type: 'number', describe: 'scale of an integer image given to --init (default 1)' })
      .option('checkpoint', { type: 'string', describe: 'after every cycle, write the disparity so far here as PFM (a stopped run continues with --init FILE)' })
      .option('json', { type: 'boolean', default: false, describe: 'print the report as JSON' })
      .example('$0 match im2.png im6.png --ndisp 60 --cost sad+sgrad --lambda 10 -o disp.png --pfm disp.pfm', ''),
    (a) => { task = run(() => matchCommand(a as unknown as MatchArgs, io)); })
    .command('eval <disparity> [reference]', 'score a disparity map against ground truth', (y: Argv) => y
      .positional('disparity', { type: 'string', describe: 'disparity map (PFM in pixels, or an integer image with --disp-scale)' })
      .positional('reference', { type: 'string', describe: 'a Middlebury scene folder, or a ground-truth file with --scale' })
      .option('disp-scale', { type: 'number', describe: 'grey = disparity × this in an integer disparity image (required for PNG/PGM input)' })
      .option('scale', { type: 'number', describe: 'scale of a ground-truth file (grey / scale = disparity; 0 = unknown)' })
      .option('mask', { type: 'string', array: true, describe: 'regions: nonocc, all, disc, or a mask image (non-zero = evaluated); default all present' })
      .option('threshold', { type: 'number', array: true, describe: 'bad-pixel thresholds (default 1)' })
      .option('error-image', { type: 'string', describe: 'write the error image (bad pixels in red on the grey left image)' })
      .option('json', { type: 'boolean', default: false })
      .example('$0 eval disp.pfm ../shared/data/middlebury/teddy --threshold 1 2', '')
      .example('$0 eval disp.png gt.png --disp-scale 4 --scale 4', ''),
    (a) => { task = run(() => evalCommand(a as unknown as EvalArgs, io)); })
    .command('run <scenes..>', 'match and evaluate Middlebury scene folders, one row per scene', (y: Argv) => withParamOptions(y)
      .positional('scenes', { type: 'string', array: true, describe: 'scene folders' })
      .option('ndisp', { type: 'number', describe: 'override the scene\'s number of disparities' })
      .option('min-disp', { type: 'number', describe: 'smallest disparity (label 0); default 0, or calib vmin − 2 for MiddEval3 folders' })
      .option('max-disp', { type: 'number', describe: 'largest disparity; default ndisp − 1, or calib vmax + 2 for MiddEval3 folders' })
      .option('scene-params', { type: 'boolean', default: true, describe: 'tsukuba, venus, teddy and cones get their own parameters (--no-scene-params: every scene gets the defaults)' })
      .option('out', { type: 'string', describe: 'folder for per-scene outputs (disparity PNG/PFM, colour map, error image, metrics.json)' })
      .option('report', { type: 'string', describe: 'write a self-contained HTML report here (images in <name>-files/ beside it)' })
      .option('inline', { type: 'boolean', default: false, describe: 'embed the report images as data URIs' })
      .option('middeval3', { type: 'string', describe: 'write disp0<NAME>.pfm and time<NAME>.txt per scene in the MiddEval3 layout under this folder' })
      .option('middeval3-name', { type: 'string', default: 'stereocut', describe: 'algorithm name <NAME> in the MiddEval3 file names' })
      .option('middeval3-set', { type: 'string', describe: 'MiddEval3 set (trainingQ, trainingH, …) for folders whose path does not name one' })
      .option('threshold', { type: 'number', array: true, describe: 'bad-pixel thresholds (default 1)' })
      .option('json', { type: 'boolean', default: false })
      .example('$0 run ../shared/data/middlebury/tsukuba ../shared/data/middlebury/teddy --report out/report.html', '')
      .example('$0 run MiddEval3/trainingQ/Adirondack --middeval3 MiddEval3 --middeval3-name SCUT', ''),
    (a) => { task = run(() => runCommand(a as unknown as RunArgs, io)); })
    .command('accuracy <scenes..>', 'the default setting on Middlebury scene folders: bad % at 0.5 / 1 / 2 px beside OpenCV StereoSGBM, mean and ratio', (y: Argv) => withParamOptions(y)
      .positional('scenes', { type: 'string', array: true, describe: 'scene folders with ground truth' })
      .option('scene-params', { type: 'boolean', default: false, describe: 'tsukuba, venus, teddy and cones with their own parameters instead of the default' })
      .option('json', { type: 'boolean', default: false })
      .example('$0 accuracy ../shared/data/middlebury/* --backend bk', ''),
    (a) => { task = run(() => accuracyCommand(a as unknown as AccuracyArgs, io)); })
    .command('demo', 'match the built-in synthetic scene and score it', (y: Argv) => withParamOptions(y)
      .option('out', { type: 'string', default: 'stereocut-demo', describe: 'folder to write into' })
      .option('seed', { type: 'number', default: 1, describe: 'scene seed' })
      .option('width', { type: 'number', default: 160, describe: 'scene width' })
      .option('height', { type: 'number', default: 120, describe: 'scene height' })
      .option('ndisp', { type: 'number', describe: 'number of disparities (default width / 10)' })
      .option('json', { type: 'boolean', default: false })
      .example('$0 demo', ''),
    (a) => { task = run(() => demoCommand(a as unknown as DemoArgs, io)); })
    .command('export-mrf <left> <right>', 'write the stereo energy as an SMRF1 file', (y: Argv) => withParamOptions(y)
      .positional('left', { type: 'string' })
      .positional('right', { type: 'string' })
      .option('ndisp', { type: 'number', describe: 'number of disparities (labels 0..ndisp−1); or give --max-disp' })
      .option('min-disp', { type: 'number', describe: 'smallest disparity: label l is disparity min-disp + l (default 0)' })
      .option('max-disp', { type: 'number', describe: 'largest disparity (instead of --ndisp)' })
      .check(needsRange)
      .option('output', { alias: 'o', type: 'string', demandOption: true, describe: 'SMRF1 file to write' })
      .option('labels', { type: 'string', describe: 'also write the initial labeling (uint16) here' })
      .example('$0 export-mrf im2.png im6.png --ndisp 60 -o teddy.smrf --labels teddy.init.u16', ''),
    (a) => { task = run(() => exportMrfCommand(a as unknown as ExportMrfArgs, io)); })
    .command('solve-mrf <file>', 'minimise an SMRF1 energy by α-expansion', (y: Argv) => y
      .positional('file', { type: 'string' })
      .option('init', { type: 'string', describe: 'zero, or a uint16 labeling file' })
      .option('order', { choices: ['frequent', 'sequential', 'random'] })
      .option('graph', { choices: ['reversed', 'classic'] })
      .option('cycles', { type: 'string' })
      .option('seed', { type: 'number' })
      .option('skip-unchanged', { type: 'boolean', describe: 'skip moves that cannot lower the energy (default true)' })
      .option('backend', { choices: BACKENDS as unknown as string[], default: 'auto' })
      .option('verify', { type: 'boolean', default: false })
      .option('output', { alias: 'o', type: 'string', describe: 'uint16 labeling to write' })
      .option('checkpoint', { type: 'string', describe: 'after every cycle, write the labeling so far here (uint16; a stopped run continues with --init FILE)' })
      .option('png', { type: 'string', describe: 'labeling as a PNG (range fills 0–255)' })
      .option('json', { type: 'boolean', default: false })
      .example('$0 solve-mrf teddy.smrf --init teddy.init.u16 -o teddy.labels.u16', ''),
    (a) => { task = run(() => solveMrfCommand(a as unknown as SolveMrfArgs, io)); })
    .command('tune <scenes..>', 'search parameters over scenes (grid or seeded random), minimising bad pixels or energy', (y: Argv) => tuneOptions(y)
      .example('$0 tune ../shared/data/middlebury/tsukuba ../shared/data/middlebury/venus -p lambda=10,20,30 -p T=1:3:1 --backend bk --out tune-out', '')
      .example('$0 tune ../shared/data/middlebury --random 40 -p lambda=5:40 -p cue-factor=1:3 --out tune-out --resume', ''),
    (a) => { task = run(() => tuneCommand(a as unknown as TuneArgs, io)); })
    .command('bench [scenes..]', 'time scenes × backends × technique switches; tables shaped like Choi & Park\'s Table 3, Table 4 and Fig. 5', (y: Argv) => benchOptions(y)
      .example('$0 bench --backend bk', '')
      .example('$0 bench --backend gpu bk --repeat 3 --json-out bench.json --markdown BENCHMARKS.md', ''),
    (a) => { task = run(() => benchCommand(a as unknown as BenchArgs, io, argv)); })
    .demandCommand(1, 'give a command (see --help)')
    .strict()
    .recommendCommands()
    .help()
    .version(false)
    .wrap(Math.min(110, process.stdout.columns || 100))
    .exitProcess(false)
    .fail((msg, err) => { failure = err ? err.message : msg; });

  let helpShown = false;
  await parser.parseAsync(argv, {}, (err, _argv, output) => {
    if (output && !err) { io.out(output.trimEnd()); helpShown = true; }
  });
  if (failure !== undefined) {
    io.err(`stereocut: ${failure}`);
    return 2;
  }
  if (helpShown || !task) return 0;
  try {
    await task();
  } catch (err) {
    io.err(`stereocut: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  return code;
}

if (require.main === module) {
  // Exit once the output is flushed: the WebGPU runtime keeps native handles open after the work (see bin/stereocut.js).
  main(process.argv.slice(2)).then((c) => {
    process.exitCode = c;
    process.stdout.write('', () => process.stderr.write('', () => process.exit(c)));
  });
}
