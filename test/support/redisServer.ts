import { spawn, spawnSync, type ChildProcess } from 'child_process';
import * as net from 'net';

/**
 * A real redis-server for the queue tests, on a free loopback port, with no
 * persistence. Where Debian's redis-server is not installed (.ci/run
 * installs it), `redisServerPath()` is undefined and the tests say so.
 */
export function redisServerPath(): string | undefined {
  const r = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const p = r.stdout.trim();
  return r.status === 0 && p ? p : undefined;
}

/** A port nothing listens on now (the OS's choice). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface RedisServer {
  port: number;
  stop(): Promise<void>;
}

export async function startRedis(bin: string): Promise<RedisServer> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const p: ChildProcess = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const ready = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 10000);
      p.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('Ready to accept connections')) { clearTimeout(timer); resolve(true); }
      });
      p.on('exit', () => { clearTimeout(timer); resolve(false); });
    });
    if (ready) {
      return {
        port,
        stop: () => new Promise<void>((resolve) => {
          if (p.exitCode !== null) return resolve();
          p.on('exit', () => resolve());
          p.kill('SIGTERM');
        }),
      };
    }
    p.kill('SIGKILL');
    if (attempt >= 2) throw new Error(`redis-server did not start: ${out.split('\n').slice(-3).join(' | ')}`);
  }
}
