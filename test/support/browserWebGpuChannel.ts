/**
 * The Node half of the WebGPU bridge's transport: operations recorded in
 * call order and sent to the page runtime (browserWebGpuPage.ts) in
 * batches, one page.evaluate per batch.
 *
 * WebGPU's synchronous calls (creating objects, encoding, queue writes,
 * submits) only append an operation: their proxies have ids from here, so
 * later operations can name them before the page has run anything. An
 * asynchronous call (mapAsync, popErrorScope, getCompilationInfo, ...)
 * appends its operation and sends everything recorded, once the current
 * synchronous run of Node code is over (a microtask), so the operations of
 * a Promise.all of them share one batch. Batches carry a sequence number
 * and the page runs their operations strictly in that order, while the
 * answers of one batch are awaited the next may run: WebGPU's own ordering
 * (a queue write before a later submit, a map after the work submitted
 * before it) holds as on a direct device.
 */
import type { Page } from 'puppeteer-core';
import { RUNTIME_KEY, type PageBatch, type PageOp, type PageReply, type PageRuntime, type Wire } from './browserWebGpuPage';

/** Anything the page keeps an object for: encoded as its id. */
export abstract class PageHandle {
  constructor(protected readonly channel: PageChannel, readonly bridgeId: number) {}
}

/** What the channel reports to the devices: errors and losses the page saw. */
export interface DeviceEvents {
  uncapturedError(message: string): void;
  lost(reason: string, message: string): void;
}

export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

export function fromBase64(s: string): Uint8Array {
  const b = Buffer.from(s, 'base64');
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength).slice();
}

/** `v` as sent to the page; bytes are copied now (WebGPU copies written data at the call). */
export function encode(v: unknown): Wire {
  if (v instanceof PageHandle) return { $h: v.bridgeId };
  if (v instanceof ArrayBuffer) return { $b: toBase64(new Uint8Array(v)) };
  if (ArrayBuffer.isView(v)) return { $b: toBase64(new Uint8Array(v.buffer, v.byteOffset, v.byteLength)) };
  if (Array.isArray(v)) return v.map(encode);
  if (v === null || typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string') return v;
  if (v === undefined) return null;
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: { [key: string]: Wire } = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = encode(x);
    return out;
  }
  throw new Error(`WebGPU bridge: cannot send ${Object.prototype.toString.call(v)} to the page (a descriptor member the bridge does not know)`);
}

type Reply = { resolve(v: unknown): void; reject(e: Error): void; what: string };
type WithoutReply<T> = T extends { r: number } ? Omit<T, 'r'> : never;

export class PageChannel {
  private ops: PageOp[] = [];
  private nextId = 1;
  private seq = 0;
  private flushQueued = false;
  private readonly replies = new Map<number, Reply>();
  private readonly devices = new Map<number, DeviceEvents>();
  /** A failure not yet reported: a synchronous operation that threw in the page, or the page gone. */
  private failure: Error | null = null;
  private closed = false;

  constructor(private readonly page: Page) {}

  id(): number {
    return this.nextId++;
  }

  /** Records a synchronous operation; dropped once the browser is closed (as calls on a lost device do nothing). */
  send(op: PageOp): void {
    if (!this.closed) this.ops.push(op);
  }

  /** Records an operation that answers, and sends the batch soon; resolves with its answer. */
  request<T>(op: WithoutReply<PageOp>, what: string): Promise<T> {
    if (this.closed) return Promise.reject(new Error(`WebGPU bridge: ${what} after the browser was closed`));
    if (this.failure) return Promise.reject(this.failure);
    const r = this.id();
    const answer = new Promise<T>((resolve, reject) => this.replies.set(r, { resolve: resolve as (v: unknown) => void, reject, what }));
    this.ops.push({ ...op, r } as PageOp);
    this.flushSoon();
    return answer;
  }

  /** Sends what is recorded once the current synchronous code is over. */
  flushSoon(): void {
    if (this.flushQueued || this.closed) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      this.flush();
    });
  }

  /** A round trip: the uncaptured errors and losses the page has seen so far reach their devices. */
  async ping(): Promise<void> {
    await this.request<true>({ k: 'ping' }, 'WebGPU bridge ping');
  }

  watchDevice(id: number, events: DeviceEvents): void {
    this.devices.set(id, events);
  }

  /** Rejects every open answer; later calls fail at once. */
  close(reason: string): void {
    this.closed = true;
    this.ops = [];
    this.rejectAll(new Error(`WebGPU bridge: ${reason}`));
  }

  private flush(): void {
    if (this.ops.length === 0) return;
    const batch: PageBatch = { seq: this.seq++, ops: this.ops };
    this.ops = [];
    const keys = batch.ops.flatMap((op) => ('r' in op ? [op.r] : []));
    this.page
      .evaluate((key: string, b: PageBatch) => (globalThis as unknown as Record<string, PageRuntime>)[key].run(b), RUNTIME_KEY, batch)
      .then((reply) => this.settle(reply, keys), (e: unknown) => {
        const error = new Error(`WebGPU bridge: the page did not answer (${e instanceof Error ? e.message : String(e)})`);
        this.failure = error;
        for (const k of keys) this.take(k)?.reject(error);
      });
  }

  private settle(reply: PageReply, keys: number[]): void {
    for (const [device, message] of reply.uncaptured) this.devices.get(device)?.uncapturedError(message);
    for (const [device, reason, message] of reply.lost) this.devices.get(device)?.lost(reason, message);
    // A synchronous operation that threw would have thrown at its call on a direct device: every answer of its batch fails, naming it.
    const thrown = reply.thrown.length > 0 ? new Error(`WebGPU bridge: in the page, ${reply.thrown.join('; ')}`) : null;
    if (thrown && keys.length === 0) this.failure = thrown;
    for (const [k, answer] of reply.replies) {
      const r = this.take(k);
      if (!r) continue;
      if (thrown) r.reject(thrown);
      else if (answer.e !== undefined) r.reject(new Error(`${r.what}: ${answer.e}`));
      else r.resolve(answer.v);
    }
  }

  private take(k: number): Reply | undefined {
    const r = this.replies.get(k);
    this.replies.delete(k);
    return r;
  }

  private rejectAll(error: Error): void {
    for (const [k, r] of [...this.replies]) {
      this.replies.delete(k);
      r.reject(error);
    }
  }
}
