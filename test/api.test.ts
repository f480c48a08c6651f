import { evaluate, generateSyntheticScene, match } from '../stereo';

test('the library API matches and scores a scene from a script', async () => {
  const scene = generateSyntheticScene({ width: 80, height: 60, ndisp: 10, seed: 2 });
  const r = await match(scene.left, scene.right, { ndisp: scene.ndisp, backend: 'bk', lambda: 20 });
  expect(r.disparity).toHaveLength(80 * 60);
  expect(r.finalEnergy.total).toBeLessThanOrEqual(r.initialEnergy.total);
  const s = evaluate(r.disparity, scene, { thresholds: [1, 3] });
  expect(s.regions.map((x) => x.region)).toEqual(['known', 'nonocc', 'all']);
  const nonocc = s.regions[1];
  expect(nonocc.bad[0]).toBeLessThan(5);
  expect(nonocc.bad[1]).toBeLessThanOrEqual(nonocc.bad[0]);
  const bare = evaluate(r.disparity, { width: 80, height: 60, data: scene.groundTruth! });
  expect(bare.regions[0]).toEqual(s.regions[0] && { ...s.regions[0], bad: [s.regions[0].bad[0]] });
  // Ground truth itself scores zero everywhere.
  const perfect = evaluate(scene.groundTruth!, scene);
  for (const reg of perfect.regions) expect(reg.bad[0]).toBe(0);
});
