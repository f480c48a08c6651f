import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { execFileSync, spawnSync } from 'child_process';
import { generateSyntheticScene } from '../data/synthetic';
import { readImage } from '../data/imageIO';
import { match } from '../stereo/match';
import { RunOutputs } from '../stereo/report/runOutputs';
import { badTable } from '../stereo/tune/badPixels';
import { REPORT_THRESHOLDS } from '../stereo/report/sceneOutputs';
import { listFiles, writeSceneFolder } from './support/tuneSupport';
import { main } from '../stereo/cli';

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
  let inlineFile = '';
  const scenes = [generateSyntheticScene({ seed: 4, width: 56, height: 40, ndisp: 10 }), { ...generateSyntheticScene({ seed: 5, width: 48, height: 36, ndisp: 8 }), name: 'scene with space&amp' }];

  beforeAll(async () => {
    reportFile = path.join(tmp, 'linked', 'report.html');
    inlineFile = path.join(tmp, 'inline', 'one file.html');
    fs.mkdirSync(path.dirname(reportFile));
    fs.mkdirSync(path.dirname(inlineFile));
    const linked = new RunOutputs({ report: reportFile });
    const inline = new RunOutputs({ report: inlineFile, inline: true });
    for (const s of scenes) {
      const r = await match(s.left, s.right, { ndisp: s.ndisp, backend: 'bk' });
      await linked.add(s, r);
      await inline.add(s, r);
    }
    linked.finish('test run');
    inline.finish('test run');
  });

  test('every image and link of the linked report resolves to a file beside it; the metrics table matches a recomputation', async () => {
    const html = fs.readFileSync(reportFile, 'utf8');
    const refs = references(html);
    const files = refs.filter((r) => !r.url.startsWith('#'));
    expect(refs.filter((r) => r.tag === 'img')).toHaveLength(2 * 5);
    for (const r of files) {
      expect(r.url).not.toMatch(/^(\/|[a-z]+:)/); // relative, so the folder can move
      const file = path.join(path.dirname(reportFile), ...r.url.split('/').map(decodeURIComponent));
      expect(fs.existsSync(file)).toBe(true);
      if (r.tag === 'img') expect((await readImage(file)).width).toBeGreaterThan(0);
    }
    const anchors = refs.filter((x) => x.url.startsWith('#'));
    expect(anchors).toHaveLength(2);
    for (const r of anchors) expect(html).toContain(`id="${r.url.slice(1)}"`);
    // The nonocc row of the first scene, recomputed from its PFM.
    const pfm = await readImage(path.join(tmp, 'linked', 'report-files', 'synthetic', 'disp.pfm'));
    const bad = badTable(scenes[0], pfm.data, REPORT_THRESHOLDS);
    const row = REPORT_THRESHOLDS.map((t) => `<td>${bad.nonocc![String(t)].toFixed(2)}</td>`).join('');
    expect(html).toContain(`<tr><th>nonocc</th>${row}</tr>`);
    expect(html).not.toMatch(/<script|https?:\/\//);
  });

  test('the inline report embeds every image as a PNG data URI identical to the file', () => {
    const html = fs.readFileSync(inlineFile, 'utf8');
    const imgs = references(html).filter((r) => r.tag === 'img');
    expect(imgs).toHaveLength(10);
    const written = listFiles(path.join(tmp, 'inline', 'one file-files')).filter((f) => f.endsWith('.png')).map((f) => fs.readFileSync(path.join(tmp, 'inline', 'one file-files', f)).toString('base64'));
    for (const im of imgs) {
      expect(im.url.startsWith('data:image/png;base64,')).toBe(true);
      expect(written).toContain(im.url.slice('data:image/png;base64,'.length));
    }
  });

  const bin = chromium();
  (bin ? test : test.skip)(`headless Chromium loads every image of both reports${bin ? '' : ' (skipped: chromium not installed; apt-get install chromium)'}`, () => {
    for (const page of [reportFile, inlineFile]) {
      const imgs = imagesInBrowser(bin!, page);
      expect(imgs).toHaveLength(10);
      for (const im of imgs) {
        expect(im.complete).toBe(true);
        expect(im.width).toBeGreaterThan(0);
      }
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
    const r = await runCli(['run', path.join(data, 'Alpha'), path.join(data, 'Beta'), '--backend', 'bk', '--report', path.join(out, 'report.html'), '--middeval3', path.join(out, 'MiddEval3'), '--middeval3-name', 'GC']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const s of ['Alpha', 'Beta']) {
      const pfm = await readImage(path.join(out, 'MiddEval3', 'trainingQ', s, 'disp0GC.pfm'));
      expect([pfm.width, pfm.height]).toEqual([48, 36]);
      expect(fs.readFileSync(path.join(out, 'MiddEval3', 'trainingQ', s, 'timeGC.txt'), 'utf8')).toMatch(/^\d+\.\d{3}\n$/);
      // The same map as the report's PFM.
      const rep = await readImage(path.join(out, 'report-files', s, 'disp.pfm'));
      expect(Array.from(rep.data)).toEqual(Array.from(pfm.data));
    }
    const html = fs.readFileSync(path.join(out, 'report.html'), 'utf8');
    for (const ref of references(html).filter((x) => !x.url.startsWith('#'))) {
      expect(fs.existsSync(path.join(out, ...ref.url.split('/').map(decodeURIComponent)))).toBe(true);
    }
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
