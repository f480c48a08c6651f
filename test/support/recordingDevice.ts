/**
 * A stand-in WebGPU device for CI (no GPU): gpu.js's WebGPU backend runs
 * its kernel builds and its fused executor's compile against it. It records
 * the pipelines it is asked for (with their code and bind group entries)
 * and the buffers it makes (with what was written through their mapping),
 * and answers the rest with inert objects. Nothing runs on it.
 */

/** A buffer of the stand-in device. */
export interface StandInBuffer {
  size: number;
  usage: number;
  mappedAtCreation: boolean;
  /** What the mapping held at unmap (a literal's values), if it was mapped. */
  data: ArrayBuffer | null;
  destroyed: number;
  getMappedRange(): ArrayBuffer;
  unmap(): void;
  destroy(): void;
  mapAsync(): Promise<void>;
}

/** A command encoder of the stand-in device: it records the dispatches' workgroup counts. */
export interface StandInEncoder {
  beginComputePass(): { setPipeline(p: unknown): void; setBindGroup(i: number, g: unknown): void; dispatchWorkgroups(x: number): void; end(): void };
  copyBufferToBuffer(source: unknown, sourceOffset: number, target: unknown, targetOffset: number, bytes: number): void;
  finish(): object;
}

export class RecordingDevice {
  readonly limits = { maxComputeWorkgroupsPerDimension: 65535, maxStorageBufferBindingSize: 1 << 30, maxBufferSize: 1 << 30 };
  readonly lost = new Promise<never>(() => undefined);
  readonly features = new Set<string>();
  readonly made: string[] = [];
  readonly ahead: string[] = [];
  readonly buffers: StandInBuffer[] = [];
  pending: Array<() => void> = [];
  refuse = false;
  /** Workgroup counts of the dispatches encoded, and the command buffers submitted. */
  readonly dispatched: number[] = [];
  /** Buffer-to-buffer copies recorded by its encoders, in order. */
  readonly copies: Array<{ source: unknown; sourceOffset: number; target: unknown; targetOffset: number; bytes: number }> = [];
  submitted = 0;
  /** Queue writes: the buffer and a copy of the bytes written. */
  readonly written: Array<{ buffer: unknown; data: ArrayBuffer }> = [];
  readonly queue = {
    writeBuffer: (buffer: unknown, offset: number, data: ArrayBufferView | ArrayBuffer): void => {
      const bytes = ArrayBuffer.isView(data) ? data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) : data.slice(0);
      this.written.push({ buffer, data: bytes as ArrayBuffer });
    },
    submit: (c: unknown[]): void => { this.submitted += c.length; }, onSubmittedWorkDone: async (): Promise<void> => undefined };
  createShaderModule(d: { code: string }): object {
    return { code: d.code, getCompilationInfo: async () => ({ messages: [] }) };
  }
  createBindGroupLayout(d: { entries: unknown[] }): object {
    return { entries: d.entries };
  }
  createPipelineLayout(d: { bindGroupLayouts: Array<{ entries: unknown[] }> }): object {
    return { entries: d.bindGroupLayouts.map((l) => l.entries) };
  }
  private describe(d: { layout: { entries: unknown } | 'auto'; compute: { module: unknown; entryPoint: string } }): string {
    return JSON.stringify([d.compute.entryPoint, d.layout === 'auto' ? 'auto' : d.layout.entries, (d.compute.module as { code: string }).code]);
  }
  createComputePipeline(d: Parameters<RecordingDevice['describe']>[0]): { getBindGroupLayout(i: number): object } {
    this.made.push(this.describe(d));
    return { getBindGroupLayout: () => ({}) };
  }
  createComputePipelineAsync(d: Parameters<RecordingDevice['describe']>[0]): Promise<object> {
    this.ahead.push(this.describe(d));
    return new Promise((resolve, reject) => this.pending.push(() => (this.refuse ? reject(new Error('refused')) : resolve({}))));
  }
  pushErrorScope(): void {}
  async popErrorScope(): Promise<null> {
    return null;
  }
  createBuffer(d: { size: number; usage: number; mappedAtCreation?: boolean }): StandInBuffer {
    let mapped: ArrayBuffer | null = null;
    const buffer: StandInBuffer = {
      size: d.size, usage: d.usage, mappedAtCreation: d.mappedAtCreation === true, data: null, destroyed: 0,
      getMappedRange: () => (mapped ??= new ArrayBuffer(d.size)),
      unmap: () => { buffer.data = mapped; },
      destroy: () => { buffer.destroyed++; },
      mapAsync: async () => undefined,
    };
    this.buffers.push(buffer);
    return buffer;
  }
  createBindGroup(): object {
    return {};
  }
  createCommandEncoder(): StandInEncoder {
    const dispatched = this.dispatched;
    const copies = this.copies;
    return {
      beginComputePass: () => ({ setPipeline() {}, setBindGroup() {}, dispatchWorkgroups(x: number) { dispatched.push(x); }, end() {} }),
      copyBufferToBuffer(source: unknown, sourceOffset: number, target: unknown, targetOffset: number, bytes: number) { copies.push({ source, sourceOffset, target, targetOffset, bytes }); },
      finish: () => ({}),
    };
  }
}

/** Makes gpu.js's WebGPU context get `device` (through navigator.gpu) for the tests of the calling file. */
export function useStandInDevice(device: RecordingDevice): void {
  const g = globalThis as { navigator?: unknown };
  const saved = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  beforeAll(() => {
    const adapter = { limits: device.limits, features: device.features, info: {}, requestDevice: async () => device };
    Object.defineProperty(globalThis, 'navigator', { configurable: true, writable: true, value: { gpu: { requestAdapter: async () => adapter } } });
  });
  afterAll(() => {
    if (saved) Object.defineProperty(globalThis, 'navigator', saved);
    else delete g.navigator;
  });
}
