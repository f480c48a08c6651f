import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { execFileSync, spawnSync } from 'child_process';
import { generateSyntheticScene } from '../data/synthetic';
import { decodeImage, readImage } from '../data/imageIO';
import { match } from '../stereo/match';
import { RunOutputs } from '../app/report/runOutputs';
import { badTable } from '../app/tune/badPixels';
import { REPORT_THRESHOLDS, writeSceneOutputs } from '../app/report/sceneOutputs';
import { listFiles, writeSceneFolder } from './support/tuneSupport';
import { main } from '../app/cli';

/** The command line run by main() in this process, stdout and stderr captured (the spawned command is covered by cli.test.ts). */
async function runCli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-report-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Every src and href of the page, decoded (HTML entities, percent-encoding). */
function references(html: string): { tag: string; url: string }[] {
  const out: { tag: string; url: string }[] = [];
  const re = /<(img|a)\b[^>]*?\b(src|href)="([^"]*)"/g;
  for (let m = re.exec(html); m; m = re.exec(html)) out.push({ tag: m[1], url: m[3].replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&') });
  return out;
}

function chromium(): string | undefined {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      return execFileSync('sh', ['-c', `command -v ${name}`]).toString().trim() || undefined;
    } catch { /* not on PATH */ }
  }
  return undefined;
}

/**
 * Loads the page in headless Chromium and returns, per <img>, its
 * naturalWidth once the load event fired. The check runs in a copy of the
 * page beside it (so relative links resolve the same), with a script that
 * writes its findings into the DOM, which --dump-dom prints.
 */
function imagesInBrowser(bin: string, page: string): { src: string; complete: boolean; width: number }[] {
  const html = fs.readFileSync(page, 'utf8');
  const probe = page.replace(/\.html$/, '.probe.html');
  const script = `<script>window.addEventListener('load',()=>{document.body.setAttribute('data-images',JSON.stringify([...document.images].map((i)=>({src:i.getAttribute('src').slice(0,80),complete:i.complete,width:i.naturalWidth}))));});</script>`;
  fs.writeFileSync(probe, html.replace('</body>', `${script}</body>`));
  try {
    const profile = fs.mkdtempSync(path.join(tmp, 'chromium-profile-'));
    const r = spawnSync(bin, [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--no-first-run', `--user-data-dir=${profile}`, '--virtual-time-budget=10000', '--dump-dom', `file://${probe}`,
    ], { encoding: 'utf8', timeout: 90000 });
    const m = /data-images="([^"]*)"/.exec(r.stdout ?? '');
    if (!m) throw new Error(`chromium printed no probe result (status ${r.status}): ${(r.stderr ?? '').split('\n').slice(-3).join(' | ')}`);
    return JSON.parse(m[1].replace(/&quot;/g, '"').replace(/&amp;/g, '&'));
  } finally {
    fs.rmSync(probe, { force: true });
  }
}

