/**
 * The project's PNG codec (data/pngDecode.ts, data/pngEncode.ts) against
 * pngjs (PNG.sync.read / PNG.sync.write) and fast-png (decode / encode):
 *
 *   node dist/bench/pngCodecs.js [RUNS] [MIDDLEBURY_FOLDER]
 *
 * Every PNG under the folder (default: $STEREO_DATA or ../shared/data) and a
 * synthetic 16-bit disparity map (1390×1110, values ×256 as a disparity
 * writer stores them) is decoded to a Raster (data/raster.ts: float samples,
 * alpha dropped, 1 channel for grey and grey palettes, 3 otherwise) and
 * encoded from it, RUNS times each (median; the codecs take turns, so they
 * share the machine's load alike). A library's time includes turning its
 * output into a Raster, and a Raster into its input: what a caller of
 * decodePng/encodePng would pay (one row gives the libraries' own decoding
 * calls alone). Start-up: fresh `node -e "require(...)"`
 * processes in turn, the median of STARTUP_RUNS less that of `node -e ""`;
 * and a fresh process that loads the codec, decodes teddy's im2.png and
 * encodes it again (the code runs cold there, as in a CLI run).
 *
 * Exactness: every codec's decoding of every file must give the same
 * samples; every encoder's output, read back by all three decoders, must give
 * the encoded samples (the 16-bit map included). Any difference stops the
 * bench. Prints one markdown table (totals per kind of image). The
 * libraries are called through bench/pngAdapters.ts.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { decodePng } from '../data/pngDecode';
import { encodePng } from '../data/pngEncode';
import type { Raster } from '../data/raster';
import { median } from '../app/bench/median';
import { fastPngDecode, fastPngEncode, fastPngRead, pngKind, pngjsDecode, pngjsEncode, pngjsRead } from './pngAdapters';

const RUNS = Number(process.argv[2] ?? 7);
const STARTUP_RUNS = 21;

interface Codec {
  name: string;
  decode(bytes: Uint8Array, name: string): Raster;
  /** The library's own decoding call, before its output is made a Raster. */
  read(bytes: Uint8Array): unknown;
  encode(r: Raster, depth: 8 | 16): Promise<Uint8Array> | Uint8Array;
}
const CODECS: Codec[] = [
  { name: 'this project', decode: decodePng, read: (b) => decodePng(b, 'read'), encode: encodePng },
  { name: 'pngjs', decode: pngjsDecode, read: pngjsRead, encode: pngjsEncode },
  { name: 'fast-png', decode: fastPngDecode, read: fastPngRead, encode: fastPngEncode },
];

/** A 16-bit disparity map as the CLI writes one (disparity × 256): slanted planes, a step, sub-pixel noise. */
function syntheticDisparity(width: number, height: number): Raster {
  const data = new Float32Array(width * height);
  let seed = 12345;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      const d = x < width * 0.4 ? 30 + (x * 40) / width + (y * 10) / height : 110 - (y * 30) / height;
      data[y * width + x] = Math.round((d + (seed / 2 ** 32 - 0.5) * 0.5) * 256);
    }
  }
  return { width, height, channels: 1, data, maxval: 65535 };
}

function sameSamples(a: Raster, b: Raster): boolean {
  if (a.width !== b.width || a.height !== b.height || a.channels !== b.channels || a.maxval !== b.maxval) return false;
  for (let i = 0; i < a.data.length; i++) if (a.data[i] !== b.data[i]) return false;
  return true;
}

function listPngs(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? listPngs(p) : e.name.endsWith('.png') ? [p] : [];
  }).sort();
}

function middleburyFolder(): string {
  const given = process.argv[3] ?? process.env.STEREO_DATA ?? path.join(__dirname, '..', '..', '..', 'shared', 'data');
  return fs.existsSync(path.join(given, 'middlebury')) ? path.join(given, 'middlebury') : given;
}

