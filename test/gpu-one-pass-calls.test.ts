/**
 * The one-pass recording of WebGPU pipeline calls (gpu/runtime/gpujs/onePassCalls.ts)
 * against gpu.js's own recording, on a device that logs what it is asked to
 * do. CI has no GPU, so this checks what is recorded; that the GPU runs one
 * pass's dispatches in order is WebGPU's guarantee, checked on the device by
 * --verify and by equal energies (BENCHMARKS.md).
 */
import { seededRandom } from '../data/random';
import { WRAPPED_GPU_JS_RELEASE } from '../gpu/runtime/gpujs/release';
import { Input } from 'gpu.js';
import { callInOnePass, callInPlace, installOnePassCalls, onePassCalls, recordAhead, returnFlatResults, type FusedExecutor } from '../gpu/runtime/gpujs/onePassCalls';
import { flattenState } from '../gpu/maxflow/pushRelabel';
import { gpuJsInternal } from '../gpu/runtime/gpujs/internals';
import { flaggedInstance } from './support/wgslAssembly';
import type { DeviceFlags } from '../gpu/runtime/deviceFlags';

/** Makes `owners` (an executor and its pipeline) belong to one gpu.js instance adapted with `flags`, as createGpuContext's are. */
function withFlags(flags: Partial<DeviceFlags>, ...owners: object[]): void {
  const gpu = flaggedInstance(flags);
  for (const o of owners) Object.assign(o, { gpu });
}

type Op = [string, ...unknown[]];

/**
 * A device that logs, in queue order, what it is asked to do: writes (the
 * data copied when written: gpu.js reuses its scratch arrays) and the
 * commands of each submitted command buffer. Commands are kept by their
 * encoder until submitted, as WebGPU runs them; a command buffer submitted
 * twice is an error, as in WebGPU.
 */
function loggingDevice(log: Op[]): FusedExecutor['_device'] {
  const submitted = new Set<unknown>();
  return {
    queue: {
      writeBuffer: (b, o, d) => { log.push(['write', b, o, Array.from(d instanceof ArrayBuffer ? new Uint8Array(d) : new Float32Array((d as Float32Array).buffer.slice(d.byteOffset, d.byteOffset + d.byteLength)))]); },
      submit: (c) => {
        for (const commands of c) {
          if (submitted.has(commands)) throw new Error('command buffer submitted twice');
          submitted.add(commands);
          log.push(...(commands as { ops: Op[] }).ops);
        }
        log.push(['submit', c.length]);
      },
    },
    createCommandEncoder: () => {
      const ops: Op[] = [];
      return {
        beginComputePass: () => {
          ops.push(['begin']);
          return {
            setPipeline: (p) => { ops.push(['pipeline', p]); },
            setBindGroup: (i, g) => { ops.push(['bindGroup', i, g]); },
            dispatchWorkgroups: (x, y, z) => { ops.push(['dispatch', x, y, z]); },
            end: () => { ops.push(['end']); },
          };
        },
        // The staging buffer is an object of its executor's; the log names it.
        copyBufferToBuffer: (a, ao, b, bo, n) => { ops.push(['copy', a, ao, b === null ? null : 'staging', bo, n]); },
        finish: () => ({ ops }),
      };
    },
  };
}

const flattenTo = (a: unknown, t: Float32Array): void => { t.set(a as Float32Array); };

