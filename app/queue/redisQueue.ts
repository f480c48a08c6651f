import type { RedisOptions } from 'bullmq';
import IORedis from 'ioredis';

/**
 * A queue named by URL: redis://[[USER]:PASSWORD@]HOST[:PORT]/NAME (rediss://
 * for TLS). NAME is the BullMQ queue; the coordinator and its workers name
 * the same URL.
 */
export interface QueueAddress {
  url: string;
  name: string;
  /** Connection options for BullMQ's clients (ioredis). */
  connection: RedisOptions;
  /** host:port, for messages. */
  where: string;
}

const NAME = /^[A-Za-z0-9_.-]+$/;

/** Parses a queue URL; `option` names the option in errors. */
export function parseQueueUrl(text: string, option = '--queue'): QueueAddress {
  const bad = (why: string): Error => new Error(`${option}: got '${text}', ${why}`);
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw bad('expected redis://HOST:PORT/NAME');
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw bad('expected redis://HOST:PORT/NAME (or rediss:// for TLS)');
  const name = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (!NAME.test(name)) throw bad('expected a queue name after the port (redis://HOST:PORT/NAME; letters, digits, _ . -)');
  if (u.search || u.hash) throw bad('expected nothing after the queue name');
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1') || 'localhost';
  const port = u.port ? Number(u.port) : 6379;
  const connection: RedisOptions = {
    host, port,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    // BullMQ's workers and event listeners block on Redis: their commands wait for a reconnect instead of failing.
    maxRetriesPerRequest: null,
    // A Redis that stays away ends the command (about 15 s), rather than waiting forever.
    retryStrategy: (times: number) => (times > 30 ? null : 500),
  };
  // The URL without a password, for messages.
  const shown = u.password ? text.replace(`:${u.password}@`, ':***@') : text;
  return { url: shown, name, connection, where: `${host}:${port}` };
}

/**
 * Checks that Redis answers at the address before anything is queued or
 * written: one PING on a client that does not retry. The error is one line
 * naming the URL.
 */
export async function checkRedis(a: QueueAddress, option = '--queue'): Promise<void> {
  const client = new IORedis({ ...a.connection, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 5000, enableOfflineQueue: false });
  // ioredis reports the cause (ECONNREFUSED, ENOTFOUND) as an event and rejects with "Connection is closed".
  let cause: Error | undefined;
  client.on('error', (e: Error) => { cause ??= e; });
  try {
    await client.connect();
    await client.ping();
  } catch (e) {
    const msg = cause?.message ?? (e instanceof Error ? e.message : String(e));
    throw new Error(`${option} ${a.url}: cannot reach Redis at ${a.where} (${msg})`);
  } finally {
    client.disconnect();
  }
}

/** The message of a Redis failure after the start, naming the URL. */
export function redisLost(a: QueueAddress, e: unknown, option = '--queue'): Error {
  const msg = e instanceof Error ? e.message : String(e);
  return new Error(`${option} ${a.url}: lost Redis at ${a.where} (${msg})`);
}
