import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Clock } from '../lib/time.js';
import { createFallbackRateLimiter, type FallbackRateLimiter } from '../rate-limit/fallback-rate-limiter.js';
import { createMemoryRateLimiter } from '../rate-limit/memory-rate-limiter.js';
import { createRedisRateLimiter } from '../rate-limit/redis-rate-limiter.js';
import type { AuthService } from '../services/auth-service.js';
import { createCachedAuthService } from '../services/cached-auth-service.js';
import { createRedisAuthEvents, type RedisAuthEvents } from '../services/redis-auth-events.js';
import { closeRedisClient, createRedisClient } from './client.js';

/** How long an instance may reuse a principal while it hears every invalidation (docs/decisions.md). */
export const AUTH_CACHE_TTL_MS = 30_000;

export interface SharedState {
  rateLimiter: FallbackRateLimiter;
  authEvents: RedisAuthEvents;
  /** Wraps the database-backed auth service with the invalidated principal cache. */
  cachedAuth(inner: AuthService): AuthService;
  health(): Promise<'ok' | 'degraded'>;
  /** Resolves once Redis is connected and subscribed, or after `ms` (then the instance starts degraded). */
  waitReady(ms: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Everything REDIS_URL turns on: the shared rate limit (falling back to per-instance limits while Redis
 * is away) and principal caching with cross-instance invalidation (bypassed while Redis is away).
 */
export function createSharedState(config: Config & { redisUrl: string }, logger: FastifyBaseLogger, clock: Clock): SharedState {
  const prefix = config.redisKeyPrefix;
  const redis = createRedisClient(config.redisUrl, logger, 'commands');
  const subscriber = createRedisClient(config.redisUrl, logger, 'subscriber', { autoResubscribe: false });
  const authEvents = createRedisAuthEvents({ redis, subscriber, prefix, logger });
  const rateLimiter = createFallbackRateLimiter({
    shared: createRedisRateLimiter(redis, { prefix }),
    local: createMemoryRateLimiter(clock),
    sharedAvailable: () => redis.status === 'ready',
    logger,
  });

  return {
    rateLimiter,
    authEvents,
    cachedAuth: (inner) => createCachedAuthService(inner, authEvents, { ttlMs: AUTH_CACHE_TTL_MS }),
    async health() {
      // A connection that is up answers PING; the subscription must be up too or caching is off.
      if (redis.status !== 'ready' || !authEvents.listening()) return 'degraded';
      try {
        await redis.ping();
        return 'ok';
      } catch {
        return 'degraded';
      }
    },
    async waitReady(ms) {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline && !(redis.status === 'ready' && authEvents.listening())) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    async close() {
      await authEvents.close();
      await rateLimiter.close();
      await Promise.all([closeRedisClient(subscriber), closeRedisClient(redis)]);
    },
  };
}
