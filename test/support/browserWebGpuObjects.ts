/**
 * Node-side proxies of a browser page's WebGPU objects (the bridge:
 * browserWebGpu.ts). Each forwards its calls to the page's real object
 * through the channel (browserWebGpuChannel.ts): synchronous calls return
 * at once, as WebGPU's do, and asynchronous ones resolve with the page's
 * answer. What a caller reads synchronously (limits, features, adapter
 * info, the queue, a buffer's size and usage) is fetched with the adapter
 * or device and kept here.
 *
 * The surface is what gpu.js 2.24.1's WebGPU backend and the project
 * (gpu/runtime/context.ts, gpu/runtime/gpujs/, gpu/runtime/clockWarmup.ts)
 * use. The other members of each WebGPU interface throw an error naming
 * them, so a new use shows up as a gap here rather than as a wrong result.
 * Methods live on the classes' prototypes, as on a real device: the
 * project's adaptations wrap a device's createShaderModule and
 * createBuffer by defining an own property that calls the prototype's.
 */
import { encode, fromBase64, PageHandle, toBase64, type PageChannel } from './browserWebGpuChannel';
import type { AdapterReply, CompilationMessage, DeviceReply } from './browserWebGpuPage';

/** Throws for a WebGPU member the bridge does not forward. */
function unsupported(member: string): never {
  throw new Error(`WebGPU bridge: ${member} is not supported (test/support/browserWebGpuObjects.ts forwards only what gpu.js and the project use)`);
}

/** Plain descriptors, as the page receives them (their handles and bytes encoded). */
type Descriptor = Record<string, unknown>;

const MAP_WRITE = 0x2;

/** An object the page keeps and nothing here calls methods of (layouts, bind groups, command buffers). */
export class BridgeObject extends PageHandle {
  constructor(channel: PageChannel, id: number, readonly label = '') {
    super(channel, id);
  }
}

export class BridgeGpu {
  constructor(private readonly channel: PageChannel) {}

  async requestAdapter(options?: Descriptor): Promise<BridgeAdapter | null> {
    const id = this.channel.id();
    const reply = await this.channel.request<AdapterReply | null>({ k: 'adapter', a: encode(options ?? {}), o: id }, 'navigator.gpu.requestAdapter');
    return reply ? new BridgeAdapter(this.channel, id, reply) : null;
  }

  getPreferredCanvasFormat(): never { return unsupported('GPU.getPreferredCanvasFormat'); }
}

export class BridgeAdapter extends PageHandle {
  readonly limits: Readonly<Record<string, number>>;
  readonly features: ReadonlySet<string>;
  readonly info: Readonly<AdapterReply['info']>;

  constructor(channel: PageChannel, id: number, reply: AdapterReply) {
    super(channel, id);
    this.limits = Object.freeze({ ...reply.limits });
    this.features = new Set(reply.features);
    this.info = Object.freeze({ ...reply.info });
  }

  /**
   * A device of the page's adapter. Required limits pass through clamped to
   * what the adapter offers (a maximum to at most its own, an alignment to
   * at least its own), so a caller asking for "all there is" of a larger
   * GPU gets what this adapter has instead of a refusal.
   */
  async requestDevice(descriptor: Descriptor = {}): Promise<BridgeDevice> {
    const required = (descriptor.requiredLimits ?? {}) as Record<string, number>;
    const requiredLimits: Record<string, number> = {};
    for (const [name, value] of Object.entries(required)) {
      const offered = this.limits[name];
      requiredLimits[name] = offered === undefined ? value : name.startsWith('min') ? Math.max(value, offered) : Math.min(value, offered);
    }
    const id = this.channel.id();
    const queue = this.channel.id();
    const reply = await this.channel.request<DeviceReply>({ k: 'device', t: this.bridgeId, a: encode({ ...descriptor, requiredLimits }), o: id, q: queue }, 'GPUAdapter.requestDevice');
    return new BridgeDevice(this.channel, id, new BridgeQueue(this.channel, queue), reply);
  }

  requestAdapterInfo(): never { return unsupported('GPUAdapter.requestAdapterInfo (read adapter.info)'); }
}

/** An uncaptured error as WebGPU hands it to listeners. */
interface UncapturedErrorEvent { type: 'uncapturederror'; error: { message: string } }
type UncapturedListener = (ev: UncapturedErrorEvent) => void;

export class BridgeDevice extends PageHandle {
  readonly limits: Readonly<Record<string, number>>;
  readonly features: ReadonlySet<string>;
  readonly lost: Promise<{ reason: string; message: string }>;
  /** Called with every uncaptured error, like the listeners (the page's device reports them at each batch). */
  onuncapturederror: UncapturedListener | null = null;
  private readonly listeners = new Set<UncapturedListener>();
  private markLost!: (info: { reason: string; message: string }) => void;

