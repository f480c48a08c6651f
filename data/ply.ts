import { writeFileAtomic } from './atomicWrite';

/**
 * Point clouds as binary little-endian PLY (Turk's format as MeshLab,
 * CloudCompare, Open3D and plyfile read it): one `vertex` element with
 * float x, y, z and uchar red, green, blue, 15 bytes a point.
 */

export interface PointCloud {
  count: number;
  /** x, y, z of each point. */
  xyz: Float32Array;
  /** red, green, blue of each point (0..255). */
  rgb: Uint8Array;
}

/** The PLY file of `cloud`; `comments` are written as header comments (one line each). */
export function encodePly(cloud: PointCloud, comments: string[] = []): Uint8Array {
  const { count, xyz, rgb } = cloud;
  if (!Number.isInteger(count) || count < 0 || xyz.length !== count * 3 || rgb.length !== count * 3) {
    throw new Error(`point cloud: ${count} points need ${count * 3} coordinates and colours (got ${xyz.length} and ${rgb.length})`);
  }
  for (const c of comments) if (/[\r\n]/.test(c)) throw new Error('point cloud: a PLY comment must be one line');
  const header = [
    'ply', 'format binary_little_endian 1.0', ...comments.map((c) => `comment ${c}`),
    `element vertex ${count}`, 'property float x', 'property float y', 'property float z',
    'property uchar red', 'property uchar green', 'property uchar blue', 'end_header', '',
  ].join('\n');
  const head = Buffer.from(header, 'ascii');
  const out = new Uint8Array(head.length + count * 15);
  out.set(head, 0);
  const view = new DataView(out.buffer, out.byteOffset + head.length, count * 15);
  for (let i = 0; i < count; i++) {
    const o = i * 15;
    view.setFloat32(o, xyz[i * 3], true);
    view.setFloat32(o + 4, xyz[i * 3 + 1], true);
    view.setFloat32(o + 8, xyz[i * 3 + 2], true);
    view.setUint8(o + 12, rgb[i * 3]);
    view.setUint8(o + 13, rgb[i * 3 + 1]);
    view.setUint8(o + 14, rgb[i * 3 + 2]);
  }
  return out;
}

/** Writes `cloud` as a PLY file, complete or not at all (writeFileAtomic). */
export function writePly(filePath: string, cloud: PointCloud, comments: string[] = []): void {
  writeFileAtomic(filePath, encodePly(cloud, comments));
}
