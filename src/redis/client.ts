import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import { createLogThrottle } from '../lib/log-throttle.js';

/**
 * A Redis connection tuned so an outage never holds a request: commands fail at once while disconnected
 * (no offline queue), a connected-but-silent server times out quickly, and the client keeps reconnecting
 * in the background. Callers fall back (rate limits) or bypass (auth cache) while it is not `ready`.
 */
export function createRedisClient(url: string, logger: FastifyBaseLogger, role: string, extra: { autoResubscribe?: boolean } = {}): Redis {
  const throttle = createLogThrottle(10_000);
  const client = new Redis(url, {
    connectionName: `workspace-${role}`,
    enableOfflineQueue: false,
    connectTimeout: 1000,
    commandTimeout: 500,
    maxRetriesPerRequest: 1,
    autoResubscribe: extra.autoResubscribe ?? true,
    // Reconnect forever, backing off to one attempt every 2 s.
    retryStrategy: (times) => Math.min(times * 100, 2000),
  });
  let wasReady = false;
  client.on('ready', () => {
    if (wasReady) logger.warn({ redis: role }, 'redis connection restored');
    wasReady = true;
    throttle.reset('error');
  });
  // Without an 'error' listener ioredis prints every failed reconnect to stderr.
  client.on('error', (err: Error) => {
    const suppressed = throttle.shouldLog('error');
    if (suppressed !== null) logger.error({ redis: role, err: err.message, suppressed }, 'redis connection error');
  });
  return client;
}

/** Closes without waiting on a server that may be gone. */
export async function closeRedisClient(client: Redis): Promise<void> {
  if (client.status === 'ready') {
    await client.quit().catch(() => client.disconnect());
  } else {
    client.disconnect();
  }
}
