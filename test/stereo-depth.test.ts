import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../app/cli';
import { generateSynthetic } from '../data/synthetic';
import { readImage, writePng } from '../data/imageIO';
import { seededRandom } from '../data/random';
import { match, type MatchResult } from '../stereo/match';
import { toDepth, toPointCloud, type StereoCalibration } from '../stereo/depth';
import { INVALID_DISPARITY } from '../stereo/leftRightCheck';

/**
 * Depth and point clouds (issue 42, item 1) against exact geometry: the
 * synthetic scene's surfaces are disparity planes d = a + b·x + c·y, which
 * a pinhole pair of focal f, baseline B and offset doffs sees as the 3D
 * planes f·B = b·f·X + c·f·Y + (a + b·cx + c·cy + doffs)·Z. The PLY files
 * are read back by a parser written here from the format's description.
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-depth-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const f = (name: string): string => path.join(tmp, name);

async function cli(args: (string | number)[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args.map(String), { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const W = 96;
const H = 64;
const syn = generateSynthetic({ width: W, height: H, ndisp: 12, seed: 5 });
const CAL: StereoCalibration = { focal: 500, baseline: 160, doffs: 7.5, cx: 40.25, cy: 30.75 };

/** Z of the point of surface s seen at pixel (x, y): the ray through the pixel met with s's 3D plane. */
function trueDepth(x: number, y: number, cal: StereoCalibration): number {
  const s = syn.surfaces[syn.leftSurface[y * W + x]];
  return (cal.focal * cal.baseline) / (s.a + s.b * x + s.c * y + cal.doffs);
}

/** A binary PLY read by the format's rules: the header's elements and typed properties, then the records (either byte order). */
function parsePly(bytes: Buffer): { comments: string[]; vertices: Record<string, number>[] } {
  const end = bytes.indexOf('end_header\n');
  expect(end).toBeGreaterThan(0);
  const lines = bytes.subarray(0, end).toString('ascii').split('\n').filter((l) => l !== '');
  expect(lines[0]).toBe('ply');
  const fmt = /^format (binary_little_endian|binary_big_endian) 1\.0$/.exec(lines[1]);
  expect(fmt).not.toBeNull();
  const little = fmt![1] === 'binary_little_endian';
  const sizes: Record<string, [number, (b: Buffer, o: number) => number]> = {
    float: [4, (b, o) => (little ? b.readFloatLE(o) : b.readFloatBE(o))],
    double: [8, (b, o) => (little ? b.readDoubleLE(o) : b.readDoubleBE(o))],
    uchar: [1, (b, o) => b.readUInt8(o)],
    int: [4, (b, o) => (little ? b.readInt32LE(o) : b.readInt32BE(o))],
  };
  let count = 0;
  const props: Array<[string, string]> = [];
  const comments: string[] = [];
  for (const l of lines.slice(2)) {
    const w = l.split(' ');
    if (w[0] === 'comment') comments.push(l.slice(8));
    else if (w[0] === 'element') { expect(w[1]).toBe('vertex'); count = Number(w[2]); } else if (w[0] === 'property') props.push([w[1], w[2]]);
    else throw new Error(`unexpected header line ${l}`);
  }
  let o = end + 'end_header\n'.length;
  const vertices: Record<string, number>[] = [];
  for (let i = 0; i < count; i++) {
    const v: Record<string, number> = {};
    for (const [type, name] of props) {
      v[name] = sizes[type][1](bytes, o);
      o += sizes[type][0];
    }
    vertices.push(v);
  }
  expect(o).toBe(bytes.length);
  return { comments, vertices };
}

