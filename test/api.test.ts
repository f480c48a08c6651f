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

describe('the library from JavaScript: paths where a user passes them, a clear TypeError otherwise', () => {
  const os = require('os') as typeof import('os');
  const fs = require('fs') as typeof import('fs');
  const path = require('path') as typeof import('path');
  const { writePng, matchScene } = require('../stereo') as typeof import('../stereo');
  const { writeSceneFolder } = require('./support/tuneSupport') as typeof import('./support/tuneSupport');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-api-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('match takes image paths, matchScene a scene folder', async () => {
    const scene = generateSyntheticScene({ width: 48, height: 32, ndisp: 6, seed: 3 });
    await writePng(path.join(dir, 'l.png'), scene.left);
    await writePng(path.join(dir, 'r.png'), scene.right);
    const fromFiles = await match(path.join(dir, 'l.png'), path.join(dir, 'r.png'), { ndisp: 6, backend: 'bk', cycles: 1 });
    const fromRasters = await match(scene.left, scene.right, { ndisp: 6, backend: 'bk', cycles: 1 });
    expect(fromFiles.disparity).toEqual(fromRasters.disparity);
    await writeSceneFolder(path.join(dir, 'scene'), { seed: 5, width: 48, height: 32, ndisp: 6 });
    const m = await matchScene(path.join(dir, 'scene'), { cycles: 1 }, { backend: 'bk' });
    expect(m.scene.name).toBe('scene');
    expect(m.evaluation).toBeDefined();
    // Scored later (what run does, drawing the images meanwhile): the same scores.
    const { evaluateScene } = require('../stereo/sceneMatch') as typeof import('../stereo/sceneMatch');
    const later = await matchScene(m.scene, { cycles: 1 }, { backend: 'bk', evaluate: false });
    expect(later.evaluation).toBeUndefined();
    expect(evaluateScene(later.scene, later.result)).toEqual(m.evaluation);
  });

  test.each([
    [() => (matchScene as (s: unknown) => Promise<unknown>)(undefined), /^matchScene: expected a scene folder path or a scene from loadScene\(\), got undefined$/],
    [() => (match as (l: unknown, r: unknown, o: unknown) => Promise<unknown>)(undefined, 'r.png', { ndisp: 4 }), /^match: the left image must be a file path or a raster/],
    [() => (match as (l: unknown, r: unknown, o?: unknown) => Promise<unknown>)({ width: 2, height: 1, channels: 1, data: new Float32Array(2) }, { width: 2, height: 1, channels: 1, data: new Float32Array(2) }), /^match: options: got undefined, expected an object such as \{ ndisp: 64 \}$/],
    [async () => (evaluate as (d: unknown, g: unknown) => unknown)(new Uint16Array(4), 'data/teddy'), /^evaluate: pass the scene from await loadScene\('data\/teddy'\)/],
  ])('%#: a TypeError that says what to pass', async (call, message) => {
    await expect(call()).rejects.toThrow(message);
    await expect(call()).rejects.toBeInstanceOf(TypeError);
  });
});
