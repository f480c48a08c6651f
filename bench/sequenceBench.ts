/**
 * Sequences: frames per second of a slow pan matched warm (each frame from
 * the previous one's labels and, on the GPU, its flows: stereo/sequence.ts)
 * against the same frames matched independently (cold), with every
 * frame's final energy side by side, for each backend, in one process:
 *
 *   node dist/bench/sequenceBench.js [--scene DIR] [--frames N] [--step PX] [--backend bk gpu ...]
 *        [--warm-cycles N] [--write DIR] [--json FILE]
 *
 * The pan (data/panSequence.ts): a window of the scene (default
 * $STEREO_DATA/teddy or ../shared/data/middlebury/teddy) moving `step`
 * pixels a frame (default 1) over N frames (default 12), both views and
 * the ground truth cut alike; bad > 1 px is scored on each frame's window
 * of the ground truth. `--write DIR` also writes the frames
 * (DIR/left/NNNN.png, DIR/right/NNNN.png, DIR/gt/NNNN.pfm) for `stereocut
 * video`; nothing else is written. Before each backend's two runs, one
 * untimed frame compiles the device program (kept between matches), so
 * no run pays for it; each frame's runs go back to back in rotating order.
 * `--warm-cycles 1 2` compares several settings of warm frames.
 */
import * as fs from 'fs';
import * as path from 'path';
import { loadScene } from '../data/scene';
import { panFrames } from '../data/panSequence';
import { writePfm, writePng } from '../data/imageIO';
import { makeFolder } from '../data/folders';
import { match } from '../stereo/match';
import { createSequenceMatcher, type FrameResult, type SequenceMatcher } from '../stereo/sequence';
import type { BackendName } from '../stereo/params';

/** One way of matching the sequence: its matcher, and per frame the result and bad > 1 %. */
interface Run { name: string; seq: SequenceMatcher; frames: FrameResult[]; bad: number[] }

function option(args: string[], name: string, many = false): string[] | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  let j = i + 1;
  while (j < args.length && !args[j].startsWith('--') && (many || j === i + 1)) j++;
  const values = args.slice(i + 1, j);
  if (values.length === 0) throw new Error(`${name}: give a value`);
  return values;
}

function defaultScene(): string {
  const roots = [process.env.STEREO_DATA, path.resolve(__dirname, '..', '..', '..', 'shared', 'data', 'middlebury'), path.resolve('..', 'shared', 'data', 'middlebury')];
  for (const r of roots) if (r && fs.existsSync(path.join(r, 'teddy'))) return path.join(r, 'teddy');
  throw new Error('no teddy scene under $STEREO_DATA or ../shared/data/middlebury: give --scene DIR');
}

