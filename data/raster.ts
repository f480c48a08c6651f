/**
 * An image or a single-channel float map, row-major, channels interleaved.
 * `data[(y·width + x)·channels + c]`. Sample values are kept exactly as read
 * (0..maxval for 8/16-bit files), never rescaled on the way in.
 */
export interface Raster {
  width: number;
  height: number;
  /** 1 (grey) or 3 (RGB). Readers drop alpha. */
  channels: number;
  data: Float32Array;
  /** 255 for 8-bit, 65535 for 16-bit PNM/PNG, 1 for float maps (PFM). */
  maxval: number;
}
