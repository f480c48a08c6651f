import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Scene } from '../../data/sceneTypes';
import { disparityInPixels, type MatchResult } from '../../stereo/match';
import { checkAlgorithmName, checkSetName, middeval3Paths, middeval3Place, writeMiddEval3 } from '../middeval3';
import { writeReport, type ReportScene } from './html';
import type { ImageWriters } from './outputThreads';
import { writeSceneOutputs, type SceneOutputs } from './sceneOutputs';

export interface RunOutputOptions {
  /** HTML report to write: one file, its images embedded. */
  report?: string;
  /** Root of a MiddEval3 tree to write disp0<NAME>.pfm / time<NAME>.txt into. */
  middeval3?: string;
  middeval3Name?: string;
  /** Set for scene folders whose path does not name one (trainingQ, …). */
  middeval3Set?: string;
  /** Threads that draw and write the report's images (else drawn on the calling thread). */
  writers?: ImageWriters;
  /** The report's folder is made by the run (it is --out-dir): it need not exist yet. */
  reportFolderMade?: boolean;
}

/**
 * The extra outputs of `stereocut run`: an HTML report over all scenes and
 * the MiddEval3 submission tree. Options are checked when constructed and
 * each scene's MiddEval3 place before any matching (checkScene), so bad input
 * fails before anything is written.
 */
export class RunOutputs {
  private readonly sections: ReportScene[] = [];
  private readonly name: string;

  constructor(private readonly o: RunOutputOptions) {
    this.name = o.middeval3Name ?? 'stereocut';
    if (o.report !== undefined) {
      const dir = path.dirname(path.resolve(o.report));
      const made = o.reportFolderMade === true && !fs.existsSync(dir);
      if (!made && (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())) throw new Error(`--report: folder ${dir} does not exist (for ${o.report})`);
      if (!/\.html?$/i.test(o.report)) throw new Error(`--report: ${o.report} should end in .html`);
    }
    if (o.middeval3 !== undefined) {
      checkAlgorithmName(this.name);
      if (o.middeval3Set !== undefined) checkSetName(o.middeval3Set);
      if (fs.existsSync(o.middeval3) && !fs.statSync(o.middeval3).isDirectory()) throw new Error(`--middeval3: ${o.middeval3} exists and is not a folder`);
    }
  }

  get active(): boolean {
    return this.o.report !== undefined || this.o.middeval3 !== undefined;
  }

  /**
   * Every file these outputs would write for the scene folders `sceneDirs`
   * (the report, the MiddEval3 files), named by the option that
   * writes it: what the run checks against its inputs before any work.
   */
  plannedFiles(sceneDirs: string[]): { name: string; file: string }[] {
    const files: { name: string; file: string }[] = [];
    // The report is one file (its images embedded); the scenes' own files are --out-dir's.
    if (this.o.report !== undefined) files.push({ name: '--report', file: this.o.report });
    if (this.o.middeval3 !== undefined) {
      for (const dir of sceneDirs) {
        const place = middeval3Place(dir, this.o.middeval3Set);
        const p = middeval3Paths(this.o.middeval3, place.set, place.scene, this.name);
        files.push({ name: '--middeval3', file: p.pfm }, { name: '--middeval3', file: p.time });
      }
    }
    return files;
  }

  /** Fails early for a scene whose MiddEval3 set cannot be told. */
  checkScene(sceneDir: string): void {
    if (this.o.middeval3 !== undefined) middeval3Place(sceneDir, this.o.middeval3Set);
  }

  /**
   * Adds a scene's section to the report and writes its MiddEval3 files.
   * `kept`: the scene's files as the run wrote them (--out-dir; paths
   * relative to `kept.dir`), which the report embeds and links; without
   * them the images are drawn into a private temporary folder, embedded and
   * removed, and the section links no files.
   */
  async add(scene: Scene, r: MatchResult, kept?: { dir: string; outputs: SceneOutputs }): Promise<string[]> {
    const written: string[] = [];
    if (this.o.report !== undefined) {
      let name = scene.name;
      for (let i = 2; this.sections.some((s) => s.name === name); i++) name = `${scene.name}-${i}`;
      const reportDir = path.dirname(path.resolve(this.o.report));
      const own = kept ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-report-'));
      try {
        const dir = kept?.dir ?? own!;
        const outputs = kept?.outputs ?? await writeSceneOutputs(dir, dir, scene, r, undefined, this.o.writers);
        this.sections.push({
          ...outputs, name,
          images: outputs.images.map((im) => ({ label: im.label, png: fs.readFileSync(path.join(dir, im.file)) })),
          links: kept ? outputs.links.map((l) => ({ label: l.label, file: path.relative(reportDir, path.join(dir, l.file)) })) : [],
        });
      } finally {
        if (own) fs.rmSync(own, { recursive: true, force: true });
      }
    }
    if (this.o.middeval3 !== undefined) {
      const place = middeval3Place(scene.dir, this.o.middeval3Set);
      const p = writeMiddEval3(this.o.middeval3, this.name, {
        set: place.set, scene: place.scene, width: r.width, height: r.height, disparity: disparityInPixels(r), seconds: r.times.totalMs / 1000,
      });
      written.push(p.pfm, p.time);
    }
    return written;
  }

  /** Writes the report (after every scene). Returns its path, if any. */
  finish(subtitle?: string): string | undefined {
    if (this.o.report === undefined) return undefined;
    if (this.o.reportFolderMade) fs.mkdirSync(path.dirname(path.resolve(this.o.report)), { recursive: true });
    writeReport(this.o.report, this.sections, { subtitle, title: 'stereocut run' });
    return this.o.report;
  }
}
