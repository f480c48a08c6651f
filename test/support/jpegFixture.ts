import ndarray from 'ndarray';
import savePixels from 'save-pixels';

/** A JPEG of w×h RGB pixels (row-major, 3 bytes a pixel), written by save-pixels (a development dependency: the project reads JPEG, never writes it). */
export async function encodeJpeg(px: Uint8Array, w: number, h: number, quality?: number): Promise<Buffer> {
  const stream = savePixels(ndarray(px, [w, h, 3], [3, 3 * w, 1]), 'jpeg', quality === undefined ? undefined : { quality });
  const parts: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    stream.on('data', (d: Buffer) => parts.push(Buffer.from(d)));
    stream.on('end', () => resolve());
    stream.on('error', reject);
  });
  return Buffer.concat(parts);
}
