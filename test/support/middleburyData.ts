import * as fs from 'fs';
import * as path from 'path';

/** The middlebury/ folder: $STEREO_DATA (the data root or its middlebury/ folder), else ../shared/data/middlebury; undefined when neither holds the scenes. */
export function findMiddlebury(): string | undefined {
  const roots = [process.env.STEREO_DATA, path.resolve(__dirname, '..', '..', '..', 'shared', 'data')].filter((r): r is string => !!r);
  for (const root of roots) {
    for (const d of [path.join(root, 'middlebury'), root]) {
      if (fs.existsSync(path.join(d, 'tsukuba', 'scene1.row3.col3.ppm'))) return d;
    }
  }
  return undefined;
}
