import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as accuracy from '../app/accuracy/accuracy';
import { main } from '../app/cli';
import { writeSceneFolder } from './support/tuneSupport';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-accuracy-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const scenes = [path.join(tmp, 'one'), path.join(tmp, 'two'), path.join(tmp, 'three')];
beforeAll(async () => {
  for (const [i, dir] of scenes.entries()) await writeSceneFolder(dir, { seed: 31 + i, width: 48, height: 32, ndisp: 8 });
});

describe('stereocut accuracy', () => {
  test('prints a line per scene as each ends, before the next scene is matched, then the table', async () => {
    // What happened, in order: each scene's match started ("match NAME") and each line printed.
    const events: string[] = [];
    const original = accuracy.accuracyRow;
    const row = jest.spyOn(accuracy, 'accuracyRow');
    row.mockImplementation(async (scene, o) => {
      events.push(`match ${scene.name}`);
      return original(scene, o);
    });
    try {
      const code = await main(['accuracy', ...scenes, '--backend', 'bk', '--cycles', '1'], { out: (l) => events.push(l), err: (l) => events.push(`err ${l}`) });
      expect(code).toBe(0);
    } finally {
      row.mockRestore();
    }
    const names = ['one', 'two', 'three'];
    const lineOf = (name: string, k: number) => events.findIndex((e) => e.startsWith(`[${k + 1}/3] ${name}: nonocc bad>0.5 `));
    for (const [k, name] of names.entries()) {
      const line = lineOf(name, k);
      expect(line).toBeGreaterThan(events.indexOf(`match ${name}`));
      if (k + 1 < names.length) expect(line).toBeLessThan(events.indexOf(`match ${names[k + 1]}`));
      expect(events[line]).toMatch(/, >1 \d+\.\d\d%, >2 \d+\.\d\d%, \d+\.\d\d s$/);
    }
    const table = events.findIndex((e) => /^scene\s+region\s+bad>0\.5/.test(e));
    expect(table).toBeGreaterThan(lineOf('three', 2));
    expect(events.filter((e) => e.startsWith('err '))).toEqual([]);
  });

  test('--json and --quiet print no per-scene lines', async () => {
    for (const flag of ['--json', '--quiet']) {
      const out: string[] = [];
      const code = await main(['accuracy', scenes[0], '--backend', 'bk', '--cycles', '1', flag], { out: (l) => out.push(l), err: () => undefined });
      expect(code).toBe(0);
      expect(out.filter((l) => l.startsWith('[1/1]'))).toEqual([]);
      if (flag === '--json') expect(JSON.parse(out.join('\n')).rows).toHaveLength(1);
    }
  });
});
