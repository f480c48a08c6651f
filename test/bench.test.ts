import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runBench, stepKernels, type BenchResult } from '../app/bench/runBench';
import { benchMarkdown, figure5, parseBenchJson, table3, table4 } from '../app/bench/tables';
import { cumulativeSteps, parseTechniques, TECHNIQUES } from '../app/bench/techniques';
import { main } from '../app/cli';
import { ABLATION_FAMILIES } from '../bench/kernels/ablationFamilies';
import { FULL_TESTS } from './support/testScope';

/**
 * The command line run by main() in this process, stdout and stderr captured:
 * the same parsing and handlers as the installed command, without a process
 * start per call (cli.test.ts and tune-cli.test.ts spawn it).
 */
async function runCli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-bench-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const K = { baseline: 8, tuned: 16 };

describe('technique chain', () => {
  test('each step switches exactly one technique on, in the paper order; BK leaves out the device-only ones', () => {
    // With the ablation's lockstep push and level BFS, which the sweep and scan techniques start from.
    const gpu = cumulativeSteps(TECHNIQUES, 'gpu', K, stepKernels(false, ABLATION_FAMILIES));
    expect(gpu.map((s) => s.id)).toEqual(['baseline', 'graph', 'init', 'order', 'sweep', 'scan', 'k', 'rounds', 'resume', 'gate', 'warm']);
    expect(gpu[0].config).toEqual({ graph: 'classic', init: 'zero', order: 'sequential', push: 'lockstep', bfs: 'level', k: 8, rounds: 'fixed', resume: false, gate: false, warm: false });
    expect(gpu[gpu.length - 1].config).toEqual({ graph: 'reversed', init: 'wta', order: 'frequent', push: 'sweep', bfs: 'scan', k: 16, rounds: 'adaptive', resume: true, gate: true, warm: true });
    for (let i = 1; i < gpu.length; i++) {
      const a = gpu[i - 1].config as unknown as Record<string, unknown>;
      const b = gpu[i].config as unknown as Record<string, unknown>;
      expect(Object.keys(a).filter((k) => a[k] !== b[k])).toHaveLength(1);
    }
    expect(cumulativeSteps(TECHNIQUES, 'bk', K).map((s) => s.id)).toEqual(['baseline', 'graph', 'init', 'order']);
    // Where the block kernels run, they are two more steps, after the scans, and the final setting.
    const blocks = cumulativeSteps(TECHNIQUES, 'gpu', K, stepKernels(true, ABLATION_FAMILIES));
    expect(blocks.map((s) => s.id)).toEqual(['baseline', 'graph', 'init', 'order', 'sweep', 'scan', 'block', 'blockbfs', 'k', 'rounds', 'resume', 'gate', 'warm']);
    expect(blocks[blocks.length - 1].config).toMatchObject({ push: 'block', bfs: 'block' });
    expect(cumulativeSteps(parseTechniques(['warm']), 'gpu', K, stepKernels(true, ABLATION_FAMILIES))[0].config).toMatchObject({ push: 'block', bfs: 'block', warm: false });
    // Techniques left out sit at their final setting from the baseline on.
    expect(cumulativeSteps(parseTechniques(['order,graph']), 'bk', K)[0].config).toMatchObject({ graph: 'classic', init: 'wta', order: 'sequential' });
    expect(() => parseTechniques(['graph,warp'])).toThrow(/^--techniques: unknown technique 'warp'/);
    expect(() => cumulativeSteps(TECHNIQUES, 'bk', { baseline: 0, tuned: 64 })).toThrow(/--baseline-k/);
  });

  test('with the product\'s kernel families alone (stereocut bench), a device chain starts from the sweeps and scans: the lockstep push and level BFS are the ablation script\'s', () => {
    const product = cumulativeSteps(TECHNIQUES, 'gpu', K, stepKernels(false));
    expect(product.map((s) => s.id)).toEqual(['baseline', 'graph', 'init', 'order', 'k', 'rounds', 'resume', 'gate', 'warm']);
    expect(product[0].config).toMatchObject({ push: 'sweep', bfs: 'scan' });
    const blocks = cumulativeSteps(TECHNIQUES, 'gpu', K, stepKernels(true));
    expect(blocks.map((s) => s.id)).toEqual(['baseline', 'graph', 'init', 'order', 'block', 'blockbfs', 'k', 'rounds', 'resume', 'gate', 'warm']);
    expect(blocks[0].config).toMatchObject({ push: 'sweep', bfs: 'scan' });
    expect(stepKernels(false, ABLATION_FAMILIES)).toEqual({ push: ['sweep', 'split-sweep', 'lockstep'], bfs: ['scan', 'level'] });
  });
});

describe('the GPU ablation (the bench with the ablation\'s kernel families, on gpu.js\'s CPU backend)', () => {
  // The device moves run on gpu.js's CPU backend: a 40×32 scene under STEREOCUT_FULL_TESTS=1, 32×24 by default.
  const scene = FULL_TESTS ? 'synthetic:seed=3,width=40,height=32,ndisp=8' : 'synthetic:seed=3,width=32,height=24,ndisp=8';
  test('the sweep and scan steps run from the lockstep push and level BFS, every step with the same energy', async () => {
    const b = await runBench({ scenes: [scene], backends: ['gpujs-cpu'], techniques: ['sweep,scan'], cycles: 1, families: ABLATION_FAMILIES, command: 'gpuAblation test' });
    expect(b.runs.map((r) => [r.step, r.config.push, r.config.bfs])).toEqual([['baseline', 'lockstep', 'level'], ['sweep', 'sweep', 'level'], ['scan', 'sweep', 'scan']]);
    expect(new Set(b.runs.map((r) => r.energy)).size).toBe(1);
    // Without the families the same request leaves both steps out.
    const product = await runBench({ scenes: [scene], backends: ['gpujs-cpu'], techniques: ['sweep,scan'], cycles: 1, command: 'stereocut bench test' });
    expect(product.runs.map((r) => [r.step, r.config.push, r.config.bfs])).toEqual([['baseline', 'sweep', 'scan']]);
    expect(product.runs[0].energy).toBe(b.runs[0].energy);
  });
});

