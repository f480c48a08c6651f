import { generateSyntheticScene } from '../data/synthetic';
import { ProgramStore } from '../gpu/move/keptPrograms';
import * as deviceProgram from '../gpu/move/deviceProgram';
import { createMatcher, match, type MatchOptions, type MatchResult } from '../stereo/match';
import * as paramSchema from '../stereo/paramSchema';
import * as matchOptions from '../stereo/matchOptions';
import { createSequenceMatcher } from '../stereo/sequence';

/**
 * A Matcher (stereo/match.ts): made once, compute() per pair, dispose().
 * Its results are match()'s, pair for pair; it keeps the device program
 * between its pairs in its own store (or the caller's), and two matchers
 * share nothing they are not given.
 */
jest.setTimeout(300_000);

const scenes = [3, 8].map((seed) => generateSyntheticScene({ width: 24, height: 16, ndisp: 6, seed }));
const same = (r: MatchResult): object => ({ labels: Array.from(r.disparity), energies: r.cycles.map((c) => c.energy.total), final: r.finalEnergy.total });

describe('createMatcher', () => {
  test('compute gives match()\'s labels and energies, pair after pair, on BK and on the device moves (gpu.js CPU backend), with and without the check', async () => {
    for (const backend of ['bk', 'gpujs-cpu'] as const) {
      for (const lrCheck of [false, true]) {
        const params: MatchOptions = { ndisp: 6, cost: 'census', lambda: 3, cycles: 2, lrCheck };
        const m = createMatcher(params, { backend });
        try {
          for (const s of scenes) {
            const got = await m.compute(s.left, s.right);
            const alone = await match(s.left, s.right, { ...params, backend });
            expect({ backend, lrCheck, ...same(got) }).toEqual({ backend, lrCheck, ...same(alone) });
          }
        } finally {
          await m.dispose();
        }
      }
    }
  });

  test('a matcher\'s pairs share one program store (the caller\'s when given, which outlives the matcher); separate matches and matchers have their own', async () => {
    // The store each device solver was given (on gpu.js's webasm backend no program is kept; the keeping itself: test/gpu-kept-programs.test.ts).
    const stores: Array<ProgramStore | undefined> = [];
    const acquire = deviceProgram.acquireProgram;
    const spy = jest.spyOn(deviceProgram, 'acquireProgram').mockImplementation((...a: Parameters<typeof acquire>) => {
      stores.push(a[5]);
      return acquire(...a);
    });
    const store = new ProgramStore();
    const release = jest.spyOn(store, 'release');
    const params: MatchOptions = { ndisp: 6, cost: 'census', cycles: 1, lrCheck: false };
    try {
      const given = createMatcher(params, { backend: 'gpujs-cpu', programs: store });
      await given.compute(scenes[0].left, scenes[0].right);
      await given.compute(scenes[1].left, scenes[1].right);
      await given.dispose();
      expect(release).not.toHaveBeenCalled();
      const own = createMatcher(params, { backend: 'gpujs-cpu' });
      await own.compute(scenes[0].left, scenes[0].right);
      await own.compute(scenes[1].left, scenes[1].right);
      await own.dispose();
      await match(scenes[0].left, scenes[0].right, { ...params, backend: 'gpujs-cpu' });
      await match(scenes[0].left, scenes[0].right, { ...params, backend: 'gpujs-cpu' });
    } finally {
      spy.mockRestore();
    }
    expect(stores.length).toBe(6);
    expect(stores.every((s) => s instanceof ProgramStore)).toBe(true);
    expect(stores.slice(0, 2)).toEqual([store, store]);
    expect(stores[2]).toBe(stores[3]);
    expect(new Set(stores).size).toBe(4);
  });

  test('two matchers of different settings, their pairs overlapping: each pair as its matcher gives it alone', async () => {
    const a: MatchOptions = { ndisp: 6, cost: 'census', lambda: 2, cycles: 2, lrCheck: false };
    const b: MatchOptions = { ndisp: 6, cost: 'sad', lambda: 5, cycles: 1, lrCheck: true, gpu: { keepPlans: false } };
    const alone = await Promise.all([a, b].map(async (p) => {
      const m = createMatcher(p, { backend: 'gpujs-cpu' });
      const out = [];
      for (const s of scenes) out.push(same(await m.compute(s.left, s.right)));
      await m.dispose();
      return out;
    }));
    const ma = createMatcher(a, { backend: 'gpujs-cpu' });
    const mb = createMatcher(b, { backend: 'gpujs-cpu' });
    try {
      const together = await Promise.all(scenes.flatMap((s) => [ma.compute(s.left, s.right), mb.compute(s.left, s.right)]));
      expect(together.map(same)).toEqual([alone[0][0], alone[1][0], alone[0][1], alone[1][1]]);
    } finally {
      await ma.dispose();
      await mb.dispose();
    }
  });

  test('options are checked when the matcher is made; a pair takes only a pair\'s options; compute after dispose is refused', async () => {
    expect(() => createMatcher({ ndisp: 6, censusWindw: 5 } as unknown as MatchOptions)).toThrow(/unknown option 'censusWindw'; did you mean censusWindow/);
    expect(() => createMatcher({ ndisp: 0 })).toThrow(/ndisp/);
    const m = createMatcher({ ndisp: 6 }, { backend: 'bk' });
    await expect(m.compute(scenes[0].left, scenes[0].right, { lambda: 3 } as never)).rejects.toThrow(/'lambda' is a matcher's option, not a pair's/);
    // dispose() waits for a pair in flight (whose solver then gives its program back before the store is released).
    let settled = false;
    const pending = m.compute(scenes[0].left, scenes[0].right).then(() => { settled = true; });
    await m.dispose();
    expect(settled).toBe(true);
    await pending;
    await m.dispose();
    await expect(m.compute(scenes[0].left, scenes[0].right)).rejects.toThrow(/compute\(\) after dispose\(\)/);
  });
  test('a match checks its options once and resolves its parameters once, at one level and coarse to fine, with and without the check; a sequence\'s when it and its matcher are made, and each frame\'s own options once', async () => {
    const checks = jest.spyOn(matchOptions, 'checkMatchOptions');
    const resolves = jest.spyOn(paramSchema, 'resolveParams');
    const big = generateSyntheticScene({ width: 64, height: 48, ndisp: 8, seed: 5 });
    try {
      for (const options of [{ lrCheck: false }, { lrCheck: true }, { lrCheck: true, levels: 2 }] as const) {
        checks.mockClear();
        resolves.mockClear();
        const r = await match(big.left, big.right, { ndisp: 8, cycles: 1, backend: 'bk', ...options });
        expect({ options, levels: r.pyramid ? r.pyramid.shapes.length : 1, checks: checks.mock.calls.length, resolves: resolves.mock.calls.length })
          .toEqual({ options, levels: options.levels ?? 1, checks: 1, resolves: 1 });
      }
      checks.mockClear();
      resolves.mockClear();
      const seq = createSequenceMatcher({ ndisp: 6, cycles: 1, backend: 'bk' });
      try {
        for (const s of [...scenes, ...scenes]) await seq.compute(s.left, s.right);
      } finally {
        await seq.dispose();
      }
      // The sequence's options when it is made, then each frame's (its warm start) with them; the parameters once for the sequence and once for its matcher.
      expect({ checks: checks.mock.calls.length, resolves: resolves.mock.calls.length }).toEqual({ checks: 2 + 4, resolves: 2 });
      // A pair's own options are still checked as given.
      const m = createMatcher({ ndisp: 6 }, { backend: 'bk' });
      try {
        await expect(m.compute(scenes[0].left, scenes[0].right, { initialLabels: new Uint16Array(3) })).rejects.toThrow(/initialLabels/);
        await expect(m.compute(scenes[0].left, scenes[0].right, { warmStart: { previousLeft: 'left.png' } as never })).rejects.toThrow(/previousLeft/);
      } finally {
        await m.dispose();
      }
    } finally {
      checks.mockRestore();
      resolves.mockRestore();
    }
  });
});
