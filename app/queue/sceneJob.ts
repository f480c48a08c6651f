import { InputError } from '../../data/errors';
import { loadScene, type LoadSceneOptions } from '../../data/scene';
import type { Scene } from '../../data/sceneTypes';
import type { MatchResult } from '../../stereo/match';
import type { BackendName, MatchParams } from '../../stereo/params';
import { matchScene } from '../../stereo/sceneMatch';
import { jsonDigest } from '../tune/jobId';
import { sceneContentHash } from '../tune/scenes';

/**
 * A scene of `run --queue`: the folder (a path every worker sees), the
 * content it had when the run was asked for, and how to match it. The
 * worker matches it as `run` does here and sends the whole result back; the
 * coordinator scores it and writes every output, as for a local run.
 */
export interface SceneJobData {
  dir: string;
  sceneHash: string;
  load: LoadSceneOptions;
  params: Partial<MatchParams>;
  sceneParams: boolean;
  verify: boolean;
}

/** The job id: sha256 of the scene's content and everything that shapes its match. */
export function sceneJobId(d: SceneJobData): string {
  return jsonDigest({ kind: 'scene', scene: d.sceneHash, load: d.load, params: d.params, sceneParams: d.sceneParams, verify: d.verify });
}

/** Matches a scene job on `backend`: an InputError where the folder cannot be read or holds other files. */
export async function runSceneJob(d: SceneJobData, backend: BackendName): Promise<MatchResult> {
  let scene: Scene;
  try {
    const hash = sceneContentHash(d.dir);
    if (hash !== d.sceneHash) throw new Error(`its files differ from those the run was asked for (sha256 ${hash.slice(0, 12)}…, asked ${d.sceneHash.slice(0, 12)}…)`);
    scene = await loadScene(d.dir, d.load);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw new InputError(msg.includes(d.dir) ? msg : `scene folder ${d.dir}: ${msg}`);
  }
  // A turn of the event loop after every cycle: on this thread, the queue's lock renewals run then.
  const m = await matchScene(scene, d.params, { backend, verify: d.verify, sceneParams: d.sceneParams, evaluate: false, onCycle: () => new Promise((r) => setImmediate(r)) });
  return m.result;
}

const TYPED = { Uint8Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array } as const;
type TypedName = keyof typeof TYPED;

/** A match result as JSON (typed arrays as base64 of their bytes; numbers that JSON cannot hold as text): what a job returns. */
export function encodeResult(r: MatchResult): unknown {
  return JSON.parse(JSON.stringify(r, (_k, v: unknown) => {
    if (ArrayBuffer.isView(v) && (v.constructor.name as TypedName) in TYPED) {
      return { $typed: v.constructor.name, base64: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') };
    }
    if (typeof v === 'number' && !Number.isFinite(v)) return { $number: String(v) };
    return v;
  }));
}

export function decodeResult(value: unknown): MatchResult {
  const revive = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(revive);
    if (v === null || typeof v !== 'object') return v;
    const o = v as Record<string, unknown>;
    if (typeof o.$typed === 'string' && typeof o.base64 === 'string' && o.$typed in TYPED) {
      const bytes = Buffer.from(o.base64, 'base64');
      const Ctor = TYPED[o.$typed as TypedName];
      const copy = new Uint8Array(bytes.length);
      copy.set(bytes);
      return new Ctor(copy.buffer, 0, bytes.length / Ctor.BYTES_PER_ELEMENT);
    }
    if (typeof o.$number === 'string' && Object.keys(o).length === 1) return Number(o.$number);
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, revive(x)]));
  };
  return revive(value) as MatchResult;
}
