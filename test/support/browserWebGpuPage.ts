/**
 * The page half of the WebGPU bridge (browserWebGpu.ts): a runtime that
 * installPageRuntime puts into a browser page, and the messages Node sends
 * it. Node keeps a proxy per WebGPU object; the page keeps the real object
 * under the proxy's id and runs the operations Node recorded, in order.
 *
 * The page keeps every object until a drop operation forgets it (only
 * single-use objects are dropped), which suits the small runs of tests.
 *
 * installPageRuntime is serialised into the page by puppeteer, so it must
 * stay self-contained: no imports, nothing from this module's scope, only
 * what a browser has (navigator.gpu, atob, btoa). The types below are
 * erased and cost the page nothing.
 */

/** A value as sent to the page: handles as { $h: id }, bytes as { $b: base64 }, the rest as JSON. */
export type Wire = null | boolean | number | string | Wire[] | { [key: string]: Wire };

/**
 * One operation. Those with `r` answer under that key once done (awaited in
 * the page); the others run synchronously, as their WebGPU calls do.
 *  - call:     t[m](...a), the result kept as `o` when given;
 *  - adapter:  navigator.gpu.requestAdapter(a), kept as `o`; answers its limits, features and info;
 *  - device:   t.requestDevice(a), kept as `o`, its queue as `q`; answers its limits and features;
 *  - pipeline: t.createComputePipelineAsync(a), kept as `o`;
 *  - scope:    t.popErrorScope(); answers the error's message or null;
 *  - compile:  t.getCompilationInfo(); answers its messages;
 *  - done:     t.onSubmittedWorkDone();
 *  - map:      t.mapAsync(mode, offset, size); answers the mapped bytes;
 *  - unmap:    writes the given byte ranges into t's mapped range, then t.unmap();
 *  - drop:     forgets t (single-use objects: a pass after end, an encoder after finish, a command buffer after submit);
 *  - ping:     answers once every live device's queue has done its work (Chromium delivers a
 *              device's uncaptured errors only while it waits on the device), so that the
 *              errors and losses of the work so far come back.
 */
export type PageOp =
  | { k: 'call'; t: number; m: string; a: Wire[]; o?: number }
  | { k: 'adapter'; a: Wire; o: number; r: number }
  | { k: 'device'; t: number; a: Wire; o: number; q: number; r: number }
  | { k: 'pipeline'; t: number; a: Wire; o: number; r: number }
  | { k: 'scope' | 'compile' | 'done'; t: number; r: number }
  | { k: 'map'; t: number; a: [number, number, number]; r: number }
  | { k: 'unmap'; t: number; w: Array<[number, string]> }
  | { k: 'drop'; t: number }
  | { k: 'ping'; r: number };

/** Operations run in `seq` order, whatever order their batches reach the page in. */
export interface PageBatch { seq: number; ops: PageOp[] }

export interface AdapterReply { limits: Record<string, number>; features: string[]; info: { vendor: string; architecture: string; device: string; description: string } }
export interface DeviceReply { limits: Record<string, number>; features: string[] }
export interface CompilationMessage { type: string; message: string; lineNum: number; linePos: number; offset: number; length: number }

/**
 * What a batch answers: each reply by key (a value, or the error it
 * rejected with); the synchronous operations that threw, described; and
 * the devices' uncaptured errors and losses seen since the last batch.
 */
export interface PageReply {
  replies: Array<[number, { v?: unknown; e?: string }]>;
  thrown: string[];
  uncaptured: Array<[number, string]>;
  lost: Array<[number, string, string]>;
}

export interface PageRuntime { run(batch: PageBatch): Promise<PageReply> }
/** Where the runtime lives in the page. */
export const RUNTIME_KEY = '__stereocutWebGpu';

