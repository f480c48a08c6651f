import * as fs from 'fs';
import * as path from 'path';
import { seededRandom } from '../data/random';
import { generateSyntheticScene } from '../data/synthetic';
import type { MrfEnergy } from '../data/energy';
import { alphaExpansion } from '../expansion/alphaExpansion';
import { ProgramStore } from '../gpu/move/keptPrograms';

// The store the solvers of this file share (a Matcher holds one of its own).
const store = new ProgramStore();
import { GpuMoveSolver } from '../gpu/move/gpuMoveSolver';
import { DEFAULT_DEVICE_FLAGS, DEVICE_FLAG_KEYS } from '../gpu/runtime/deviceFlags';
import { createGpuContext, type GpuContext } from '../gpu/runtime/context';
import { match } from '../stereo/match';
import { randomEnergy, randomLabels } from './support/randomEnergy';

/**
 * The device path's switches (gpu/runtime/deviceFlags.ts) are an argument of
 * the gpu.js context a caller makes (createGpuContext, or match()'s
 * gpu.device), not process-wide state: runs that overlap in one process
 * with different flags each run as they would alone. On gpu.js's CPU
 * backends (CI has no GPU): the same device moves as WebGPU.
 */

jest.setTimeout(300_000);

/**
 * One run: solvers of one shape one after another on `ctx`, each disposed
 * before the next (a kept program is taken by the next). Between two, the
 * run waits a little, as a run does while it loads its next scene: a
 * program kept meanwhile sits where another run's solver could take it.
 */
async function sequence(ctx: GpuContext, energies: readonly MrfEnergy[], inits: readonly Uint16Array[]): Promise<{ took: boolean[]; energies: number[][]; labels: number[][] }> {
  const out = { took: [] as boolean[], energies: [] as number[][], labels: [] as number[][] };
  for (const [i, e] of energies.entries()) {
    const solver = new GpuMoveSolver(ctx, e, { variant: 'reversed', iterationsPerRound: 4, initialRounds: 2 }, { programs: store });
    const r = await alphaExpansion(e, inits[i], solver, { cycles: 2 });
    solver.dispose();
    await new Promise((resolve) => setTimeout(resolve, 5));
    out.took.push(solver.tookKeptPlans);
    out.energies.push(r.cycles.map((c) => c.energy.total));
    out.labels.push(Array.from(r.labels));
  }
  return out;
}

describe('device flags per context', () => {
  const rng = seededRandom(43);
  const energies = [0, 1, 2].map((t) => randomEnergy(rng, 9, 7, 4, t === 1 ? 'potts' : 'linear'));
  const inits = energies.map((e) => randomLabels(rng, e.width * e.height, e.labels));
  beforeEach(() => store.release());
  afterAll(() => store.release());

  test('two overlapping runs, kept programs off and on: each takes and keeps what it does alone, with the same labels and energies', async () => {
    // gpu.js's cpu backend: programs are kept there (webasm copies its literals and keeps none).
    const off = await createGpuContext('cpu', { keptPrograms: false });
    const on = await createGpuContext('cpu');
    try {
      expect(off.flags.keptPrograms).toBe(false);
      expect(on.flags).toBe(DEFAULT_DEVICE_FLAGS);
      const aloneOff = await sequence(off, energies, inits);
      expect(store.size).toBe(0);
      const aloneOn = await sequence(on, energies, inits);
      expect(store.size).toBe(1);
      // Alone: with keeping off no solver takes a program; on, every solver after the first takes the last one's.
      expect(aloneOff.took).toEqual([false, false, false]);
      expect(aloneOn.took).toEqual([false, true, true]);
      store.release();
      const [togetherOff, togetherOn] = await Promise.all([sequence(off, energies, inits), sequence(on, energies, inits)]);
      expect(togetherOff).toEqual(aloneOff);
      expect(togetherOn).toEqual(aloneOn);
      expect(store.size).toBe(1);
      // The flags change the time a run takes, never its labels or energies.
      expect(aloneOff.labels).toEqual(aloneOn.labels);
      expect(aloneOff.energies).toEqual(aloneOn.energies);
    } finally {
      off.destroy();
      on.destroy();
    }
  });

  test('a context\'s flags are whole and frozen; an unknown flag, or a value a flag does not take, is refused naming it', async () => {
    const ctx = await createGpuContext('cpu', { sharedLiterals: false, workgroup: [32, 8] });
    try {
      expect(Object.keys(ctx.flags).sort()).toEqual([...DEVICE_FLAG_KEYS].sort());
      expect(ctx.flags).toMatchObject({ sharedLiterals: false, workgroup: [32, 8], keptPrograms: true });
      expect(Object.isFrozen(ctx.flags)).toBe(true);
      expect(() => { (ctx.flags as { keptPrograms: boolean }).keptPrograms = false; }).toThrow(TypeError);
      expect(Object.isFrozen(DEFAULT_DEVICE_FLAGS)).toBe(true);
    } finally {
      ctx.destroy();
    }
    await expect(createGpuContext('cpu', { keptProgram: false } as never)).rejects.toThrow(/'keptProgram' is none of them/);
    await expect(createGpuContext('cpu', { onePassCalls: 'no' } as never)).rejects.toThrow(/onePassCalls: got 'no' \(a string\), expected true or false/);
  });
});

