import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RateLimitDecision, RateLimiter } from './rate-limiter.js';

/**
 * One atomic script per request: a sorted set per bucket holds the accept times (scores, in ms from
 * Redis's own clock, so instances with skewed clocks still share one window). Entries at or before
 * now - window fall off; the request is added only when fewer than `limit` remain, so refused requests
 * never extend the wait. Retry-After is the time until the oldest entry leaves the window.
 */
const SCRIPT = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count < limit then
  redis.call('ZADD', key, now, ARGV[3])
  redis.call('PEXPIRE', key, window)
  return {1, limit - count - 1, 0}
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, 0, tonumber(oldest[2]) + window - now}
`;

type ScriptRedis = Redis & {
  workspaceRateLimit(key: string, limit: number, windowMs: number, member: string): Promise<[number, number, number]>;
};

function toDecision([allowed, remaining, retryAfterMs]: [number, number, number], limit: number): RateLimitDecision {
  if (allowed === 1) return { allowed: true, limit, remaining, retryAfterSeconds: 0 };
  return { allowed: false, limit, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) };
}

export interface RedisRateLimiterOptions {
  /** Prepended to every bucket key (`ws:` by default; tests use a unique one per run). */
  prefix: string;
}

export function createRedisRateLimiter(redis: Redis, { prefix }: RedisRateLimiterOptions): RateLimiter {
  // defineCommand sends EVALSHA and falls back to EVAL once if the server lost its script cache.
  if (!('workspaceRateLimit' in redis)) redis.defineCommand('workspaceRateLimit', { numberOfKeys: 1, lua: SCRIPT });
  const client = redis as ScriptRedis;
  // Members must be unique across instances even within one millisecond.
  const instance = randomBytes(6).toString('hex');
  let counter = 0;

  return {
    async hit(bucket, limit, windowMs): Promise<RateLimitDecision> {
      const member = `${instance}:${(counter = (counter + 1) % Number.MAX_SAFE_INTEGER)}`;
      return toDecision(await client.workspaceRateLimit(`${prefix}rl:${bucket}`, limit, windowMs, member), limit);
    },
    async undo(bucket) {
      await redis.zpopmax(`${prefix}rl:${bucket}`);
    },
    // The connection belongs to whoever created it.
    async close() {},
  };
}
