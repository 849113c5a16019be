import { ACTIVE_WORKSPACE } from '../src/services/workspace.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCachedAuthService } from '../src/services/cached-auth-service.js';
import type { Principal } from '../src/services/permissions.js';
import type { AuthInvalidation, AuthInvalidationSource } from '../src/services/redis-auth-events.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from './helpers/test-env.js';
import { deleteRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix } from './helpers/redis.js';

/**
 * Two instances (two containers and apps) on one database and one Redis: each caches principals, and a
 * revocation or role change made through either one must be refused by both on the very next request.
 */
describe.each(testDialects())('auth cache invalidation across instances (%s)', (dialect) => {
  const prefix = uniqueRedisPrefix();
  let a: TestEnv;
  let b: TestEnv;
  let third: TestEnv;
  let org: TestOrg;

  beforeAll(async () => {
    const redisEnv = { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix };
    a = await createTestEnv(dialect, { env: redisEnv });
    const sameDb: Record<string, string> = a.config.databaseUrl ? { DATABASE_URL: a.config.databaseUrl } : { DATA_DIR: a.dataDir };
    b = await createTestEnv(dialect, { env: { ...redisEnv, ...sameDb } });
    // A third process-like container, as the CLI would be: it only publishes.
    third = await createTestEnv(dialect, { env: { ...redisEnv, ...sameDb } });
    org = await a.createOrg();
    // Both instances must be subscribed before the tests rely on invalidations.
    for (const env of [a, b, third]) {
      for (let i = 0; i < 100 && (await env.request('GET', '/readyz')).body.checks.redis !== 'ok'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  });
  afterAll(async () => {
    await third?.close();
    await b?.close();
    await a?.close();
    await deleteRedisPrefix(prefix);
  });

  async function warm(key: string): Promise<void> {
    for (const env of [a, b]) {
      // Twice, so the second is served from the cache.
      expect((await env.request('GET', '/v1/projects', { key })).status).toBe(200);
      expect((await env.request('GET', '/v1/projects', { key })).status).toBe(200);
    }
  }

  it('principals are cached: a change made behind the cache is not seen until it is announced', async () => {
    const member = await org.member('member', 'read');
    await warm(member.key);
    // Revoke in the database without announcing it: the cached principal still answers...
    await b.container.store.repos.apiKeys.revoke(org.id, member.keyId, Date.now());
    expect((await b.request('GET', '/v1/projects', { key: member.key })).status).toBe(200);
    // ...until the invalidation is published; then both instances refuse it.
    await a.container.authEvents.keyRevoked(member.keyId);
    for (const env of [b, a]) {
      const res = await env.request('GET', '/v1/projects', { key: member.key });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    }
  });

  it('a key revoked on one instance is refused by the other on the very next request', async () => {
    const member = await org.member('admin');
    await warm(member.key);
    await a.container.services.admin.revokeKey(member.keyId);
    for (const env of [b, a]) {
      const res = await env.request('POST', '/v1/projects', { key: member.key, body: { name: 'after revoke' } });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    }
    const list = await a.request('GET', '/v1/projects?limit=100', { key: org.ownerKey });
    expect(list.body.data.map((p: { name: string }) => p.name)).not.toContain('after revoke');
  });

  it('a key revoked by another process (the CLI) is refused by both instances at once', async () => {
    const member = await org.member('viewer', 'read');
    await warm(member.key);
    await third.container.services.admin.revokeKey(member.keyId);
    expect((await a.request('GET', '/v1/projects', { key: member.key })).status).toBe(401);
    expect((await b.request('GET', '/v1/projects', { key: member.key })).status).toBe(401);
  });

  it("a role change on one instance applies to the user's keys on the other at once", async () => {
    const member = await org.member('admin');
    await warm(member.key);
    expect((await b.request('POST', '/v1/projects', { key: member.key, body: { name: 'as admin' } })).status).toBe(201);
    const demoted = await a.request('PUT', `/v1/users/${member.userId}`, { key: org.ownerKey, body: { role: 'viewer' } });
    expect(demoted.status).toBe(200);
    expect(demoted.body.role).toBe('viewer');
    for (const env of [b, a]) {
      const res = await env.request('POST', '/v1/projects', { key: member.key, body: { name: 'as viewer' } });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
    const list = await b.request('GET', '/v1/projects?limit=100', { key: org.ownerKey });
    const names = list.body.data.map((p: { name: string }) => p.name);
    expect(names).toContain('as admin');
    expect(names).not.toContain('as viewer');

    // And back: promotion is seen at once too.
    expect((await b.request('PUT', `/v1/users/${member.userId}`, { key: org.ownerKey, body: { role: 'member' } })).status).toBe(200);
    expect((await a.request('POST', '/v1/projects', { key: member.key, body: { name: 'as member' } })).status).toBe(201);
  });

});

describe('cached auth service (unit)', () => {
  const principal = (keyId: string, userId: string): Principal => ({ keyId, userId, orgId: 'org_1', email: 'a@example.com', role: 'admin', scope: { kind: 'full' }, workspace: ACTIVE_WORKSPACE });

  function fakeSource() {
    let listener: (i: AuthInvalidation) => void = () => {};
    const source: AuthInvalidationSource & { up: boolean; send(i: AuthInvalidation): void } = {
      up: true,
      listening: () => source.up,
      subscribe: (l) => {
        listener = l;
        return () => {};
      },
      send: (i) => listener(i),
    };
    return source;
  }

  function countingInner(lookup: (token: string) => Principal | null, gate?: () => Promise<void>) {
    const calls: string[] = [];
    return {
      calls,
      async authenticate(token: string) {
        calls.push(token);
        if (gate) await gate();
        return lookup(token);
      },
    };
  }

  it('serves repeats from the cache, but never caches unknown keys', async () => {
    const inner = countingInner((t) => (t === 'good' ? principal('key_1', 'user_1') : null));
    const cached = createCachedAuthService(inner, fakeSource());
    expect((await cached.authenticate('good'))?.keyId).toBe('key_1');
    expect((await cached.authenticate('good'))?.keyId).toBe('key_1');
    expect(await cached.authenticate('bad')).toBeNull();
    expect(await cached.authenticate('bad')).toBeNull();
    expect(inner.calls).toEqual(['good', 'bad', 'bad']);
    expect(cached.size()).toBe(1);
  });

  it('drops entries by key and by user, and everything on reset', async () => {
    const source = fakeSource();
    const inner = countingInner((t) => principal(`key_${t}`, t === 'c' ? 'user_2' : 'user_1'));
    const cached = createCachedAuthService(inner, source);
    for (const t of ['a', 'b', 'c']) await cached.authenticate(t);
    source.send({ kind: 'key', keyId: 'key_a' });
    expect(cached.size()).toBe(2);
    source.send({ kind: 'user', userId: 'user_1' });
    expect(cached.size()).toBe(1);
    source.send({ kind: 'reset' });
    expect(cached.size()).toBe(0);
  });

  it('reads the database every time while the invalidation channel is down', async () => {
    const source = fakeSource();
    const inner = countingInner(() => principal('key_1', 'user_1'));
    const cached = createCachedAuthService(inner, source);
    source.up = false;
    await cached.authenticate('t');
    await cached.authenticate('t');
    expect(inner.calls).toHaveLength(2);
    expect(cached.size()).toBe(0);
  });

  it('does not cache a lookup that raced an invalidation', async () => {
    const source = fakeSource();
    let release!: () => void;
    const gate = () => new Promise<void>((resolve) => (release = resolve));
    const inner = countingInner(() => principal('key_1', 'user_1'), gate);
    const cached = createCachedAuthService(inner, source);
    const pending = cached.authenticate('t');
    await Promise.resolve();
    source.send({ kind: 'key', keyId: 'key_1' });
    release();
    await pending;
    expect(cached.size()).toBe(0);
  });

  it('expires entries after the TTL and stays within its size bound', async () => {
    let now = 0;
    const inner = countingInner((t) => principal(`key_${t}`, 'user_1'));
    const cached = createCachedAuthService(inner, fakeSource(), { ttlMs: 1000, maxEntries: 2, now: () => now });
    await cached.authenticate('a');
    now = 1001;
    await cached.authenticate('a');
    expect(inner.calls).toEqual(['a', 'a']);
    await cached.authenticate('b');
    await cached.authenticate('c');
    expect(cached.size()).toBe(2);
  });
});
