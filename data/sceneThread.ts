import * as path from 'path';
import { Worker } from 'worker_threads';
import { loadScene, type LoadSceneOptions } from './scene';
import type { Scene } from './sceneTypes';
import { workerEntry } from './sourceLoader';

/**
 * Scene folders read on a worker thread, for a main thread that is about to
 * block: a fresh process's WebGPU adapter and device are made inside Dawn,
 * which holds the main thread for about 0.15 s, and the scenes (PNG decoding,
 * ground truth, masks) can be read meanwhile instead of after.
 *
 * The thread reads the folders in order and sends each scene as it is read,
 * its sample arrays moved, not copied (sceneThreadWorker.ts). `scene(i)`
 * gives folder i's scene, or rejects with the error loadScene gave there
 * (the same one-line message). Should the thread fail to start, or stop
 * before it has sent every scene, the rest are read on the calling thread:
 * the thread only ever saves time.
 */
export class ScenesOnThread {
  private readonly results: Promise<Scene>[];
  private readonly settle: Array<{ resolve(s: Scene): void; reject(e: unknown): void }> = [];
  private worker: Worker | undefined;
  private received = 0;
  private closed = false;
  /** Scenes read on the calling thread (the thread stopped or never started), for a caller that wants to know. */
  readHere = 0;

  /** `module`: the thread's module without extension (tests name others). */
  constructor(private readonly dirs: readonly string[], private readonly options: LoadSceneOptions = {}, module = path.join(__dirname, 'sceneThreadWorker')) {
    this.results = dirs.map((_, i) => {
      const p = new Promise<Scene>((resolve, reject) => { this.settle[i] = { resolve, reject }; });
      // A failed read is an error only once its scene is asked for.
      p.catch(() => undefined);
      return p;
    });
    try {
      const entry = workerEntry(module);
      const w = new Worker(entry.code, { eval: entry.eval, workerData: { dirs, options } });
      w.unref();
      w.on('message', (m: { i: number; scene?: Scene; error?: string }) => {
        this.received = m.i + 1;
        if (m.scene) this.settle[m.i].resolve(m.scene);
        else this.settle[m.i].reject(new Error(m.error));
      });
      w.on('error', () => this.readRestHere());
      w.on('exit', () => this.readRestHere());
      this.worker = w;
    } catch {
      this.readRestHere();
    }
  }

  /** Folder i's scene (see the class comment). */
  scene(i: number): Promise<Scene> {
    return this.results[i];
  }

  /** Ends the thread; scenes not sent by then are no longer read. */
  close(): void {
    this.closed = true;
    void this.worker?.terminate();
    this.worker = undefined;
  }

  /** The thread is gone: the scenes it did not send are read on this thread, in order. */
  private readRestHere(): void {
    if (this.closed) return;
    this.closed = true;
    this.worker = undefined;
    void (async () => {
      for (let i = this.received; i < this.dirs.length; i++) {
        this.readHere++;
        try {
          this.settle[i].resolve(await loadScene(this.dirs[i], this.options));
        } catch (e) {
          this.settle[i].reject(e);
        }
      }
    })();
  }
}
