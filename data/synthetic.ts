import type { Raster } from './raster';
import type { Scene } from './sceneTypes';
import { seededRandom } from './random';
import { optionError } from './errors';

// Local aliases: inside jest's vm sandbox every lookup of a global such as
// `Math` goes through the context's global object, far slower than a local
// read, so per-pixel loops read these instead.
const { sin, floor, round, min, max, imul, PI } = Math;
const NEG_INF = -Infinity;

/**
 * Synthetic stereo pairs with exact ground truth.
 *
 * The scene is a set of textured planar surfaces, each with a disparity plane
 * d(x, y) = a + b·x + c·y given in left-image coordinates and a support region
 * (the whole plane, a rectangle or a disc) also in left coordinates. A surface
 * point seen at left pixel x is seen in the right image at x − d. Texture is
 * a function of the surface point (its left coordinates), so both views show
 * the same colour for the same point: for fronto-parallel surfaces with
 * integer d the right image is an exact pixel shift of the left one.
 *
 * Each view is rendered by a per-pixel depth test (larger disparity = nearer;
 * on an exact tie the later surface wins, in both views), so occlusions are
 * real. A left pixel is non-occluded when its point, at right position
 * x − d, lies inside the right image and no other surface is in front there.
 */

export interface SyntheticTexture {
  base: [number, number, number];
  /** Sinusoids sin(fu·u + fv·v + phase) mixed into the channels with `weights[k][c]`. */
  waves: { fu: number; fv: number; phase: number; weights: [number, number, number] }[];
  /** Amplitude of bilinear value noise on the pixel lattice. */
  noise: number;
  noiseSeed: number;
}

export interface SyntheticSurface {
  kind: 'plane' | 'rect' | 'disc';
  /** Disparity plane in left coordinates: d = a + b·x + c·y. */
  a: number;
  b: number;
  c: number;
  /** Rectangle [x0, x1] × [y0, y1] (kind 'rect'). */
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  /** Disc centre and radius (kind 'disc'). */
  cx: number;
  cy: number;
  r: number;
  texture: SyntheticTexture;
}

export interface SyntheticOptions {
  width?: number;
  height?: number;
  ndisp?: number;
  seed?: number;
}

export interface SyntheticResult {
  scene: Scene;
  surfaces: SyntheticSurface[];
  /** Index into `surfaces` of the surface seen at each left / right pixel. */
  leftSurface: Uint16Array;
  rightSurface: Uint16Array;
}

function covers(s: SyntheticSurface, u: number, v: number): boolean {
  if (s.kind === 'plane') return true;
  if (s.kind === 'rect') return u >= s.x0 && u <= s.x1 && v >= s.y0 && v <= s.y1;
  const du = u - s.cx;
  const dv = v - s.cy;
  return du * du + dv * dv <= s.r * s.r;
}

/** Disparity of surface s seen at right pixel (xr, y): solve d = a + b(xr + d) + c·y. */
function rightDisparity(s: SyntheticSurface, xr: number, y: number): number {
  return s.b === 0 ? s.a + s.c * y : (s.a + s.b * xr + s.c * y) / (1 - s.b);
}

function hash01(ix: number, iy: number, seed: number): number {
  let h = imul(ix, 0x27d4eb2d) ^ imul(iy, 0x165667b1) ^ seed;
  h = imul(h ^ (h >>> 15), 0x85ebca6b);
  h = imul(h ^ (h >>> 13), 0xc2b2ae35);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}

/** Bilinear value noise in [-1, 1] with one lattice value per pixel. */
function valueNoise(u: number, v: number, seed: number): number {
  const iu = floor(u);
  const iv = floor(v);
  const fu = u - iu;
  const fv = v - iv;
  const n00 = hash01(iu, iv, seed);
  if (fu === 0 && fv === 0) return 2 * n00 - 1;
  const n10 = hash01(iu + 1, iv, seed);
  const n01 = hash01(iu, iv + 1, seed);
  const n11 = hash01(iu + 1, iv + 1, seed);
  const top = n00 + (n10 - n00) * fu;
  const bot = n01 + (n11 - n01) * fu;
  return 2 * (top + (bot - top) * fv) - 1;
}

