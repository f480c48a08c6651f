import * as path from 'path';
import { writeFileAtomic } from '../../data/atomicWrite';
import { makeFolder } from '../../data/folders';
import type { Scene } from '../../data/sceneTypes';
import { autoPngScale, writeDisparityPfm } from '../disparityOutput';
import { disparityInPixels, type MatchResult } from '../../stereo/match';
import { recordedParams } from '../summary';
import { badTable } from '../tune/badPixels';
import type { ReportFile, ReportScene } from './html';
import { drawImage, type ImageJob } from './outputImages';
import type { ImageWriters, PreparedImage } from './outputThreads';

/** A scene's outputs as written: the report's section, with its images as files (relative to the folder given). */
export type SceneOutputs = Omit<ReportScene, 'images'> & { images: ReportFile[] };
/** The files writeSceneOutputs may write into a scene's folder (what `run` checks against its inputs before any work). */
export const SCENE_OUTPUT_FILES = ['left.png', 'disp.png', 'disp-color.png', 'gt-color.png', 'error.png', 'disp.pfm', 'metrics.json'] as const;

/** Thresholds of the report's metrics table (px). */
export const REPORT_THRESHOLDS = [0.5, 1, 2, 4];

/** The left image's job: it does not depend on the match. */
function leftImageJob(dir: string, scene: Scene): ImageJob {
  return { kind: 'raster', file: path.join(dir, 'left.png'), image: scene.left };
}

/** The colour-mapped ground truth's job (0 to ndisp − 1): it does not depend on the match. Unknown ground truth (+Infinity) is non-finite, which colorizeDisparity paints black. */
function groundTruthJob(dir: string, scene: Scene, groundTruth: Float32Array, ndisp: number): ImageJob {
  return { kind: 'colorized', file: path.join(dir, 'gt-color.png'), values: groundTruth, width: scene.left.width, height: scene.left.height, max: ndisp - 1 };
}

/** Whether two jobs draw the same file from the same data (the same arrays, not equal copies). */
function sameJob(a: ImageJob, b: ImageJob): boolean {
  if (a.file !== b.file) return false;
  if (a.kind === 'raster' && b.kind === 'raster') return a.image === b.image;
  if (a.kind === 'colorized' && b.kind === 'colorized') return a.values === b.values && a.width === b.width && a.height === b.height && a.max === b.max;
  return false;
}

/**
 * A scene's images that do not depend on its match (the left image and the
 * colour-mapped ground truth), drawn and compressed by `writers`' threads
 * while the scene is matched, and written by writeSceneOutputs into `dir`
 * only once the match is done; nothing is written should it fail (then
 * call discard()).
 */
export class SceneImagesAhead {
  private readonly prepared = new Map<string, { job: ImageJob; image: PreparedImage }>();

  constructor(dir: string, scene: Scene, writers: ImageWriters) {
    const jobs = [leftImageJob(dir, scene), ...(scene.groundTruth ? [groundTruthJob(dir, scene, scene.groundTruth, scene.ndisp)] : [])];
    for (const job of jobs) this.prepared.set(job.file, { job, image: writers.prepare(job) });
  }

  /** The image drawn ahead for `job` (the same file from the same data), handed out once; undefined if none. */
  take(job: ImageJob): PreparedImage | undefined {
    const p = this.prepared.get(job.file);
    if (!p || !sameJob(p.job, job)) return undefined;
    this.prepared.delete(job.file);
    return p.image;
  }

  /** Drops the images not taken: their files are not written. */
  discard(): void {
    for (const p of this.prepared.values()) p.image.discard();
    this.prepared.clear();
  }
}

/**
 * Writes one scene's files into `dir`: the left image, the disparity as an
 * 8-bit PNG (disparity × scale) and as PFM (pixels), the colour-mapped
 * disparity (and ground truth), the error image (bad pixels at 1 px in red,
 * over the nonocc mask where there is one) and metrics.json. The images are
 * drawn and written by `writers` when given (threads of their own), else
 * here; those of `ahead` that match are taken from it, and the rest of it is
 * discarded. Returns the report section, with paths relative to `reportDir`.
 */