describe('toDepth and toPointCloud against the scene\'s planes', () => {
  test('the ground truth reprojects onto each surface\'s 3D plane, and each point onto its pixel', () => {
    const cloud = toPointCloud({ width: W, height: H, disparity: syn.scene.groundTruth! }, CAL, syn.scene.left);
    expect(cloud.count).toBe(W * H);
    const fb = CAL.focal * CAL.baseline;
    // Every pixel's checks, failures collected for one expect (an expect per check would cost seconds here).
    const failed: string[] = [];
    const check = (ok: boolean, what: () => string): void => { if (!ok) failed.push(what()); };
    for (let y = 0, k = 0; y < H; y++) {
      for (let x = 0; x < W; x++, k++) {
        const [X, Y, Z] = [cloud.xyz[3 * k], cloud.xyz[3 * k + 1], cloud.xyz[3 * k + 2]];
        const s = syn.surfaces[syn.leftSurface[y * W + x]];
        const plane = s.b * CAL.focal * X + s.c * CAL.focal * Y + (s.a + s.b * CAL.cx + s.c * CAL.cy + CAL.doffs) * Z;
        check(Math.abs(plane - fb) / fb < 2e-6, () => `(${x},${y}): off its plane by ${Math.abs(plane - fb) / fb} of f·B`);
        check(Math.abs((CAL.focal * X) / Z + CAL.cx - x) < 1e-4 * W, () => `(${x},${y}): reprojects to column ${(CAL.focal * X) / Z + CAL.cx}`);
        check(Math.abs((CAL.focal * Y) / Z + CAL.cy - y) < 1e-4 * H, () => `(${x},${y}): reprojects to row ${(CAL.focal * Y) / Z + CAL.cy}`);
        for (let ch = 0; ch < 3; ch++) {
          const want = Math.round(syn.scene.left.data[(y * W + x) * 3 + ch]);
          check(Object.is(cloud.rgb[3 * k + ch], want), () => `(${x},${y}) channel ${ch}: colour ${cloud.rgb[3 * k + ch]}, expected ${want}`);
        }
      }
    }
    expect(failed).toEqual([]);
  });

  test('a match: every point within the depth bound of its disparity error, on its pixel\'s ray; invalid pixels left out', async () => {
    const r = await match(syn.scene.left, syn.scene.right, { ndisp: 12, backend: 'bk', cycles: 2, lrFill: false });
    expect(r.disparity.includes(INVALID_DISPARITY)).toBe(true);
    const z = toDepth(r, CAL);
    const cloud = toPointCloud(r, CAL);
    let k = 0;
    // Every pixel's checks, failures collected for one expect (an expect per check would cost seconds here).
    const failed: string[] = [];
    const check = (ok: boolean, what: () => string): void => { if (!ok) failed.push(what()); };
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const i = y * W + x;
        if (r.disparity[i] === INVALID_DISPARITY) { check(z[i] === Infinity, () => `(${x},${y}) invalid: depth ${z[i]}, expected Infinity`); continue; }
        const dt = syn.scene.groundTruth![i];
        const e = Math.abs(r.disparity[i] - dt);
        const near = (CAL.focal * CAL.baseline) / (dt + CAL.doffs + e);
        const far = (CAL.focal * CAL.baseline) / (dt + CAL.doffs - e);
        const exact = (CAL.focal * CAL.baseline) / (dt + CAL.doffs);
        // toBeCloseTo(…, 2): within 0.005.
        check(Math.abs(trueDepth(x, y, CAL) - exact) < 0.005, () => `(${x},${y}): true depth ${trueDepth(x, y, CAL)}, expected ${exact}`);
        check(z[i] >= near * (1 - 1e-6), () => `(${x},${y}): depth ${z[i]} below ${near}`);
        check(z[i] <= far * (1 + 1e-6), () => `(${x},${y}): depth ${z[i]} above ${far}`);
        check(Object.is(cloud.xyz[3 * k + 2], z[i]), () => `(${x},${y}): point's Z ${cloud.xyz[3 * k + 2]}, depth ${z[i]}`);
        check(Math.abs(cloud.xyz[3 * k] / z[i] - (x - CAL.cx) / CAL.focal) < 1e-6, () => `(${x},${y}): X off its ray`);
        check(Math.abs(cloud.xyz[3 * k + 1] / z[i] - (y - CAL.cy) / CAL.focal) < 1e-6, () => `(${x},${y}): Y off its ray`);
        k++;
      }
    }
    expect(failed).toEqual([]);
    expect(cloud.count).toBe(k);
  });

  test('d + doffs ≤ 0 has no depth; bad calibrations are refused by name', () => {
    const z = toDepth({ width: 3, height: 1, disparity: [0, 2, Infinity] }, { ...CAL, doffs: -2 });
    expect(Array.from(z)).toEqual([Infinity, Infinity, Infinity]);
    expect(() => toDepth({ width: 1, height: 1, disparity: [1] }, { ...CAL, focal: 0 })).toThrow(/focal must be > 0/);
    expect(() => toDepth({ width: 1, height: 1, disparity: [1] }, { ...CAL, baseline: NaN })).toThrow(/baseline must be a finite number/);
  });
});

