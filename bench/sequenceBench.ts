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
 * neither run pays for it; cold runs first.
 */
import * as fs from 'fs';
import * as path from 'path';
import { loadScene } from '../data/scene';
import { panFrames, type PanFrame } from '../data/panSequence';
import { writePfm, writePng } from '../data/imageIO';
import { makeFolder } from '../data/folders';
import { match } from '../stereo/match';
import { createSequenceMatcher, type FrameResult } from '../stereo/sequence';
import type { BackendName } from '../stereo/params';

interface Run { frames: FrameResult[]; seconds: number; bad: number[] }

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

async function runSequence(frames: PanFrame[], o: { ndisp: number; backend: BackendName; warm: boolean; warmCycles: number }): Promise<Run> {
  const seq = createSequenceMatcher({ ndisp: o.ndisp, backend: o.backend, warm: o.warm, warmCycles: o.warmCycles });
  const out: FrameResult[] = [];
  const t0 = performance.now();
  try {
    for (const f of frames) out.push(await seq.compute(f.left, f.right));
  } finally {
    seq.dispose();
  }
  const seconds = (performance.now() - t0) / 1000;
  return { frames: out, seconds, bad: out.map((r, i) => badPercent(r.result.disparity, frames[i].groundTruth)) };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const sceneDir = option(args, '--scene')?.[0] ?? defaultScene();
  const count = Number(option(args, '--frames')?.[0] ?? 12);
  const step = Number(option(args, '--step')?.[0] ?? 1);
  const warmCycles = Number(option(args, '--warm-cycles')?.[0] ?? 1);
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
  console.log(`# ${scene.name}: a ${width}×${height} window panning ${step} px a frame, ${count} frames, ${ndisp} disparities, the default setting; warm frames run ${warmCycles} cycle(s)`);
  const report: Record<string, unknown> = {};
  for (const backend of backends) {
    // Untimed: the device program is compiled (and kept) before either run.
    const first = await match(frames[0].left, frames[0].right, { ndisp, backend });
    const cold = await runSequence(frames, { ndisp, backend, warm: false, warmCycles });
    const warm = await runSequence(frames, { ndisp, backend, warm: true, warmCycles });
    const fps = (r: Run): number => r.frames.length / r.seconds;
    console.log(`\n## backend ${backend} (${first.backend}, ${first.device})\n`);
    console.log('| frame | cold energy | warm energy | warm − cold | start | cold ms | warm ms | cold bad > 1 | warm bad > 1 |');
    console.log('|---:|---:|---:|---:|---|---:|---:|---:|---:|');
    let worse = 0;
    for (let k = 0; k < count; k++) {
      const c = cold.frames[k];
      const w = warm.frames[k];
      const d = w.result.finalEnergy.total - c.result.finalEnergy.total;
      if (d > 0) worse++;
      console.log(`| ${k} | ${c.result.finalEnergy.total} | ${w.result.finalEnergy.total} | ${d} | ${w.start} | ${c.ms.toFixed(0)} | ${w.ms.toFixed(0)} | ${cold.bad[k].toFixed(2)} | ${warm.bad[k].toFixed(2)} |`);
    }
    const mean = (v: number[]): number => v.reduce((s, x) => s + x, 0) / v.length;
    // Frame 0 starts cold in both runs: the rate of the later frames is the warm start's own.
    const later = (r: Run): number => (count - 1) / (r.frames.slice(1).reduce((s, f) => s + f.ms, 0) / 1000);
    const laterText = count > 1 ? `; frames 1..${count - 1}: cold ${later(cold).toFixed(2)}, warm ${later(warm).toFixed(2)} frames/s (${(later(warm) / later(cold)).toFixed(2)}×)` : '';
    console.log(`\n${backend}: cold ${fps(cold).toFixed(2)} frames/s, warm ${fps(warm).toFixed(2)} frames/s (${(fps(warm) / fps(cold)).toFixed(2)}×)${laterText}; `
      + `warm energy above cold on ${worse} of ${count} frames; mean bad > 1: cold ${mean(cold.bad).toFixed(2)} %, warm ${mean(warm.bad).toFixed(2)} %`);
    report[backend] = {
      backend: first.backend, device: first.device, coldFps: fps(cold), warmFps: fps(warm), speedup: fps(warm) / fps(cold), warmAboveCold: worse,
      frames: cold.frames.map((c, k) => ({ frame: k, cold: c.result.finalEnergy.total, warm: warm.frames[k].result.finalEnergy.total, start: warm.frames[k].start, coldMs: c.ms, warmMs: warm.frames[k].ms, coldBad: cold.bad[k], warmBad: warm.bad[k] })),
    };
  }
  const json = option(args, '--json')?.[0];
  if (json) fs.writeFileSync(json, JSON.stringify({ scene: scene.name, width, height, frames: count, step, ndisp, warmCycles, backends: report }, null, 2));
}

main().then(() => process.exit(0), (e: unknown) => {
  process.stderr.write(`sequenceBench: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