/** Bad > 1 px (%) of a map over the pixels of known ground truth. */
function badPercent(disp: ArrayLike<number>, gt: Float32Array | undefined): number {
  if (!gt) return NaN;
  let bad = 0;
  let known = 0;
  for (let i = 0; i < gt.length; i++) {
    if (!Number.isFinite(gt[i])) continue;
    known++;
    if (Math.abs(disp[i] - gt[i]) > 1) bad++;
  }
  return known ? (100 * bad) / known : NaN;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const sceneDir = option(args, '--scene')?.[0] ?? defaultScene();
  const count = Number(option(args, '--frames')?.[0] ?? 12);
  const step = Number(option(args, '--step')?.[0] ?? 1);
  const warmCycles = (option(args, '--warm-cycles', true) ?? ['1']).map(Number);
  const backends = (option(args, '--backend', true) ?? ['bk']) as BackendName[];
  const scene = await loadScene(sceneDir);
  const frames = panFrames({ left: scene.left, right: scene.right, groundTruth: scene.groundTruth }, { frames: count, step });
  const ndisp = scene.ndisp;
  const { width, height } = frames[0].left;
  const write = option(args, '--write')?.[0];
  if (write) {
    for (const sub of ['left', 'right', 'gt']) makeFolder(path.join(write, sub));
    for (const [k, f] of frames.entries()) {
      const name = String(k).padStart(4, '0');
      await writePng(path.join(write, 'left', `${name}.png`), f.left);
      await writePng(path.join(write, 'right', `${name}.png`), f.right);
      if (f.groundTruth) writePfm(path.join(write, 'gt', `${name}.pfm`), width, height, f.groundTruth);
    }
    process.stderr.write(`wrote ${count} frames to ${write} (left/, right/, gt/)\n`);
  }
  console.log(`# ${scene.name}: a ${width}×${height} window panning ${step} px a frame, ${count} frames, ${ndisp} disparities, the default setting; `
    + `cold = every frame on its own, warm N = from the previous frame with N cycles; each frame's runs back to back, their order rotating (so the machine's load falls on all alike)`);
  const report: Record<string, unknown> = {};
  const warmEnergies: Record<string, number[]> = {};
  for (const backend of backends) {
    // Untimed: the device program is compiled (and kept) before any run.
    const first = await match(frames[0].left, frames[0].right, { ndisp, backend });
    const runs: Run[] = [
      { name: 'cold', seq: createSequenceMatcher({ ndisp, backend, warm: false }), frames: [], bad: [] },
      ...warmCycles.map((c) => ({ name: `warm ${c}`, seq: createSequenceMatcher({ ndisp, backend, warmCycles: c }), frames: [], bad: [] })),
    ];
    try {
      for (const [k, f] of frames.entries()) {
        for (let i = 0; i < runs.length; i++) {
          const run = runs[(i + k) % runs.length];
          const r = await run.seq.compute(f.left, f.right);
          run.frames.push(r);
          run.bad.push(badPercent(r.result.disparity, f.groundTruth));
        }
      }
    } finally {
      for (const run of runs) await run.seq.dispose();
    }
    const seconds = (run: Run, from = 0): number => run.frames.slice(from).reduce((s, f) => s + f.ms, 0) / 1000;
    const fps = (run: Run, from = 0): number => (count - from) / seconds(run, from);
    const cold = runs[0];
    const warm = runs.slice(1);
    console.log(`\n## backend ${backend} (${first.backend}, ${first.device})\n`);
    console.log(`| frame | cold energy | ${warm.map((w) => `${w.name} energy | − cold | start`).join(' | ')} | cold ms | ${warm.map((w) => `${w.name} ms`).join(' | ')} | cold bad > 1 | ${warm.map((w) => `${w.name} bad > 1`).join(' | ')} |`);
    console.log(`|---:|---:|${warm.map(() => '---:|---:|---|').join('')}---:|${warm.map(() => '---:|').join('')}---:|${warm.map(() => '---:|').join('')}`);
    for (let k = 0; k < count; k++) {
      const c = cold.frames[k].result.finalEnergy.total;
      const cells = warm.map((w) => `${w.frames[k].result.finalEnergy.total} | ${w.frames[k].result.finalEnergy.total - c} | ${w.frames[k].start}`);
      console.log(`| ${k} | ${c} | ${cells.join(' | ')} | ${cold.frames[k].ms.toFixed(0)} | ${warm.map((w) => w.frames[k].ms.toFixed(0)).join(' | ')} | ${cold.bad[k].toFixed(2)} | ${warm.map((w) => w.bad[k].toFixed(2)).join(' | ')} |`);
    }
    const mean = (v: number[]): number => v.reduce((s, x) => s + x, 0) / v.length;
    const median = (v: number[]): number => { const o = v.slice().sort((a, b) => a - b); return o.length % 2 ? o[(o.length - 1) / 2] : (o[o.length / 2 - 1] + o[o.length / 2]) / 2; };
    console.log('');
    // Each warm frame's phases and device work, to tell a slow frame's cause (a plan compiled, more rounds, a fresh start, the host).
    const sum = (r: FrameResult['result'], k: string): number => r.cycles.reduce((n, c) => n + (c.stats[k] ?? 0), 0);
    for (const w of warm) {
      console.log(`${backend} ${w.name}, frame by frame (ms init / moves / check; rounds; plans compiled): ${w.frames.map((f, k) => {
        const t = f.result.times;
        return `${k} ${(t.initMs ?? 0).toFixed(0)}/${(t.expansionMs ?? 0).toFixed(0)}/${(t.checkMs ?? 0).toFixed(0)} ${sum(f.result, 'rounds')} ${sum(f.result, 'compiledCalls')}`;
      }).join(', ')}`);
    }
    // Where a frame's time goes: the means of match()'s phases over the frames after the first, and the median frame.
    for (const run of runs) {
      const later = run.frames.slice(count > 1 ? 1 : 0);
      const phase = (k: 'costsMs' | 'setupMs' | 'initMs' | 'expansionMs' | 'checkMs'): string => mean(later.map((f) => f.result.times[k] ?? 0)).toFixed(1);
      console.log(`${backend} ${run.name}: median frame ${median(run.frames.map((f) => f.ms)).toFixed(1)} ms; frames 1.. mean phases (ms): costs ${phase('costsMs')}, setup ${phase('setupMs')}, init ${phase('initMs')}, expansion ${phase('expansionMs')}, check and fill ${phase('checkMs')}`);
    }
    for (const w of warm) {
      const above = w.frames.filter((f, k) => f.result.finalEnergy.total > cold.frames[k].result.finalEnergy.total);
      const most = Math.max(0, ...w.frames.map((f, k) => (f.result.finalEnergy.total - cold.frames[k].result.finalEnergy.total) / cold.frames[k].result.finalEnergy.total));
      // Frame 0 starts cold in every run: the rate of the later frames is the warm start's own.
      const later = count > 1 ? `; frames 1..${count - 1}: cold ${fps(cold, 1).toFixed(2)}, ${w.name} ${fps(w, 1).toFixed(2)} frames/s (${(fps(w, 1) / fps(cold, 1)).toFixed(2)}×)` : '';
      console.log(`${backend}: cold ${fps(cold).toFixed(2)} frames/s, ${w.name} ${fps(w).toFixed(2)} frames/s (${(fps(w) / fps(cold)).toFixed(2)}×)${later}; `
        + `energy above cold on ${above.length} of ${count} frames (at most ${(100 * most).toFixed(4)} %); mean bad > 1: cold ${mean(cold.bad).toFixed(2)} %, ${w.name} ${mean(w.bad).toFixed(2)} %`);
      // Every backend gives the same canonical cuts from the same start, so the same warm energies: a check of the device path's carried flows.
      const energies = w.frames.map((f) => f.result.finalEnergy.total);
      const seen = warmEnergies[w.name];
      if (seen) console.log(`${backend} ${w.name}: energies ${seen.every((e, k) => e === energies[k]) ? 'equal' : 'DIFFER from'} those of backend ${backends[0]}, frame for frame`);
      else warmEnergies[w.name] = energies;
    }
    report[backend] = {
      backend: first.backend, device: first.device,
      runs: runs.map((r) => ({ name: r.name, fps: fps(r), fpsAfterFirst: count > 1 ? fps(r, 1) : null, frames: r.frames.map((f, k) => ({ energy: f.result.finalEnergy.total, start: f.start, ms: f.ms, bad: r.bad[k], cycles: f.result.cycles.length })) })),
    };
  }
  const json = option(args, '--json')?.[0];
  if (json) fs.writeFileSync(json, JSON.stringify({ scene: scene.name, width, height, frames: count, step, ndisp, backends: report }, null, 2));
}

main().then(() => process.exit(0), (e: unknown) => {
  process.stderr.write(`sequenceBench: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