describe('HTML report', () => {
  let reportFile = '';
  let keptFile = '';
  const scenes = [generateSyntheticScene({ seed: 4, width: 56, height: 40, ndisp: 10 }), { ...generateSyntheticScene({ seed: 5, width: 48, height: 36, ndisp: 8 }), name: 'scene with space&amp' }];
  /** Each scene's files as the run's --out-dir holds them (the kept report links them). */
  const outDir = path.join(tmp, 'kept', 'out');

  beforeAll(async () => {
    reportFile = path.join(tmp, 'alone', 'report.html');
    keptFile = path.join(tmp, 'kept', 'one file.html');
    fs.mkdirSync(path.dirname(reportFile));
    fs.mkdirSync(outDir, { recursive: true });
    const alone = new RunOutputs({ report: reportFile });
    const kept = new RunOutputs({ report: keptFile });
    for (const s of scenes) {
      const r = await match(s.left, s.right, { ndisp: s.ndisp, backend: 'bk' });
      await alone.add(s, r);
      const dir = path.join(outDir, s.name);
      await kept.add(s, r, { dir, outputs: await writeSceneOutputs(dir, dir, s, r) });
    }
    alone.finish('test run');
    kept.finish('test run');
  });

  test('the report is one file: every image embedded as a PNG data URI equal to the file the scene\'s outputs hold, nothing written beside it', async () => {
    expect(listFiles(path.dirname(reportFile))).toEqual(['report.html']);
    const html = fs.readFileSync(reportFile, 'utf8');
    const refs = references(html);
    const imgs = refs.filter((r) => r.tag === 'img');
    expect(imgs).toHaveLength(2 * 5);
    const files = listFiles(outDir).filter((f) => f.endsWith('.png')).map((f) => fs.readFileSync(path.join(outDir, f)).toString('base64'));
    for (const im of imgs) {
      expect(im.url.startsWith('data:image/png;base64,')).toBe(true);
      const b64 = im.url.slice('data:image/png;base64,'.length);
      expect(files).toContain(b64);
      expect((await decodeImage(Buffer.from(b64, 'base64'), 'embedded')).width).toBeGreaterThan(0);
    }
    // No link leaves the page: the anchors of the overview only.
    const anchors = refs.filter((x) => x.tag === 'a');
    expect(anchors.map((a) => a.url)).toEqual(['#scene-1', '#scene-2']);
    for (const r of anchors) expect(html).toContain(`id="${r.url.slice(1)}"`);
    const pfm = await readImage(path.join(outDir, 'synthetic', 'disp.pfm'));
    const bad = badTable(scenes[0], pfm.data, REPORT_THRESHOLDS);
    const row = REPORT_THRESHOLDS.map((t) => `<td>${bad.nonocc![String(t)].toFixed(2)}</td>`).join('');
    expect(html).toContain(`<tr><th>nonocc</th>${row}</tr>`);
    expect(html).not.toMatch(/<script|https?:\/\//);
  });

  test('with the scene\'s files kept (--out-dir), the images are embedded the same and the PFM and metrics JSON are linked relative to the report', () => {
    const html = fs.readFileSync(keptFile, 'utf8');
    const refs = references(html);
    expect(refs.filter((r) => r.tag === 'img').map((r) => r.url)).toEqual(references(fs.readFileSync(reportFile, 'utf8')).filter((r) => r.tag === 'img').map((r) => r.url));
    const links = refs.filter((r) => r.tag === 'a' && !r.url.startsWith('#'));
    expect(links).toHaveLength(2 * 2);
    for (const r of links) {
      expect(r.url).not.toMatch(/^(\/|[a-z]+:)/); // relative, so the folder can move
      expect(fs.existsSync(path.join(path.dirname(keptFile), ...r.url.split('/').map(decodeURIComponent)))).toBe(true);
    }
  });

  const bin = chromium();
  (bin ? test : test.skip)(`headless Chromium loads every image of the report copied alone to another folder${bin ? '' : ' (skipped: chromium not installed; apt-get install chromium)'}`, () => {
    const copy = path.join(fs.mkdtempSync(path.join(tmp, 'copied-')), 'report.html');
    fs.copyFileSync(reportFile, copy);
    const imgs = imagesInBrowser(bin!, copy);
    expect(imgs).toHaveLength(10);
    for (const im of imgs) {
      expect(im.complete).toBe(true);
      expect(im.width).toBeGreaterThan(0);
    }
  });
});

describe('stereocut run --report / --middeval3', () => {
  test('writes the report, per-scene files and the MiddEval3 tree; links resolve', async () => {
    const data = path.join(tmp, 'cli-data', 'trainingQ');
    await writeSceneFolder(path.join(data, 'Alpha'), { seed: 6, width: 48, height: 36, ndisp: 8 });
    await writeSceneFolder(path.join(data, 'Beta'), { seed: 7, width: 48, height: 36, ndisp: 8 });
    const out = path.join(tmp, 'cli-out');
    fs.mkdirSync(out);
    const r = await runCli(['run', path.join(data, 'Alpha'), path.join(data, 'Beta'), '--backend', 'bk', '--report', path.join(out, 'report.html'), '--middeval3', path.join(out, 'MiddEval3'), '--middeval3-name', 'GC', '--out-dir', path.join(out, 'scenes')]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const s of ['Alpha', 'Beta']) {
      const pfm = await readImage(path.join(out, 'MiddEval3', 'trainingQ', s, 'disp0GC.pfm'));
      expect([pfm.width, pfm.height]).toEqual([48, 36]);
      expect(fs.readFileSync(path.join(out, 'MiddEval3', 'trainingQ', s, 'timeGC.txt'), 'utf8')).toMatch(/^\d+\.\d{3}\n$/);
      // The same map as the PFM the report links.
      const rep = await readImage(path.join(out, 'scenes', s, 'disp.pfm'));
      expect(Array.from(rep.data)).toEqual(Array.from(pfm.data));
    }
    const html = fs.readFileSync(path.join(out, 'report.html'), 'utf8');
    const refs = references(html).filter((x) => !x.url.startsWith('#') && !x.url.startsWith('data:'));
    expect(refs.map((x) => x.url).sort()).toEqual(['scenes/Alpha/disp.pfm', 'scenes/Alpha/metrics.json', 'scenes/Beta/disp.pfm', 'scenes/Beta/metrics.json']);
    for (const ref of refs) expect(fs.existsSync(path.join(out, ...ref.url.split('/').map(decodeURIComponent)))).toBe(true);
    expect(references(html).filter((x) => x.url.startsWith('data:image/png;base64,'))).toHaveLength(2 * 5);
    // Only the report, the scenes' folder and the MiddEval3 tree: no folder of the report's own.
    expect(fs.readdirSync(out).sort()).toEqual(['MiddEval3', 'report.html', 'scenes']);
  });

  test('run --report alone writes the one file, which names no file beside it', async () => {
    const dir = await writeSceneFolder(path.join(tmp, 'alone-data', 'Delta'), { seed: 9, width: 40, height: 30, ndisp: 8 });
    const out = fs.mkdtempSync(path.join(tmp, 'alone-out-'));
    const r = await runCli(['run', dir, '--backend', 'bk', '--report', path.join(out, 'r.html')]);
    expect(r.code).toBe(0);
    expect(fs.readdirSync(out)).toEqual(['r.html']);
    const refs = references(fs.readFileSync(path.join(out, 'r.html'), 'utf8'));
    expect(refs.filter((x) => !x.url.startsWith('#') && !x.url.startsWith('data:image/png;base64,'))).toEqual([]);
    expect(refs.filter((x) => x.tag === 'img')).toHaveLength(5);
  });

  test('a folder that does not name its MiddEval3 set fails before anything is written', async () => {
    const dir = await writeSceneFolder(path.join(tmp, 'plain', 'Gamma'), { seed: 8, width: 40, height: 30, ndisp: 8 });
    const out = path.join(tmp, 'plain-out');
    const r = await runCli(['run', dir, '--backend', 'bk', '--middeval3', out, '--report', path.join(tmp, 'plain', 'r.html')]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^stereocut: --middeval3: cannot tell the MiddEval3 set of .*Gamma/);
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.existsSync(path.join(tmp, 'plain', 'r.html'))).toBe(false);
  });
});
