import { pino } from 'pino';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFallbackRateLimiter } from '../../src/rate-limit/fallback-rate-limiter.js';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory-rate-limiter.js';
import { createRedisRateLimiter } from '../../src/rate-limit/redis-rate-limiter.js';
import type { RateLimiter } from '../../src/rate-limit/rate-limiter.js';
import { systemClock } from '../../src/lib/time.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { deleteRedisPrefix, freePort, TEST_REDIS_URL, testRedis, uniqueRedisPrefix } from '../helpers/redis.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Milliseconds on Redis's clock, the one the script uses. */
async function redisNow(redis: Redis): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

describe('redis rate limiter (script)', () => {
  const prefix = uniqueRedisPrefix();
  let a: Redis;
  let b: Redis;
  let limiterA: RateLimiter;
  let limiterB: RateLimiter;

  beforeAll(() => {
    a = testRedis();
    b = testRedis();
    limiterA = createRedisRateLimiter(a, { prefix });
    limiterB = createRedisRateLimiter(b, { prefix });
  });
  afterAll(async () => {
    await deleteRedisPrefix(prefix);
    a?.disconnect();
    b?.disconnect();
  });

  it('undo takes back one hit, seen by every instance', async () => {
    expect((await limiterA.hit('undo', 2, 60_000)).allowed).toBe(true);
    expect((await limiterB.hit('undo', 2, 60_000)).allowed).toBe(true);
    expect((await limiterA.hit('undo', 2, 60_000)).allowed).toBe(false);
    await limiterB.undo('undo');
    expect(await limiterA.hit('undo', 2, 60_000)).toMatchObject({ allowed: true, remaining: 0 });
    await limiterA.undo('never-seen');
  });

  it('allows exactly the limit, counts down, and never counts refused requests', async () => {
    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push(await limiterA.hit('exact', 3, 60_000));
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
    ]);
    expect(decisions.every((d) => d.limit === 3)).toBe(true);
    // Only the three accepted requests are in the log.
    expect(await a.zcard(`${prefix}rl:exact`)).toBe(3);
    // The key expires with the window, so idle buckets cost nothing.
    const ttl = await a.pttl(`${prefix}rl:exact`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('Retry-After is the whole seconds until the oldest accepted request leaves the window', async () => {
    expect((await limiterA.hit('retry', 1, 5_000)).allowed).toBe(true);
    const refused = await limiterA.hit('retry', 1, 5_000);
    expect(refused.allowed).toBe(false);
    // The slot frees 5 s after the accepted request, a few ms ago: ceil(~4.99 s) = 5.
    expect(refused.retryAfterSeconds).toBe(5);
  });

  it('rolls: a slot frees exactly when its request is one window old, not at a window boundary', async () => {
    const windowMs = 1_000;
    const key = `${prefix}rl:rolling`;
    expect((await limiterA.hit('rolling', 3, windowMs)).allowed).toBe(true);
    const [, firstScore] = await a.zrange(key, 0, 0, 'WITHSCORES');
    const first = Number(firstScore);
    // Let half a window pass, then use the two other slots.
    await sleep(500);
    expect((await limiterA.hit('rolling', 3, windowMs)).allowed).toBe(true);
    expect((await limiterA.hit('rolling', 3, windowMs)).allowed).toBe(true);
    expect((await limiterA.hit('rolling', 3, windowMs)).allowed).toBe(false);

    // Wait (on Redis's clock) until the first request has left the window.
    while ((await redisNow(a)) <= first + windowMs) await sleep(10);
    const freed = await limiterA.hit('rolling', 3, windowMs);
    expect(freed).toMatchObject({ allowed: true, remaining: 0 });
    // Only that one slot freed: the two later requests are still inside their window.
    const stillFull = await limiterA.hit('rolling', 3, windowMs);
    expect(stillFull.allowed).toBe(false);
    expect(stillFull.retryAfterSeconds).toBe(1);
    expect(await a.zcard(key)).toBe(3);
  });

  it('two limiter instances on separate connections share one limit per bucket', async () => {
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await limiterA.hit('shared', 5, 60_000));
    for (let i = 0; i < 2; i++) results.push(await limiterB.hit('shared', 5, 60_000));
    expect(results.map((r) => r.remaining)).toEqual([4, 3, 2, 1, 0]);
    expect((await limiterA.hit('shared', 5, 60_000)).allowed).toBe(false);
    expect((await limiterB.hit('shared', 5, 60_000)).allowed).toBe(false);
    // Other buckets are untouched.
    expect((await limiterB.hit('shared-other', 5, 60_000)).remaining).toBe(4);
  });

  it('concurrent hits from both instances never admit more than the limit', async () => {
    const hits = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? limiterA : limiterB).hit('race', 17, 60_000)));
    expect(hits.filter((h) => h.allowed)).toHaveLength(17);
    expect(await a.zcard(`${prefix}rl:race`)).toBe(17);
  });
});

