import { types } from 'util';
import { seededRandom } from '../data/random';
import { isShared, SharedStage, type StagedArray, type StagedKind } from '../data/sharedStage';
import { randomRaster } from './support/randomRaster';

/*
 * SharedStage (data/sharedStage.ts): one holder at a time; each slot an
 * array of the kind and length asked, in shared memory, kept while it
 * fits (same kind, at least as long) and replaced when not; copies and
 * rasters hold the values given.
 */

const KINDS: Array<StagedKind<StagedArray>> = [Uint8Array, Uint16Array, Float32Array];

test('holds: one at a time, slots of the kind and length asked, reused while they fit and replaced when not (random sequences against a model)', () => {
  const rand = seededRandom(41);
  for (let trial = 0; trial < 30; trial++) {
    const stage = new SharedStage();
    // The model: each slot's kind and capacity, and its buffer, as the last hold left them.
    const model = new Map<number, { kind: StagedKind<StagedArray>; capacity: number; buffer: ArrayBufferLike }>();
    for (let round = 0; round < 12; round++) {
      if (round % 5 === 4) {
        stage.clear();
        model.clear();
      }
      const held = stage.hold();
      expect(held).not.toBeNull();
      expect(stage.hold()).toBeNull();
      for (let ask = 0; ask < 4; ask++) {
        const slot = Math.floor(rand() * 3);
        const kind = KINDS[Math.floor(rand() * KINDS.length)];
        const length = Math.floor(rand() * 50);
        const before = model.get(slot);
        const a = held!.array(slot, kind, length);
        expect(a).toBeInstanceOf(kind);
        expect(a.length).toBe(length);
        expect(types.isSharedArrayBuffer(a.buffer)).toBe(true);
        const fits = before !== undefined && before.kind === kind && before.capacity >= length;
        expect(a.buffer === before?.buffer).toBe(fits);
        model.set(slot, fits ? before! : { kind, capacity: length, buffer: a.buffer });
      }
      held!.release();
    }
  }
});

test('copy and raster: the values given, in shared memory (a shared raster as it is); a second hold while one is held gets none until release', () => {
  const rand = seededRandom(42);
  const stage = new SharedStage();
  for (let trial = 0; trial < 20; trial++) {
    const held = stage.hold()!;
    const from = Uint16Array.from({ length: Math.floor(rand() * 40) }, () => Math.floor(rand() * 65536));
    const copied = held.copy(0, from);
    expect(Array.from(copied)).toEqual(Array.from(from));
    expect(copied).toBeInstanceOf(Uint16Array);
    const r = randomRaster(1 + Math.floor(rand() * 8), 1 + Math.floor(rand() * 8), trial % 2 === 0 ? 1 : 3, 255, rand);
    const staged = held.raster(1, r);
    expect([staged.width, staged.height, staged.channels, staged.maxval]).toEqual([r.width, r.height, r.channels, r.maxval]);
    expect(Array.from(staged.data)).toEqual(Array.from(r.data));
    expect([isShared(staged), isShared(r)]).toEqual([true, false]);
    // A raster whose samples are in shared memory already is used as it is, not copied.
    expect(held.raster(2, staged)).toBe(staged);
    // The caller's arrays are left as they were.
    expect(types.isSharedArrayBuffer(from.buffer)).toBe(false);
    expect(stage.hold()).toBeNull();
    held.release();
  }
});
