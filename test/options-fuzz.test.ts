import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { seededRandom } from '../data/random';
import { generateSyntheticScene } from '../data/synthetic';
import { writePng } from '../data/imageIO';
import { main } from '../app/cli';
import { match, type MatchOptions } from '../stereo';
import { MATCH_OPTION_KEYS } from '../stereo/matchOptions';
import { DEFAULT_PARAMS } from '../stereo/params';

/**
 * Option values drawn at random, for the library and the command line. A
 * value is either accepted (the run ends, the value is the one that ran,
 * nothing but notices on stderr) or refused: by the library with a
 * TypeError or RangeError of one line naming the option as the library
 * spells it, by the command line with one line naming the flag, exit 1 (2 is
 * for a command line that cannot be parsed, which these are not), and no
 * output file.
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-fuzz-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const f = (name: string): string => path.join(tmp, name);
const W = 32;
const H = 24;
const scene = generateSyntheticScene({ width: W, height: H, ndisp: 4, seed: 9 });

beforeAll(async () => {
  await writePng(f('left.png'), scene.left);
  await writePng(f('right.png'), scene.right);
});

const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];

const LIBRARY_VALUES: readonly unknown[] = [
  '60', '', 'census', 'converge', 'sad', 'random', 'bk', NaN, Infinity, -Infinity, -1, -0.5, 0, 1, 1.5, 2, 3, 7, 1e308, -1e308, 2 ** 40,
  null, true, false, {}, [], [1, 2, 3], { width: 99, height: 99 }, { width: 5, height: 3 }, { width: 1, height: 1 }, { iterationsPerRound: 0 },
  { keepPlans: true }, { file: 'x.png', scale: 4 }, 1e6, new Uint16Array(3), new Uint16Array(W * H), () => undefined,
];

/** Runs match() with `options` over the base (few labels, no cycles, BK); the error, if refused. */
async function libraryRun(options: Record<string, unknown>): Promise<{ error?: unknown; params?: Record<string, unknown> }> {
  try {
    const r = await match(scene.left, scene.right, { ndisp: 4, backend: 'bk', cycles: 0, ...options } as MatchOptions);
    return { params: r.params as unknown as Record<string, unknown> };
  } catch (error) {
    return { error };
  }
}

test('library: a random value of a random option is run as given, or refused naming that option', async () => {
  const rand = seededRandom(4014);
  let refused = 0;
  for (let t = 0; t < 160; t++) {
    const keys = rand() < 0.8 ? [pick(rand, MATCH_OPTION_KEYS)] : [pick(rand, MATCH_OPTION_KEYS), pick(rand, MATCH_OPTION_KEYS)];
    const options: Record<string, unknown> = {};
    for (const k of keys) options[k] = pick(rand, LIBRARY_VALUES);
    const { error, params } = await libraryRun(options);
    const label = JSON.stringify({ t, options: Object.fromEntries(Object.entries(options).map(([k, v]) => [k, String(v)])) });
    if (error === undefined) {
      // Accepted: each parameter ran with the value given, nothing clamped or replaced.
      for (const k of keys) if (k in DEFAULT_PARAMS) expect({ label, k, ran: params![k] }).toEqual({ label, k, ran: options[k] });
      continue;
    }
    refused++;
    expect({ label, typed: error instanceof TypeError || error instanceof RangeError }).toEqual({ label, typed: true });
    const message = (error as Error).message;
    expect({ label, lines: message.split('\n').length }).toEqual({ label, lines: 1 });
    // The option's own value refused ("match: ndisp: got …"), or a limit refused for this pair, the option in parentheses ("… allowed (maxMemory); …").
    const named = keys.filter((k) => message.startsWith(`match: ${k}: got `) || message.includes(`(${k})`));
    expect({ label, message, named: named.length > 0 }).toEqual({ label, message, named: true });
    // A value refused by the option checks, and a limit refused with its ways out, speak the library's names only.
    expect({ label, message, flags: /--[a-z]/.test(message) }).toEqual({ label, message, flags: false });
  }
  // The pool is mostly wrong values: most draws are refused, some run.
  expect(refused).toBeGreaterThan(60);
  expect(refused).toBeLessThan(160);
});