/** Integer RGB of surface point (u, v), written to out[o..o+2]. */
function shade(t: SyntheticTexture, u: number, v: number, out: Float32Array, o: number): void {
  let r = t.base[0];
  let g = t.base[1];
  let b = t.base[2];
  for (const w of t.waves) {
    const s = sin(w.fu * u + w.fv * v + w.phase);
    r += w.weights[0] * s;
    g += w.weights[1] * s;
    b += w.weights[2] * s;
  }
  const n = t.noise * valueNoise(u, v, t.noiseSeed);
  out[o] = min(255, max(0, round(r + n)));
  out[o + 1] = min(255, max(0, round(g + n)));
  out[o + 2] = min(255, max(0, round(b + n)));
}

function makeTexture(rnd: () => number): SyntheticTexture {
  const base: [number, number, number] = [60 + 135 * rnd(), 60 + 135 * rnd(), 60 + 135 * rnd()];
  const waves: SyntheticTexture['waves'] = [];
  for (let k = 0; k < 4; k++) {
    // Periods from about 4 to 40 px, in random directions: enough structure for matching at every scale.
    const freq = 0.15 + 1.4 * rnd() * rnd();
    const angle = PI * rnd();
    waves.push({
      fu: freq * Math.cos(angle),
      fv: freq * sin(angle),
      phase: 2 * PI * rnd(),
      weights: [12 + 28 * rnd(), 12 + 28 * rnd(), 12 + 28 * rnd()],
    });
  }
  return { base, waves, noise: 10 + 15 * rnd(), noiseSeed: floor(rnd() * 0x7fffffff) };
}

function emptySurface(kind: SyntheticSurface['kind'], texture: SyntheticTexture): SyntheticSurface {
  return { kind, a: 0, b: 0, c: 0, x0: 0, y0: 0, x1: 0, y1: 0, cx: 0, cy: 0, r: 0, texture };
}

function checkOption(name: string, v: number, lo: number, hi: number): void {
  if (typeof v !== 'number') throw optionError('type', 'synthetic scene', name, v, `an integer in ${lo}..${hi}`);
  if (!Number.isInteger(v) || v < lo || v > hi) throw optionError('range', 'synthetic scene', name, v, `an integer in ${lo}..${hi}`);
}

/** The random scene description: background plane first, then objects from far to near. */
function makeSurfaces(width: number, height: number, ndisp: number, rnd: () => number): SyntheticSurface[] {
  const dmax = ndisp - 1;
  const surfaces: SyntheticSurface[] = [];
  // Background: gently slanted in y (like a wall leaning back), disparity from ~10% to ~30% of the range.
  const bg = emptySurface('plane', makeTexture(rnd));
  const top = dmax * (0.05 + 0.1 * rnd());
  const bottom = dmax * (0.2 + 0.1 * rnd());
  bg.a = top;
  bg.c = (bottom - top) / max(1, height - 1);
  surfaces.push(bg);

  const count = 6;
  const lo = Math.ceil(dmax * 0.35);
  for (let k = 0; k < count; k++) {
    const slanted = k % 2 === 1;
    const kind: SyntheticSurface['kind'] = k % 3 === 2 ? 'disc' : 'rect';
    const s = emptySurface(kind, makeTexture(rnd));
    let halfW: number, halfH: number;
    if (kind === 'rect') {
      halfW = (width * (0.15 + 0.2 * rnd())) / 2;
      halfH = (height * (0.15 + 0.2 * rnd())) / 2;
      const cx = halfW * 0.5 + (width - halfW) * rnd();
      const cy = halfH * 0.5 + (height - halfH) * rnd();
      s.x0 = cx - halfW; s.x1 = cx + halfW; s.y0 = cy - halfH; s.y1 = cy + halfH;
      s.cx = cx; s.cy = cy;
    } else {
      s.r = min(width, height) * (0.08 + 0.1 * rnd());
      halfW = halfH = s.r;
      s.cx = s.r * 0.5 + (width - s.r) * rnd();
      s.cy = s.r * 0.5 + (height - s.r) * rnd();
    }
    // Objects later in the list tend to be nearer, so every depth layer shows up.
    const depth = lo + ((dmax - lo) * (k + rnd())) / count;
    if (!slanted) {
      s.a = min(dmax, max(lo, round(depth)));
    } else {
      const dc = min(dmax - 1, max(lo + 1, depth));
      const room = min(dc - lo, dmax - dc); // keeps d inside [lo, dmax] over the support
      let gx = 2 * rnd() - 1;
      let gy = 2 * rnd() - 1;
      const spread = Math.abs(gx) * halfW + Math.abs(gy) * halfH;
      const k2 = spread > 0 ? (0.9 * room) / spread : 0;
      gx *= k2;
      gy *= k2;
      // Cap the horizontal slant so the right-view footprint stays well shaped.
      if (Math.abs(gx) > 0.4) gx = 0.4 * Math.sign(gx);
      s.b = gx;
      s.c = gy;
      s.a = dc - gx * s.cx - gy * s.cy;
    }
    surfaces.push(s);
  }
  return surfaces;
}