export async function writeSceneOutputs(dir: string, reportDir: string, scene: Scene, r: MatchResult, thresholds = REPORT_THRESHOLDS, writers?: ImageWriters, ahead?: SceneImagesAhead): Promise<SceneOutputs> {
  const rel = (f: string) => path.relative(reportDir, path.join(dir, f));
  const { width: W, height: H } = r;
  const images: ReportFile[] = [];
  const links: ReportFile[] = [];
  // Here, the PNGs compress on the thread pool while the next image is drawn, the colour images into one buffer: a
  // fresh buffer's memory is paid for page by page (a fault each) when first written, and each write reads its raster
  // before it returns.
  const rgb = writers ? undefined : new Float32Array(W * H * 3);
  const writes: Promise<void>[] = [];
  const draw = (job: ImageJob): void => {
    const drawn = ahead?.take(job);
    writes.push(drawn ? drawn.write() : writers ? writers.write(job) : drawImage(job, rgb));
  };
  let section: SceneOutputs;
  try {
    makeFolder(dir);
    draw(leftImageJob(dir, scene));
    images.push({ label: 'left image', file: rel('left.png') });
    const scale = autoPngScale(r.minDisp + r.ndisp);
    draw({ kind: 'disparity', file: path.join(dir, 'disp.png'), disparity: r.disparity, width: W, height: H, scale });
    images.push({ label: `disparity (grey = d × ${scale})`, file: rel('disp.png') });
    draw({ kind: 'colorized', file: path.join(dir, 'disp-color.png'), values: r.disparity, width: W, height: H, max: r.minDisp + r.ndisp - 1 });
    images.push({ label: 'disparity, colour-mapped', file: rel('disp-color.png') });
    let bad: ReportScene['bad'];
    if (scene.groundTruth) {
      draw(groundTruthJob(dir, scene, scene.groundTruth, r.ndisp));
      images.push({ label: 'ground truth, colour-mapped', file: rel('gt-color.png') });
      draw({ kind: 'errors', file: path.join(dir, 'error.png'), left: scene.left, disparity: r.disparity, groundTruth: scene.groundTruth, threshold: 1, mask: scene.masks.nonocc });
      images.push({ label: `errors > 1 px${scene.masks.nonocc ? ' (nonocc)' : ''} in red`, file: rel('error.png') });
      bad = badTable(scene, disparityInPixels(r), thresholds);
    }
    writeDisparityPfm(path.join(dir, 'disp.pfm'), disparityInPixels(r), W, H);
    links.push({ label: 'disparity PFM', file: rel('disp.pfm') });
    section = {
      name: scene.name, width: W, height: H, ndisp: r.ndisp, images, links, bad, thresholds,
      initialEnergy: r.initialEnergy.total,
      cycles: r.cycles.map((c) => ({
        cycle: c.cycle, energy: c.energy.total, data: c.energy.data, smoothness: c.energy.smoothness,
        labelsChanged: c.labelsChanged, pixelsChanged: c.pixelsChanged, buildMs: c.buildMs, flowMs: c.flowMs,
      })),
      costScale: r.costScale, times: r.times, backend: r.backend, device: r.device, params: recordedParams(r),
    };
    writeFileAtomic(path.join(dir, 'metrics.json'), JSON.stringify({ scene: scene.name, bad, thresholds, finalEnergy: r.finalEnergy, times: r.times, backend: r.backend, device: r.device, params: recordedParams(r), costScale: r.costScale }, null, 2) + '\n');
    links.push({ label: 'metrics JSON', file: rel('metrics.json') });
  } catch (e) {
    // No write is left running behind the error (a later failure of one would go unhandled).
    await Promise.allSettled(writes);
    throw e;
  } finally {
    ahead?.discard();
  }
  await allWritten(writes);
  return section;
}

/** Waits for every write (none is left running behind an error), then throws the first failure if any. */
async function allWritten(writes: Promise<void>[]): Promise<void> {
  const failed = (await Promise.allSettled(writes)).find((w): w is PromiseRejectedResult => w.status === 'rejected');
  if (failed) throw failed.reason;
}
