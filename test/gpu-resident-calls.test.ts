/**
 * Resident calls (gpu/runtime/gpujs/residentCalls.ts) on a simulated device whose
 * buffers hold data and whose queue runs writes and command buffers in
 * order, as WebGPU's queue timeline does: calls chained through device
 * buffers, submitted before the previous call's results are read, must
 * give what the same calls give one by one from host arguments. CI has no
 * GPU; on the device the same chaining is checked by whole runs whose
 * labels equal BK's (BENCHMARKS.md).
 */
import { seededRandom } from '../data/random';
import { installOnePassCalls, type FusedExecutor } from '../gpu/runtime/gpujs/onePassCalls';
import { compiledExecutor, ResidentBuffers, resultBuffer, type BufferLike } from '../gpu/runtime/gpujs/residentCalls';
import { gpuJsInternal } from '../gpu/runtime/gpujs/internals';

/** A buffer of the simulated device: its bytes, whether it is mapped, and destroyed. */
class SimBuffer implements BufferLike {
  readonly bytes: Float32Array;
  mapped = false;
  mapPending = false;
  destroyed = false;
  constructor(readonly size: number, readonly usage: number) { this.bytes = new Float32Array(size / 4); }
  destroy(): void { this.destroyed = true; }
  mapAsync(_mode: number, offset = 0, size = this.size): Promise<void> {
    if (this.mapped || this.mapPending) throw new Error('mapAsync on a buffer already mapped or mapping');
    if (offset !== 0 || size > this.size) throw new Error('map range outside the buffer');
    this.mapPending = true;
    return Promise.resolve().then(() => { this.mapPending = false; this.mapped = true; });
  }
  getMappedRange(offset = 0, size = this.size): ArrayBuffer {
    if (!this.mapped) throw new Error('getMappedRange on an unmapped buffer');
    return (this.bytes.buffer as ArrayBuffer).slice(offset, offset + size);
  }
  unmap(): void { this.mapped = false; }
}

type Command = () => void;

/** Buffers use: a buffer mapped (or mapping) or destroyed must not be used by a submit, as in WebGPU. */
function usable(b: unknown): SimBuffer {
  const s = b as SimBuffer;
  if (!(s instanceof SimBuffer)) throw new Error('not a buffer of this device');
  if (s.destroyed) throw new Error('destroyed buffer used');
  if (s.mapped || s.mapPending) throw new Error('mapped buffer used in a submit');
  return s;
}

/** A device whose queue runs at once: every write and submit applies in order (the queue timeline, sequentially). */
function simDevice(): FusedExecutor['_device'] & { createBuffer(d: { size: number; usage: number }): SimBuffer; submits: number } {
  const dev = {
    submits: 0,
    createBuffer: (d: { size: number; usage: number }) => new SimBuffer(d.size, d.usage),
    queue: {
      writeBuffer: (b: unknown, o: number, d: ArrayBufferView | ArrayBuffer) => {
        const src = d instanceof Float32Array ? d : new Float32Array(d as ArrayBuffer);
        usable(b).bytes.set(src, o / 4);
      },
      submit: (c: unknown[]) => {
        dev.submits++;
        for (const cb of c) for (const cmd of (cb as { cmds: Command[] }).cmds) cmd();
      },
    },
    createCommandEncoder: () => {
      const cmds: Command[] = [];
      return {
        beginComputePass: () => {
          let pipeline: ((g: unknown) => void) | null = null;
          let group: unknown = null;
          return {
            setPipeline: (p: unknown) => { pipeline = p as (g: unknown) => void; },
            setBindGroup: (_i: number, g: unknown) => { group = g; },
            dispatchWorkgroups: () => { const p = pipeline!; const g = group; cmds.push(() => p(g)); },
            end: () => undefined,
          };
        },
        copyBufferToBuffer: (a: unknown, ao: number, b: unknown, bo: number, n: number) => {
          cmds.push(() => {
            const from = usable(a);
            const to = usable(b);
            if (ao + n > from.size || bo + n > to.size || n % 4 !== 0) throw new Error('copy outside a buffer');
            to.bytes.set(from.bytes.subarray(ao / 4, (ao + n) / 4), bo / 4);
          });
        },
        finish: () => ({ cmds }),
      };
    },
  };
  return dev;
}

/**
 * A fused "move" plan on the simulated device, m cells: arguments labels
 * (m), α (1) and flows (2m); results labels' = labels + α·(flows > c) per
 * cell, a tally [Σ flows, c], and flows' = flows + labels (both halves).
 * The numbers only have to depend on every input.
 */