  constructor(channel: PageChannel, id: number, readonly queue: BridgeQueue, reply: DeviceReply) {
    super(channel, id);
    this.limits = Object.freeze({ ...reply.limits });
    this.features = new Set(reply.features);
    this.lost = new Promise((resolve) => { this.markLost = resolve; });
    channel.watchDevice(id, {
      uncapturedError: (message) => {
        const ev: UncapturedErrorEvent = { type: 'uncapturederror', error: { message } };
        for (const fn of this.listeners) fn(ev);
        this.onuncapturederror?.(ev);
      },
      lost: (reason, message) => this.markLost({ reason, message }),
    });
  }

  addEventListener(type: string, fn: UncapturedListener): void {
    if (type !== 'uncapturederror') unsupported(`GPUDevice.addEventListener('${type}')`);
    this.listeners.add(fn);
  }

  removeEventListener(type: string, fn: UncapturedListener): void {
    if (type !== 'uncapturederror') unsupported(`GPUDevice.removeEventListener('${type}')`);
    this.listeners.delete(fn);
  }

  /** Records a call of this device that makes an object; returns its id. */
  private make(method: string, descriptor: Descriptor): number {
    const id = this.channel.id();
    this.channel.send({ k: 'call', t: this.bridgeId, m: method, a: [encode(descriptor)], o: id });
    return id;
  }

  createBuffer(descriptor: { size: number; usage: number; mappedAtCreation?: boolean; label?: string }): BridgeBuffer {
    return new BridgeBuffer(this.channel, this.make('createBuffer', descriptor), descriptor);
  }

  createShaderModule(descriptor: { code: string; label?: string }): BridgeShaderModule {
    return new BridgeShaderModule(this.channel, this.make('createShaderModule', descriptor), descriptor.label);
  }

  createBindGroupLayout(descriptor: Descriptor): BridgeObject {
    return new BridgeObject(this.channel, this.make('createBindGroupLayout', descriptor), descriptor.label as string | undefined);
  }

  createPipelineLayout(descriptor: Descriptor): BridgeObject {
    return new BridgeObject(this.channel, this.make('createPipelineLayout', descriptor), descriptor.label as string | undefined);
  }

  createBindGroup(descriptor: Descriptor): BridgeObject {
    return new BridgeObject(this.channel, this.make('createBindGroup', descriptor), descriptor.label as string | undefined);
  }

  createComputePipeline(descriptor: Descriptor): BridgeComputePipeline {
    return new BridgeComputePipeline(this.channel, this.make('createComputePipeline', descriptor));
  }

  async createComputePipelineAsync(descriptor: Descriptor): Promise<BridgeComputePipeline> {
    const id = this.channel.id();
    await this.channel.request<true>({ k: 'pipeline', t: this.bridgeId, a: encode(descriptor), o: id }, 'GPUDevice.createComputePipelineAsync');
    return new BridgeComputePipeline(this.channel, id);
  }

  createCommandEncoder(descriptor: Descriptor = {}): BridgeCommandEncoder {
    return new BridgeCommandEncoder(this.channel, this.make('createCommandEncoder', descriptor));
  }

  pushErrorScope(filter: string): void {
    this.channel.send({ k: 'call', t: this.bridgeId, m: 'pushErrorScope', a: [filter] });
  }

  async popErrorScope(): Promise<{ message: string } | null> {
    const message = await this.channel.request<string | null>({ k: 'scope', t: this.bridgeId }, 'GPUDevice.popErrorScope');
    return message === null ? null : { message };
  }

  destroy(): void {
    this.channel.send({ k: 'call', t: this.bridgeId, m: 'destroy', a: [] });
    this.channel.flushSoon();
    this.markLost({ reason: 'destroyed', message: '' });
  }

  createTexture(): never { return unsupported('GPUDevice.createTexture'); }
  createSampler(): never { return unsupported('GPUDevice.createSampler'); }
  importExternalTexture(): never { return unsupported('GPUDevice.importExternalTexture'); }
  createRenderPipeline(): never { return unsupported('GPUDevice.createRenderPipeline'); }
  createRenderPipelineAsync(): never { return unsupported('GPUDevice.createRenderPipelineAsync'); }
  createRenderBundleEncoder(): never { return unsupported('GPUDevice.createRenderBundleEncoder'); }
  createQuerySet(): never { return unsupported('GPUDevice.createQuerySet'); }
}