describe('fallback rate limiter', () => {
  it('uses the in-process limiter while Redis is unreachable, and logs it at error level', async () => {
    const port = await freePort();
    const dead = new Redis(`redis://127.0.0.1:${port}`, { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: () => 1000 });
    dead.on('error', () => {});
    const lines: { level: number; msg: string }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const limiter = createFallbackRateLimiter({
      shared: createRedisRateLimiter(dead, { prefix: uniqueRedisPrefix() }),
      local: createMemoryRateLimiter(systemClock),
      sharedAvailable: () => dead.status === 'ready',
      logger,
    });
    try {
      const decisions = [];
      for (let i = 0; i < 4; i++) decisions.push(await limiter.hit('k', 3, 60_000));
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
      expect(limiter.degraded()).toBe(true);
      const errors = lines.filter((l) => l.level === 50);
      // Loud, but once per interval rather than once per request.
      expect(errors).toHaveLength(1);
      expect(errors[0]!.msg).toMatch(/per-instance limits/);
    } finally {
      await limiter.close();
      dead.disconnect();
    }
  });

  it('falls back when a Redis call fails on a live connection, and returns to Redis when it answers', async () => {
    const redis = testRedis();
    let failNext = false;
    const shared = createRedisRateLimiter(redis, { prefix: uniqueRedisPrefix() });
    const flaky: RateLimiter = {
      hit: (bucket, limit, windowMs) => (failNext ? Promise.reject(new Error('Command timed out')) : shared.hit(bucket, limit, windowMs)),
      undo: (bucket) => (failNext ? Promise.reject(new Error('Command timed out')) : shared.undo(bucket)),
      close: async () => {},
    };
    const limiter = createFallbackRateLimiter({
      shared: flaky,
      local: createMemoryRateLimiter(systemClock),
      sharedAvailable: () => true,
      logger: pino({ level: 'silent' }),
    });
    try {
      expect((await limiter.hit('k', 10, 60_000)).remaining).toBe(9);
      failNext = true;
      // The in-process log starts empty: per-instance counting.
      expect((await limiter.hit('k', 10, 60_000)).remaining).toBe(9);
      expect(limiter.degraded()).toBe(true);
      failNext = false;
      expect((await limiter.hit('k', 10, 60_000)).remaining).toBe(8);
      expect(limiter.degraded()).toBe(false);
      // undo falls back the same way: while Redis fails it takes back the in-process hit.
      failNext = true;
      await limiter.undo('k');
      expect((await limiter.hit('k', 10, 60_000)).remaining).toBe(9);
      failNext = false;
      // Redis holds two hits; undo takes one back there.
      await limiter.undo('k');
      expect((await limiter.hit('k', 10, 60_000)).remaining).toBe(8);
    } finally {
      await limiter.close();
      redis.disconnect();
    }
  });
});

describe.each(testDialects())('rate limit over HTTP with REDIS_URL (%s)', (dialect) => {
  const prefix = uniqueRedisPrefix();
  let env: TestEnv;
  let second: TestEnv;
  let org: TestOrg;

  beforeAll(async () => {
    env = await createTestEnv(dialect, { env: { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_PER_MINUTE: '4' } });
    // A second instance on the same database and Redis.
    const sameDb: Record<string, string> = env.config.databaseUrl ? { DATABASE_URL: env.config.databaseUrl } : { DATA_DIR: env.dataDir };
    second = await createTestEnv(dialect, { env: { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_PER_MINUTE: '4', ...sameDb } });
    org = await env.createOrg();
  });
  afterAll(async () => {
    await second?.close();
    await env?.close();
    await deleteRedisPrefix(prefix);
  });

  it('one limit per key across two instances, with Retry-After on the 429', async () => {
    const statuses = [];
    const remaining = [];
    for (const target of [env, second, env, second, env, second]) {
      const res = await target.request('GET', '/v1/projects', { key: org.ownerKey });
      statuses.push(res.status);
      remaining.push(res.headers['x-ratelimit-remaining']);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    expect(remaining).toEqual(['3', '2', '1', '0', '0', '0']);
    const refused = await second.request('GET', '/v1/projects', { key: org.ownerKey });
    expect(refused.body.error.code).toBe('rate_limited');
    expect(refused.headers['x-ratelimit-limit']).toBe('4');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
  });

  it('readyz reports Redis ok', async () => {
    const res = await env.request('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', checks: { database: 'ok', schema: 'ok', redis: 'ok' } });
  });
});

describe.each(testDialects())('rate limit with REDIS_URL pointing at nothing (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;

  beforeAll(async () => {
    const port = await freePort();
    env = await createTestEnv(dialect, { env: { REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT_PER_MINUTE: '3' } });
    org = await env.createOrg();
  });
  afterAll(async () => env?.close());

  it('keeps serving with per-instance limits', async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await env.request('GET', '/v1/projects', { key: org.ownerKey })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const created = await env.request('POST', '/v1/projects', { key: (await org.member('admin')).key, body: { name: 'Still here' } });
    expect(created.status).toBe(201);
  });

  it('a revoked key is refused at once: without Redis the cache is bypassed', async () => {
    const member = await org.member('member', 'read');
    expect((await env.request('GET', '/v1/projects', { key: member.key })).status).toBe(200);
    await env.container.services.admin.revokeKey(member.keyId);
    const after = await env.request('GET', '/v1/projects', { key: member.key });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('unauthorized');
  });

  it('readyz stays 200 and reports the degradation', async () => {
    const res = await env.request('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'degraded', checks: { database: 'ok', schema: 'ok', redis: 'degraded' } });
  });
});
