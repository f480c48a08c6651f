#!/usr/bin/env python3
"""Reproduces the OpenCV StereoSGBM disparities behind app/accuracy/sgbmReference.ts.

Not needed to run stereocut: it documents how the reference figures were made
and lets anyone remake them. Debian: apt-get install -y python3-opencv (OpenCV 4.6.0).

Usage: sgbm-reference.py SCENES.json OUTDIR
  SCENES.json: [{"name", "left", "right", "top"}...], top = the largest label of the scene
  (as stereocut loads it; 65 for Adirondack_TrainingQ, calib vmax).
Writes OUTDIR/<name>.pfm (disparity in pixels, inf = invalid) for the mode and block
of sgbmReference.ts; score them with `stereocut eval OUTDIR/<name>.pfm <scene folder> --threshold 0.5 1 2`.
"""
import json
import sys

import cv2
import numpy as np

BEST = {  # mode, block per scene: the best of {3WAY, HH} x {3, 5} at 1 px (docs/reference-figures.md)
    'tsukuba': ('HH', 3), 'venus': ('HH', 5), 'sawtooth': ('HH', 5), 'map': ('HH', 5),
    'teddy': ('3WAY', 3), 'cones': ('3WAY', 3), 'Rocks1': ('3WAY', 5), 'Baby1': ('HH', 5),
    'Art_ThirdSize': ('3WAY', 3), 'Adirondack_TrainingQ': ('HH', 3),
}
MODES = {'HH': cv2.STEREO_SGBM_MODE_HH, '3WAY': cv2.STEREO_SGBM_MODE_SGBM_3WAY}


def sgbm(left, right, top, mode, block):
    n = ((top + 1 + 15) // 16) * 16
    m = cv2.StereoSGBM_create(minDisparity=0, numDisparities=n, blockSize=block, P1=8 * 3 * block * block,
                              P2=32 * 3 * block * block, uniquenessRatio=10, disp12MaxDiff=-1, preFilterCap=63,
                              speckleWindowSize=0, mode=MODES[mode])
    # Padded on the left by n replicated columns, so the left n columns get disparities too.
    pl = cv2.copyMakeBorder(left, 0, 0, n, 0, cv2.BORDER_REPLICATE)
    pr = cv2.copyMakeBorder(right, 0, 0, n, 0, cv2.BORDER_REPLICATE)
    d = m.compute(pl, pr)[:, n:].astype(np.float32) / 16.0
    d[d < 0] = np.inf
    return d


def write_pfm(path, d):
    h, w = d.shape
    with open(path, 'wb') as f:
        f.write(b'Pf\n%d %d\n-1.0\n' % (w, h))
        f.write(np.flipud(d).astype('<f4').tobytes())


def main():
    scenes = json.load(open(sys.argv[1]))
    for s in scenes:
        mode, block = BEST[s['name']]
        left = cv2.imread(s['left'])
        right = cv2.imread(s['right'])
        write_pfm(f"{sys.argv[2]}/{s['name']}.pfm", sgbm(left, right, s['top'], mode, block))
        print(s['name'], mode, block, cv2.__version__)


if __name__ == '__main__':
    main()
