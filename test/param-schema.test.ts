import yargs from 'yargs';
import { paramsFromArgs, withParamOptions } from '../app/commands/paramOptions';
import { commandLineMessage, NUMBER_RULES } from '../app/commands/optionValues';
import { seededRandom } from '../data/random';
import { checkMatchOptions } from '../stereo/matchOptions';
import { DEFAULT_PARAMS, type MatchParams } from '../stereo/params';
import { describeRule, expectedOf, PARAM_KEYS, PARAM_SCHEMA, resolveParams } from '../stereo/paramSchema';

/**
 * Each parameter is defined once (stereo/paramSchema.ts); the library's
 * checks, resolveParams, the command line's options, number rules and
 * value parsing are made from that one entry, so they agree: the same
 * values accepted, the same words for what is accepted, each side naming
 * the parameter as its caller spells it.
 */

describe('the parameter schema', () => {
  test('every parameter has one entry, and the command line declares each flag with the schema\'s type and help', async () => {
    expect(new Set(PARAM_KEYS)).toEqual(new Set([...Object.keys(DEFAULT_PARAMS), 'tau', 'censusWindow']));
    const declared = (withParamOptions(yargs([])) as unknown as { getOptions(): unknown }).getOptions() as { key: Record<string, unknown>; string: string[]; number: string[]; boolean: string[]; choices: Record<string, unknown> };
    const help = (await withParamOptions(yargs([])).getHelp());
    for (const k of PARAM_KEYS) {
      const s = PARAM_SCHEMA[k];
      expect([k, s.flag in declared.key]).toEqual([k, true]);
      expect([k, help.includes(s.help.slice(0, 40))]).toEqual([k, true]);
      if (s.kind === 'number') {
        expect([k, declared.number.includes(s.flag)]).toEqual([k, true]);
        expect([k, NUMBER_RULES[s.flag]]).toEqual([k, s.rule]);
      }
      if (s.kind === 'flag') expect([k, declared.boolean.includes(s.flag)]).toEqual([k, true]);
      if (s.kind === 'choice' && k !== 'init') expect([k, declared.choices[s.flag]]).toEqual([k, s.choices]);
    }
    // export-mrf takes the energy's parameters only.
    const energyOnly = (withParamOptions(yargs([]), 'energy') as unknown as { getOptions(): unknown }).getOptions() as { key: Record<string, unknown> };
    for (const k of PARAM_KEYS) expect([k, PARAM_SCHEMA[k].flag in energyOnly.key]).toEqual([k, PARAM_SCHEMA[k].scope === 'energy']);
  });

  test('on random values of every parameter, the library (match()\'s check and resolveParams) and the command line accept the same and refuse with the same words, each naming it its own way', () => {
    const rand = seededRandom(20261128);
    const numbers = [0, 1, 2, 3, 7, -1, 0.5, 1.25, 2.5, 1e9, 4294967296, -0];
    const strings = ['auto', 'converge', 'wta', 'zero', 'census', 'potts', 'x', '7x7', '9x7', '4x4', '1x1', '0', '3', '9', 'abc'];
    let refused = 0;
    for (let t = 0; t < 400; t++) {
      const k = PARAM_KEYS[Math.floor(rand() * PARAM_KEYS.length)];
      const s = PARAM_SCHEMA[k];
      const typed = s.kind === 'number' ? numbers[Math.floor(rand() * numbers.length)]
        : s.kind === 'flag' ? rand() < 0.5
          : s.kind === 'choice' ? (rand() < 0.6 ? s.choices![Math.floor(rand() * s.choices!.length)] : strings[Math.floor(rand() * strings.length)])
            : String(rand() < 0.5 ? numbers[Math.floor(rand() * numbers.length)] : strings[Math.floor(rand() * strings.length)]);
      if (k === 'init' && typed !== 'wta' && typed !== 'zero') continue; // the command line takes any other value as a file
      // λ and the cue factor together must also keep the weights within 32 bits (matchOptions.ts checkWeights): a rule of two parameters, not of one.
      if ((k === 'lambda' || k === 'cueFactor') && typeof typed === 'number' && typed > 1e6) continue;
      let cli: { value?: unknown; error?: string };
      try {
        cli = { value: paramsFromArgs({ [s.flag]: typed }).params[k] };
      } catch (e) {
        // As the command line prints it: the library's refusal under the flag, with the value as typed.
        cli = { error: commandLineMessage(e, [`--${s.flag}`, String(typed)], {}) };
      }
      // A choice outside the list is refused by yargs itself before paramsFromArgs; the library refuses it here.
      if (s.kind === 'choice' && !s.choices!.includes(typed as string)) cli = { error: `--${s.flag}: got '${String(typed)}', expected ${expectedOf(s)}` };
      if (cli.error) {
        refused++;
        expect(cli.error).toMatch(new RegExp(`^--${s.flag}: got '`));
        if (s.kind === 'number') expect(cli.error.endsWith(`expected ${describeRule(s.rule)}`)).toBe(true);
        continue;
      }
      const value = cli.value;
      // What the command line accepted, the library accepts as the same value.
      expect(() => checkMatchOptions({ ndisp: 8, [k]: value })).not.toThrow();
      expect(resolveParams({ [k]: value } as Partial<MatchParams>)[k]).toEqual(value);
    }
    expect(refused).toBeGreaterThan(20);
  });

  test('a value the library refuses is refused by match()\'s check and by resolveParams alike, naming the key and saying what is accepted', () => {
    const bad: Partial<Record<keyof MatchParams, unknown>> = { lambda: -1, window: 4, truncation: 1.5, cueFactor: 0.5, cycles: -1, levels: 9, censusWindow: { width: 4, height: 3 }, cost: 'ncc', lrCheck: 'yes', seed: 0.5 };
    for (const [k, v] of Object.entries(bad)) {
      const spec = PARAM_SCHEMA[k as keyof MatchParams];
      const expected = `expected ${expectedOf(spec)}`;
      expect(() => checkMatchOptions({ ndisp: 8, [k]: v })).toThrow(new RegExp(`^match: ${k}: got .*${expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
      expect(() => resolveParams({ [k]: v } as Partial<MatchParams>)).toThrow(new RegExp(`^match: ${k}: got .*${expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    }
  });
});