describe('bench on synthetic scenes (bk)', () => {
  let b: BenchResult;
  beforeAll(async () => {
    b = await runBench({ scenes: ['synthetic:seed=1,width=56,height=40,ndisp=10', 'synthetic:seed=2,width=56,height=40,ndisp=10'], backends: ['bk'], cycles: 2, repeat: 2, command: 'stereocut bench test' });
  });

  test('one run per scene and step, medians of the repeats, each step one switch away from the previous', () => {
    expect(b.runs).toHaveLength(2 * 4);
    for (const r of b.runs) {
      expect(r.totalsMs).toHaveLength(2);
      expect(r.times.totalMs).toBeCloseTo((r.totalsMs[0] + r.totalsMs[1]) / 2, 9);
      expect(r.cycles).toBe(2);
      expect(Number.isFinite(r.energy)).toBe(true);
      expect(r.badNonocc).toBeDefined();
    }
    for (const scene of b.scenes) {
      const steps = b.runs.filter((r) => r.scene === scene);
      expect(steps.map((r) => r.step)).toEqual(['baseline', 'graph', 'init', 'order']);
      // The graph switch changes only the construction, not the energy being minimised: same data and smoothness scale.
      expect(steps[1].config).toEqual({ ...steps[0].config, graph: 'reversed' });
    }
  });

  test('tables: speedups and differences are the ratios of the runs', () => {
    const t3 = table3(b, 'bk');
    const t4 = table4(b, 'bk');
    const f5 = figure5(b, 'bk');
    const ratios: number[] = [];
    b.scenes.forEach((scene, i) => {
      const runs = b.runs.filter((r) => r.scene === scene);
      const base = runs[0];
      const full = runs[runs.length - 1];
      const ratio = base.times.totalMs / full.times.totalMs;
      ratios.push(ratio);
      expect(t3.rows[2 * i][0]).toBe(scene);
      expect(t3.rows[2 * i + 1][t3.head.indexOf('total')]).toBe(`${ratio.toFixed(2)}X`);
      expect(t4.rows[i][3]).toBe(`${full.badNonocc! - base.badNonocc! >= 0 ? '+' : ''}${(full.badNonocc! - base.badNonocc!).toFixed(2)}%`);
    });
    expect(t3.rows[t3.rows.length - 1][t3.head.indexOf('total')]).toBe(`${((ratios[0] + ratios[1]) / 2).toFixed(2)}X`);
    expect(f5.rows.map((r) => r[0])).toEqual(['baseline', '+ reversed graph', '+ WTA init', '+ frequent-first order']);
    expect(f5.rows[0][1]).toBe('1.00X');
    expect(f5.rows[f5.rows.length - 1][1]).toBe(`${((ratios[0] + ratios[1]) / 2).toFixed(2)}X`);
  });

  test('BENCHMARKS.md names device, command, date and commit, and regenerates identically from the JSON', () => {
    const md = benchMarkdown(b);
    expect(md).toContain('- Command: `stereocut bench test`');
    expect(md).toContain(`- Date: ${b.date}`);
    expect(md).toContain(`- Commit: ${b.commit}`);
    expect(md).toMatch(/- Device: bk on .+/);
    expect(md).toContain('### Table 3 (bk)');
    expect(md).toContain('### Fig. 5 (bk)');
    const file = path.join(tmp, 'bench.json');
    fs.writeFileSync(file, JSON.stringify(b));
    expect(benchMarkdown(parseBenchJson(fs.readFileSync(file, 'utf8'), file))).toBe(md);
    expect(() => parseBenchJson('{"version":2}', 'x.json')).toThrow(/^x.json: not a stereocut bench result/);
  });
});

describe('stereocut bench (command line)', () => {
  test('--json prints a result; --from-json with --markdown rewrites BENCHMARKS.md without running', async () => {
    const r = await runCli(['bench', 'synthetic:seed=3,width=40,height=32,ndisp=8', '--backend', 'bk', '--cycles', '1', '--techniques', 'graph,init', '--json']);
    expect(r.code).toBe(0);
    const b = JSON.parse(r.stdout) as BenchResult;
    expect(b.runs.map((x) => x.step)).toEqual(['baseline', 'graph', 'init']);
    expect(b.command).toBe('stereocut bench synthetic:seed=3,width=40,height=32,ndisp=8 --backend bk --cycles 1 --techniques graph,init --json');
    const json = path.join(tmp, 'b.json');
    fs.writeFileSync(json, r.stdout);
    const md = path.join(tmp, 'BENCHMARKS.md');
    const again = await runCli(['bench', '--from-json', json, '--markdown', md]);
    expect(again.code).toBe(0);
    expect(fs.readFileSync(md, 'utf8')).toBe(benchMarkdown(b));
  });

  test('a bad option is a one-line error and writes nothing', async () => {
    const md = path.join(tmp, 'never.md');
    const r = await runCli(['bench', 'synthetic', '--backend', 'bk', '--techniques', 'warp', '--markdown', md]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim()).toMatch(/^stereocut: --techniques: unknown technique 'warp'/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(fs.existsSync(md)).toBe(false);
  });
});