export class BridgeQueue extends PageHandle {
  /** WebGPU copies `data` at the call: so does encode(). Offsets and size count elements of a typed array, bytes of an ArrayBuffer. */
  writeBuffer(buffer: BridgeBuffer, bufferOffset: number, data: ArrayBuffer | ArrayBufferView, dataOffset = 0, size?: number): void {
    const bytes = ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
    const unit = ArrayBuffer.isView(data) ? ((data as unknown as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1) : 1;
    const start = dataOffset * unit;
    const end = size === undefined ? bytes.length : start + size * unit;
    if (start > bytes.length || end > bytes.length) throw new RangeError(`GPUQueue.writeBuffer: data range ${start}..${end} outside its ${bytes.length} bytes`);
    this.channel.send({ k: 'call', t: this.bridgeId, m: 'writeBuffer', a: [encode(buffer), bufferOffset, encode(bytes.subarray(start, end))] });
  }

  /** Command buffers are single-use: the page forgets them once submitted. */
  submit(commandBuffers: BridgeObject[]): void {
    this.channel.send({ k: 'call', t: this.bridgeId, m: 'submit', a: [encode(commandBuffers)] });
    for (const c of commandBuffers) this.channel.send({ k: 'drop', t: c.bridgeId });
  }

  async onSubmittedWorkDone(): Promise<void> {
    await this.channel.request<true>({ k: 'done', t: this.bridgeId }, 'GPUQueue.onSubmittedWorkDone');
  }

  writeTexture(): never { return unsupported('GPUQueue.writeTexture'); }
  copyExternalImageToTexture(): never { return unsupported('GPUQueue.copyExternalImageToTexture'); }
}

/** A buffer's mapping: the bytes of the mapped range (a copy of the page's), and the ranges handed out. */
interface Mapping { offset: number; bytes: Uint8Array; writable: boolean; ranges: Array<{ offset: number; buffer: ArrayBuffer }> }

export class BridgeBuffer extends PageHandle {
  readonly size: number;
  readonly usage: number;
  readonly label: string;
  private mapping: Mapping | null = null;
  private pending = false;

  constructor(channel: PageChannel, id: number, descriptor: { size: number; usage: number; mappedAtCreation?: boolean; label?: string }) {
    super(channel, id);
    this.size = descriptor.size;
    this.usage = descriptor.usage;
    this.label = descriptor.label ?? '';
    // Mapped at creation: the page's range holds zeros; what is written here goes there at unmap.
    if (descriptor.mappedAtCreation) this.mapping = { offset: 0, bytes: new Uint8Array(descriptor.size), writable: true, ranges: [] };
  }

  get mapState(): 'unmapped' | 'pending' | 'mapped' {
    return this.mapping ? 'mapped' : this.pending ? 'pending' : 'unmapped';
  }

  /** Maps the page's buffer and fetches the mapped bytes, which getMappedRange then hands out. */
  async mapAsync(mode: number, offset = 0, size?: number): Promise<void> {
    if (this.mapping || this.pending) throw new Error('GPUBuffer.mapAsync: OperationError: the buffer is already mapped or being mapped');
    const length = size ?? this.size - offset;
    this.pending = true;
    try {
      const bytes = await this.channel.request<string>({ k: 'map', t: this.bridgeId, a: [mode, offset, length] }, 'GPUBuffer.mapAsync');
      this.mapping = { offset, bytes: fromBase64(bytes), writable: (mode & MAP_WRITE) !== 0, ranges: [] };
    } finally {
      this.pending = false;
    }
  }

  /** A copy of part of the mapped bytes, valid until unmap (which detaches it, as WebGPU does). */
  getMappedRange(offset = 0, size?: number): ArrayBuffer {
    const m = this.mapping;
    if (!m) throw new Error('GPUBuffer.getMappedRange: OperationError: the buffer is not mapped');
    const length = size ?? m.offset + m.bytes.length - offset;
    const from = offset - m.offset;
    if (from < 0 || length < 0 || from + length > m.bytes.length) {
      throw new Error(`GPUBuffer.getMappedRange: OperationError: ${offset}+${length} is outside the mapped range ${m.offset}+${m.bytes.length}`);
    }
    if (m.ranges.some((r) => offset < r.offset + r.buffer.byteLength && r.offset < offset + length)) {
      throw new Error(`GPUBuffer.getMappedRange: OperationError: ${offset}+${length} overlaps a range already handed out`);
    }
    const buffer = m.bytes.slice(from, from + length).buffer;
    m.ranges.push({ offset, buffer });
    return buffer;
  }