describe('match --depth / --ply', () => {
  const calibText = `cam0=[${CAL.focal} 0 ${CAL.cx}; 0 ${CAL.focal} ${CAL.cy}; 0 0 1]\ncam1=[${CAL.focal} 0 ${CAL.cx + CAL.doffs}; 0 ${CAL.focal} ${CAL.cy}; 0 0 1]\ndoffs=${CAL.doffs}\nbaseline=${CAL.baseline}\nwidth=${W}\nheight=${H}\nndisp=12\n`;
  let L: string;
  let R: string;
  beforeAll(async () => {
    fs.mkdirSync(f('scene'));
    L = f('scene/im0.png');
    R = f('scene/im1.png');
    await writePng(L, syn.scene.left);
    await writePng(R, syn.scene.right);
    fs.writeFileSync(f('scene/calib.txt'), calibText);
  });

  test('depth PFM and PLY from the calib.txt beside the images match the PFM disparity; the PLY parses', async () => {
    const r = await cli(['match', L, R, '--ndisp', 12, '--backend', 'bk', '--cycles', 1, '--no-lr-fill', '-o', f('d.png'), '--pfm', f('d.pfm'),
      '--color', f('c.png'), '--depth', f('depth.pfm'), '--ply', f('cloud.ply'), '--confidence', f('conf.png')]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`from ${f('scene/calib.txt')}`);
    const disp = (await readImage(f('d.pfm'))).data;
    const depth = (await readImage(f('depth.pfm'))).data;
    const ply = parsePly(fs.readFileSync(f('cloud.ply')));
    const left = syn.scene.left.data;
    let k = 0;
    // Each pixel's depth and vertex against the values they must hold, the differences collected for one expect.
    const failed: unknown[] = [];
    for (let i = 0; i < W * H; i++) {
      if (disp[i] === Infinity) {
        if (!Object.is(depth[i], Infinity)) failed.push({ i, depth: depth[i], want: Infinity });
        continue;
      }
      const Z = Math.fround((CAL.focal * CAL.baseline) / (disp[i] + CAL.doffs));
      const v = ply.vertices[k++];
      const got = [depth[i], v.z, v.x, v.y, v.red, v.green, v.blue];
      const want = [Z, Z, Math.fround((((i % W) - CAL.cx) * Z) / CAL.focal), Math.fround(((Math.floor(i / W) - CAL.cy) * Z) / CAL.focal), left[3 * i], left[3 * i + 1], left[3 * i + 2]];
      if (got.some((g, j) => !Object.is(g, want[j]))) failed.push({ i, got, want });
    }
    expect(failed).toEqual([]);
    expect(ply.vertices.length).toBe(k);
    expect(k).toBeLessThan(W * H);
    expect(ply.comments.join(' ')).toMatch(/x right, y down, z forward/);
  });

  test('--focal --baseline: the 16-bit PNG holds the depth in mm (image centre as principal point)', async () => {
    const r = await cli(['match', L, R, '--ndisp', 12, '--backend', 'bk', '--cycles', 1, '-o', f('d2.png'), '--pfm', f('d2.pfm'), '--depth', f('depth.png'), '--focal', 700, '--baseline', 120, '--doffs', 3, '--ply', f('c2.ply')]);
    expect(r.code).toBe(0);
    const disp = (await readImage(f('d2.pfm'))).data;
    const png = await readImage(f('depth.png'));
    expect(png.maxval).toBe(65535);
    expect(Array.from(png.data.subarray(0, W * H))).toEqual(Array.from({ length: W * H }, (_, i) => Math.round((700 * 120) / (disp[i] + 3))));
    const ply = parsePly(fs.readFileSync(f('c2.ply')));
    const Z = (700 * 120) / (disp[0] + 3);
    expect(ply.vertices[0].x).toBeCloseTo(((0 - (W - 1) / 2) * Z) / 700, 3);
  });

  test('refused before any work, nothing written: no camera, a wrong extension, an output onto an input or another output, half a camera', async () => {
    const before = fs.readdirSync(tmp).sort();
    fs.mkdirSync(f('bare'));
    await writePng(f('bare/l.png'), syn.scene.left);
    await writePng(f('bare/r.png'), syn.scene.right);
    fs.linkSync(f('bare/l.png'), f('bare/l-link.png'));
    const leftBytes = fs.readFileSync(f('bare/l.png'));
    const base = ['match', f('bare/l.png'), f('bare/r.png'), '--ndisp', 12, '--backend', 'bk', '-o', f('bare/d.png')];
    const cases: Array<[(string | number)[], RegExp]> = [
      [['--depth', f('bare/z.pfm')], /^--depth: needs the camera: --calib FILE/],
      [['--ply', f('bare/c.txt'), '--calib', f('scene/calib.txt')], /^--ply: .*ends in \.txt, but this writes PLY/],
      [['--depth', f('bare/z.tif'), '--calib', f('scene/calib.txt')], /^--depth: .*give a name ending in \.pfm or \.png/],
      [['--depth', f('bare/l-link.png'), '--calib', f('scene/calib.txt')], /^--depth: .*l-link\.png is (the same file as )?the left image .*an output never replaces an input/],
      [['--confidence', f('bare/d.png')], /^--confidence: .*is also (given to|the file of) --output/],
      [['--depth', f('bare/z.pfm'), '--focal', 500], /^--baseline: required with --focal/],
      [['--depth', f('bare/z.pfm'), '--focal', 500, '--baseline', 1, '--cx', 3], /^--cy: give --cx and --cy together/],
      [['--depth', f('bare/z.pfm'), '--focal', 500, '--baseline', 1, '--calib', f('scene/calib.txt')], /^--calib: give either --calib or --focal/],
      [['--focal', 500, '--baseline', 1], /^--focal: a calibration is used by --depth and --ply/],
      [['--depth', f('bare/z.pfm'), '--focal', -1, '--baseline', 1], /^--focal: got '-1', expected a finite number > 0/],
      [['--depth', f('bare/z.pfm'), '--calib', f('bare/nowhere.txt')], /nowhere\.txt: file not found/],
      [['--pfm', f('bare/r.png')], /./],
      [['--init', f('scene/im0.png'), '--init-scale', 1, '--color', f('scene/im0.png')], /^--color: .*im0\.png is the --init file/],
    ];
    for (const [extra, msg] of cases) {
      const r = await cli([...base, ...extra]);
      expect([r.code, r.err.replace(/^stereocut: /, '')]).toEqual([1, expect.stringMatching(msg)]);
      expect(r.err.split('\n')).toHaveLength(1);
    }
    // -o onto the left image itself (its own name): refused too.
    const own = await cli(['match', f('bare/l.png'), f('bare/r.png'), '--ndisp', 12, '-o', f('bare/l.png')]);
    expect([own.code, own.err]).toEqual([1, `stereocut: --output: ${f('bare/l.png')} is the left image ${f('bare/l.png')}; an output never replaces an input, give another file`]);
    expect(fs.readdirSync(f('bare')).sort()).toEqual(['l-link.png', 'l.png', 'r.png']);
    expect(fs.readFileSync(f('bare/l.png')).equals(leftBytes)).toBe(true);
    expect(fs.readdirSync(tmp).sort()).toEqual([...before, 'bare'].sort());
  });
});

