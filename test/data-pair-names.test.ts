import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../app/cli';
import { loadScene, sceneFoldersOf } from '../data/scene';
import { readImage, writePfm, writePng, writePnm } from '../data/imageIO';
import { seededRandom } from '../data/random';
import { generateSyntheticScene } from '../data/synthetic';
import type { Raster } from '../data/raster';
import { encodeJpeg } from './support/jpegFixture';
import { writeSceneFolder } from './support/tuneSupport';

/**
 * Folders of one's own (issue 42, item 4): the pair namings cameras and
 * other datasets use, dataset roots for run / accuracy / tune, and run on
 * folders without ground truth.
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-pairs-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function cli(args: (string | number)[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args.map(String), { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const scene = generateSyntheticScene({ width: 40, height: 24, ndisp: 6, seed: 3 });

/** Writes `r` in the format its extension names (JPEG through save-pixels, PFM as its first channel). */
async function writeAs(file: string, r: Raster): Promise<void> {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.png') return writePng(file, r);
  if (ext === '.pfm') return writePfm(file, r.width, r.height, Float32Array.from({ length: r.width * r.height }, (_, i) => r.data[i * r.channels]));
  if (ext === '.ppm' || ext === '.pnm') return writePnm(file, r);
  if (ext === '.pgm') return writePnm(file, { ...r, channels: 1, data: Float32Array.from({ length: r.width * r.height }, (_, i) => r.data[i * r.channels]) });
  const px = Uint8Array.from({ length: r.width * r.height * 3 }, (_, i) => r.data[Math.floor(i / 3) * r.channels + (r.channels === 3 ? i % 3 : 0)]);
  fs.writeFileSync(file, await encodeJpeg(px, r.width, r.height, 95));
}

const randomCase = (s: string, rand: () => number): string => [...s].map((c) => (rand() < 0.5 ? c.toUpperCase() : c)).join('');