describe('device flags per match() run', () => {
  const s = generateSyntheticScene({ width: 32, height: 24, ndisp: 6, seed: 5 });
  const options = { ndisp: 6, backend: 'gpujs-cpu' as const, cycles: 2, lrCheck: false };

  test('two overlapping runs with different flags each give what they give alone', async () => {
    const flagged = { ...options, gpu: { device: { sharedLiterals: false, keptPrograms: false, kernelBuildCache: false } } };
    const aloneFlagged = await match(s.left, s.right, flagged);
    const aloneDefault = await match(s.left, s.right, options);
    const [a, b] = await Promise.all([match(s.left, s.right, flagged), match(s.left, s.right, options)]);
    for (const [together, alone] of [[a, aloneFlagged], [b, aloneDefault]] as const) {
      expect(together.finalEnergy).toEqual(alone.finalEnergy);
      expect(together.cycles.map((c) => c.energy.total)).toEqual(alone.cycles.map((c) => c.energy.total));
      expect(Buffer.from(together.disparity.buffer).equals(Buffer.from(alone.disparity.buffer))).toBe(true);
    }
    expect(Buffer.from(aloneFlagged.disparity.buffer).equals(Buffer.from(aloneDefault.disparity.buffer))).toBe(true);
  }, 120000);

  test('an unknown flag, or a value a flag does not take, is refused at the entry, naming it', async () => {
    await expect(match(s.left, s.right, { ...options, gpu: { device: { sharedLiteral: false } } as never })).rejects.toThrow(/gpu\.device\.sharedLiteral: a device flag; 'sharedLiteral' is none of them/);
    await expect(match(s.left, s.right, { ...options, gpu: { device: { workgroup: [32, 16] } } })).rejects.toThrow(/gpu\.device\.workgroup: two positive integers with a product of at most 256/);
    await expect(match(s.left, s.right, { ...options, gpu: { device: 3 } as never })).rejects.toThrow(/gpu\.device\.device flags: an object of flags/);
  });
});

describe('no module-level settings', () => {
  /** Every product source file (the layers a match runs through). */
  function productFiles(): string[] {
    const root = path.join(__dirname, '..');
    const walk = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
      const p = path.join(dir, d.name);
      return d.isDirectory() ? walk(p) : d.name.endsWith('.ts') ? [p] : [];
    });
    return ['data', 'costs', 'gpu', 'graphcut', 'expansion', 'stereo', 'app'].flatMap((d) => walk(path.join(root, d)));
  }

  test('no product file exports a set-and-restore helper of flags, nor the flags as a mutable object', () => {
    const files = productFiles();
    expect(files.length).toBeGreaterThan(50);
    const offending: string[] = [];
    for (const f of files) {
      const text = fs.readFileSync(f, 'utf8');
      if (/export\s+(async\s+)?function\s+with\w*Flags\b/.test(text) || /export\s+const\s+with\w*Flags\b/.test(text)) offending.push(`${f}: a with…Flags helper`);
      if (/export\s+(const|let|var)\s+\w*[Ff]lags\s*(:\s*\w+)?\s*=\s*\{/.test(text)) offending.push(`${f}: flags as a mutable object`);
    }
    expect(offending).toEqual([]);
  });
});
