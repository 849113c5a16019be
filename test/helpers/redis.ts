import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';

/** The machine's Redis (CI requires it); TEST_REDIS_URL points the suite elsewhere. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix no other run or suite uses, so tests can share one Redis. */
export function uniqueRedisPrefix(): string {
  return `wstest:${Date.now().toString(36)}:${randomBytes(4).toString('hex')}:`;
}

/** A plain client for assertions and cleanup. */
export function testRedis(url = TEST_REDIS_URL): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: false });
}

/** Deletes every key under a prefix (rate-limit keys also expire on their own within a window). */
export async function deleteRedisPrefix(prefix: string, url = TEST_REDIS_URL): Promise<void> {
  const redis = testRedis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** A throwaway redis-server on its own port (no persistence), for fault tests; never the machine's. */
export interface PrivateRedis {
  url: string;
  port: number;
  start(): Promise<void>;
  kill(): Promise<void>;
}

export async function privateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const url = `redis://127.0.0.1:${port}`;
  const self: PrivateRedis = {
    url,
    port,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      await waitFor(async () => {
        const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        probe.on('error', () => {});
        try {
          await probe.connect();
          return (await probe.ping()) === 'PONG';
        } catch {
          return false;
        } finally {
          probe.disconnect();
        }
      }, `redis-server on ${port}`);
    },
    async kill() {
      const running = child;
      child = null;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
  };
  return self;
}
