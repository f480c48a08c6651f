/**
 * Where a fresh process's first device run spends its time, part by part:
 *
 *   node dist/bench/freshRun.js SCENE_FOLDER [runs] [OUT_DIR [threads]]
 *
 * Prints, in one process: loading the modules (the library, gpu.js), creating
 * the WebGPU device, reading the scene, then the first `run`-style match
 * (kernel builds, shader and pipeline compiles, plan compiles, and the work)
 * split into match's phases, then `runs` more matches of the same scene
 * (kept programs: what the first run compiled is reused). The difference
 * between the first run and the next is what compiles cost a fresh process.
 * With OUT_DIR, the first run's files are written there as `run --out-dir`
 * writes them (their images drawn here, or by `threads` image threads
 * started with the process, as `run` starts them, the scene's own images
 * drawn during the match), and timed.
 * Run it as its own process: the first rows are only meaningful cold.
 */
const t0 = performance.now();
import * as path from 'path';
/* eslint-disable @typescript-eslint/no-require-imports */
const { matchScene } = require('../stereo/sceneMatch') as typeof import('../stereo/sceneMatch');
const { loadScene } = require('../data/scene') as typeof import('../data/scene');
const { createGpuContext } = require('../gpu/runtime/context') as typeof import('../gpu/runtime/context');
const { kernelBuildCache } = require('../gpu/runtime/gpujs/kernelBuildCache') as typeof import('../gpu/runtime/gpujs/kernelBuildCache');
const { pipelineStore, pipelineStorePath } = require('../gpu/runtime/gpujs/pipelineStore') as typeof import('../gpu/runtime/gpujs/pipelineStore');
const { SceneImagesAhead, writeSceneOutputs } = require('../app/report/sceneOutputs') as typeof import('../app/report/sceneOutputs');
const { ImageWriters } = require('../app/report/outputThreads') as typeof import('../app/report/outputThreads');
/* eslint-enable @typescript-eslint/no-require-imports */
const tModules = performance.now();

async function main(): Promise<void> {
  const [folder, runsArg, outDir, threadsArg] = process.argv.slice(2);
  const runs = Number(runsArg ?? 3);
  const threads = Number(threadsArg ?? 0);
  if (!folder || !Number.isInteger(runs) || runs < 0 || !Number.isInteger(threads) || threads < 0) throw new Error('usage: node dist/bench/freshRun.js SCENE_FOLDER [runs] [OUT_DIR [threads]]');
  const writers = outDir !== undefined && threads > 0 ? new ImageWriters(threads) : undefined;
  const rows: Array<[string, number]> = [['modules (library, gpu.js)', tModules - t0]];
  let t = performance.now();
  const ctx = await createGpuContext('webgpu');
  rows.push([`WebGPU device (${ctx.device})`, performance.now() - t]);
  t = performance.now();
  const scene = await loadScene(folder);
  rows.push(['scene read (PNG decode, ground truth)', performance.now() - t]);
  const once = async (label: string): Promise<Awaited<ReturnType<typeof matchScene>>> => {
    const s = performance.now();
    const m = await matchScene(scene, {}, { backend: 'gpu' });
    const total = performance.now() - s;
    const p = m.result.times;
    const parts = `costs ${p.costsMs.toFixed(0)}, setup ${p.setupMs.toFixed(0)}, init ${p.initMs.toFixed(0)}, moves ${p.expansionMs.toFixed(0)}, check ${(p.checkMs ?? 0).toFixed(0)}`;
    rows.push([`${label} (${parts})`, total]);
    return m;
  };
  // As run does: with threads, the images that do not depend on the match are drawn during it.
  const ahead = outDir !== undefined && writers ? new SceneImagesAhead(path.join(outDir, scene.name), scene, writers) : undefined;
  const first = await once('first run');
  if (outDir !== undefined) {
    t = performance.now();
    await writeSceneOutputs(path.join(outDir, scene.name), outDir, scene, first.result, undefined, writers, ahead);
    rows.push([`its files (images drawn ${writers ? `by ${threads} threads` : 'here'})`, performance.now() - t]);
    writers?.close();
  }
  for (let i = 0; i < runs; i++) await once(`run ${i + 2}`);
  rows.push(['process so far', performance.now() - t0]);
  for (const [what, ms] of rows) console.log(`${ms.toFixed(0).padStart(7)} ms  ${what}`);
  // What the pipeline store (gpu/runtime/gpujs/pipelineStore.ts) gave this process: the second process of a shape starts its pipelines at once.
  const store = pipelineStorePath() ?? 'off';
  console.log(`pipeline store ${store}: ${kernelBuildCache.warmedUpPipelines} pipelines asked for at the program's start (${kernelBuildCache.buildsAwaitingWarmUp} builds waited for one), ${pipelineStore.recorded} new ones recorded`);
}

// The WebGPU device keeps the process alive: leave once the table is out.
main().then(() => process.exit(0), (e: unknown) => {
  console.error(e instanceof Error ? e.stack ?? e.message : String(e));
  process.exit(1);
});