/** Installs the runtime as globalThis[key] (RUNTIME_KEY); run in the page (page.evaluate). */
export function installPageRuntime(key: string): void {
  type Obj = Record<string, unknown>;
  type Method = (...a: unknown[]) => unknown;
  const page = globalThis as unknown as {
    navigator: { gpu?: { requestAdapter(o?: unknown): Promise<Obj | null> } };
    atob(s: string): string;
    btoa(s: string): string;
  } & Record<string, unknown>;
  const objects = new Map<number, unknown>();
  const uncaptured: Array<[number, string]> = [];
  const lost: Array<[number, string, string]> = [];
  const compiled = new WeakMap<object, Promise<unknown>>();
  const devices = new Set<Obj>();
  /** Each mapped buffer's whole mapped range, as taken at its map. */
  const mapped = new WeakMap<object, { offset: number; bytes: Uint8Array }>();
  let turn = 0;
  const waiting = new Map<number, () => void>();

  const fromBase64 = (s: string): Uint8Array => {
    const bin = page.atob(s);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  };
  const toBase64 = (bytes: Uint8Array): string => {
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return page.btoa(s);
  };
  const get = (id: number): Obj => {
    if (!objects.has(id)) throw new Error(`no object ${id} in the page (used after it was dropped?)`);
    return objects.get(id) as Obj;
  };
  const decode = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(decode);
    if (v === null || typeof v !== 'object') return v;
    const o = v as Obj;
    if (typeof o.$h === 'number') return get(o.$h);
    if (typeof o.$b === 'string') return fromBase64(o.$b);
    const out: Obj = {};
    for (const k of Object.keys(o)) out[k] = decode(o[k]);
    return out;
  };
  const invoke = (t: number, m: string, args: unknown[]): unknown => {
    const target = get(t);
    const f = target[m];
    if (typeof f !== 'function') throw new Error(`${String(target.constructor?.name)} has no method ${m}`);
    return (f as Method).apply(target, args);
  };
  const plain = (limits: Obj): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const k in limits) if (typeof limits[k] === 'number') out[k] = limits[k] as number;
    return out;
  };
  const features = (set: unknown): string[] => [...(set as Iterable<string>)];
  const describe = (op: PageOp): string => {
    const target = 't' in op ? objects.get(op.t) : undefined;
    const type = (target as { constructor?: { name?: string } } | undefined)?.constructor?.name ?? 'navigator.gpu';
    return `${type}.${op.k === 'call' ? op.m : op.k}`;
  };

  /** Starts one operation; a promise for those that answer. */
  const start = (op: PageOp): unknown => {
    switch (op.k) {
      case 'call': {
        const result = invoke(op.t, op.m, op.a.map(decode));
        if (op.o !== undefined) objects.set(op.o, result);
        return undefined;
      }
      case 'adapter': {
        if (!page.navigator.gpu) throw new Error('navigator.gpu is missing in the page');
        return page.navigator.gpu.requestAdapter(decode(op.a)).then((adapter) => {
          if (!adapter) return null;
          objects.set(op.o, adapter);
          const info = (adapter.info ?? {}) as Record<string, string>;
          return {
            limits: plain(adapter.limits as Obj),
            features: features(adapter.features),
            info: { vendor: info.vendor ?? '', architecture: info.architecture ?? '', device: info.device ?? '', description: info.description ?? '' },
          };
        });
      }
      case 'device':
        return (invoke(op.t, 'requestDevice', [decode(op.a)]) as Promise<Obj>).then((device) => {
          objects.set(op.o, device);
          objects.set(op.q, device.queue);
          devices.add(device);
          (device.addEventListener as Method).call(device, 'uncapturederror', (ev: { error?: { message?: string } }) => {
            uncaptured.push([op.o, ev.error?.message ?? 'unknown WebGPU error']);
          });
          void (device.lost as Promise<{ reason: string; message: string }>).then((info) => {
            devices.delete(device);
            lost.push([op.o, info.reason, info.message]);
          });
          return { limits: plain(device.limits as Obj), features: features(device.features) };
        });
      case 'pipeline':
        return (invoke(op.t, 'createComputePipelineAsync', [decode(op.a)]) as Promise<unknown>).then((p) => {
          objects.set(op.o, p);
          return true;
        });
      case 'scope':
        return (invoke(op.t, 'popErrorScope', []) as Promise<{ message: string } | null>).then((e) => (e ? e.message : null));
      case 'compile': {
        // Asked once per module: a module's messages never change, and this Chromium never settles a second getCompilationInfo of one module.
        const module = get(op.t);
        let info = compiled.get(module);
        if (!info) {
          info = (invoke(op.t, 'getCompilationInfo', []) as Promise<{ messages: Iterable<Obj> }>).then((i) =>
            [...i.messages].map((m) => ({ type: m.type, message: m.message, lineNum: m.lineNum, linePos: m.linePos, offset: m.offset, length: m.length })));
          compiled.set(module, info);
        }
        return info;
      }
      case 'done':
        return (invoke(op.t, 'onSubmittedWorkDone', []) as Promise<void>).then(() => true);
      case 'map': {
        const [mode, offset, size] = op.a;
        return (invoke(op.t, 'mapAsync', [mode, offset, size]) as Promise<void>).then(() => {
          const bytes = new Uint8Array(invoke(op.t, 'getMappedRange', [offset, size]) as ArrayBuffer);
          mapped.set(get(op.t), { offset, bytes });
          return toBase64(bytes);
        });
      }
      case 'unmap': {
        // The whole mapped range was taken once (at the map, or here for a buffer mapped at creation): ranges of one mapping must not overlap.
        const buffer = get(op.t);
        if (op.w.length > 0) {
          const range = mapped.get(buffer) ?? { offset: 0, bytes: new Uint8Array(invoke(op.t, 'getMappedRange', []) as ArrayBuffer) };
          for (const [offset, bytes] of op.w) range.bytes.set(fromBase64(bytes), offset - range.offset);
        }
        mapped.delete(buffer);
        invoke(op.t, 'unmap', []);
        return undefined;
      }
      case 'drop':
        objects.delete(op.t);
        return undefined;
      case 'ping':
        return Promise.all([...devices].map((d) => (d.queue as { onSubmittedWorkDone(): Promise<void> }).onSubmittedWorkDone().catch(() => undefined))).then(() => true);
    }
  };

  const runtime: PageRuntime = {
    async run(batch) {
      if (batch.seq !== turn) await new Promise<void>((resolve) => waiting.set(batch.seq, resolve));
      const pending: Array<Promise<[number, { v?: unknown; e?: string }]>> = [];
      const thrown: string[] = [];
      const message = (e: unknown): string => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));
      for (const op of batch.ops) {
        try {
          const started = start(op);
          if ('r' in op) pending.push(Promise.resolve(started).then((v) => [op.r, { v }], (e: unknown) => [op.r, { e: message(e) }]));
        } catch (e) {
          if ('r' in op) pending.push(Promise.resolve([op.r, { e: message(e) }]));
          else thrown.push(`${describe(op)}: ${message(e)}`);
        }
      }
      // The next batch may run its synchronous operations now, while this one's answers are awaited.
      turn++;
      waiting.get(turn)?.();
      waiting.delete(turn);
      const replies = await Promise.all(pending);
      return { replies, thrown, uncaptured: uncaptured.splice(0), lost: lost.splice(0) };
    },
  };
  page[key] = runtime;
}