function simExecutor(dev: ReturnType<typeof simDevice>, m: number, c: number, proto: object): FusedExecutor {
  const buf = (len: number): SimBuffer => dev.createBuffer({ size: 4 * len, usage: 0 });
  const args = [buf(m), buf(1), buf(2 * m)];
  const outs = [buf(m), buf(2), buf(2 * m)];
  const step = (): void => {
    const [L, A, F] = args.map((b) => b.bytes);
    let sum = 0;
    for (let i = 0; i < m; i++) {
      outs[0].bytes[i] = L[i] + A[0] * (F[i] + F[m + i] > c ? 1 : 0);
      sum += F[i] + F[m + i];
      outs[2].bytes[i] = F[i] + L[i];
      outs[2].bytes[m + i] = F[m + i] + L[i];
    }
    outs[1].bytes[0] = sum;
    outs[1].bytes[1] = c;
  };
  return Object.assign(Object.create(proto) as FusedExecutor, {
    destroyed: false,
    context: { isLost: false },
    _passes: [{ pipeline: step, bindGroup: 'G', groups: [1, 1, 1] }],
    _argRegions: new Map(args.map((b, i) => [i, { flatLength: b.bytes.length, scratch: new Float32Array(b.bytes.length), buffer: b }])),
    _paramsRecords: [],
    _resultReads: outs.map((b) => ({ kind: 'step', buffer: b, offset: 0, byteLength: b.size })),
    _staging: null,
    _device: dev,
  });
}

/** The same plan on the host. */
function hostMove(labels: Float32Array, alpha: number, flows: Float32Array, c: number): [Float32Array, Float32Array, Float32Array] {
  const m = labels.length;
  const L = new Float32Array(m);
  const F = new Float32Array(2 * m);
  let sum = 0;
  for (let i = 0; i < m; i++) {
    L[i] = labels[i] + alpha * (flows[i] + flows[m + i] > c ? 1 : 0);
    sum += flows[i] + flows[m + i];
    F[i] = flows[i] + labels[i];
    F[m + i] = flows[m + i] + labels[i];
  }
  return [L, Float32Array.of(sum, c), F];
}

const gpuJsExecutor = gpuJsInternal<{ WebGPUPipelineExecutor: { prototype: FusedExecutor } }>('web-gpu/pipeline-executor').WebGPUPipelineExecutor.prototype;

