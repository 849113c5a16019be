import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { privateRedis, testRedis, uniqueRedisPrefix, waitFor, type PrivateRedis } from '../helpers/redis.js';

/** Redis killed and restarted under traffic, on a private redis-server (never the machine's). */
describe.each(testDialects())('Redis outage under traffic (%s)', (dialect) => {
  const prefix = uniqueRedisPrefix();
  let redis: PrivateRedis;
  let env: TestEnv;
  let org: TestOrg;

  beforeAll(async () => {
    redis = await privateRedis();
    await redis.start();
    env = await createTestEnv(dialect, { env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_PER_MINUTE: '5' } });
    org = await env.createOrg();
    await waitFor(async () => (await env.request('GET', '/readyz')).body.checks.redis === 'ok', 'redis ok');
  });
  afterAll(async () => {
    await env?.close();
    await redis?.kill();
  });

  // Statuses of the background traffic of the outage test.
  const traffic: number[] = [];
  const redisState = async () => (await env.request('GET', '/readyz')).body as { status: string; checks: { redis: string } };

  async function burst(key: string, n: number): Promise<{ statuses: number[]; remaining: unknown[] }> {
    const statuses = [];
    const remaining = [];
    for (let i = 0; i < n; i++) {
      const res = await env.request('GET', '/v1/projects', { key });
      statuses.push(res.status);
      remaining.push(res.headers['x-ratelimit-remaining']);
    }
    return { statuses, remaining };
  }

  it('keeps serving with per-instance limits while Redis is down, then returns to the shared limit', async () => {
    // Background traffic through the whole outage: only 200 and 429, never an error or a hang.
    traffic.length = 0;
    let stop = false;
    const trafficKey = (await org.member('viewer', 'read')).key;
    const loop = (async () => {
      while (!stop) {
        traffic.push((await env.request('GET', '/v1/projects', { key: trafficKey })).status);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();

    try {
      await outageScenario();
    } finally {
      stop = true;
      await loop;
    }
    expect(traffic.length).toBeGreaterThan(10);
    expect(traffic.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  }, 60_000);

  async function outageScenario(): Promise<void> {
    const warm = await org.member('member', 'read');
    const before = await burst(warm.key, 2);
    expect(before.statuses).toEqual([200, 200]);
    const probe = testRedis(redis.url);
    expect(await probe.zcard(`${prefix}rl:key:${warm.keyId}`)).toBe(2);
    probe.disconnect();

    await redis.kill();
    const atKill = traffic.length;
    await waitFor(async () => (await redisState()).checks.redis === 'degraded', 'readyz to report the outage');
    const degraded = await env.request('GET', '/readyz');
    expect(degraded.status).toBe(200);
    expect(degraded.body).toEqual({ status: 'degraded', checks: { database: 'ok', schema: 'ok', redis: 'degraded' } });

    // A fresh key: the in-process limiter enforces the limit on this instance.
    const during = await org.member('member', 'read');
    const down = await burst(during.key, 6);
    expect(down.statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(down.remaining).toEqual(['4', '3', '2', '1', '0', '0']);

    // Revocation while Redis is down: the cache is bypassed, so the key is refused at once.
    expect((await env.request('GET', '/v1/projects', { key: warm.key })).status).toBe(200);
    await env.container.services.admin.revokeKey(warm.keyId);
    expect((await env.request('GET', '/v1/projects', { key: warm.key })).status).toBe(401);

    // The background traffic has run through the outage, however fast the steps above were.
    await waitFor(async () => traffic.length >= atKill + 5, 'background traffic during the outage');
    await redis.start();
    await waitFor(async () => (await redisState()).status === 'ok', 'readyz to report recovery', 20_000);

    // Back on Redis: a new key's hits land in the shared sorted set again.
    const after = await org.member('member', 'read');
    expect((await burst(after.key, 3)).remaining).toEqual(['4', '3', '2']);
    const probe2 = testRedis(redis.url);
    expect(await probe2.zcard(`${prefix}rl:key:${after.keyId}`)).toBe(3);
    probe2.disconnect();
  }
});
