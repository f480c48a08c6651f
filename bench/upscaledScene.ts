/**
 * A scene folder scaled up by an integer factor, for measuring how
 * stereocut scales with the image size on real content:
 *
 *   node dist/bench/upscaledScene.js SRC_SCENE FACTOR OUT_DIR
 *
 * im0/im1: bicubic (Keys, a = −0.5) on each channel, rounded and clipped
 * to the samples' range, sample centres aligned (x_src = (x + 0.5)/f − 0.5).
 */
import * as fs from 'fs';
import * as path from 'path';
import { writePng, writePfm } from '../data/imageIO';
import type { Raster } from '../data/raster';
import { loadScene } from '../data/scene';

function cubic(t: number): number {
  const a = -0.5;
  const x = Math.abs(t);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
  return 0;
}

export function bicubicUp(r: Raster, f: number): Raster {
  const { width: W, height: H, channels: C } = r;
  const w = W * f;
  const h = H * f;
  const out = new Float32Array(w * h * C);
  // Taps and weights per output column and row (separable).
  const taps = (n: number, N: number): { idx: Int32Array; wt: Float64Array } => {
    const idx = new Int32Array(n * 4);
    const wt = new Float64Array(n * 4);
    for (let i = 0; i < n; i++) {
      const s = (i + 0.5) / f - 0.5;
      const i0 = Math.floor(s);
      for (let k = 0; k < 4; k++) {
        const j = i0 - 1 + k;
        idx[i * 4 + k] = Math.min(N - 1, Math.max(0, j));
        wt[i * 4 + k] = cubic(s - j);
      }
    }
    return { idx, wt };
  };
  const tx = taps(w, W);
  const ty = taps(h, H);
  const rows = new Float64Array(W * C * 4);
  for (let y = 0; y < h; y++) {
    for (let k = 0; k < 4; k++) {
      const sy = ty.idx[y * 4 + k];
      for (let i = 0; i < W * C; i++) rows[k * W * C + i] = r.data[sy * W * C + i];
    }
    for (let x = 0; x < w; x++) {
      for (let c = 0; c < C; c++) {
        let v = 0;
        for (let ky = 0; ky < 4; ky++) {
          let acc = 0;
          for (let kx = 0; kx < 4; kx++) acc += tx.wt[x * 4 + kx] * rows[ky * W * C + tx.idx[x * 4 + kx] * C + c];
          v += ty.wt[y * 4 + ky] * acc;
        }
        out[(y * w + x) * C + c] = Math.min(r.maxval, Math.max(0, Math.round(v)));
      }
    }
  }
  return { width: w, height: h, channels: C, data: out, maxval: r.maxval };
}

function nearestUp(r: Raster, f: number, scale = 1): Raster {
  const { width: W, height: H, channels: C } = r;
  const out = new Float32Array(W * f * H * f * C);
  for (let y = 0; y < H * f; y++) for (let x = 0; x < W * f; x++) for (let c = 0; c < C; c++) {
    out[(y * W * f + x) * C + c] = r.data[(Math.floor(y / f) * W + Math.floor(x / f)) * C + c] * scale;
  }
  return { width: W * f, height: H * f, channels: C, data: out, maxval: r.maxval };
}

/**
 * Any scene folder the loader reads, scaled up by f and written in the
 * MiddEval3 layout: im0/im1 bicubic, disp0GT.pfm and mask0nocc.png (where
 * the scene has a nonocc region) from the nearest source pixel, the
 * disparity range × f in calib.txt (its cameras too where the source has
 * a calib.txt).
 */
export async function upscaleScene(src: string, f: number, out: string): Promise<void> {
  if (!Number.isInteger(f) || f < 1) throw new Error(`factor must be an integer ≥ 1 (got ${f})`);
  const scene = await loadScene(src);
  fs.mkdirSync(out, { recursive: true });
  await writePng(path.join(out, 'im0.png'), bicubicUp(scene.left, f));
  await writePng(path.join(out, 'im1.png'), bicubicUp(scene.right, f));
  const { width: W, height: H } = scene.left;
  if (scene.groundTruth) {
    const gt = nearestUp({ width: W, height: H, channels: 1, data: scene.groundTruth, maxval: 1 }, f, f);
    writePfm(path.join(out, 'disp0GT.pfm'), gt.width, gt.height, gt.data);
  }
  const nonocc = scene.masks.nonocc;
  if (nonocc && !scene.nonoccDerived) {
    const m = nearestUp({ width: W, height: H, channels: 1, data: Float32Array.from(nonocc, (v) => (v ? 255 : 0)), maxval: 255 }, f);
    await writePng(path.join(out, 'mask0nocc.png'), m);
  }
  const calibFile = path.join(src, 'calib.txt');
  // The source's own vmin/vmax where it has them (the loader widens them a little), else the range the loader gives.
  const given = (key: string): number | undefined => {
    const m = fs.existsSync(calibFile) ? new RegExp(`^\\s*${key}\\s*=\\s*([-\\d.]+)`, 'm').exec(fs.readFileSync(calibFile, 'utf8')) : null;
    return m ? Number(m[1]) : undefined;
  };
  const vmin = (given('vmin') ?? scene.minDisp ?? 0) * f;
  const vmax = (given('vmax') ?? (scene.minDisp ?? 0) + scene.ndisp - 1) * f;
  const cameras = fs.existsSync(calibFile)
    ? fs.readFileSync(calibFile, 'utf8').split(/\r?\n/).filter((l) => /^\s*(cam0|cam1|doffs|baseline)\s*=/.test(l))
      .map((l) => l.replace(/\[([^\]]*)\]/g, (_m, body: string) => `[${body.split(';').map((row, i) => (i < 2 ? row.trim().split(/\s+/).map((v) => String(Number(v) * f)).join(' ') : row.trim())).join('; ')}]`)
        .replace(/^(\s*doffs\s*=\s*)([-\d.]+)/, (_m, key: string, v: string) => `${key}${Number(v) * f}`))
    : [];
  const lines = [...cameras, `width=${W * f}`, `height=${H * f}`, `ndisp=${vmax + 1}`, 'isint=0', `vmin=${vmin}`, `vmax=${vmax}`];
  fs.writeFileSync(path.join(out, 'calib.txt'), `${lines.join('\n')}\n`);
}

if (require.main === module) {
  const [src, factor, out] = process.argv.slice(2);
  if (!src || !factor || !out) {
    console.error('usage: node dist/bench/upscaledScene.js SRC_SCENE FACTOR OUT_DIR');
    process.exit(2);
  }
  upscaleScene(src, Number(factor), out).catch((e: Error) => { console.error(e.message); process.exit(1); });
}
