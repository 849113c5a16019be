import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryRateLimiter, SlidingLog } from '../../src/rate-limit/memory-rate-limiter.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type ApiResponse, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const LIMIT = 5;

function expectLimited(res: ApiResponse, retryAfter: number): void {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ error: { code: 'rate_limited', message: expect.any(String) } });
  expect(res.headers['retry-after']).toBe(String(retryAfter));
  expect(res.headers['x-ratelimit-limit']).toBe(String(LIMIT));
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
}

describe.each(testDialects())('rate limit (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  const clock = new ManualClock();

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock, env: { RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
    org = await env.createOrg();
  });
  afterAll(async () => env?.close());

  it('allows the limit per rolling minute, then 429 with Retry-After until the oldest request leaves', async () => {
    const { key } = await org.member('member');
    const start = clock.now();
    for (let i = 0; i < LIMIT; i++) {
      const res = await env.request('GET', '/v1/projects', { key });
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe(String(LIMIT));
      expect(res.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1 - i));
      clock.advance(1_000);
    }
    clock.set(start + 10_500);
    // The oldest request (at start) leaves the window at start + 60 s: 49.5 s away, rounded up.
    expectLimited(await env.request('GET', '/v1/projects', { key }), 50);
    expectLimited(await env.request('POST', '/v1/projects', { key, body: { name: 'refused' } }), 50);

    // Refused requests are not counted: once the oldest leaves, exactly one more is allowed.
    clock.set(start + 59_999);
    expectLimited(await env.request('GET', '/v1/projects', { key }), 1);
    clock.set(start + 60_000);
    const allowed = await env.request('GET', '/v1/projects', { key });
    expect(allowed.status).toBe(200);
    expect(allowed.headers['x-ratelimit-remaining']).toBe('0');
    // The next slot frees when the second request (start + 1 s) leaves.
    expectLimited(await env.request('GET', '/v1/projects', { key }), 1);
    clock.set(start + 61_000);
    expect((await env.request('GET', '/v1/projects', { key })).status).toBe(200);
    expectLimited(await env.request('GET', '/v1/projects', { key }), 1);

    // Nothing refused was created.
    const list = await env.request('GET', '/v1/projects', { key: org.ownerKey });
    expect(list.body.data.map((p: { name: string }) => p.name)).not.toContain('refused');
  });

  it('limits each key separately', async () => {
    const a = await org.member('member');
    const b = await org.member('member');
    for (let i = 0; i < LIMIT; i++) expect((await env.request('GET', '/v1/projects', { key: a.key })).status).toBe(200);
    expect((await env.request('GET', '/v1/projects', { key: a.key })).status).toBe(429);
    const other = await env.request('GET', '/v1/projects', { key: b.key });
    expect(other.status).toBe(200);
    expect(other.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
  });

  it('counts every answered request of a valid key, errors included', async () => {
    const viewer = await org.member('viewer');
    expect((await env.request('POST', '/v1/projects', { key: viewer.key, body: { name: 'x' } })).status).toBe(403);
    expect((await env.request('GET', '/v1/projects?limit=0', { key: viewer.key })).status).toBe(400);
    expect((await env.request('GET', '/v1/projects/proj_nope', { key: viewer.key })).status).toBe(404);
    const fourth = await env.request('GET', '/v1/projects', { key: viewer.key });
    expect(fourth.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 4));
    expect(fourth.status).toBe(200);
  });

  it('puts the rate-limit headers on authenticated error responses too', async () => {
    const viewer = await org.member('viewer');
    const forbidden = await env.request('POST', '/v1/projects', { key: viewer.key, body: { name: 'x' } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers['x-ratelimit-limit']).toBe(String(LIMIT));
    expect(forbidden.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
  });

  it('answers 429 before 403 and 400', async () => {
    const viewer = await org.member('viewer');
    for (let i = 0; i < LIMIT; i++) await env.request('GET', '/v1/projects', { key: viewer.key });
    const forbidden = await env.request('POST', '/v1/projects', { key: viewer.key, body: { name: 5 } });
    expect(forbidden.status).toBe(429);
    const invalid = await env.request('GET', '/v1/projects?limit=abc', { key: viewer.key });
    expect(invalid.status).toBe(429);
    // An unknown key is still 401 (check 401 comes first), not a 429 of somebody else's bucket.
    expect((await env.request('GET', '/v1/projects', { key: 'wsk_unknown' })).status).toBe(401);
  });
});

