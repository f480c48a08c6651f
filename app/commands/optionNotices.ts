/**
 * Options the user gave that change nothing in the combination given (a
 * census window with a SAD cost, an --init-scale without an integer image
 * to scale), each as one line for stderr. Only options typed on the command
 * line count: the parameter options have no defaults in the parser, so a
 * value here was given. `tune` and `bench` set these per trial or run, and
 * are left out.
 */

type Args = Record<string, unknown>;

/** A rule: the notice when option `option`, given, has no effect with the rest of `a`. */
interface Rule {
  option: string;
  commands?: readonly string[];
  notice(a: Args): string | undefined;
}

const initOf = (a: Args): string => (typeof a.init === 'string' ? a.init : 'wta');

const RULES: readonly Rule[] = [
  {
    option: 'census-window',
    notice: (a) => (a.cost !== undefined && a.cost !== 'census' ? `--census-window has no effect with --cost ${String(a.cost)} (it shapes census costs only)` : undefined),
  },
  {
    option: 'init-scale',
    commands: ['match'],
    notice: (a) => (['wta', 'zero'].includes(initOf(a)) ? `--init-scale has no effect with --init ${initOf(a)} (it reads an integer disparity image given to --init)` : undefined),
  },
  {
    option: 'window',
    notice: (a) => (initOf(a) !== 'wta' && a.subpixel !== true ? `--window has no effect with --init ${initOf(a)} (it is the window of --init wta and of --subpixel)` : undefined),
  },
  {
    option: 'lr-fill',
    notice: (a) => (a['lr-check'] === false ? '--lr-fill has no effect with --no-lr-check (it fills the pixels the check marks)' : undefined),
  },
  {
    option: 'lr-median',
    notice: (a) => (a['lr-check'] === false ? '--lr-median has no effect with --no-lr-check (it fills the pixels the check marks)'
      : a['lr-fill'] === false ? '--lr-median has no effect with --no-lr-fill (it follows the row fill)' : undefined),
  },
  {
    option: 'cue-threshold',
    notice: (a) => (a['cue-factor'] === 1 ? '--cue-threshold has no effect with --cue-factor 1 (the cue is off)' : undefined),
  },
  {
    option: 'seed',
    notice: (a) => {
      const order = typeof a.order === 'string' ? a.order : 'frequent';
      return order !== 'random' ? `--seed has no effect with --order ${order} (it seeds the random order)` : undefined;
    },
  },
  {
    option: 'subpixel',
    commands: ['match'],
    notice: (a) => (a.subpixel === true && a.pfm === undefined ? '--subpixel has no effect without --pfm (the PNG holds whole disparities)' : undefined),
  },
  {
    option: 'subpixel',
    commands: ['video'],
    notice: (a) => (a.subpixel === true && a.pfm !== true ? '--subpixel has no effect without --pfm (the PNGs hold whole disparities)' : undefined),
  },
  {
    option: 'progress',
    commands: ['video'],
    notice: (a) => (a.progress === true ? '--progress has no effect with video (it prints a line per frame)' : undefined),
  },
];

const LEFT_OUT = ['tune', 'bench'];

/** The notices of `command`'s parsed options `a` (yargs' result: an option not given is undefined). */
export function optionNotices(command: string | undefined, a: Args): string[] {
  if (command === undefined || LEFT_OUT.includes(command)) return [];
  return RULES
    .filter((r) => a[r.option] !== undefined && (!r.commands || r.commands.includes(command)))
    .map((r) => r.notice(a))
    .filter((n): n is string => n !== undefined);
}
