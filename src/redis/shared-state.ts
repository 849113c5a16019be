import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Clock } from '../lib/time.js';
import { createFallbackRateLimiter, type FallbackRateLimiter } from '../rate-limit/fallback-rate-limiter.js';
import { createMemoryRateLimiter } from '../rate-limit/memory-rate-limiter.js';
import { createRedisRateLimiter } from '../rate-limit/redis-rate-limiter.js';
import { createRedisAuthEvents, type RedisAuthEvents } from './redis-auth-events.js';
import { closeRedisClient, createRedisClient } from './client.js';

export interface SharedState {
  rateLimiter: FallbackRateLimiter;
  /** Null when the principal cache takes its invalidations elsewhere (SQLite's change counter). */
  authEvents: RedisAuthEvents | null;
  health(): Promise<'ok' | 'degraded'>;
  /** Resolves once Redis is connected and subscribed, or after `ms` (then the instance starts degraded). */
  waitReady(ms: number): Promise<void>;
  close(): Promise<void>;
}

export interface SharedStateOptions {
  /** Carry the principal cache's invalidations over Redis pub/sub (a subscriber connection); default true. */
  authInvalidation?: boolean;
}

/**
 * Everything REDIS_URL turns on: the shared rate limit (falling back to per-instance limits while Redis
 * is away) and, unless the database announces changes itself, the principal cache's cross-instance
 * invalidation (the cache is bypassed while Redis is away).
 */
export function createSharedState(config: Config & { redisUrl: string }, logger: FastifyBaseLogger, clock: Clock, options: SharedStateOptions = {}): SharedState {
  const prefix = config.redisKeyPrefix;
  const redis = createRedisClient(config.redisUrl, logger, 'commands');
  const subscriber = options.authInvalidation === false ? null : createRedisClient(config.redisUrl, logger, 'subscriber', { autoResubscribe: false });
  const authEvents = subscriber ? createRedisAuthEvents({ redis, subscriber, prefix, logger }) : null;
  const subscribed = () => authEvents === null || authEvents.listening();
  const rateLimiter = createFallbackRateLimiter({
    shared: createRedisRateLimiter(redis, { prefix }),
    local: createMemoryRateLimiter(clock),
    sharedAvailable: () => redis.status === 'ready',
    logger,
  });

  return {
    rateLimiter,
    authEvents,
    async health() {
      // A connection that is up answers PING; the subscription must be up too or caching is off.
      if (redis.status !== 'ready' || !subscribed()) return 'degraded';
      try {
        await redis.ping();
        return 'ok';
      } catch {
        return 'degraded';
      }
    },
    async waitReady(ms) {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline && !(redis.status === 'ready' && subscribed())) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    async close() {
      await authEvents?.close();
      await rateLimiter.close();
      await Promise.all([subscriber ? closeRedisClient(subscriber) : null, closeRedisClient(redis)]);
    },
  };
}
