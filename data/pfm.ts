import { ownSamples, type Raster, type SampleArrays } from './raster';

/**
 * Portable Float Map: "Pf" (1 channel) or "PF" (RGB), then width height, then
 * a scale whose sign gives the byte order (negative = little endian), then
 * one whitespace byte and float32 rows stored bottom to top.
 */

/** Whether this machine stores a Float32Array's floats little-endian (typed arrays use the host's order). */
const HOST_LITTLE_ENDIAN = new Uint8Array(new Float32Array([1]).buffer)[3] === 0x3f;

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
}

/** Next whitespace-delimited ASCII token from `pos`. */
function token(bytes: Uint8Array, pos: number, what: string, name: string): [string, number] {
  while (pos < bytes.length && isSpace(bytes[pos])) pos++;
  const start = pos;
  while (pos < bytes.length && !isSpace(bytes[pos]) && pos - start < 64) pos++;
  if (pos === start) throw new Error(`${name}: PFM header ends before the ${what}`);
  return [Buffer.from(bytes.subarray(start, pos)).toString('latin1'), pos];
}

export function parsePfm(bytes: Uint8Array, name: string, samples: SampleArrays = ownSamples): Raster {
  if (bytes.length < 2 || bytes[0] !== 0x50 || (bytes[1] !== 0x66 && bytes[1] !== 0x46)) {
    throw new Error(`${name}: not a PFM file (expected 'Pf' or 'PF' magic)`);
  }
  const channels = bytes[1] === 0x66 ? 1 : 3;
  let pos = 2;
  let ws: string, hs: string, ss: string;
  [ws, pos] = token(bytes, pos, 'width', name);
  [hs, pos] = token(bytes, pos, 'height', name);
  [ss, pos] = token(bytes, pos, 'scale', name);
  if (!/^\d+$/.test(ws) || !/^\d+$/.test(hs)) throw new Error(`${name}: PFM size '${ws} ${hs}' is not two integers`);
  const width = Number(ws);
  const height = Number(hs);
  if (width < 1 || height < 1) throw new Error(`${name}: PFM size ${width}x${height} is empty`);
  const scale = Number(ss);
  if (!Number.isFinite(scale) || scale === 0) throw new Error(`${name}: PFM scale '${ss}' is not a non-zero number`);
  if (pos >= bytes.length || !isSpace(bytes[pos])) throw new Error(`${name}: PFM header not followed by whitespace`);
  pos++;
  const little = scale < 0;
  const n = width * height * channels;
  const have = bytes.length - pos;
  if (have < 4 * n) throw new Error(`${name}: truncated PFM (${width}x${height}x${channels} float32 needs ${4 * n} data bytes, file has ${have})`);
  if (have > 4 * n) throw new Error(`${name}: PFM has ${have - 4 * n} bytes after the ${width}x${height}x${channels} float data`);
  const data = samples(n);
  const rowLen = width * channels;
  if (little === HOST_LITTLE_ENDIAN) {
    // The file's floats in the host's byte order: each row's bytes are copied
    // straight into the bytes of its row of `data` (float bits unchanged).
    const dataBytes = new Uint8Array(data.buffer);
    const rowBytes = 4 * rowLen;
    for (let fileRow = 0; fileRow < height; fileRow++) {
      const y = height - 1 - fileRow; // file rows run bottom to top
      dataBytes.set(bytes.subarray(pos + fileRow * rowBytes, pos + (fileRow + 1) * rowBytes), y * rowBytes);
    }
  } else {
    const view = new DataView(bytes.buffer, bytes.byteOffset + pos, 4 * n);
    for (let fileRow = 0; fileRow < height; fileRow++) {
      const y = height - 1 - fileRow;
      const src = fileRow * rowLen * 4;
      const dst = y * rowLen;
      for (let i = 0; i < rowLen; i++) data[dst + i] = view.getFloat32(src + 4 * i, little);
    }
  }
  return { width, height, channels, data, maxval: pfmRange(data) };
}

/**
 * The maxval of a PFM's samples, which the format does not state: 1 when
 * no finite sample is above 1 (a float image on 0–1), else 255 or 65535,
 * the first that no sample is above (an 8- or 16-bit image stored as
 * floats, read as the same pixels as the PNG), else the largest sample.
 * The samples stay as they are; this only says what their full scale is,
 * so that no sample lies above it (nothing is clamped when converted).
 */
function pfmRange(data: Float32Array): number {
  let max = 0;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (v > max && v !== Infinity) max = v;
  }
  for (const bound of [1, 255, 65535]) if (max <= bound) return bound;
  return max;
}

/** Little-endian (scale -1) PFM, rows written bottom to top; values kept as given (inf/NaN included). */
export function encodePfm(width: number, height: number, data: Float32Array, channels = 1): Uint8Array {
  if (channels !== 1 && channels !== 3) throw new Error(`encodePfm: channels must be 1 or 3, got ${channels}`);
  if (!(Number.isInteger(width) && Number.isInteger(height) && width > 0 && height > 0)) {
    throw new Error(`encodePfm: bad size ${width}x${height}`);
  }
  const n = width * height * channels;
  if (data.length !== n) throw new Error(`encodePfm: data length ${data.length} != ${width}x${height}x${channels}`);
  const header = Buffer.from(`P${channels === 1 ? 'f' : 'F'}\n${width} ${height}\n-1\n`, 'ascii');
  const out = new Uint8Array(header.length + 4 * n);
  out.set(header, 0);
  const rowLen = width * channels;
  if (HOST_LITTLE_ENDIAN) {
    // The bytes of a Float32Array are then little-endian floats: each row of
    // `data` is copied byte for byte into its place in the file (float bits
    // unchanged).
    const rowBytes = 4 * rowLen;
    for (let fileRow = 0; fileRow < height; fileRow++) {
      const y = height - 1 - fileRow;
      out.set(new Uint8Array(data.buffer, data.byteOffset + y * rowBytes, rowBytes), header.length + fileRow * rowBytes);
    }
  } else {
    const view = new DataView(out.buffer, header.length, 4 * n);
    for (let fileRow = 0; fileRow < height; fileRow++) {
      const y = height - 1 - fileRow;
      for (let i = 0; i < rowLen; i++) view.setFloat32((fileRow * rowLen + i) * 4, data[y * rowLen + i], true);
    }
  }
  return out;
}
