import yargs, { Argv } from 'yargs';
import { processIo, type Io } from './commands/io';
import { withParamOptions } from './commands/paramOptions';
import { withRangeOptions } from './commands/rangeOptions';
import { checkNumberOptions, choiceError, commandLineMessage } from './commands/optionValues';
import { tuneOptions } from './commands/tuneOptions';
import { benchOptions } from './commands/benchOptions';
import { BACKENDS } from '../stereo/params';
import { closestName } from '../stereo/didYouMean';
import { optionNotices } from './commands/optionNotices';

/**
 * The command line. Every command's handler returns an exit code; every
 * error becomes one line "stereocut: <message>": exit code 2 when the
 * command line cannot be parsed (an unknown command or option, a missing
 * argument), 1 when a value (one outside an option's choices included) or a
 * file is refused. No command leaves a partly written output file (all writers
 * write to a temporary name and rename at the end), and every output path is
 * checked before any work starts.
 *
 * Only yargs and the option declarations load at start: each command's code
 * (and with it gpu.js and the solvers) is imported when that command runs,
 * so that `--help` answers at once.
 */

/** The package version, read from package.json (one level above dist/ and the sources alike). */
function packageVersion(): string {
  for (const p of ['../package.json', '../../package.json']) {
    try {
      const pkg = require(p) as { name?: string; version?: string };
      if (pkg.name === 'stereocut' && pkg.version) return pkg.version;
    } catch { /* the other layout */ }
  }
  return 'unknown';
}

/** What yargs' getOptions (not in its type declarations) tells of the options a command declared. */
interface DeclaredOptions {
  number: string[];
  boolean: string[];
  /** Long name → its other spellings. */
  alias: Record<string, string[]>;
}

/** What yargs' command instance (internal, not in its type declarations) tells of the commands declared: name → spec ("run <scenes..>"). */
interface CommandHandlers {
  getInternalMethods(): { getCommandInstance(): { getCommandHandlers(): Record<string, { original: string }> } };
}

/** The commands declared on the parser, with their usage: any `.command(…)` added to the chain is known here, nothing to keep in step. */
function declaredCommands(parser: unknown): Map<string, string> {
  const handlers = (parser as CommandHandlers).getInternalMethods().getCommandInstance().getCommandHandlers();
  return new Map(Object.entries(handlers).map(([name, h]) => [name, h.original]));
}

/** What skipHelpCache reads of yargs's internals (yargs 17; absent members leave yargs as it is). */
interface UsageInternals {
  getInternalMethods?(): { getUsageInstance?(): { cacheHelpMessage?: () => void } };
}

/**
 * yargs builds a command's whole help text right after calling its handler,
 * to show it should the command fail later: a noticeable part of a fresh
 * process for `run`, whose options are many. Here a handler only records the task,
 * and a failure is reported in one line, never with that text: it is not
 * built. (`--help` builds its text on its own path, untouched.)
 */
function skipHelpCache(parser: unknown): void {
  const usage = (parser as UsageInternals).getInternalMethods?.().getUsageInstance?.();
  if (typeof usage?.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => undefined;
}

export function unknownCommandMessage(name: string, commands: string[]): string {
  const near = closestName(name, commands);
  const hint = near ? `; did you mean ${near}?` : '';
  return `unknown command '${name}'${hint} (commands: ${commands.filter((c) => c !== 'help').join(', ')}; see stereocut --help)`;
}

/** yargs' messages about the command line, as one line naming the option or argument. */
function usageMessage(msg: string, command: string | undefined, argv: string[], usages: Map<string, string>): string {
  const see = command ? `see stereocut ${command} --help` : 'see stereocut --help';
  if (msg.startsWith('Invalid values:')) return choiceError(msg);
  const unknown = /^Unknown arguments?: (.*)$/s.exec(msg);
  if (unknown) {
    const names = unknown[1].split(', ');
    const opts = names.filter((n) => argv.some((t) => t === `--${n}` || t.startsWith(`--${n}=`) || t === `-${n}`));
    if (opts.length) return `unknown option ${opts.map((n) => (n.length === 1 ? `-${n}` : `--${n}`)).join(', ')} (${see})`;
    return `unexpected argument${names.length > 1 ? 's' : ''} ${names.join(' ')} (${see})`;
  }
  const missing = /^Missing required arguments?: (.*)$/s.exec(msg);
  if (missing) return `${missing[1].split(', ').map((n) => `--${n}`).join(', ')} required (${see})`;
  if (/^Not enough non-option arguments/.test(msg)) {
    const usage = (command && usages.get(command)) ?? command ?? '';
    return `${command ?? 'stereocut'}: missing arguments; usage: stereocut ${usage} (${see})`;
  }
  return msg.replace(/\s*\n\s*/g, ' ');
}

/**
 * `--name -7x7` (or `-T -1e5`) as `--name=-7x7`: a value that starts with a dash and a
 * digit (a negative number, a size such as -7x7) belongs to the option
 * before it, so that it is refused as that option's value rather than read
 * as the one-letter options -7, -x, -7. Nothing after `--` is touched.
 */
export function attachDashValues(argv: string[]): { argv: string[]; attached: string[] } {
  const out: string[] = [];
  const attached: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i];
    if (tok === '--') return { argv: [...out, ...argv.slice(i)], attached };
    if (/^(--[A-Za-z][\w-]*|-[A-Za-z])$/.test(tok) && !tok.startsWith('--no-') && i + 1 < argv.length && /^-\.?\d/.test(argv[i + 1])) {
      out.push(`${tok}=${argv[i + 1]}`);
      attached.push(out[out.length - 1]);
      i++;
    } else {
      out.push(tok);
    }
  }
  return { argv: out, attached };
}