const CLI_VALUES = ['abc', '', 'NaN', 'Infinity', '-1', '-7x7', '1e308', '0', '1.5', '2', '3', '99x99', '5x5', 'ncc', 'census', 'converge', '-0.5', '1e-9', 'zero', 'bk'];

/** Commands and the flags fuzzed on each, with the base command line (options by flag, so a fuzzed one replaces its base value). */
const COMMANDS: Array<{ name: string; head: () => string[]; base: Record<string, string>; flags: string[]; outputs: string[] }> = [
  {
    name: 'match',
    head: () => ['match', f('left.png'), f('right.png'), '-o', f('out.png'), '-q'],
    base: { '--ndisp': '4', '--backend': 'bk', '--cycles': '0' },
    flags: ['--ndisp', '--min-disp', '--max-disp', '--cost', '--census-window', '--tau', '--border', '--lambda', '--smoothness', '-T', '--truncation',
      '--cue-threshold', '--cue-factor', '--init', '--window', '--order', '--graph', '--cycles', '--seed', '--costs', '--backend', '--png-scale', '--scale', '--init-scale',
      '--levels', '--level-cycles', '--max-memory'],
    outputs: ['out.png'],
  },
  {
    name: 'export-mrf',
    head: () => ['export-mrf', f('left.png'), f('right.png'), '-o', f('out.smrf'), '-q'],
    base: { '--ndisp': '4' },
    flags: ['--ndisp', '--min-disp', '--max-disp', '--cost', '--census-window', '--tau', '--lambda', '--smoothness', '-T', '--cue-factor', '--window'],
    outputs: ['out.smrf'],
  },
  {
    name: 'eval',
    head: () => ['eval', f('left.png'), f('right.png'), '-q'],
    base: { '--disp-scale': '4', '--gt-scale': '4' },
    flags: ['--disp-scale', '--gt-scale', '--threshold'],
    outputs: [],
  },
  {
    name: 'demo',
    head: () => ['demo', '--out-dir', f('demo-out'), '-q'],
    base: { '--width': '40', '--height': '32', '--backend': 'bk', '--cycles': '0' },
    flags: ['--width', '--height', '--scene-seed', '--ndisp', '--lambda', '--census-window'],
    outputs: ['demo-out'],
  },
];

function listing(): string[] {
  return fs.readdirSync(tmp, { recursive: true }).map(String).sort();
}

test('command line: a random value of a random flag runs, or is refused in one line naming the flag, exit 1, no output', async () => {
  const rand = seededRandom(4016);
  const before = listing();
  let refused = 0;
  for (let t = 0; t < 120; t++) {
    const c = COMMANDS[t % COMMANDS.length];
    const flag = pick(rand, c.flags);
    const value = pick(rand, CLI_VALUES);
    // --scale is --png-scale's old name, -T --truncation's short one: the fuzzed spelling replaces the base's either way.
    const base = Object.entries(c.base).filter(([k]) => k !== flag && !(flag === '--max-disp' && k === '--ndisp')).flat();
    const args = [...c.head(), ...base, flag, value];
    const err: string[] = [];
    const code = await main(args, { out: () => undefined, err: (l) => err.push(l) });
    const label = JSON.stringify({ command: c.name, flag, value });
    const errors = err.filter((l) => !l.startsWith('note: '));
    if (code === 0) {
      expect({ label, errors }).toEqual({ label, errors: [] });
      for (const o of c.outputs) fs.rmSync(f(o), { recursive: true, force: true });
      expect(listing()).toEqual(before);
      continue;
    }
    refused++;
    expect({ label, code, lines: err.length }).toEqual({ label, code: 1, lines: 1 });
    expect({ label, message: err[0], named: err[0].startsWith(`stereocut: ${flag}`) }).toEqual({ label, message: err[0], named: true });
    expect({ label, files: listing() }).toEqual({ label, files: before });
  }
  expect(refused).toBeGreaterThan(30);
});
