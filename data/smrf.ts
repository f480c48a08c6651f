import * as fs from 'fs';
import { writeFileAtomic } from './atomicWrite';
import { volumeOf, type MrfEnergy, type SmoothnessKind } from './energy';

/**
 * SMRF1: one grid MRF energy per file (docs/smrf.md). Little
 * endian: 8-byte magic, W, H, L, smoothness kind, T, reserved, then int32
 * D[H·W·L], wH[H·W], wV[H·W].
 */
const MAGIC = Buffer.from('SMRF1\0\0\0', 'latin1');
const HEADER_BYTES = 32;
const KINDS: SmoothnessKind[] = ['linear', 'quadratic', 'potts'];

export function smrfByteLength(width: number, height: number, labels: number): number {
  return HEADER_BYTES + 4 * width * height * (labels + 2);
}

export function encodeSmrf(e: MrfEnergy): Buffer {
  const { width: W, height: H, labels: L } = e;
  const n = W * H;
  if (n * L === 0) throw new Error('SMRF: W·H·L must not be 0');
  const D = volumeOf(e);
  if (D.length !== n * L) throw new Error(`SMRF: data cost has ${D.length} entries, expected W·H·L = ${n * L}`);
  if (e.wH.length !== n || e.wV.length !== n) throw new Error(`SMRF: weights must have W·H = ${n} entries`);
  const buf = Buffer.alloc(smrfByteLength(W, H, L));
  MAGIC.copy(buf, 0);
  buf.writeUInt32LE(W, 8);
  buf.writeUInt32LE(H, 12);
  buf.writeUInt32LE(L, 16);
  buf.writeUInt32LE(KINDS.indexOf(e.smoothness), 20);
  buf.writeUInt32LE(e.smoothness === 'potts' ? 0 : e.truncation, 24);
  buf.writeUInt32LE(0, 28);
  let off = HEADER_BYTES;
  for (const [field, a] of [['data cost', D], ['wH', e.wH], ['wV', e.wV]] as const) {
    for (let i = 0; i < a.length; i++) {
      const v = a[i];
      // Int32Array entries always fit int32; negative values are what the format forbids.
      if (v < 0) throw new Error(`SMRF: ${field}[${i}] = ${v} is negative`);
      buf.writeInt32LE(v, off);
      off += 4;
    }
  }
  return buf;
}

export function writeSmrf(path: string, e: MrfEnergy): void {
  writeFileAtomic(path, encodeSmrf(e));
}

export function decodeSmrf(bytes: Uint8Array, name: string): MrfEnergy {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < HEADER_BYTES) throw new Error(`${name}: not an SMRF1 file (only ${buf.length} bytes, the header needs ${HEADER_BYTES})`);
  if (!buf.subarray(0, 8).equals(MAGIC)) throw new Error(`${name}: wrong magic (expected "SMRF1\\0\\0\\0")`);
  const W = buf.readUInt32LE(8);
  const H = buf.readUInt32LE(12);
  const L = buf.readUInt32LE(16);
  const kindCode = buf.readUInt32LE(20);
  const T = buf.readUInt32LE(24);
  if (W * H * L === 0) throw new Error(`${name}: W·H·L is 0 (width ${W}, height ${H}, labels ${L})`);
  if (kindCode >= KINDS.length) throw new Error(`${name}: unknown smoothness kind ${kindCode} (field at offset 20; 0 linear, 1 quadratic, 2 Potts)`);
  if (L > 65536) throw new Error(`${name}: labels = ${L} exceeds 65536 (labelings are uint16)`);
  const expected = smrfByteLength(W, H, L);
  if (buf.length !== expected) {
    throw new Error(`${name}: size is ${buf.length} bytes but width ${W}, height ${H}, labels ${L} need exactly ${expected}`);
  }
  const n = W * H;
  const read = (offset: number, count: number, field: string): Int32Array => {
    const a = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      const v = buf.readInt32LE(offset + 4 * i);
      if (v < 0) throw new Error(`${name}: ${field}[${i}] = ${v} is negative`);
      a[i] = v;
    }
    return a;
  };
  const data = read(HEADER_BYTES, n * L, 'data cost');
  const wH = read(HEADER_BYTES + 4 * n * L, n, 'wH');
  const wV = read(HEADER_BYTES + 4 * n * (L + 1), n, 'wV');
  return { width: W, height: H, labels: L, data: { kind: 'volume', costs: data }, smoothness: KINDS[kindCode], truncation: T, wH, wV };
}

export function readSmrf(path: string): MrfEnergy {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(path);
  } catch (err) {
    throw new Error(`${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return decodeSmrf(bytes, path);
}

/** A labeling beside an SMRF file: raw little-endian uint16[H·W]. */
export function encodeLabeling(labels: Uint16Array): Buffer {
  const buf = Buffer.alloc(labels.length * 2);
  for (let i = 0; i < labels.length; i++) buf.writeUInt16LE(labels[i], 2 * i);
  return buf;
}

export function writeLabeling(path: string, labels: Uint16Array): void {
  writeFileAtomic(path, encodeLabeling(labels));
}

export function readLabeling(path: string, width: number, height: number, labelCount: number): Uint16Array {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(path);
  } catch (err) {
    throw new Error(`${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (buf.length !== 2 * width * height) throw new Error(`${path}: ${buf.length} bytes, a ${width}×${height} uint16 labeling needs ${2 * width * height}`);
  const out = new Uint16Array(width * height);
  for (let i = 0; i < out.length; i++) {
    const v = buf.readUInt16LE(2 * i);
    if (v >= labelCount) throw new Error(`${path}: label ${v} at pixel ${i} is outside 0..${labelCount - 1}`);
    out[i] = v;
  }
  return out;
}