test('toPointCloud colours a grey image into R = G = B, and keeps the row order', () => {
  const rand = seededRandom(9);
  const grey = { width: 5, height: 4, channels: 1, data: Float32Array.from({ length: 20 }, () => Math.floor(rand() * 256)), maxval: 255 };
  const d = Float32Array.from({ length: 20 }, (_, i) => (i % 3 === 0 ? Infinity : 1 + (i % 4)));
  const r: Pick<MatchResult, 'width' | 'height'> & { disparity: Float32Array } = { width: 5, height: 4, disparity: d };
  const c = toPointCloud(r, CAL, grey);
  const kept = [...d.keys()].filter((i) => d[i] !== Infinity);
  expect(c.count).toBe(kept.length);
  kept.forEach((i, k) => expect(Array.from(c.rgb.subarray(3 * k, 3 * k + 3))).toEqual([grey.data[i], grey.data[i], grey.data[i]]));
});

describe('the examples of the README and of match --help run as written (files in a folder of their own)', () => {
  const dir = f('examples');
  const files = (args: string[]): string[] => args.map((a) => (/\.(png|pfm|ply|txt)$/.test(a) ? path.join(dir, a) : a));
  beforeAll(async () => {
    const s = generateSynthetic({ width: 128, height: 96, ndisp: 16, seed: 6 }).scene;
    fs.mkdirSync(dir);
    await writePng(path.join(dir, 'im0.png'), s.left);
    await writePng(path.join(dir, 'im1.png'), s.right);
    fs.writeFileSync(path.join(dir, 'calib.txt'), 'cam0=[300 0 60; 0 300 45; 0 0 1]\ncam1=[300 0 62; 0 300 45; 0 0 1]\ndoffs=2\nbaseline=100\nwidth=128\nheight=96\nndisp=64\n');
  });

  const check = async (line: string): Promise<void> => {
    const args = line.trim().split(/\s+/);
    expect(args.slice(0, 2)).toEqual(['stereocut', 'match']);
    for (const out of ['depth.pfm', 'cloud.ply', 'conf.png', 'disp.png']) fs.rmSync(path.join(dir, out), { force: true });
    const r = await cli([...files(args.slice(1)), '--backend', 'bk', '--cycles', 1]);
    expect([r.code, r.err]).toEqual([0, '']);
    for (const a of args) if (/\.(pfm|ply|png)$/.test(a) && !a.startsWith('im')) expect(fs.statSync(path.join(dir, a)).size).toBeGreaterThan(0);
    expect(parsePly(fs.readFileSync(path.join(dir, 'cloud.ply'))).vertices.length).toBeGreaterThan(128 * 96 * 0.5);
  };

  test('README: depth, point clouds and confidence', async () => {
    const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
    const line = readme.split('\n').find((l) => l.startsWith('npx stereocut match') && l.includes('--ply'));
    expect(line).toBeDefined();
    await check(line!.replace(/^npx /, ''));
  });

  test('match --help', async () => {
    const r = await cli(['match', '--help']);
    // yargs wraps an example over lines: each starts with "stereocut", the rest continue it.
    const examples = r.out.split('Examples:')[1].split(/\n\s*(?=stereocut )/).map((e) => e.replace(/\s+/g, ' ').trim());
    const line = examples.find((l) => l.includes('--ply'))!;
    await check(line);
  });
});