describe('resident calls', () => {
  test('200 random chains of calls over two plans, each submitted before the last one\'s results: the labels and flows the host would compute, one staging buffer per call in flight', async () => {
    const rng = seededRandom(5);
    const pick = (k: number): number => Math.floor(rng() * k);
    for (let trial = 0; trial < 200; trial++) {
      const m = 1 + pick(20);
      const dev = simDevice();
      const plans = [simExecutor(dev, m, 3, gpuJsExecutor), simExecutor(dev, m, 7, gpuJsExecutor)];
      const res = new ResidentBuffers(dev);
      // Host model: labels, flows per chain slot.
      let labels: Float32Array = Float32Array.from({ length: m }, () => pick(5));
      let flows: Float32Array = Float32Array.from({ length: 2 * m }, () => pick(5));
      const flowsBuf = res.take(8 * m);
      dev.queue.writeBuffer(flowsBuf, 0, flows);
      const alphas = res.holding(Float32Array.from({ length: 5 }, (_, a) => a));
      // The call before, not yet read: its plan, kept flows, results and what the host expects of them.
      let previous: { ex: FusedExecutor; flows: BufferLike; labels: BufferLike; results: ReturnType<ResidentBuffers['submit']>; expected: Float32Array[] } | undefined;
      const readAndCheck = async (p: NonNullable<typeof previous>): Promise<void> => {
        const r = await p.results;
        expect(r.views.map((v) => Array.from(v))).toEqual(p.expected.map((v) => Array.from(v)));
        r.release();
      };
      const calls = 2 + pick(8);
      for (let k = 0; k < calls; k++) {
        const ex = plans[pick(2)];
        const alpha = 1 + pick(4);
        const out = res.take(8 * m);
        const labelsOut = res.take(4 * m);
        // The first call takes the host's labels and α; later ones the last call's labels and flows, and α from a buffer of every α (an offset copy), on the device.
        const results = res.submit(ex, previous
          ? { hostArgs: [], deviceArgs: [[0, resultBuffer(previous.ex, 0)], [1, alphas, 4 * alpha], [2, previous.flows]], keep: [[2, out], [0, labelsOut]], read: [0, 1] }
          : { hostArgs: [[0, labels], [1, Float32Array.of(alpha)]], deviceArgs: [[2, flowsBuf]], keep: [[2, out], [0, labelsOut]], read: [0, 1] });
        const [L, T, F] = hostMove(labels, alpha, flows, ex === plans[0] ? 3 : 7);
        // The previous call's results are read only now, after this call was submitted.
        if (previous) {
          await readAndCheck(previous);
          res.give(previous.flows, 8 * m);
        }
        labels = L;
        flows = F;
        previous = { ex, flows: out, labels: labelsOut, results, expected: [L, T] };
      }
      await readAndCheck(previous!);
      // The last call's kept labels, read back directly.
      const back = new Float32Array(m);
      await res.read(previous!.labels, 4 * m, back);
      expect(Array.from(back)).toEqual(Array.from(labels));
      // The last call's kept flows, read through a call that takes them as its flows argument and keeps nothing.
      const check = await res.submit(plans[0], { hostArgs: [[0, new Float32Array(m)], [1, Float32Array.of(0)]], deviceArgs: [[2, previous!.flows]], keep: [], read: [2] });
      const expected = hostMove(new Float32Array(m), 0, flows, 3)[2];
      expect(Array.from(check.views[0])).toEqual(Array.from(expected));
      check.release();
      res.destroy();
    }
  });

  test('calls in flight each have a staging buffer of their own; released ones are reused; destroy frees every buffer made', async () => {
    const dev = simDevice();
    const made: SimBuffer[] = [];
    const create = dev.createBuffer;
    dev.createBuffer = (d) => { const b = create(d); made.push(b); return b; };
    const ex = simExecutor(dev, 4, 1, gpuJsExecutor);
    made.length = 0;
    const res = new ResidentBuffers(dev);
    const flows = res.zeros(32);
    const call = { hostArgs: [[0, new Float32Array(4)], [1, Float32Array.of(1)]] as const, deviceArgs: [[2, flows]] as const, keep: [], read: [0, 1] };
    const a = res.submit(ex, call);
    const b = res.submit(ex, call);
    const c = res.submit(ex, call);
    const [ra, rb, rc] = await Promise.all([a, b, c]);
    expect(made.filter((x) => x.usage & 1)).toHaveLength(3);
    ra.release();
    rb.release();
    rc.release();
    (await res.submit(ex, call)).release();
    expect(made.filter((x) => x.usage & 1)).toHaveLength(3);
    res.destroy();
    expect(made.every((x) => x.destroyed)).toBe(true);
    expect(() => res.submit(ex, call)).toThrow(/destroyed/);
  });

  test('refuses arguments of the wrong length, results that are not step outputs, and executors that are destroyed', () => {
    const dev = simDevice();
    const ex = simExecutor(dev, 4, 1, gpuJsExecutor);
    const res = new ResidentBuffers(dev);
    expect(() => res.submit(ex, { hostArgs: [[0, new Float32Array(5)]], deviceArgs: [], keep: [], read: [] })).toThrow(/argument 0 has 5 values, the plan 4/);
    expect(() => res.submit(ex, { hostArgs: [], deviceArgs: [[7, res.zeros(4)]], keep: [], read: [] })).toThrow(/no array argument 7/);
    expect(() => res.submit(ex, { hostArgs: [], deviceArgs: [], keep: [], read: [5] })).toThrow(/result 5/);
    expect(() => resultBuffer(ex, 9)).toThrow(/result 9/);
    ex.destroyed = true;
    expect(() => res.submit(ex, { hostArgs: [], deviceArgs: [], keep: [], read: [] })).toThrow(/destroyed/);
  });

  test('compiledExecutor builds the plan and compiles its executor without running a call, once', async () => {
    installOnePassCalls();
    const dev = simDevice();
    const ex = simExecutor(dev, 4, 1, gpuJsExecutor);
    let builds = 0;
    let compiles = 0;
    const pipeline = {
      destroyed: false, _inFlight: 0, plan: undefined as unknown, _executor: undefined as unknown,
      _buildPlan: () => { builds++; return { steps: [] }; },
      _prepareExecutor: async () => { compiles++; pipeline._executor = ex; },
    };
    const pipe = { pipeline };
    expect(await compiledExecutor(pipe, [])).toBe(ex);
    expect(await compiledExecutor(pipe, [])).toBe(ex);
    expect([builds, compiles, dev.submits]).toEqual([1, 1, 0]);
    // A pipeline that fell back to gpu.js's generic executor has none.
    expect(await compiledExecutor({ pipeline: { ...pipeline, _executor: false } }, [])).toBeNull();
  });
});