describe('memory rate limiter', () => {
  it('is exact at the window edge and reports remaining and Retry-After', async () => {
    const clock = new ManualClock(1_000_000);
    const limiter = createMemoryRateLimiter(clock);
    try {
      expect(await limiter.hit('a', 2, 10_000)).toEqual({ allowed: true, limit: 2, remaining: 1, retryAfterSeconds: 0 });
      clock.advance(2_500);
      expect(await limiter.hit('a', 2, 10_000)).toMatchObject({ allowed: true, remaining: 0 });
      expect(await limiter.hit('a', 2, 10_000)).toEqual({ allowed: false, limit: 2, remaining: 0, retryAfterSeconds: 8 });
      clock.advance(7_499);
      expect(await limiter.hit('a', 2, 10_000)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
      clock.advance(1);
      expect(await limiter.hit('a', 2, 10_000)).toMatchObject({ allowed: true, remaining: 0 });
      expect(await limiter.hit('b', 2, 10_000)).toMatchObject({ allowed: true, remaining: 1 });
    } finally {
      await limiter.close();
    }
  });

  it('undo takes back one recorded hit, and nothing from an empty or unknown bucket', async () => {
    const limiter = createMemoryRateLimiter(new ManualClock(1_000_000));
    try {
      await limiter.undo('never-seen');
      expect(await limiter.hit('u', 2, 10_000)).toMatchObject({ allowed: true, remaining: 1 });
      expect(await limiter.hit('u', 2, 10_000)).toMatchObject({ allowed: true, remaining: 0 });
      expect((await limiter.hit('u', 2, 10_000)).allowed).toBe(false);
      await limiter.undo('u');
      expect(await limiter.hit('u', 2, 10_000)).toMatchObject({ allowed: true, remaining: 0 });
      await limiter.undo('u');
      await limiter.undo('u');
      await limiter.undo('u');
      expect(await limiter.hit('u', 2, 10_000)).toMatchObject({ allowed: true, remaining: 1 });
    } finally {
      await limiter.close();
    }
  });

  it('grows past its initial capacity and stays exact while wrapping', async () => {
    const clock = new ManualClock(0);
    const limiter = createMemoryRateLimiter(clock);
    const limit = 300; // initial capacity is 64
    try {
      // 150 hits, one per ms; then let the first 100 leave and fill up to the limit, wrapping the ring.
      for (let i = 0; i < 150; i++) {
        expect(await limiter.hit('k', limit, 1_000)).toMatchObject({ allowed: true, remaining: limit - 1 - i });
        clock.advance(1);
      }
      clock.set(1_099); // hits at 0..99 have left; 100..149 remain (50)
      for (let i = 0; i < limit - 50; i++) {
        expect(await limiter.hit('k', limit, 1_000)).toMatchObject({ allowed: true, remaining: limit - 51 - i });
      }
      const refused = await limiter.hit('k', limit, 1_000);
      expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
      clock.set(1_100); // the hit at 100 leaves: exactly one slot
      expect(await limiter.hit('k', limit, 1_000)).toMatchObject({ allowed: true, remaining: 0 });
      expect(await limiter.hit('k', limit, 1_000)).toMatchObject({ allowed: false });
      clock.set(2_099); // 101..149 and the 250 hits at 1_099 leave; only the hit at 1_100 stays
      expect(await limiter.hit('k', limit, 1_000)).toMatchObject({ allowed: true, remaining: limit - 2 });
      clock.set(2_100); // the hit at 1_100 leaves; 2_099 and this one stay
      expect(await limiter.hit('k', limit, 1_000)).toMatchObject({ allowed: true, remaining: limit - 2 });
    } finally {
      await limiter.close();
    }
  });
});

describe('sliding log', () => {
  it('keeps times in order through growth and wrap-around', () => {
    const log = new SlidingLog(4);
    for (const t of [1, 2, 3]) log.push(t);
    log.prune(2); // drops 1 and 2
    expect(log.size).toBe(1);
    expect(log.oldest()).toBe(3);
    for (const t of [4, 5, 6]) log.push(t); // wraps around the end of the buffer
    expect([log.size, log.oldest(), log.newest()]).toEqual([4, 3, 6]);
    for (const t of [7, 8, 9, 10, 11]) log.push(t); // grows twice past the initial 4
    expect([log.size, log.oldest(), log.newest()]).toEqual([9, 3, 11]);
    const seen: number[] = [];
    while (log.size > 0) {
      seen.push(log.oldest());
      log.prune(log.oldest());
    }
    expect(seen).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('prunes only entries at or before the cutoff', () => {
    const log = new SlidingLog(2);
    for (const t of [10, 10, 20, 30]) log.push(t);
    log.prune(9);
    expect(log.size).toBe(4);
    log.prune(10);
    expect([log.size, log.oldest()]).toEqual([2, 20]);
    log.prune(100);
    expect(log.size).toBe(0);
    log.push(200);
    expect([log.size, log.oldest(), log.newest()]).toEqual([1, 200, 200]);
  });
});
