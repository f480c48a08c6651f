import * as path from 'path';
import type { LoadSceneOptions } from '../../data/scene';
import type { Scene } from '../../data/sceneTypes';
import type { MatchParams } from '../../stereo/params';
import { sceneParamsFor } from '../../stereo/sceneParams';
import type { SceneMatch } from '../../stereo/sceneMatch';
import { sceneContentHash } from '../tune/scenes';
import { runQueued } from './coordinator';
import type { QueueAddress } from './redisQueue';
import { decodeResult, sceneJobId, type SceneJobData } from './sceneJob';

/**
 * `run SCENES… --queue`: one job per scene on the queue's workers, each
 * matched as a local run matches it; the results come back whole (the
 * disparity and every record), so the caller scores and writes them as its
 * own. `onResult` hears of each scene as it comes in. Failed scenes are
 * named in one error once every other scene is in.
 */
export async function matchOnQueue(
  a: QueueAddress, scenes: Scene[], params: Partial<MatchParams>,
  o: { load: LoadSceneOptions; sceneParams: boolean; verify: boolean },
  onResult: (m: SceneMatch, index: number) => void,
): Promise<SceneMatch[]> {
  const jobs = scenes.map((scene) => {
    const data: SceneJobData = { dir: path.resolve(scene.dir), sceneHash: sceneContentHash(scene.dir), load: o.load, params, sceneParams: o.sceneParams, verify: o.verify };
    return { id: sceneJobId(data), name: 'scene' as const, data };
  });
  const out: (SceneMatch | undefined)[] = scenes.map(() => undefined);
  const failures = await runQueued(a, jobs, (id, value) => {
    jobs.forEach((j, k) => {
      if (j.id !== id) return;
      const result = decodeResult(value);
      out[k] = { scene: scenes[k], result, sceneParams: o.sceneParams && Object.keys(sceneParamsFor(scenes[k].name)).length > 0 };
      onResult(out[k]!, k);
    });
  }, () => undefined);
  if (failures.length > 0) {
    const named = failures.map((f) => `${scenes[jobs.findIndex((j) => j.id === f.id)].dir}: ${f.reason}`);
    throw new Error(`${failures.length} of ${scenes.length} scenes failed on the workers of ${a.url} (${named.slice(0, 3).join('; ')}${named.length > 3 ? '; …' : ''})`);
  }
  return out as SceneMatch[];
}