export async function main(argvIn: string[], io: Io = processIo): Promise<number> {
  // "help CMD" is "CMD --help"; "help" alone the top-level help.
  const { argv, attached } = attachDashValues(argvIn[0] === 'help' ? [...argvIn.slice(1, 2), '--help'] : argvIn);
  let code = 0;
  let failure: string | undefined;
  let task: (() => Promise<number>) | undefined;
  // The options the command declared, taken in its handler (yargs forgets them after parsing).
  let declared: DeclaredOptions = { number: [], boolean: [], alias: {} };
  // Each handler imports its command's code only when it runs.
  const handle = (fn: (a: never) => Promise<number>) => (a: unknown) => {
    declared = (parser as unknown as { getOptions(): DeclaredOptions }).getOptions();
    task = () => fn(a as never);
  };

  const parser = yargs(argv)
    .scriptName('stereocut')
    .usage('$0 <command> [options]\n\nDisparity maps by α-expansion graph cuts, scored the Middlebury way. "stereocut help <command>" or "stereocut <command> --help" shows a command\'s options.')
    .command('match <left> <right>', 'disparity map of a rectified stereo pair', (y: Argv) => withRangeOptions(withParamOptions(y))
      .positional('left', { type: 'string', describe: 'left image (PNG, JPEG, PPM/PGM, PFM)' })
      .positional('right', { type: 'string', describe: 'right image' })
      .option('output', { alias: 'o', type: 'string', describe: 'disparity PNG to write (.png): 8-bit, or 16-bit when disparity × scale passes 255; optional with --pfm' })
      .option('pfm', { type: 'string', describe: 'also write the disparity in pixels as PFM (.pfm)' })
      .option('png-scale', { alias: 'scale', type: 'number', describe: 'PNG grey = disparity × this (default: fill 0–255)' })
      .option('init-scale', { type: 'number', describe: 'grey = disparity × this in an integer image given to --init (default 1)' })
      .option('max-memory', { type: 'number', describe: 'GB of memory the run may use; a pair whose estimate (from the image headers) passes it is refused before any work (default 85 % of the machine)' })
      .option('checkpoint', { type: 'string', describe: 'after every cycle, write the disparity so far here as PFM, and FILE.resume beside it (--init FILE continues the stopped run exactly)' })
      .option('color', { type: 'string', describe: 'also write the disparity in the turbo colour map with its scale beside it (.png; invalid pixels black)' })
      .option('depth', { type: 'string', describe: 'also write depth Z = f·B / (d + doffs): PFM in the baseline\'s unit (inf = unknown), or 16-bit PNG in mm (0 = unknown)' })
      .option('ply', { type: 'string', describe: 'also write the point cloud, x y z and colour of every pixel with a depth (.ply, binary little-endian)' })
      .option('calib', { type: 'string', describe: 'camera of --depth/--ply: a MiddEval3 calib.txt (default: calib.txt beside the left image)' })
      .option('focal', { type: 'number', describe: 'camera of --depth/--ply instead of --calib: focal length in pixels' })
      .option('baseline', { type: 'number', describe: 'with --focal: the baseline (its unit is the depth\'s; mm for a 16-bit PNG)' })
      .option('doffs', { type: 'number', describe: 'with --focal: principal points\' offset cx1 − cx0 in pixels (default 0)' })
      .option('cx', { type: 'number', describe: 'with --focal: principal point x (default: the image centre)' })
      .option('cy', { type: 'number', describe: 'with --focal: principal point y (default: the image centre)' })
      .option('confidence', { type: 'string', describe: 'also write each pixel\'s confidence: .png 0–255 or .pfm 0–1 (left–right agreement × cost margin × distance to a disparity edge)' })
      .option('json', { type: 'boolean', default: false, describe: 'print the record of the run as JSON' })
      .example('$0 match im2.png im6.png --ndisp 60 --cost sad+sgrad --lambda 10 -o disp.png --pfm disp.pfm', '')
      .example('$0 match im0.png im1.png --ndisp 64 -o disp.png --color disp-color.png --depth depth.pfm --ply cloud.ply --calib calib.txt --confidence conf.png', ''),
    handle(async (a) => (await import('./commands/matchCommand')).matchCommand(a, io)))
    .command('eval <disparity> [reference]', 'score a disparity map against ground truth', (y: Argv) => y
      .positional('disparity', { type: 'string', describe: 'disparity map (PFM in pixels, or an integer image with --disp-scale)' })
      .positional('reference', { type: 'string', describe: 'a Middlebury scene folder, or a ground-truth file with --gt-scale' })
      .option('disp-scale', { type: 'number', describe: 'grey = disparity × this in an integer disparity image (required for PNG/PGM input)' })
      .option('gt-scale', { alias: 'scale', type: 'number', describe: 'grey = disparity × this in a ground-truth image (grey 0 = unknown)' })
      .option('mask', { type: 'string', array: true, describe: 'regions: nonocc, all, disc, or a mask image (non-zero = evaluated); default all present' })
      .option('threshold', { type: 'number', array: true, describe: 'bad-pixel thresholds in pixels (default 1)' })
      .option('error-image', { type: 'string', describe: 'write the error image (.png; bad pixels in red on the grey left image)' })
      .option('json', { type: 'boolean', default: false, describe: 'print the scores as JSON' })
      .example('$0 eval disp.pfm $STEREO_DATA/teddy --threshold 1 2', '')
      .example('$0 eval disp.png gt.png --disp-scale 4 --gt-scale 4', ''),
    handle(async (a) => (await import('./commands/evalCommand')).evalCommand(a, io)))
    .command('run <scenes..>', 'match and evaluate Middlebury scene folders, one row per scene', (y: Argv) => withParamOptions(y)
      .positional('scenes', { type: 'string', array: true, describe: 'scene folders, or folders of scene folders (without ground truth: no scores, give --ndisp or --max-disp)' })
      .option('ndisp', { type: 'number', describe: 'override the scene\'s number of disparities' })
      .option('min-disp', { type: 'number', describe: 'smallest disparity (label 0); default 0, or calib vmin − 2 for MiddEval3 folders' })
      .option('max-disp', { type: 'number', describe: 'largest disparity; default ndisp − 1, or calib vmax + 2 for MiddEval3 folders' })
      .option('scene-params', { type: 'boolean', default: true, describe: 'tsukuba, venus, teddy and cones get their own parameters (--no-scene-params: every scene gets the defaults)' })
      .option('out-dir', { alias: 'out', type: 'string', describe: 'folder for per-scene outputs (disparity PNG/PFM, colour map, error image, metrics.json); created if missing' })
      .option('report', { type: 'string', describe: 'write a self-contained HTML report here (.html; images embedded; with --out-dir it links each scene\'s PFM and metrics.json there)' })
      // The report always embeds its images now; the flag that asked for it stays accepted for scripts that pass it.
      .option('inline', { type: 'boolean', hidden: true })
      .option('middeval3', { type: 'string', describe: 'write disp0<NAME>.pfm and time<NAME>.txt per scene in the MiddEval3 layout under this folder' })
      .option('middeval3-name', { type: 'string', default: 'stereocut', describe: 'algorithm name <NAME> in the MiddEval3 file names' })
      .option('middeval3-set', { type: 'string', describe: 'MiddEval3 set (trainingQ, trainingH, …) for folders whose path does not name one' })
      .option('threshold', { type: 'number', array: true, describe: 'bad-pixel thresholds in pixels (default 1; one column group per threshold)' })
      .option('queue', { type: 'string', describe: 'match the scenes on the workers of this BullMQ queue (redis://HOST:PORT/NAME; stereocut worker), one scene a job; outputs are written here' })
      .option('json', { type: 'boolean', default: false, describe: 'print the records of the runs as JSON' })
      .example('$0 run $STEREO_DATA/tsukuba $STEREO_DATA/map --report report.html', '')
      .example('$0 run $STEREO_DATA/tsukuba $STEREO_DATA/venus --queue redis://localhost:6379/scenes --out-dir results', '')
      .example('$0 run MiddEval3/trainingQ/Adirondack --middeval3 MiddEval3 --middeval3-name SCUT', ''),
    handle(async (a) => (await import('./commands/runCommand')).runCommand(a, io)))
    .command('accuracy <scenes..>', 'the default setting on Middlebury scene folders: bad % at 0.5 / 1 / 2 px beside OpenCV StereoSGBM, mean and ratio', (y: Argv) => withParamOptions(y)
      .positional('scenes', { type: 'string', array: true, describe: 'scene folders with ground truth, or folders of them' })
      .option('scene-params', { type: 'boolean', default: false, describe: 'tsukuba, venus, teddy and cones with their own parameters instead of the default' })
      .option('json', { type: 'boolean', default: false, describe: 'print the rows as JSON' })
      .example('$0 accuracy $STEREO_DATA/tsukuba $STEREO_DATA/map --backend bk', ''),
    handle(async (a) => (await import('./commands/accuracyCommand')).accuracyCommand(a, io)))
    .command('demo', 'match the built-in synthetic scene and score it', (y: Argv) => withParamOptions(y)
      .option('out-dir', { alias: 'out', type: 'string', default: 'stereocut-demo', describe: 'folder to write into (created if missing)' })
      .option('scene-seed', { type: 'number', default: 1, describe: 'seed of the synthetic scene (--seed is the label-order seed, as in every command)' })
      .option('width', { type: 'number', default: 160, describe: 'scene width' })
      .option('height', { type: 'number', default: 120, describe: 'scene height' })
      .option('ndisp', { type: 'number', describe: 'number of disparities (default width / 10)' })
      .option('json', { type: 'boolean', default: false, describe: 'print the record of the run as JSON' })
      .example('$0 demo', '')
      .example('$0 demo --scene-seed 3 --width 320 --height 240 --out-dir demo-3', ''),
    handle(async (a) => (await import('./commands/demoCommand')).demoCommand(a, io)))
    .command('export-mrf <left> <right>', 'write the stereo energy as an SMRF1 file (for outside solvers, or solve-mrf)', (y: Argv) => withRangeOptions(withParamOptions(y, 'energy'))
      .positional('left', { type: 'string', describe: 'left image (PNG, JPEG, PPM/PGM, PFM)' })
      .positional('right', { type: 'string', describe: 'right image' })
      .option('output', { alias: 'o', type: 'string', demandOption: true, describe: 'SMRF1 file to write (.smrf)' })
      .option('labels', { type: 'string', describe: 'also write the initial labeling (--init wta or zero) here as uint16 (.u16)' })
      .example('$0 export-mrf im2.png im6.png --ndisp 60 -o teddy.smrf --labels teddy.init.u16', ''),
    handle(async (a) => (await import('./commands/mrfCommands')).exportMrfCommand(a, io)))
    .command('solve-mrf <file>', 'minimise an SMRF1 energy by α-expansion', (y: Argv) => y
      .positional('file', { type: 'string', describe: 'SMRF1 energy (written by export-mrf; format: docs/smrf.md in the package)' })
      .option('init', { type: 'string', describe: 'initial labeling: zero, or a uint16 labeling file (default zero)' })
      .option('order', { choices: ['frequent', 'sequential', 'random'], describe: 'label order per cycle (default frequent)' })
      .option('graph', { choices: ['reversed', 'classic'], describe: 'binary graph construction (default reversed)' })
      .option('cycles', { type: 'string', describe: 'α-expansion cycles, or "converge" (default 4)' })
      .option('seed', { type: 'number', describe: 'seed of the random label order (default 1)' })
      .option('skip-unchanged', { type: 'boolean', describe: 'skip moves that cannot lower the energy (default true)' })
      .option('backend', { choices: BACKENDS as unknown as string[], default: 'auto', describe: 'max-flow backend' })
      .option('verify', { type: 'boolean', default: false, describe: 'solve every cut also with the CPU solver and fail on any difference' })
      .option('output', { alias: 'o', type: 'string', describe: 'uint16 labeling to write (.u16)' })
      .option('checkpoint', { type: 'string', describe: 'after every cycle, write the labeling so far here (uint16), and FILE.resume beside it (--init FILE continues the stopped run exactly)' })
      .option('png', { type: 'string', describe: 'also write the labeling as a PNG (.png; the range fills 0–255)' })
      .option('json', { type: 'boolean', default: false, describe: 'print the record of the run as JSON' })
      .example('$0 solve-mrf teddy.smrf --init teddy.init.u16 -o teddy.labels.u16', ''),
    handle(async (a) => (await import('./commands/mrfCommands')).solveMrfCommand(a, io)))
    .command('tune [scenes..]', 'search parameters over scenes (grid or seeded random), minimising bad pixels or energy', (y: Argv) => tuneOptions(y)
      .example('$0 tune $STEREO_DATA/tsukuba $STEREO_DATA/map -p lambda=4,8 --backend bk --out-dir tune-out', '')
      .example('$0 tune $STEREO_DATA/tsukuba $STEREO_DATA/map --random 4 -p lambda=3:12 -p cue-factor=1:3 --out-dir tune-out --resume', '')
      .example('$0 tune $STEREO_DATA/tsukuba -p lambda=4,5,6 --queue redis://localhost:6379/study --out-dir tune-out', '')
      .example('$0 tune $STEREO_DATA/tsukuba -p lambda=4,5,6 --plan plan.json', '')
      .example('$0 tune --collect rows --out-dir tune-out', ''),
    handle(async (a) => (await import('./commands/tuneCommand')).tuneCommand(a, io)))
    .command('worker', 'run the trials of a tune --queue study (BullMQ on Redis) until stopped', (y: Argv) => y
      .option('queue', { type: 'string', demandOption: true, describe: 'the queue: redis://HOST:PORT/NAME, as tune --queue names it' })
      .option('concurrency', { type: 'number', describe: 'trials at a time (default: one per core with bk; a GPU backend runs one)' })
      .option('backend', { choices: BACKENDS as unknown as string[], default: 'auto', describe: 'max-flow backend of the trials run here' })
      .option('lock-seconds', { type: 'number', describe: 'a job of a worker that stopped answering goes back to the queue after this long (default 30)' })
      .example('$0 worker --queue redis://localhost:6379/study --concurrency 4 --backend bk', ''),
    handle(async (a) => (await import('./commands/workerCommand')).workerCommand(a, io)))
    .command('trial', 'run one trial of a tune --plan file and write its row (for batch schedulers: Kubernetes Indexed Jobs, AWS Batch array jobs)', (y: Argv) => y
      .option('plan', { type: 'string', demandOption: true, describe: 'the plan written by tune --plan' })
      .option('index', { type: 'number', describe: 'the trial, 0-based (default: $JOB_COMPLETION_INDEX, else $AWS_BATCH_JOB_ARRAY_INDEX)' })
      .option('out-dir', { type: 'string', demandOption: true, describe: 'folder for the row (<trial id>.json) and a copy of the plan; created if missing' })
      .option('backend', { choices: BACKENDS as unknown as string[], default: 'auto', describe: 'max-flow backend' })
      .option('json', { type: 'boolean', default: false, describe: 'print the row as JSON' })
      .example('$0 trial --plan plan.json --index 0 --out-dir rows --backend bk', ''),
    handle(async (a) => (await import('./commands/trialCommand')).trialCommand(a, io)))
    .command('bench [scenes..]', 'time scenes × backends × technique switches; tables shaped like Choi & Park\'s Table 3, Table 4 and Fig. 5', (y: Argv) => benchOptions(y)
      .example('$0 bench --backend bk', '')
      .example('$0 bench --backend gpu bk --repeat 3 --json-out bench.json --markdown BENCHMARKS.md', ''),
    handle(async (a) => (await import('./commands/benchCommand')).benchCommand(a, io, argv)))
    .command('video <left> <right>', 'disparity maps of a stereo sequence, each frame started from the previous one (dynamic cuts)', (y: Argv) => withRangeOptions(withParamOptions(y))
      .positional('left', { type: 'string', describe: 'left frames: a folder of images (paired with the right folder\'s in name order), or a pattern such as left/%04d.png' })
      .positional('right', { type: 'string', describe: 'right frames: a folder or a pattern, as many frames as the left' })
      .option('out-dir', { alias: 'out', type: 'string', demandOption: true, describe: 'folder for each frame\'s disparity PNG, named after its left frame (created if missing)' })
      .option('pfm', { type: 'boolean', default: false, describe: 'also write each frame\'s disparity in pixels as NAME.pfm' })
      .option('color', { type: 'boolean', default: false, describe: 'also write each frame\'s turbo colour map with its scale as NAME-color.png' })
      .option('png-scale', { alias: 'scale', type: 'number', describe: 'PNG grey = disparity × this (default: fill 0–255)' })
      .option('warm', { type: 'boolean', default: true, describe: 'start each frame from the previous frame\'s labels (and flows, on the GPU) unless that start\'s energy is above a fresh start\'s; --no-warm matches every frame on its own' })
      .option('warm-cycles', { type: 'string', describe: 'α-expansion cycles of a frame that starts warm, or "converge" (default 1)' })
      .option('max-memory', { type: 'number', describe: 'GB of memory a frame\'s match may use; frames whose estimate (from the first frame\'s header) passes it are refused before any work (default 85 % of the machine)' })
      .option('keyframe', { type: 'number', describe: 'every Nth frame that starts warm is also matched fresh and the lower final energy kept (1: every frame; default 0, none)' })
      .option('json', { type: 'boolean', default: false, describe: 'print the frames\' rows as JSON' })
      .example('$0 video left right --ndisp 16 --out-dir disp --color', '')
      .example('$0 video cam/left_%04d.png cam/right_%04d.png --max-disp 63 --out-dir disp --keyframe 10 --json', ''),
    handle(async (a) => (await import('./commands/videoCommand')).videoCommand(a, io)))
    .command('help [command]', 'show the options of a command')
    .option('quiet', { alias: 'q', type: 'boolean', default: false, global: true, describe: 'print only the result (no live progress, no per-cycle lines)' })
    .example('$0 demo', 'match a synthetic scene and score it (writes stereocut-demo/)')
    .example('$0 match left.png right.png --ndisp 64 -o disp.png', 'disparity map of your own pair')
    .example('$0 run $STEREO_DATA/tsukuba --report report.html', 'match and score a Middlebury scene, with an HTML report')
    .demandCommand(1, 'give a command (see stereocut --help)')
    .strict()
    .help()
    .alias('help', 'h')
    .version(packageVersion())
    .alias('version', 'v')
    .wrap(Math.min(110, process.stdout.columns || 100))
    .exitProcess(false)
    .fail((msg, err) => { failure ??= err ? err.message : msg; });

  skipHelpCache(parser);
  const commands = declaredCommands(parser);
  const first = argv[0];
  if (first !== undefined && !first.startsWith('-') && !commands.has(first)) {
    io.err(`stereocut: ${unknownCommandMessage(first, [...commands.keys()])}`);
    return 2;
  }
  let helpShown = false;
  const args = await parser.parseAsync(argv, {}, (err, _argv, output) => {
    if (output && !err) { io.out(output.trimEnd()); helpShown = true; }
  });
  const command = typeof args._[0] === 'string' ? args._[0] : undefined;
  if (failure !== undefined) {
    io.err(`stereocut: ${usageMessage(failure, command, argv, commands)}`);
    // A value outside an option's choices is a refused value like any other (1); 2 is for a command line that cannot be parsed.
    return failure.startsWith('Invalid values:') ? 1 : 2;
  }
  if (helpShown || !task) return 0;
  // A dash value attached to a switch (--verify -5) is an argument the command does not take, as before attachDashValues.
  const switched = attached.find((t) => declared.boolean.includes(t.slice(0, t.indexOf('=')).replace(/^--?/, '')));
  if (switched) {
    io.err(`stereocut: unexpected argument ${switched.slice(switched.indexOf('=') + 1)} (see stereocut ${command} --help)`);
    return 2;
  }
  try {
    const aliasNames = new Set(Object.values(declared.alias).flat());
    checkNumberOptions(args as Record<string, unknown>, declared.number.filter((k) => !aliasNames.has(k)), declared.alias, argv);
    code = await task();
    // After the work, so that a refusal stays one line: options given that changed nothing.
    if (code === 0 || code === 130) for (const n of optionNotices(command, args as Record<string, unknown>)) io.err(`note: ${n}`);
  } catch (err) {
    io.err(`stereocut: ${commandLineMessage(err, argv, declared.alias)}`);
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
