import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, textOf } from '../helpers/dashboard.js';
import { deleteRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix } from '../helpers/redis.js';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';

/**
 * Sign-in throttling goes through the shared rate limiter: with REDIS_URL, failures counted by one
 * instance refuse the next attempt on another. Two apps, each on its own database, share one Redis prefix
 * (the buckets are keyed by e-mail and address, not by anything in the database).
 */
describe('sign-in throttling across instances (redis)', () => {
  const prefix = uniqueRedisPrefix();
  let first: TestEnv;
  let second: TestEnv;

  beforeAll(async () => {
    const env = { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix };
    first = await createTestEnv('sqlite', { env });
    second = await createTestEnv('sqlite', { env });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await deleteRedisPrefix(prefix);
  });

  async function attempt(env: TestEnv, email: string): Promise<{ status: number; text: string }> {
    const browser = new DashboardClient(env);
    await browser.get('/dashboard/login');
    const res = await browser.post('/dashboard/login', { email, password: 'not the password' });
    return { status: res.status, text: textOf(res.text) };
  }

  it('refuses on one instance after five failures for the e-mail on the other', async () => {
    const email = 'shared-throttle@example.com';
    for (let i = 0; i < 5; i++) expect((await attempt(first, email)).status).toBe(401);
    const refused = await attempt(second, email);
    expect(refused.status).toBe(429);
    expect(refused.text).toMatch(/Too many attempts; try again in \d+ minutes?/);
    // Another e-mail from the same address is still allowed (five of the address's ten are used).
    expect((await attempt(second, 'someone-else@example.com')).status).toBe(401);
  });
});
