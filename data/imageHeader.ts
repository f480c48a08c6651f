import * as fs from 'fs';
import { InputError } from './errors';

/**
 * The size of an image file read from its header alone (the first 64 KiB
 * at most), so that a run can check what it will need before decoding
 * anything: PNG (IHDR), JPEG (the first start-of-frame marker), binary
 * PGM/PPM and PFM (their text headers). Undefined when the header gives no
 * size (an unknown or damaged file: the decoder then names the problem).
 */
export interface ImageHeader {
  width: number;
  height: number;
  channels: number;
}

const HEAD_BYTES = 65536;

export function readImageHeader(file: string): ImageHeader | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const n = fs.readSync(fd, buf, 0, HEAD_BYTES, 0);
    return parseImageHeader(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
}

export function parseImageHeader(b: Uint8Array): ImageHeader | undefined {
  // PNG: signature, then IHDR's width and height (big-endian) and colour type.
  if (b.length >= 26 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 && b[12] === 0x49 && b[13] === 0x48 && b[14] === 0x44 && b[15] === 0x52) {
    const width = ((b[16] << 24) | (b[17] << 16) | (b[18] << 8) | b[19]) >>> 0;
    const height = ((b[20] << 24) | (b[21] << 16) | (b[22] << 8) | b[23]) >>> 0;
    const grey = b[25] === 0 || b[25] === 4;
    return { width, height, channels: grey ? 1 : 3 };
  }
  // JPEG: segments up to the first SOFn (C0..CF but C4, C8, CC), whose frame header holds height, width, components.
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) return undefined;
      const m = b[i + 1];
      if (m === 0xff) { i++; continue; }
      const len = (b[i + 2] << 8) | b[i + 3];
      if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) {
        return { height: (b[i + 5] << 8) | b[i + 6], width: (b[i + 7] << 8) | b[i + 8], channels: b[i + 9] === 1 ? 1 : 3 };
      }
      i += 2 + len;
    }
    return undefined;
  }
  // PGM/PPM/PFM: magic, width, height as text (comments only in PNM).
  if (b.length >= 2 && b[0] === 0x50 && (b[1] === 0x35 || b[1] === 0x36 || b[1] === 0x46 || b[1] === 0x66)) {
    const text = Buffer.from(b.subarray(0, Math.min(b.length, 1024))).toString('latin1').replace(/#[^\n]*\n/g, ' ');
    const m = /^P[56Ff]\s+(\d+)\s+(\d+)/.exec(text);
    if (!m) return undefined;
    return { width: Number(m[1]), height: Number(m[2]), channels: b[1] === 0x35 || b[1] === 0x66 ? 1 : 3 };
  }
  return undefined;
}

/** The header of an input image, refusing a size of zero. */
export function checkedImageHeader(file: string, what: string): ImageHeader | undefined {
  const h = readImageHeader(file);
  if (h && (h.width === 0 || h.height === 0)) throw new InputError(`${file}: the ${what}'s header gives a ${h.width}×${h.height} image`);
  return h;
}
