import { ownSamples, type Raster, type SampleArrays } from './raster';

/** Binary PGM (P5) / PPM (P6) reader and writer; ASCII variants (P2/P3) are rejected by name. */

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d || b === 0x0b || b === 0x0c;
}

/**
 * Read the next decimal token of a PNM header starting at `pos`, skipping
 * whitespace and comments ('#' to the end of the line may appear between any
 * two tokens). Returns the value and the position just after the last digit.
 */
function readHeaderInt(bytes: Uint8Array, pos: number, what: string, name: string): [number, number] {
  for (;;) {
    if (pos >= bytes.length) throw new Error(`${name}: PNM header ends before the ${what}`);
    const b = bytes[pos];
    if (isSpace(b)) { pos++; continue; }
    if (b === 0x23) {
      while (pos < bytes.length && bytes[pos] !== 0x0a && bytes[pos] !== 0x0d) pos++;
      continue;
    }
    break;
  }
  const start = pos;
  let v = 0;
  while (pos < bytes.length && bytes[pos] >= 0x30 && bytes[pos] <= 0x39) {
    v = v * 10 + (bytes[pos] - 0x30);
    pos++;
    if (v > 1e9) throw new Error(`${name}: PNM ${what} is too large`);
  }
  if (pos === start) {
    throw new Error(`${name}: PNM header has '${String.fromCharCode(bytes[pos])}' where the ${what} should be`);
  }
  return [v, pos];
}

export function parsePnm(bytes: Uint8Array, name: string, samples: SampleArrays = ownSamples): Raster {
  if (bytes.length < 2 || bytes[0] !== 0x50) throw new Error(`${name}: not a PNM file (no 'P' magic)`);
  const kind = bytes[1];
  if (kind === 0x32 || kind === 0x33) throw new Error(`${name}: ASCII PNM (P${kind - 0x30}) is not supported, only binary P5/P6`);
  if (kind !== 0x35 && kind !== 0x36) throw new Error(`${name}: unsupported PNM type 'P${String.fromCharCode(kind)}' (expected P5 or P6)`);
  const channels = kind === 0x35 ? 1 : 3;
  let pos = 2;
  if (pos >= bytes.length || !(isSpace(bytes[pos]) || bytes[pos] === 0x23)) {
    throw new Error(`${name}: malformed PNM magic`);
  }
  let width: number, height: number, maxval: number;
  [width, pos] = readHeaderInt(bytes, pos, 'width', name);
  [height, pos] = readHeaderInt(bytes, pos, 'height', name);
  [maxval, pos] = readHeaderInt(bytes, pos, 'maxval', name);
  if (width < 1 || height < 1) throw new Error(`${name}: PNM size ${width}x${height} is empty`);
  if (maxval < 1 || maxval > 65535) throw new Error(`${name}: PNM maxval ${maxval} outside 1..65535`);
  // Exactly one whitespace byte separates the maxval from the raster.
  if (pos >= bytes.length || !isSpace(bytes[pos])) throw new Error(`${name}: PNM header not followed by whitespace before the pixel data`);
  pos++;
  const bps = maxval < 256 ? 1 : 2;
  const n = width * height * channels;
  const expected = n * bps;
  const have = bytes.length - pos;
  if (have < expected) {
    throw new Error(`${name}: truncated PNM (${width}x${height}x${channels}, ${bps} byte/sample needs ${expected} data bytes, file has ${have})`);
  }
  if (have > expected) {
    throw new Error(`${name}: PNM has ${have - expected} bytes after the ${width}x${height}x${channels} pixel data`);
  }
  const data = samples(n);
  if (bps === 1) {
    for (let i = 0; i < n; i++) data[i] = bytes[pos + i];
  } else {
    // 16-bit samples are big-endian (most significant byte first).
    for (let i = 0; i < n; i++) data[i] = (bytes[pos + 2 * i] << 8) | bytes[pos + 2 * i + 1];
  }
  for (let i = 0; i < n; i++) {
    if (data[i] > maxval) throw new Error(`${name}: PNM sample ${data[i]} exceeds maxval ${maxval}`);
  }
  return { width, height, channels, data, maxval };
}

/**
 * Encode a 1- or 3-channel raster as binary P5/P6. Samples are rounded and
 * clamped to 0..maxval; maxval > 255 writes two big-endian bytes per sample.
 */
export function encodePnm(r: Raster): Uint8Array {
  if (r.channels !== 1 && r.channels !== 3) throw new Error(`encodePnm: channels must be 1 or 3, got ${r.channels}`);
  const maxval = Math.round(r.maxval);
  if (!(maxval >= 1 && maxval <= 65535)) throw new Error(`encodePnm: maxval ${r.maxval} outside 1..65535`);
  const n = r.width * r.height * r.channels;
  if (r.data.length !== n) throw new Error(`encodePnm: data length ${r.data.length} != ${r.width}x${r.height}x${r.channels}`);
  const header = Buffer.from(`P${r.channels === 1 ? 5 : 6}\n${r.width} ${r.height}\n${maxval}\n`, 'ascii');
  const bps = maxval < 256 ? 1 : 2;
  const out = new Uint8Array(header.length + n * bps);
  out.set(header, 0);
  const base = header.length;
  for (let i = 0; i < n; i++) {
    const x = r.data[i];
    const v = Number.isNaN(x) ? 0 : Math.min(maxval, Math.max(0, Math.round(x)));
    if (bps === 1) out[base + i] = v;
    else { out[base + 2 * i] = v >> 8; out[base + 2 * i + 1] = v & 0xff; }
  }
  return out;
}
