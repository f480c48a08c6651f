import * as data from '../data';
import * as imageIO from '../data/imageIO';
import * as scene from '../data/scene';
import * as synthetic from '../data/synthetic';
import * as metrics from '../data/metrics';

test('data/index re-exports the same functions as the modules', () => {
  expect(data.readImage).toBe(imageIO.readImage);
  expect(data.writePng).toBe(imageIO.writePng);
  expect(data.readDisparityFile).toBe(imageIO.readDisparityFile);
  expect(data.loadScene).toBe(scene.loadScene);
  expect(data.listSceneDirs).toBe(scene.listSceneDirs);
  expect(data.generateSyntheticScene).toBe(synthetic.generateSyntheticScene);
  expect(data.evaluateDisparity).toBe(metrics.evaluateDisparity);
  expect(data.colorizeDisparity).toBe(metrics.colorizeDisparity);
});

test('a synthetic scene scored through the index: its own ground truth has 0 bad pixels in every region', () => {
  const s = data.generateSyntheticScene({ seed: 7, width: 64, height: 48, ndisp: 8 });
  const e = data.evaluateDisparity(s.groundTruth!, s.groundTruth!, 64, 48, { thresholds: [0, 1], masks: s.masks });
  expect(e.regions.map((r) => r.region).sort()).toEqual(['all', 'known', 'nonocc']);
  for (const r of e.regions) {
    expect(r.bad).toEqual([0, 0]);
    expect(r.pixels).toBeGreaterThan(0);
  }
});