/** A random fused plan: passes drawn from small pools of pipelines and bind groups, arguments, per-call scalars and result reads. */
function randomExecutor(rng: () => number, proto: object, log: Op[], withStaging = true): { ex: FusedExecutor; args: unknown[]; argsAgain: () => unknown[] } {
  const pick = (k: number): number => Math.floor(rng() * k);
  const steps = 1 + pick(40);
  const pipelines = 1 + pick(4);
  const groups = 1 + pick(5);
  const passes = Array.from({ length: steps }, () => ({ pipeline: `P${pick(pipelines)}`, bindGroup: `G${pick(groups)}`, groups: [1 + pick(9), 1 + pick(9), 1] }));
  const args: unknown[] = [];
  const argRegions = new Map<number, { flatLength: number; scratch: Float32Array; buffer: unknown }>();
  for (let i = 0, count = 1 + pick(3); i < count; i++) {
    const len = 1 + pick(12);
    const values = Array.from({ length: len }, () => pick(100));
    // Float32Arrays are written as they are (one a view into a larger buffer); other arrays are flattened first.
    const kind = pick(4);
    const data = kind === 0 ? values : kind === 1 ? Float64Array.from(values) : kind === 2 ? new Float32Array([7, ...values, 9]).subarray(1, 1 + len) : Float32Array.from(values);
    args.push(rng() < 0.5 ? new Input(data as unknown as number[], [len]) : data);
    argRegions.set(i, { flatLength: len, scratch: new Float32Array(len), buffer: `A${i}` });
  }
  const scalarIndex = args.length;
  args.push(pick(1000));
  const paramsRecords = Array.from({ length: 1 + pick(3) }, (_, r) => {
    const mirror = new ArrayBuffer(16);
    return { perCall: rng() < 0.6, perCallScalars: [{ index: scalarIndex, offset: 4 * pick(4), type: 'Integer' }], seedOffset: null, u32: new Uint32Array(mirror), i32: new Int32Array(mirror), f32: new Float32Array(mirror), mirror, paramsBuffer: `U${r}` };
  });
  const resultReads = Array.from({ length: 1 + pick(3) }, (_, r) => (rng() < 0.8 ? { kind: 'step', buffer: `B${r}`, offset: 16 * r, byteLength: 4 + 4 * pick(4) } : { kind: 'arg', buffer: null, offset: 0, byteLength: 0 }));
  const ex = Object.assign(Object.create(proto) as FusedExecutor, {
    destroyed: false,
    context: { isLost: false },
    _passes: passes,
    _argRegions: argRegions,
    _paramsRecords: paramsRecords,
    _resultReads: resultReads,
    _staging: withStaging ? { mapAsync: async () => { log.push(['map']); }, getMappedRange: () => new ArrayBuffer(8), unmap: () => { log.push(['unmap']); } } : null,
    _device: loggingDevice(log),
    _checkArguments: () => { log.push(['checked']); },
    _shapeResults: (a: unknown[], mapped: ArrayBuffer | null) => ({ shapedFrom: mapped === null ? null : mapped.byteLength, args: a.length }),
  });
  // Fresh values of the same shapes, for a later call.
  const argsAgain = (): unknown[] => args.map((a) => {
    if (typeof a === 'number') return pick(1000);
    const len = (a instanceof Input ? (a.value as unknown as ArrayLike<number>) : (a as ArrayLike<number>)).length;
    return Float32Array.from({ length: len }, () => pick(100));
  });
  return { ex, args, argsAgain };
}

/** What the GPU is asked to do: each dispatch with the pipeline and bind group in force, and everything else in order. */
function effect(log: Op[]): unknown[] {
  const out: unknown[] = [];
  let pipeline: unknown = null;
  let group: unknown = null;
  for (const op of log) {
    if (op[0] === 'pipeline') pipeline = op[1];
    else if (op[0] === 'bindGroup') group = op[2];
    else if (op[0] === 'dispatch') out.push(['dispatch', pipeline, group, ...op.slice(1)]);
    else if (op[0] === 'begin' || op[0] === 'end') {
      // A new compute pass starts with nothing set.
      pipeline = null;
      group = null;
    } else out.push(op);
  }
  return out;
}

const gpuJsExecutor = gpuJsInternal<{ WebGPUPipelineExecutor: { prototype: FusedExecutor } }>('web-gpu/pipeline-executor').WebGPUPipelineExecutor.prototype;

