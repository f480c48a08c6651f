/**
 * How well the confidence map (stereo/confidence.ts) ranks errors: each
 * scene matched with the default setting (as `stereocut accuracy` does),
 * its pixels of the scene's region (nonocc where the dataset gives the
 * mask, else every pixel with ground truth) ordered by confidence, and the
 * bad-pixel rate (> 1 px) of the most confident half beside that of the
 * other half:
 *
 *   node dist/bench/confidenceTable.js [--backend bk|gpu|auto] SCENE_FOLDER_OR_ROOT...
 *
 * Prints a Markdown table (and the mean); nothing is written.
 */
import { sceneFoldersOf, loadScene } from '../data/scene';
import { accuracyRegion } from '../app/accuracy/accuracy';
import { badByConfidence, confidenceMap } from '../stereo/confidence';
import { matchScene } from '../stereo/sceneMatch';
import type { BackendName } from '../stereo/params';

/** rest / confident, '∞' when the confident half has no bad pixel. */
const ratio = (rest: number, confident: number): string => (confident > 0 ? (rest / confident).toFixed(1) : '∞');

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let backend: BackendName = 'bk';
  const b = args.indexOf('--backend');
  if (b >= 0) {
    backend = args[b + 1] as BackendName;
    args.splice(b, 2);
  }
  if (args.length === 0) throw new Error('usage: node dist/bench/confidenceTable.js [--backend bk|gpu|auto] SCENE_FOLDER_OR_ROOT...');
  const dirs = sceneFoldersOf(args, (l) => process.stderr.write(`${l}\n`));
  const rows: string[][] = [];
  const sums = [0, 0, 0];
  for (const dir of dirs) {
    const scene = await loadScene(dir);
    if (!scene.groundTruth) {
      process.stderr.write(`${dir}: no ground truth, left out\n`);
      continue;
    }
    const t0 = performance.now();
    const m = await matchScene(scene, {}, { backend, sceneParams: false, evaluate: false });
    const t1 = performance.now();
    const c = confidenceMap({ left: scene.left, right: scene.right, result: m.result });
    const t2 = performance.now();
    const region = accuracyRegion(scene);
    const mask = region === 'nonocc' ? scene.masks.nonocc : undefined;
    const all = badByConfidence(c, m.result.disparity, scene.groundTruth, 1, mask, 1);
    const half = badByConfidence(c, m.result.disparity, scene.groundTruth, 1, mask, 0.5);
    sums[0] += all.confident;
    sums[1] += half.confident;
    sums[2] += half.rest;
    rows.push([scene.name, region, all.confident.toFixed(2), half.confident.toFixed(2), half.rest.toFixed(2), ratio(half.rest, half.confident),
      ((t1 - t0) / 1000).toFixed(2), ((t2 - t1) / 1000).toFixed(2)]);
    process.stderr.write(`${scene.name} done\n`);
  }
  const n = Math.max(1, rows.length);
  rows.push(['**mean**', '', (sums[0] / n).toFixed(2), (sums[1] / n).toFixed(2), (sums[2] / n).toFixed(2), ratio(sums[2], sums[1]), '', '']);
  const head = ['scene', 'region', 'bad > 1, all', 'most confident 50 %', 'least confident 50 %', 'ratio', 'match s', 'confidence s'];
  console.log(`| ${head.join(' | ')} |`);
  console.log(`|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`);
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
