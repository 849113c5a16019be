import type { FastifyBaseLogger } from 'fastify';
import { createLogThrottle } from '../lib/log-throttle.js';
import type { RateLimitDecision, RateLimiter } from './rate-limiter.js';

export interface FallbackRateLimiter extends RateLimiter {
  /** True while the shared limiter is not being used (its last call failed or it is disconnected). */
  degraded(): boolean;
}

export interface FallbackRateLimiterOptions {
  shared: RateLimiter;
  local: RateLimiter;
  /** Whether the shared limiter can be called right now (the Redis connection is ready). */
  sharedAvailable(): boolean;
  logger: FastifyBaseLogger;
}

/**
 * Uses the shared (Redis) limiter while it answers and the in-process one while it does not, so a Redis
 * outage degrades limits to per-instance instead of failing or holding requests. Each outage is logged at
 * error level (throttled: once per 10 s), and recovery is logged once. No probing is needed: every request
 * tries Redis again as soon as the connection is back.
 */
export function createFallbackRateLimiter({ shared, local, sharedAvailable, logger }: FallbackRateLimiterOptions): FallbackRateLimiter {
  const throttle = createLogThrottle(10_000);
  let degraded = false;

  function fallBack(reason: string): void {
    degraded = true;
    const suppressed = throttle.shouldLog('fallback');
    if (suppressed !== null) {
      logger.error({ reason, suppressed }, 'shared rate limiter (redis) unavailable: enforcing per-instance limits until it returns');
    }
  }

  async function decide(bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    if (sharedAvailable()) {
      try {
        const decision = await shared.hit(bucket, limit, windowMs);
        if (degraded) {
          degraded = false;
          throttle.reset('fallback');
          logger.warn('shared rate limiter (redis) answering again: limits are shared across instances');
        }
        return decision;
      } catch (err) {
        fallBack((err as Error).message);
      }
    } else {
      fallBack('redis is not connected');
    }
    return local.hit(bucket, limit, windowMs);
  }

  return {
    hit: (bucket, limit, windowMs) => decide(bucket, limit, windowMs),
    async undo(bucket) {
      // Whichever limiter took the hit most likely is the one that answers now.
      if (sharedAvailable()) {
        try {
          return await shared.undo(bucket);
        } catch (err) {
          fallBack((err as Error).message);
        }
      }
      await local.undo(bucket);
    },
    degraded: () => degraded || !sharedAvailable(),
    async close() {
      await Promise.all([shared.close(), local.close()]);
    },
  };
}