test('a run continued from a checkpoint writes its checkpoints elsewhere (--init FILE --checkpoint FILE is refused, as any output onto an input)', async () => {
  fs.mkdirSync(f('ck'));
  await writePng(f('ck/l.png'), syn.scene.left);
  await writePng(f('ck/r.png'), syn.scene.right);
  const base = ['match', f('ck/l.png'), f('ck/r.png'), '--ndisp', 12, '--backend', 'bk', '--cycles', 1];
  expect((await cli([...base, '-o', f('ck/a.png'), '--checkpoint', f('ck/ck.pfm')])).code).toBe(0);
  expect((await cli([...base, '-o', f('ck/b.png'), '--init', f('ck/ck.pfm'), '--checkpoint', f('ck/ck2.pfm')])).code).toBe(0);
  const same = await cli([...base, '-o', f('ck/b.png'), '--init', f('ck/ck.pfm'), '--checkpoint', f('ck/ck.pfm')]);
  expect(same.code).toBe(1);
  expect(same.err).toMatch(/^stereocut: --checkpoint: .*ck\.pfm is the --init file .*; an output never replaces an input/);
  const r = await cli([...base, '-o', f('ck/c.png'), '--init', f('ck/ck.pfm'), '--pfm', f('ck/ck.pfm')]);
  expect(r.code).toBe(1);
  expect(r.err).toMatch(/^stereocut: --pfm: .*ck\.pfm is the --init file .*; an output never replaces an input/);
});

test('a 16-bit depth PNG cannot hold depths beyond 65535 mm: they are 0 (unknown), and the run says how many', async () => {
  fs.mkdirSync(f('far'));
  await writePng(f('far/l.png'), syn.scene.left);
  await writePng(f('far/r.png'), syn.scene.right);
  const r = await cli(['match', f('far/l.png'), f('far/r.png'), '--ndisp', 12, '--backend', 'bk', '--cycles', 1, '-o', f('far/d.png'), '--pfm', f('far/d.pfm'), '--depth', f('far/z.png'), '--focal', 2000, '--baseline', 300]);
  expect(r.code).toBe(0);
  const disp = (await readImage(f('far/d.pfm'))).data;
  const z = (await readImage(f('far/z.png'))).data;
  let beyond = 0;
  for (let i = 0; i < W * H; i++) {
    const mm = Math.round(600000 / disp[i]);
    if (disp[i] === 0) expect(z[i]).toBe(0); // no depth at d + doffs = 0: unknown, not counted as far
    else if (mm > 65535) { beyond++; expect(z[i]).toBe(0); } else expect(z[i]).toBe(mm);
  }
  expect(beyond).toBeGreaterThan(0);
  expect(r.err).toBe(`note: --depth: ${beyond} pixels are farther than 65535 mm, beyond a 16-bit PNG; written as 0 (unknown): the PFM keeps them`);
});