/** Median wall times, ms, of fresh `node -e SCRIPT` processes: one warm-up run each, then STARTUP_RUNS rounds with the scripts in turn (they share the load alike). */
function freshMs(scripts: string[]): number[] {
  const once = (script: string): number => {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'pipe'], cwd: path.join(__dirname, '..', '..') });
    if (r.status !== 0) throw new Error(`node -e ${script} exited ${r.status}: ${r.stderr}`);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  scripts.forEach(once);
  const t: number[][] = scripts.map(() => []);
  for (let run = 0; run < STARTUP_RUNS; run++) scripts.forEach((s, k) => t[k].push(once(s)));
  return t.map(median);
}

interface Kind { label: string; files: number; pixels: number; decode: number[]; read: number[]; encode: number[]; bytes: number[] }

async function main(): Promise<void> {
  if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error('usage: node dist/bench/pngCodecs.js [RUNS ≥ 1] [MIDDLEBURY_FOLDER]');
  const folder = middleburyFolder();
  const files = listPngs(folder);
  if (files.length === 0) throw new Error(`no PNGs under ${folder}`);
  const synthetic = syntheticDisparity(1390, 1110);
  const inputs: { name: string; bytes: Uint8Array }[] = [
    ...files.map((f) => ({ name: path.relative(folder, f), bytes: fs.readFileSync(f) as Uint8Array })),
    { name: 'synthetic 16-bit disparity', bytes: await encodePng(synthetic, 16) },
  ];
  const kinds = new Map<string, Kind>();
  for (const { name, bytes } of inputs) {
    const { colourType, depth } = pngKind(bytes);
    const label = depth === 16 ? '16-bit grey (synthetic disparity ×256)'
      : colourType === 3 ? 'palette, 1–8-bit' : colourType === 0 ? '8-bit grey' : colourType === 2 ? '8-bit RGB' : `colour type ${colourType}, ${depth}-bit`;
    const kind = kinds.get(label) ?? { label, files: 0, pixels: 0, decode: CODECS.map(() => 0), read: CODECS.map(() => 0), encode: CODECS.map(() => 0), bytes: CODECS.map(() => 0) };
    kinds.set(label, kind);

    // Exactness: the same samples from every decoder; every encoder's file read back exactly by every decoder.
    const decoded = CODECS.map((c) => c.decode(bytes, name));
    for (let k = 1; k < CODECS.length; k++) {
      if (!sameSamples(decoded[0], decoded[k])) throw new Error(`${name}: ${CODECS[k].name} decodes other samples than ${CODECS[0].name}`);
    }
    const raster = decoded[0];
    if (depth === 16 && !sameSamples(raster, synthetic)) throw new Error(`${name}: the 16-bit map does not come back exactly`);
    const outDepth: 8 | 16 = raster.maxval > 255 ? 16 : 8;
    for (let k = 0; k < CODECS.length; k++) {
      const png = await CODECS[k].encode(raster, outDepth);
      kind.bytes[k] += png.length;
      for (const reader of CODECS) {
        if (!sameSamples(reader.decode(png, name), raster)) throw new Error(`${name}: ${CODECS[k].name}'s file reads back differently through ${reader.name}`);
      }
    }

    // Timing: RUNS rounds, the codecs in turn within each.
    const dec: number[][] = CODECS.map(() => []);
    const read: number[][] = CODECS.map(() => []);
    const enc: number[][] = CODECS.map(() => []);
    for (let run = 0; run < RUNS; run++) {
      for (let k = 0; k < CODECS.length; k++) {
        let t0 = process.hrtime.bigint();
        CODECS[k].decode(bytes, name);
        dec[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
        t0 = process.hrtime.bigint();
        CODECS[k].read(bytes);
        read[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
        t0 = process.hrtime.bigint();
        await CODECS[k].encode(raster, outDepth);
        enc[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }
    kind.files++;
    kind.pixels += raster.width * raster.height;
    CODECS.forEach((_, k) => { kind.decode[k] += median(dec[k]); kind.read[k] += median(read[k]); kind.encode[k] += median(enc[k]); });
  }

  // Start-up: loading each codec in a fresh process, then loading it and round-tripping one scene image there.
  const dist = path.join(__dirname, '..');
  const ours = `require(${JSON.stringify(path.join(dist, 'data', 'pngDecode.js'))}); require(${JSON.stringify(path.join(dist, 'data', 'pngEncode.js'))})`;
  const adapters = JSON.stringify(path.join(dist, 'bench', 'pngAdapters.js'));
  const loads = [ours, "require('pngjs')", "require('fast-png')"];
  const teddy = JSON.stringify(files.find((f) => f.endsWith(path.join('teddy', 'im2.png'))) ?? files[0]);
  const coldScripts = [
    `const d=require(${JSON.stringify(path.join(dist, 'data', 'pngDecode.js'))}),e=require(${JSON.stringify(path.join(dist, 'data', 'pngEncode.js'))});e.encodePng(d.decodePng(require('fs').readFileSync(${teddy}),'x'))`,
    `const a=require(${adapters});a.pngjsEncode(a.pngjsDecode(require('fs').readFileSync(${teddy})),8)`,
    `const a=require(${adapters});a.fastPngEncode(a.fastPngDecode(require('fs').readFileSync(${teddy})),8)`,
  ];
  const [bare, ...fresh] = freshMs(['', ...loads, ...coldScripts]);
  const loadMs = fresh.slice(0, loads.length).map((ms) => ms - bare);
  const coldMs = fresh.slice(loads.length).map((ms) => ms - bare);

  const f = (ms: number, base: number): string => (ms === base ? ms.toFixed(0) : `${ms.toFixed(0)} (${(ms / base).toFixed(2)}×)`);
  const rows: string[][] = [];
  const all = [...kinds.values()];
  for (const what of ['decode', 'encode'] as const) {
    for (const k of all) {
      rows.push([`${what}, ${k.label}: ${k.files} files, ${(k.pixels / 1e6).toFixed(1)} MP, ms`, ...k[what].map((ms) => f(ms, k[what][0]))]);
    }
    const sum = CODECS.map((_, c) => all.reduce((s, k) => s + k[what][c], 0));
    rows.push([`**${what}, all ${inputs.length} files, ms**`, ...sum.map((ms) => f(ms, sum[0]))]);
    if (what === 'decode') {
      const lib = CODECS.map((_, c) => all.reduce((s, k) => s + k.read[c], 0));
      rows.push([`decode, the library's call alone (no Raster), all ${inputs.length} files, ms`, ...lib.map((ms) => f(ms, lib[0]))]);
    }
  }
  const size = CODECS.map((_, c) => all.reduce((s, k) => s + k.bytes[c], 0) / 1e6);
  rows.push([`encoded size, all ${inputs.length} files, MB`, ...size.map((mb) => `${mb.toFixed(1)}${mb === size[0] ? '' : ` (${(mb / size[0]).toFixed(2)}×)`}`)]);
  rows.push([`load in a fresh node (\`require\`, less \`node -e ""\` = ${bare.toFixed(0)} ms), ms`, ...loadMs.map((ms) => ms.toFixed(0))]);
  rows.push([`fresh node: load, decode and encode teddy's im2.png (less \`node -e ""\`), ms`, ...coldMs.map((ms) => ms.toFixed(0))]);

  const versions = ['pngjs', 'fast-png'].map((p) => `${p} ${(JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'node_modules', p, 'package.json'), 'utf8')) as { version: string }).version}`);
  console.log(`| median of ${RUNS} (decode, encode) or ${STARTUP_RUNS} (fresh processes) | ${CODECS.map((c, k) => (k === 0 ? c.name : versions[k - 1])).join(' | ')} |`);
  console.log(`|---|${CODECS.map(() => '--:').join('|')}|`);
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  console.log(`\nsamples identical across the three decoders on all ${inputs.length} files; every encoder's files read back exactly (16-bit included)`);
  console.log(`node ${process.version}, ${require('os').cpus().length} cores (${require('os').cpus()[0].model}), ${new Date().toISOString()}`);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
