import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../app/cli';
import { generateSyntheticScene } from '../data/synthetic';
import { writePng } from '../data/imageIO';
import { readResume, resumeFileOf } from '../app/checkpoint';

/**
 * `--init CHECKPOINT` continues a stopped run (issue 40, item 4): a run
 * resumed from cycle k's checkpoint runs cycles k+1… with the energies of
 * the run that was never stopped, the left–right check's right view
 * included (its labels are in the checkpoint's resume file), and ends with
 * the same disparity.
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-resume-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const f = (name: string): string => path.join(tmp, name);

interface Cycle { cycle: number; energy: { total: number }; cuts: number; skipped: number }
interface Run { code: number; err: string[]; json: { initialEnergy: { total: number }; cycles: Cycle[]; finalEnergy: { total: number } } }

async function matchJson(args: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['match', f('L.png'), f('R.png'), '--backend', 'bk', '--json', ...args], { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, err, json: code === 0 ? JSON.parse(out.join('\n')) : undefined };
}

beforeAll(async () => {
  const s = generateSyntheticScene({ width: 48, height: 36, ndisp: 10, seed: 21 });
  await writePng(f('L.png'), s.left);
  await writePng(f('R.png'), s.right);
});

describe.each([
  ['the left–right check on, frequent order', ['--init', 'zero']],
  ['random order, every move run', ['--order', 'random', '--seed', '7', '--no-skip-unchanged', '--init', 'zero']],
  ['the check off, sequential order', ['--no-lr-check', '--order', 'sequential', '--init', 'wta']],
])('%s', (label, settings) => {
  const tag = label.replace(/\W+/g, '-');
  const base = ['--ndisp', '10', '--cost', 'sad', ...settings];

  it('a run resumed from cycle 1 or 2 has the energies of the run never stopped, and its disparity', async () => {
    const whole = await matchJson([...base, '--cycles', '5', '-o', f(`${tag}-whole.png`)]);
    expect(whole.code).toBe(0);
    // Five cycles, or fewer when one changes no pixel (the run ends there); at least three here.
    const n = whole.json.cycles.length;
    expect(n).toBeGreaterThanOrEqual(3);
    expect(whole.json.cycles.map((c) => c.cycle)).toEqual([1, 2, 3, 4, 5].slice(0, n));
    // Cycle 2 still lowers the energy: a resumed run has something to get right.
    expect(whole.json.cycles[1].energy.total).toBeLessThan(whole.json.cycles[0].energy.total);
    for (const k of [1, 2]) {
      // A run stopped after cycle k left the checkpoint of cycle k.
      const ck = f(`${tag}-ck${k}.pfm`);
      const stopped = await matchJson([...base, '--cycles', String(k), '-o', f(`${tag}-stopped.png`), '--checkpoint', ck]);
      expect(stopped.code).toBe(0);
      expect(stopped.json.finalEnergy.total).toBe(whole.json.cycles[k - 1].energy.total);
      expect(fs.existsSync(resumeFileOf(ck))).toBe(true);
      const resumed = await matchJson([...base.filter((a, i) => a !== '--init' && base[i - 1] !== '--init'), '--init', ck, '--cycles', '5', '-o', f(`${tag}-resumed.png`)]);
      expect(resumed.code).toBe(0);
      expect(resumed.err).toEqual([expect.stringMatching(new RegExp(`^note: --init .*ck${k}\\.pfm: resuming that run after its cycle ${k}`))]);
      expect(resumed.json.initialEnergy.total).toBe(whole.json.cycles[k - 1].energy.total);
      const pick = (cs: Cycle[]) => cs.map((c) => ({ cycle: c.cycle, energy: c.energy.total, cuts: c.cuts, skipped: c.skipped }));
      expect(pick(resumed.json.cycles)).toEqual(pick(whole.json.cycles.slice(k)));
      expect(fs.readFileSync(f(`${tag}-resumed.png`))).toEqual(fs.readFileSync(f(`${tag}-whole.png`)));
    }
  });
});

describe('a resume file that does not belong', () => {
  it('to the run (other parameters): a note, and the checkpoint is an initial map', async () => {
    const ck = f('other.pfm');
    await matchJson(['--ndisp', '10', '--cost', 'sad', '--cycles', '1', '-o', f('o1.png'), '--checkpoint', ck]);
    const r = await matchJson(['--ndisp', '10', '--cost', 'sad', '--lambda', '7', '--cycles', '1', '-o', f('o2.png'), '--init', ck]);
    expect(r.code).toBe(0);
    expect(r.err).toEqual([expect.stringMatching(/^note: --init .*other\.pfm: .*other\.pfm\.resume belongs to another run .*; the run starts from its map alone/)]);
  });
  it('to the checkpoint (replaced since): not used', async () => {
    const ck = f('edited.pfm');
    await matchJson(['--ndisp', '10', '--cost', 'sad', '--cycles', '1', '-o', f('o3.png'), '--checkpoint', ck]);
    fs.copyFileSync(f('other.pfm'), ck);
    expect(readResume(ck, 'any', 48 * 36 * 2, 10)).toEqual({ why: expect.stringMatching(/belongs to another/) });
  });
});

describe('solve-mrf --init CHECKPOINT', () => {
  it('a run resumed from cycle 1 or 2 has the energies of the run never stopped, and its labeling', async () => {
    const quiet = { out: () => undefined, err: () => undefined };
    expect(await main(['export-mrf', f('L.png'), f('R.png'), '--ndisp', '10', '--cost', 'sad', '-o', f('e.smrf')], quiet)).toBe(0);
    const solve = async (args: string[]): Promise<Run> => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(['solve-mrf', f('e.smrf'), '--backend', 'bk', '--order', 'random', '--seed', '3', '--json', ...args], { out: (l) => out.push(l), err: (l) => err.push(l) });
      return { code, err, json: JSON.parse(out.join('\n')) };
    };
    const whole = await solve(['--cycles', '5', '-o', f('whole.u16')]);
    expect(whole.json.cycles[1].energy.total).toBeLessThan(whole.json.cycles[0].energy.total);
    for (const k of [1, 2]) {
      const ck = f(`ck${k}.u16`);
      await solve(['--cycles', String(k), '--checkpoint', ck]);
      const resumed = await solve(['--init', ck, '--cycles', '5', '-o', f('resumed.u16')]);
      expect(resumed.err).toEqual([expect.stringMatching(new RegExp(`resuming that run after its cycle ${k}`))]);
      expect(resumed.json.initialEnergy.total).toBe(whole.json.cycles[k - 1].energy.total);
      expect(resumed.json.cycles.map((c) => [c.cycle, c.energy.total, c.cuts])).toEqual(whole.json.cycles.slice(k).map((c) => [c.cycle, c.energy.total, c.cuts]));
      expect(fs.readFileSync(f('resumed.u16'))).toEqual(fs.readFileSync(f('whole.u16')));
    }
  });
});