describe('the loader takes the usual pair namings', () => {
  test('random namings, extensions, letter cases and files beside them: the pair is found, left and right the right way round', async () => {
    const rand = seededRandom(42);
    const namings: Array<(ext: string) => [string, string]> = [
      (e) => [`left${e}`, `right${e}`],
      (e) => [`im0${e}`, `im1${e}`],
      (e) => [`view1${e}`, `view5${e}`],
      (e) => [`cam_07_L${e}`, `cam_07_R${e}`],
      (e) => [`frame0012_l${e}`, `frame0012_r${e}`],
    ];
    const exts = ['.png', '.jpg', '.jpeg', '.ppm', '.pgm', '.pnm', '.pfm', '.PNG', '.JPG'];
    for (let t = 0; t < 24; t++) {
      const naming = namings[t % namings.length];
      const ext = exts[Math.floor(rand() * exts.length)];
      let [l, r] = naming(ext);
      if (rand() < 0.5 && !l.includes('_')) { l = randomCase(l, rand); r = randomCase(r, rand); }
      const dir = path.join(tmp, `naming-${t}`);
      fs.mkdirSync(dir);
      await writeAs(path.join(dir, l), scene.left);
      await writeAs(path.join(dir, r), scene.right);
      fs.writeFileSync(path.join(dir, 'notes.txt'), 'taken with the rig on Tuesday\n');
      if (rand() < 0.5) await writePng(path.join(dir, 'thumbnail.png'), scene.left);
      const s = await loadScene(dir, { ndisp: 6 });
      expect([path.basename(s.leftPath), path.basename(s.rightPath)]).toEqual([l, r]);
      // The pixels are those of the files (each decoded by the image reader on its own).
      expect(Buffer.from(s.left.data.buffer).equals(Buffer.from((await readImage(path.join(dir, l))).data.buffer))).toBe(true);
      expect(Buffer.from(s.right.data.buffer).equals(Buffer.from((await readImage(path.join(dir, r))).data.buffer))).toBe(true);
      expect(s.groundTruth).toBeUndefined();
      // im0/im1.png, view1/view5.png and im0/im1.pgm are Middlebury layouts (no ground truth here either); the rest are pairs.
      expect(['pair', 'middlebury2014', 'middlebury2005', 'middlebury2001']).toContain(s.layout);
    }
  });

  test('a calib.txt beside a named pair sets the range; without one or an option the error says what to give', async () => {
    const dir = path.join(tmp, 'calibrated');
    fs.mkdirSync(dir);
    await writePng(path.join(dir, 'left.png'), scene.left);
    await writePng(path.join(dir, 'right.png'), scene.right);
    await expect(loadScene(dir)).rejects.toThrow(/no ground truth or calib\.txt .*ndisp/);
    fs.writeFileSync(path.join(dir, 'calib.txt'), 'cam0=[100 0 20; 0 100 12; 0 0 1]\ndoffs=0\nbaseline=50\nwidth=40\nheight=24\nndisp=7\n');
    const s = await loadScene(dir);
    expect([s.ndisp, s.ndispSource]).toEqual([7, 'calib ndisp']);
  });

  test('two candidates for one side are refused by name; so are two _L/_R pairs', async () => {
    const a = path.join(tmp, 'two-lefts');
    fs.mkdirSync(a);
    for (const f of ['left.png', 'left.jpg', 'right.png']) await writeAs(path.join(a, f), scene.left);
    await expect(loadScene(a, { ndisp: 6 })).rejects.toThrow(/left\.jpg and left\.png could each be/);
    const b = path.join(tmp, 'two-pairs');
    fs.mkdirSync(b);
    for (const f of ['a_L.png', 'a_R.png', 'b_L.png', 'b_R.png']) await writePng(path.join(b, f), scene.left);
    await expect(loadScene(b, { ndisp: 6 })).rejects.toThrow(/several _L\/_R pairs \(a_L\.png\+a_R\.png, b_L\.png\+b_R\.png\)/);
    const c = path.join(tmp, 'no-pair');
    fs.mkdirSync(c);
    await writePng(path.join(c, 'left.png'), scene.left);
    await expect(loadScene(c, { ndisp: 6 })).rejects.toThrow(/not a recognised scene folder; looked for .*NAME_L\+NAME_R/);
  });
});

