/** Integer samples of one image, row-major, channels interleaved: what image costs are computed from (costs/intensity.ts makes them). */
export interface CostImage {
  width: number;
  height: number;
  channels: number;
  data: Int32Array;
}

/** Rows y0 .. y0 + rows − 1 of an image, as an image of its own (a view of the same samples). */
export function imageRows(im: CostImage, y0: number, rows: number): CostImage {
  const row = im.width * im.channels;
  return { ...im, height: rows, data: im.data.subarray(y0 * row, (y0 + rows) * row) };
}

/** Forward differences of every channel: [∂x, ∂y], 0 in the last column / row. */
export function forwardGradients(im: CostImage): [Int32Array, Int32Array] {
  const { width: W, height: H, channels: C, data } = im;
  const gx = new Int32Array(data.length);
  const gy = new Int32Array(data.length);
  const rowLen = W * C;
  for (let y = 0; y < H; y++) {
    const row = y * rowLen;
    for (let i = row; i < row + rowLen - C; i++) gx[i] = data[i + C] - data[i];
    if (y + 1 < H) for (let i = row; i < row + rowLen; i++) gy[i] = data[i + rowLen] - data[i];
  }
  return [gx, gy];
}
