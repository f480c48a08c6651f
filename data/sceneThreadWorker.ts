/**
 * The thread of ScenesOnThread (sceneThread.ts): reads the folders of
 * `workerData.dirs` in order and posts each scene, or its error's message,
 * as `{ i, scene }` or `{ i, error }`. The scenes' arrays are moved to the
 * receiving thread (each buffer listed once).
 */
import { parentPort, workerData } from 'worker_threads';
import { loadScene, type LoadSceneOptions } from './scene';
import type { Scene } from './sceneTypes';

function buffersOf(scene: Scene): ArrayBuffer[] {
  const arrays = [scene.left.data, scene.right.data, scene.groundTruth, scene.groundTruthRight, scene.masks.nonocc, scene.masks.all, scene.masks.disc];
  const buffers = new Set<ArrayBuffer>();
  for (const a of arrays) if (a && a.buffer instanceof ArrayBuffer) buffers.add(a.buffer);
  return [...buffers];
}

async function readAll(dirs: string[], options: LoadSceneOptions): Promise<void> {
  for (const [i, dir] of dirs.entries()) {
    try {
      const scene = await loadScene(dir, options);
      try {
        parentPort!.postMessage({ i, scene }, buffersOf(scene));
      } catch {
        // A buffer that cannot be moved (Node's pooled ones): the scene is copied instead.
        parentPort!.postMessage({ i, scene });
      }
    } catch (e) {
      parentPort!.postMessage({ i, error: e instanceof Error ? e.message : String(e) });
    }
  }
}

const data = workerData as { dirs: string[]; options: LoadSceneOptions };
void readAll(data.dirs, data.options);