describe('one compute pass per WebGPU pipeline call', () => {
  test('is installed for the gpu.js release it mirrors, once', () => {
    expect((require('gpu.js/package.json') as { version: string }).version).toBe(WRAPPED_GPU_JS_RELEASE);
    expect(installOnePassCalls()).toBe(true);
    const installed = gpuJsExecutor.execute;
    expect(installOnePassCalls()).toBe(true);
    expect(gpuJsExecutor.execute).toBe(installed);
  });

  test('asks the device for what gpu.js asks, on 300 random plans: same writes, dispatches with the same pipeline and bind group, copies, submit and results', async () => {
    installOnePassCalls();
    const rng = seededRandom(11);
    let fewerSets = 0;
    for (let trial = 0; trial < 300; trial++) {
      const seed = Math.floor(rng() * 2 ** 31);
      const logs: Op[][] = [];
      const results: unknown[] = [];
      for (const enabled of [false, true]) {
        const log: Op[] = [];
        const { ex, args } = randomExecutor(seededRandom(seed), gpuJsExecutor, log, trial % 10 !== 0);
        // The executor of an instance whose flag onePassCalls is `enabled`.
        withFlags({ onePassCalls: enabled }, ex);
        results.push(await ex.execute(args));
        logs.push(log);
      }
      const [theirs, ours] = logs;
      expect(effect(ours)).toEqual(effect(theirs));
      expect(results[1]).toEqual(results[0]);
      // gpu.js opens a pass per step; the one-pass call opens one, and sets a pipeline or bind group only when it changes.
      const count = (log: Op[], kind: string): number => log.filter((op) => op[0] === kind).length;
      expect(count(ours, 'begin')).toBe(1);
      expect(count(theirs, 'begin')).toBe(count(theirs, 'dispatch'));
      const sets = (log: Op[]): number => count(log, 'pipeline') + count(log, 'bindGroup');
      expect(sets(ours)).toBeLessThanOrEqual(sets(theirs));
      if (sets(ours) < sets(theirs)) fewerSets++;
    }
    expect(fewerSets).toBeGreaterThan(200);
  });

  test('recorded ahead, on 300 random plans: each call asks the device for what a call recorded when made asks, the recording is taken once, and the writes of a call precede its commands', async () => {
    installOnePassCalls();
    const rng = seededRandom(23);
    const taken = onePassCalls.takenAhead;
    let expectedTaken = 0;
    for (let trial = 0; trial < 300; trial++) {
      const seed = Math.floor(rng() * 2 ** 31);
      const logs: Op[][] = [];
      const results: unknown[][] = [];
      for (const ahead of [false, true]) {
        const log: Op[] = [];
        const planRng = seededRandom(seed);
        const { ex, args, argsAgain } = randomExecutor(planRng, gpuJsExecutor, log, trial % 10 !== 0);
        // Another executor's call is in flight while this one is recorded ahead (its log is apart).
        const other = randomExecutor(seededRandom(seed + 1), gpuJsExecutor, []);
        const out: unknown[] = [];
        const pending = other.ex.execute(other.args);
        if (ahead) {
          expect(recordAhead({ pipeline: { _executor: ex } })).toBe(true);
          // Once per call: a second recording ahead is refused until a call takes the first.
          expect(recordAhead({ pipeline: { _executor: ex } })).toBe(false);
          expectedTaken++;
        }
        await pending;
        const mark = log.length;
        out.push(await ex.execute(args));
        // Nothing was logged at the recording: the device sees commands only when submitted.
        if (ahead) expect(mark).toBe(0);
        // A later call without recording ahead records its own, and one recorded ahead after a call is taken by the next.
        out.push(await ex.execute(argsAgain()));
        if (ahead) {
          expect(recordAhead({ pipeline: { _executor: ex } })).toBe(true);
          expectedTaken++;
        }
        out.push(await ex.execute(argsAgain()));
        logs.push(log);
        results.push(out);
      }
      expect(effect(logs[1])).toEqual(effect(logs[0]));
      expect(results[1]).toEqual(results[0]);
    }
    expect(onePassCalls.takenAhead - taken).toBe(expectedTaken);
  });

  test('recording ahead is refused, changing nothing, for what is not a live compiled WebGPU executor or when one-pass calls are off', () => {
    installOnePassCalls();
    const log: Op[] = [];
    const { ex } = randomExecutor(seededRandom(9), gpuJsExecutor, log);
    const before = onePassCalls.recordedAhead;
    for (const pipe of [null, undefined, 3, {}, { pipeline: {} }, { pipeline: { _executor: false } }, { pipeline: { _executor: { ...ex } } }]) {
      expect(recordAhead(pipe)).toBe(false);
    }
    for (const [field, value] of [['destroyed', true], ['context', { isLost: true }], ['_passes', null]] as const) {
      const broken = Object.assign(Object.create(gpuJsExecutor) as FusedExecutor, ex, { [field]: value });
      expect(recordAhead({ pipeline: { _executor: broken } })).toBe(false);
    }
    // An executor of an instance with one-pass calls off.
    const off = Object.assign(Object.create(gpuJsExecutor) as FusedExecutor, ex);
    withFlags({ onePassCalls: false }, off);
    expect(recordAhead({ pipeline: { _executor: off } })).toBe(false);
    expect(onePassCalls.recordedAhead).toBe(before);
    expect(log).toEqual([]);
  });

  test('a destroyed executor throws and a lost device rejects, as in gpu.js, before anything is written', async () => {
    const log: Op[] = [];
    const { ex, args } = randomExecutor(seededRandom(5), gpuJsExecutor, log);
    ex.destroyed = true;
    expect(() => callInOnePass(ex, args, flattenTo)).toThrow(/destroyed/);
    ex.destroyed = false;
    ex.context = { isLost: true };
    await expect(callInOnePass(ex, args, flattenTo)).rejects.toThrow(/device was lost/);
    expect(log).toEqual([]);
  });

  test('flat results, on 200 random plans: each step output as one flat array equal to gpu.js\'s shaped result flattened; plans with other results, or not opted in, are shaped by gpu.js', async () => {
    installOnePassCalls();
    const { WebGPUKernel } = gpuJsInternal<{ WebGPUKernel: { prototype: { _shapeOutput: unknown } } }>('web-gpu/kernel');
    const rng = seededRandom(31);
    const pick = (k: number): number => Math.floor(rng() * k);
    let flatCalls = 0;
    for (let trial = 0; trial < 200; trial++) {
      const { ex, args } = randomExecutor(seededRandom(trial), gpuJsExecutor, []);
      // Step outputs of random shapes laid out one after another in the staging range, as gpu.js's compile lays them.
      let offset = 0;
      const shapes: number[][] = [];
      const reads = Array.from({ length: 1 + pick(3) }, (_, r) => {
        const output = [[1 + pick(6)], [1 + pick(6), 1 + pick(5)], [1 + pick(5), 1 + pick(4), 1 + pick(3)]][pick(3)];
        shapes.push(output);
        const byteLength = 4 * output.reduce((a, b) => a * b, 1);
        const read = { kind: trial % 7 === 0 && r === 1 ? 'arg' : 'step', index: 0, buffer: `B${r}`, offset, byteLength, output, componentCount: 1, kernel: { _shapeOutput: WebGPUKernel.prototype._shapeOutput } };
        offset += byteLength;
        return read;
      });
      const mapped = Float32Array.from({ length: offset / 4 }, () => pick(1000)).buffer;
      const pipeline = {};
      Object.assign(ex, {
        pipeline,
        plan: { results: { kind: trial % 11 === 0 ? 'single' : 'array', entries: [] } },
        _resultReads: reads,
        _staging: { mapAsync: async () => undefined, getMappedRange: () => mapped, unmap: () => undefined },
        _shapeResults: gpuJsExecutor._shapeResults,
      });
      const shaped = (await ex.execute(args)) as unknown;
      if (trial % 2 === 0) returnFlatResults({ pipeline });
      const out = (await ex.execute(args)) as unknown;
      const applies = trial % 2 === 0 && trial % 11 !== 0 && reads.every((read) => read.kind === 'step');
      if (!applies) {
        expect(out).toEqual(shaped);
        continue;
      }
      flatCalls++;
      const flat = out as Float32Array[];
      expect(flat).toHaveLength(reads.length);
      reads.forEach((read, i) => {
        expect(flat[i]).toBeInstanceOf(Float32Array);
        expect(Array.from(flat[i])).toEqual(Array.from(new Float32Array(mapped, read.offset, read.byteLength / 4)));
        // The same values as gpu.js's nested result, flattened plane by plane.
        const [w, h = 1, z = 1] = shapes[i];
        const nested = (shaped as unknown[])[i];
        const asState = shapes[i].length === 3 ? nested : shapes[i].length === 2 ? [nested] : [[nested]];
        expect(Array.from(flattenState(asState as never, w, h, new Float32Array(w * h * z), 0, z))).toEqual(Array.from(flat[i]));
      });
    }
    expect(flatCalls).toBeGreaterThan(60);
  });

  test('a call in place goes straight to a live, idle executor (no snapshot), keeps gpu.js\'s queue and drop-on-failure, and leaves everything else to gpu.js\'s call', async () => {
    installOnePassCalls();
    const setUp = (seed: number) => {
      const log: Op[] = [];
      const { ex, args } = randomExecutor(seededRandom(seed), gpuJsExecutor, log);
      const pipeline = { _executor: ex as unknown, _inFlight: 0, _tail: Promise.resolve() as Promise<unknown>, destroyed: false, dropped: 0, _dropExecutor() { this.dropped++; } };
      let gpuJsCalls = 0;
      const pipe = Object.assign((..._a: unknown[]) => { gpuJsCalls++; return Promise.resolve('gpu.js call'); }, { pipeline });
      return { log, ex, args, pipeline, pipe, gpuJsCalls: () => gpuJsCalls };
    };
    // Straight to the executor: the writes happen at the call, the pipeline counts it in flight and later calls queue behind it.
    const a = setUp(1);
    const pending = callInPlace(a.pipe, a.args);
    expect(a.log.filter((op) => op[0] === 'write').length).toBeGreaterThan(0);
    expect(a.pipeline._inFlight).toBe(1);
    let queuedRan = false;
    const queued = a.pipeline._tail.then(() => { queuedRan = true; });
    expect(queuedRan).toBe(false);
    const direct = await pending;
    await queued;
    expect(queuedRan).toBe(true);
    expect(direct).toEqual(await a.ex.execute(a.args));
    expect(a.pipeline._inFlight).toBe(0);
    expect(a.gpuJsCalls()).toBe(0);
    // Left to gpu.js: a call in flight, a destroyed pipeline or executor, a lost device, no compiled executor, another kind of executor, one-pass calls off.
    const cases: Array<(c: ReturnType<typeof setUp>) => void> = [
      (c) => { c.pipeline._inFlight = 1; },
      (c) => { c.pipeline.destroyed = true; },
      (c) => { c.ex.destroyed = true; },
      (c) => { c.ex.context = { isLost: true }; },
      (c) => { c.pipeline._executor = undefined; },
      (c) => { c.pipeline._executor = false; },
      (c) => { c.pipeline._executor = { ...c.ex }; },
      (c) => { withFlags({ onePassCalls: false }, c.ex, c.pipeline); },
      (c) => { withFlags({ inPlaceCalls: false }, c.ex, c.pipeline); },
      // Arguments the compiled plan no longer fits: gpu.js recompiles.
      (c) => { c.ex._checkArguments = () => { throw Object.assign(new Error('drifted'), { isFusionFallback: true, recompilable: true }); }; },
    ];
    for (const change of cases) {
      const c = setUp(2);
      change(c);
      await expect(callInPlace(c.pipe, c.args)).resolves.toBe('gpu.js call');
      expect(c.gpuJsCalls()).toBe(1);
      expect(c.log.filter((op) => op[0] === 'write')).toEqual([]);
    }
    // Any other error of the executor is the caller's; a failed call drops the executor, as gpu.js's call does.
    const b = setUp(3);
    b.ex._checkArguments = () => { throw new Error('not a fusion fallback'); };
    expect(() => callInPlace(b.pipe, b.args)).toThrow(/not a fusion fallback/);
    const lost = setUp(4);
    lost.ex._staging!.mapAsync = async () => { throw new Error('device lost while mapping'); };
    await expect(callInPlace(lost.pipe, lost.args)).rejects.toThrow(/device lost while mapping/);
    expect(lost.pipeline.dropped).toBe(1);
    expect(lost.pipeline._inFlight).toBe(0);
    expect(lost.gpuJsCalls()).toBe(0);
  });
});