describe('dataset roots', () => {
  let root: string;
  beforeAll(async () => {
    root = path.join(tmp, 'rig');
    for (const [k, names] of [['street', ['left.jpg', 'right.jpg']], ['yard', ['shot_L.png', 'shot_R.png']]] as const) {
      const d = path.join(root, k);
      fs.mkdirSync(d, { recursive: true });
      await writeAs(path.join(d, names[0]), scene.left);
      await writeAs(path.join(d, names[1]), scene.right);
    }
    fs.writeFileSync(path.join(root, 'README.txt'), 'two scenes\n');
    fs.mkdirSync(path.join(root, 'empty'));
  });

  test('sceneFoldersOf: a root stands for its scenes; what is beside them is named once', () => {
    const notices: string[] = [];
    expect(sceneFoldersOf([root], (l) => notices.push(l)).map((d) => path.basename(d))).toEqual(['street', 'yard']);
    expect(notices).toEqual([`${root}: ignored, no scene in them: README.txt, empty`]);
    expect(sceneFoldersOf([path.join(root, 'yard')], (l) => notices.push(l))).toEqual([path.join(root, 'yard')]);
    expect(() => sceneFoldersOf([path.join(root, 'empty')], () => undefined)).toThrow(/empty: neither a scene folder nor a folder of scene folders/);
    expect(() => sceneFoldersOf([path.join(root, 'nowhere')], () => undefined)).toThrow(/scene folder .*nowhere: no such folder/);
  });

  test('run on a root without ground truth: each scene\'s files, a table without scores, the notice on stderr', async () => {
    const out = path.join(tmp, 'rig-out');
    const r = await cli(['run', root, '--ndisp', 6, '--backend', 'bk', '--cycles', 1, '--out-dir', out]);
    expect(r.code).toBe(0);
    expect(r.err).toContain(`note: ${root}: ignored, no scene in them: README.txt, empty`);
    expect(r.out).toMatch(/street: no ground truth/);
    const head = r.out.split('\n').find((l) => l.startsWith('scene'))!;
    expect(head).not.toMatch(/nonocc|all>|disc/);
    expect(head).toMatch(/energy/);
    for (const k of ['street', 'yard']) {
      expect(fs.readdirSync(path.join(out, k)).sort()).toEqual(['disp-color.png', 'disp.pfm', 'disp.png', 'left.png', 'metrics.json']);
    }
    // The inputs are as they were: nothing was written beside them.
    expect(fs.readdirSync(path.join(root, 'street')).sort()).toEqual(['left.jpg', 'right.jpg']);
    // The report and --json of scenes without ground truth.
    const j = await cli(['run', path.join(root, 'yard'), '--ndisp', 6, '--backend', 'bk', '--cycles', 1, '--report', path.join(tmp, 'rig.html'), '--json']);
    expect(j.code).toBe(0);
    expect(JSON.parse(j.out).map((x: { scene: string; evaluation: unknown; layout: string }) => [x.scene, x.evaluation, x.layout])).toEqual([['yard', null, 'pair']]);
    expect(fs.readFileSync(path.join(tmp, 'rig.html'), 'utf8')).toContain('yard');
  });

  test('run refuses two scenes of one name when their files would share a folder, before any work', async () => {
    const other = path.join(tmp, 'rig2');
    fs.mkdirSync(path.join(other, 'yard'), { recursive: true });
    await writePng(path.join(other, 'yard', 'left.png'), scene.left);
    await writePng(path.join(other, 'yard', 'right.png'), scene.right);
    const out = path.join(tmp, 'shared-out');
    const r = await cli(['run', root, other, '--ndisp', 6, '--backend', 'bk', '--out-dir', out]);
    expect([r.code, r.err.split('\n').pop()]).toEqual([1, `stereocut: scene folder ${path.join(other, 'yard')}: its outputs would go where those of ${path.join(root, 'yard')} go (both are named yard); run them apart`]);
    expect(fs.existsSync(out)).toBe(false);
    // Without files to write, both run.
    expect((await cli(['run', path.join(root, 'yard'), path.join(other, 'yard'), '--ndisp', 6, '--backend', 'bk', '--cycles', 1, '-q'])).code).toBe(0);
  });

  test('accuracy and tune take a root of scenes with ground truth', async () => {
    const gtRoot = path.join(tmp, 'gt-root');
    await writeSceneFolder(path.join(gtRoot, 's1'), { seed: 1, width: 40, height: 24, ndisp: 6 });
    await writeSceneFolder(path.join(gtRoot, 's2'), { seed: 2, width: 40, height: 24, ndisp: 6 });
    fs.writeFileSync(path.join(gtRoot, 'list.csv'), 's1,s2\n');
    const a = await cli(['accuracy', gtRoot, '--backend', 'bk', '--cycles', 1]);
    expect(a.code).toBe(0);
    expect(a.err).toContain(`note: ${gtRoot}: ignored, no scene in them: list.csv`);
    expect(a.out).toMatch(/^s1 /m);
    expect(a.out).toMatch(/^s2 /m);
    const t = await cli(['tune', gtRoot, '-p', 'lambda=4,5', '--backend', 'bk', '--workers', 1, '--cycles', 1, '--out-dir', path.join(tmp, 'tune-out'), '-q']);
    expect(t.code).toBe(0);
    expect(t.err).toContain(`note: ${gtRoot}: ignored, no scene in them: list.csv`);
  });
});