  /** Unmaps the page's buffer, writing back what a writable mapping's ranges hold; the ranges handed out are detached. */
  unmap(): void {
    const m = this.mapping;
    if (!m) return;
    this.mapping = null;
    const writes: Array<[number, string]> = m.writable ? m.ranges.map((r) => [r.offset, toBase64(new Uint8Array(r.buffer))]) : [];
    this.channel.send({ k: 'unmap', t: this.bridgeId, w: writes });
    for (const r of m.ranges) structuredClone(r.buffer, { transfer: [r.buffer] });
  }

  destroy(): void {
    if (this.mapping) this.unmap();
    this.channel.send({ k: 'call', t: this.bridgeId, m: 'destroy', a: [] });
  }
}

export class BridgeShaderModule extends PageHandle {
  constructor(channel: PageChannel, id: number, readonly label = '') {
    super(channel, id);
  }

  /** The WGSL compiler's messages (errors with their line and position), as the page's device gives them. */
  async getCompilationInfo(): Promise<{ messages: CompilationMessage[] }> {
    const messages = await this.channel.request<CompilationMessage[]>({ k: 'compile', t: this.bridgeId }, 'GPUShaderModule.getCompilationInfo');
    return { messages };
  }
}

export class BridgeComputePipeline extends PageHandle {
  getBindGroupLayout(index: number): BridgeObject {
    const id = this.channel.id();
    this.channel.send({ k: 'call', t: this.bridgeId, m: 'getBindGroupLayout', a: [index], o: id });
    return new BridgeObject(this.channel, id);
  }
}

export class BridgeCommandEncoder extends PageHandle {
  beginComputePass(descriptor: Descriptor = {}): BridgeComputePass {
    const id = this.channel.id();
    this.channel.send({ k: 'call', t: this.bridgeId, m: 'beginComputePass', a: [encode(descriptor)], o: id });
    return new BridgeComputePass(this.channel, id);
  }

  copyBufferToBuffer(source: BridgeBuffer, sourceOffset: number, destination: BridgeBuffer, destinationOffset: number, size: number): void {
    this.channel.send({ k: 'call', t: this.bridgeId, m: 'copyBufferToBuffer', a: [encode(source), sourceOffset, encode(destination), destinationOffset, size] });
  }

  clearBuffer(buffer: BridgeBuffer, offset = 0, size?: number): void {
    this.channel.send({ k: 'call', t: this.bridgeId, m: 'clearBuffer', a: [encode(buffer), offset, ...(size === undefined ? [] : [size])] });
  }

  /** The encoder is spent once finished: the page forgets it. */
  finish(descriptor: Descriptor = {}): BridgeObject {
    const id = this.channel.id();
    this.channel.send({ k: 'call', t: this.bridgeId, m: 'finish', a: [encode(descriptor)], o: id });
    this.channel.send({ k: 'drop', t: this.bridgeId });
    return new BridgeObject(this.channel, id);
  }

  beginRenderPass(): never { return unsupported('GPUCommandEncoder.beginRenderPass'); }
  copyBufferToTexture(): never { return unsupported('GPUCommandEncoder.copyBufferToTexture'); }
  copyTextureToBuffer(): never { return unsupported('GPUCommandEncoder.copyTextureToBuffer'); }
  copyTextureToTexture(): never { return unsupported('GPUCommandEncoder.copyTextureToTexture'); }
  resolveQuerySet(): never { return unsupported('GPUCommandEncoder.resolveQuerySet'); }
}

export class BridgeComputePass extends PageHandle {
  setPipeline(pipeline: BridgeComputePipeline): void {
    this.channel.send({ k: 'call', t: this.bridgeId, m: 'setPipeline', a: [encode(pipeline)] });
  }

  setBindGroup(index: number, group: BridgeObject | null, dynamicOffsets?: number[]): void {
    this.channel.send({ k: 'call', t: this.bridgeId, m: 'setBindGroup', a: [index, encode(group), ...(dynamicOffsets ? [dynamicOffsets] : [])] });
  }

  dispatchWorkgroups(x: number, y = 1, z = 1): void {
    this.channel.send({ k: 'call', t: this.bridgeId, m: 'dispatchWorkgroups', a: [x, y, z] });
  }

  /** The pass is spent once ended: the page forgets it. */
  end(): void {
    this.channel.send({ k: 'call', t: this.bridgeId, m: 'end', a: [] });
    this.channel.send({ k: 'drop', t: this.bridgeId });
  }

  dispatchWorkgroupsIndirect(): never { return unsupported('GPUComputePassEncoder.dispatchWorkgroupsIndirect'); }
}