/** Generate a scene together with its description and per-pixel surface ids (for tests and diagnostics). */
export function generateSynthetic(options: SyntheticOptions = {}): SyntheticResult {
  const width = options.width ?? 160;
  const height = options.height ?? 120;
  const ndisp = options.ndisp ?? 16;
  const seed = options.seed ?? 1;
  checkOption('width', width, 16, 8192);
  checkOption('height', height, 16, 8192);
  checkOption('ndisp', ndisp, 4, floor(width / 2));
  // The generator state is 32 bits: seeds outside 0..2^32-1 would silently alias
  // (-1 and 4294967295, or 1 and 2^32 + 1, gave the same scene), so they are refused.
  checkOption('seed', seed, 0, 0xffffffff);

  const rnd = seededRandom(seed);
  const surfaces = makeSurfaces(width, height, ndisp, rnd);
  const ns = surfaces.length;
  const n = width * height;
  const leftData = new Float32Array(3 * n);
  const rightData = new Float32Array(3 * n);
  const gtL = new Float32Array(n);
  const gtR = new Float32Array(n);
  const leftSurface = new Uint16Array(n);
  const rightSurface = new Uint16Array(n);
  const nonocc = new Uint8Array(n);

  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      // Left view: the surface point is (x, y) itself.
      let best = 0;
      let bestD = NEG_INF;
      for (let k = 0; k < ns; k++) {
        const s = surfaces[k];
        if (!covers(s, x, y)) continue;
        const d = s.a + s.b * x + s.c * y;
        if (d >= bestD) { bestD = d; best = k; }
      }
      leftSurface[i] = best;
      gtL[i] = bestD;
      shade(surfaces[best].texture, x, y, leftData, 3 * i);

      // Right view: surface k seen at (x, y) is its point (x + dR_k, y).
      let bestR = 0;
      let bestDR = NEG_INF;
      for (let k = 0; k < ns; k++) {
        const s = surfaces[k];
        const d = rightDisparity(s, x, y);
        if (!covers(s, x + d, y)) continue;
        if (d >= bestDR) { bestDR = d; bestR = k; }
      }
      rightSurface[i] = bestR;
      gtR[i] = bestDR;
      shade(surfaces[bestR].texture, x + bestDR, y, rightData, 3 * i);
    }
  }

  // Visibility of each left pixel in the right view, at the continuous position x − d.
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const k0 = leftSurface[i];
      const d0 = gtL[i];
      const xr = x - d0;
      if (xr < 0 || xr > width - 1) continue;
      let visible = true;
      for (let k = 0; k < ns && visible; k++) {
        if (k === k0) continue;
        const s = surfaces[k];
        const d = rightDisparity(s, xr, y);
        if ((d > d0 || (d === d0 && k > k0)) && covers(s, xr + d, y)) visible = false;
      }
      nonocc[i] = visible ? 1 : 0;
    }
  }

  const all = new Uint8Array(n).fill(1); // ground truth is known at every pixel
  const raster = (data: Float32Array): Raster => ({ width, height, channels: 3, data, maxval: 255 });
  const scene: Scene = {
    name: 'synthetic',
    dir: '',
    layout: 'synthetic',
    left: raster(leftData),
    right: raster(rightData),
    leftPath: `synthetic(seed=${seed}) left`,
    rightPath: `synthetic(seed=${seed}) right`,
    groundTruth: gtL,
    groundTruthRight: gtR,
    groundTruthScale: 1,
    ndisp,
    ndispSource: 'generator',
    masks: { nonocc, all },
    nonoccDerived: false,
  };
  return { scene, surfaces, leftSurface, rightSurface };
}

/** A seeded synthetic stereo scene (default 160×120, 16 labels) with exact left/right ground truth and nonocc mask. */
export function generateSyntheticScene(options: SyntheticOptions = {}): Scene {
  return generateSynthetic(options).scene;
}
