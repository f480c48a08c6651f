import type { Raster } from '../../data/raster';

/** A random W×H image of `levels` grey levels per channel (few levels: many equal window sums and codes, so ties decide). */
export function randomRaster(W: number, H: number, channels: number, levels: number, rand: () => number): Raster {
  const data = new Float32Array(W * H * channels);
  for (let i = 0; i < data.length; i++) data[i] = Math.floor(rand() * levels) * Math.floor(255 / Math.max(1, levels - 1));
  return { width: W, height: H, channels, data, maxval: 255 };
}
