import * as fs from 'fs';
import * as path from 'path';
import type { Raster } from '../data/raster';
import { parsePnm } from '../data/pnm';
import { computeDataCostVolume, wtaInit, type CostKind } from '../costs';

/** The tsukuba folder: $STEREO_DATA (the data root or its middlebury/ folder), else ../shared/data. */
function findTsukuba(): string | undefined {
  const roots = [process.env.STEREO_DATA, path.resolve(__dirname, '..', '..', 'shared', 'data')].filter((r): r is string => !!r);
  for (const root of roots) {
    for (const dir of [path.join(root, 'middlebury', 'tsukuba'), path.join(root, 'tsukuba')]) {
      if (fs.existsSync(path.join(dir, 'scene1.row3.col3.ppm'))) return dir;
    }
  }
  return undefined;
}

const dir = findTsukuba();
const readPnm = (file: string): Raster => parsePnm(new Uint8Array(fs.readFileSync(path.join(dir as string, file))), file);

/** Bad-pixel rate over known ground truth (gray/16, 0 = unknown), |d − gt| > 1. */
function badRate(labels: Uint16Array, gt: Raster): number {
  let known = 0;
  let bad = 0;
  for (let p = 0; p < labels.length; p++) {
    const g = gt.data[p];
    if (g === 0) continue;
    known++;
    if (Math.abs(labels[p] - g / 16) > 1) bad++;
  }
  return bad / known;
}

(dir ? describe : describe.skip)('tsukuba (Middlebury 2001) sanity check', () => {
  test('9×9 WTA bad-pixel rate is plausible for every cost kind and both border rules', () => {
    const left = readPnm('scene1.row3.col3.ppm');
    const right = readPnm('scene1.row3.col4.ppm');
    const gt = readPnm('truedisp.row3.col3.pgm');
    const { width: W, height: H } = left;
    const lines: string[] = [];
    for (const kind of ['sad', 'ssd', 'sad+sgrad'] as CostKind[]) {
      for (const border of ['clamp', 'tau'] as const) {
        const vol = computeDataCostVolume(left, right, 16, { kind, border });
        const rate = badRate(wtaInit(vol, W, H, 16, 9), gt);
        lines.push(`tsukuba 9×9 WTA ${kind} (border ${border}): ${(100 * rate).toFixed(2)}% bad of known pixels`);
        expect(rate).toBeLessThan(0.2);
      }
    }
    // Zero disparity everywhere is far worse: the costs carry real evidence.
    expect(badRate(new Uint16Array(W * H), gt)).toBeGreaterThan(0.5);
    console.log(lines.join('\n'));
  });
});

if (!dir) {
  test.skip('tsukuba sanity check: Middlebury data not found (set STEREO_DATA or provide ../shared/data)', () => undefined);
}
