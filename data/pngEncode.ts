import { deflateSync } from 'zlib';
import type { Raster } from './raster';

/**
 * A small PNG encoder for grey or RGB rasters at 8 or 16 bits per sample.
 * save-pixels always writes RGBA 8-bit, so single-channel maps (disparities,
 * masks) written through it would come back as RGB and four times larger;
 * Middlebury's own disparity and mask files are grey PNGs, and so are ours.
 */

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, body: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, 'ascii');
  out.set(body, 8);
  out.writeUInt32BE(crc32(out, 4, 8 + body.length), 8 + body.length);
  return out;
}

/**
 * Encode as a non-interlaced PNG, colour type 0 (grey) for 1 channel or 2 (RGB)
 * for 3. Samples are rounded and clamped to 0..2^bitDepth-1 (NaN → 0).
 */
export function encodePng(r: Raster, bitDepth: 8 | 16 = 8): Uint8Array {
  if (r.channels !== 1 && r.channels !== 3) throw new Error(`encodePng: channels must be 1 or 3, got ${r.channels}`);
  if (bitDepth !== 8 && bitDepth !== 16) throw new Error(`encodePng: bit depth must be 8 or 16, got ${bitDepth}`);
  const { width, height, channels } = r;
  if (r.data.length !== width * height * channels) {
    throw new Error(`encodePng: data length ${r.data.length} != ${width}x${height}x${channels}`);
  }
  const top = bitDepth === 8 ? 255 : 65535;
  const bps = bitDepth / 8;
  const rowBytes = 1 + width * channels * bps;
  const raw = Buffer.alloc(rowBytes * height); // filter byte 0 (none) on every row
  for (let y = 0; y < height; y++) {
    let o = y * rowBytes + 1;
    const rowStart = y * width * channels;
    for (let i = 0; i < width * channels; i++) {
      const x = r.data[rowStart + i];
      const v = Number.isNaN(x) ? 0 : Math.min(top, Math.max(0, Math.round(x)));
      if (bps === 1) raw[o++] = v;
      else { raw[o++] = v >> 8; raw[o++] = v & 0xff; }
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = bitDepth;
  ihdr[9] = channels === 1 ? 0 : 2;
  ihdr[10] = 0; // deflate
  ihdr[11] = 0; // adaptive filtering
  ihdr[12] = 0; // no interlace
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', new Uint8Array(0))]);
}
