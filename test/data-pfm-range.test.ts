import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { encodePfm, parsePfm } from '../data/pfm';
import { writePng, writePfm } from '../data/imageIO';
import { seededRandom } from '../data/random';
import { generateSyntheticScene } from '../data/synthetic';
import { match } from '../stereo/match';

/**
 * A PFM image is read as it is (issue 40, item 3): its samples keep their
 * values, and its maxval is the full scale they lie in, so a grey pair stored
 * as PFM with samples 0–255 matches as the same pixels as the PNG pair, and a
 * sample outside the scale is refused rather than clamped.
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-pfm-range-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('the maxval of a PFM', () => {
  it('is the first of 1, 255, 65535 that no sample is above, else the largest sample; the samples are unchanged', () => {
    const rand = seededRandom(40);
    for (let t = 0; t < 300; t++) {
      const n = 1 + Math.floor(rand() * 40);
      const top = [0.5, 1, 3, 255, 256, 65535, 70000][Math.floor(rand() * 7)];
      const data = Float32Array.from({ length: n }, () => rand() * top);
      if (rand() < 0.3) data[Math.floor(rand() * n)] = Infinity;
      const r = parsePfm(encodePfm(n, 1, data), 'x.pfm');
      expect(Array.from(r.data)).toEqual(Array.from(data));
      const max = Math.max(0, ...Array.from(data).filter((v) => v !== Infinity));
      const want = max <= 1 ? 1 : max <= 255 ? 255 : max <= 65535 ? 65535 : max;
      expect(r.maxval).toBe(want);
      for (const v of r.data) if (v !== Infinity) expect(v).toBeLessThanOrEqual(r.maxval);
    }
  });
});

describe('a PFM pair', () => {
  const s = generateSyntheticScene({ width: 40, height: 30, ndisp: 6, seed: 9 });
  const grey = (im: typeof s.left): Float32Array => Float32Array.from({ length: 40 * 30 }, (_, i) => Math.round((im.data[3 * i] + im.data[3 * i + 1] + im.data[3 * i + 2]) / 3));
  const file = (n: string): string => path.join(tmp, n);
  beforeAll(async () => {
    const [gl, gr] = [grey(s.left), grey(s.right)];
    await writePng(file('L.png'), { width: 40, height: 30, channels: 1, data: gl, maxval: 255 });
    await writePng(file('R.png'), { width: 40, height: 30, channels: 1, data: gr, maxval: 255 });
    writePfm(file('L.pfm'), 40, 30, gl);
    writePfm(file('R.pfm'), 40, 30, gr);
    writePfm(file('L01.pfm'), 40, 30, gl.map((v) => v / 255));
    writePfm(file('R01.pfm'), 40, 30, gr.map((v) => v / 255));
    const neg = gl.slice();
    neg[41] = -7;
    writePfm(file('Lneg.pfm'), 40, 30, neg);
  });
  const opts = { ndisp: 6, backend: 'bk' as const, cycles: 2, cost: 'sad' as const };

  it('with samples 0–255 matches as the same pixels as the PNG pair', async () => {
    const png = await match(file('L.png'), file('R.png'), opts);
    const pfm = await match(file('L.pfm'), file('R.pfm'), opts);
    expect(pfm.finalEnergy).toEqual(png.finalEnergy);
    expect(Array.from(pfm.disparity)).toEqual(Array.from(png.disparity));
  });
  it('with samples 0–1 too (the scale a float image has)', async () => {
    const png = await match(file('L.png'), file('R.png'), opts);
    const pfm = await match(file('L01.pfm'), file('R01.pfm'), opts);
    expect(Array.from(pfm.disparity)).toEqual(Array.from(png.disparity));
  });
  it('with a sample below 0 is refused, naming the image and the pixel, not clamped', async () => {
    await expect(match(file('Lneg.pfm'), file('R.pfm'), opts)).rejects.toThrow(/^left image: sample at \(1,1\) is -7, outside 0\.\.255/);
  });
});
