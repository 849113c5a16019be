import { ACTIVE_WORKSPACE } from '../../src/services/access/workspace.js';
import { cliActor } from '../../src/services/access/actor.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCachedAuthService } from '../../src/services/identity/cached-auth-service.js';
import type { Principal } from '../../src/services/access/permissions.js';
import type { AuthInvalidation, AuthInvalidationSource } from '../../src/db/auth-events.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { deleteRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix } from '../helpers/redis.js';
import { announceKeyChange, revokeBehindTheCache } from '../helpers/auth-cache.js';

/**
 * Two instances (two containers and apps) on one database and one Redis: each caches principals, and a
 * revocation or role change made through either one must be refused by both on the very next request.
 * On PostgreSQL the invalidations travel over Redis; on SQLite, Redis or not, over the change counter in
 * the shared file (test/api/auth-cache-modes.test.ts covers each mode on its own).
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
    await revokeBehindTheCache(b.container, org.id, member.keyId);
    expect((await b.request('GET', '/v1/projects', { key: member.key })).status).toBe(200);
    expect((await a.request('GET', '/v1/projects', { key: member.key })).status).toBe(200);
    // ...until the change is announced (Redis on PostgreSQL; the change counter on SQLite); then both refuse it.
    await announceKeyChange(a.container, member.keyId);
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

  it('a removal and a cancellation on one instance apply on the other at once', async () => {
    const removed = await org.member('member');
    const writer = await org.member('member');
    await warm(removed.key);
    await warm(writer.key);
    expect((await a.request('DELETE', `/v1/users/${removed.userId}`, { key: org.ownerKey })).status).toBe(204);
    for (const env of [b, a]) expect((await env.request('GET', '/v1/projects', { key: removed.key })).status).toBe(401);

    await third.container.services.lifecycle.cancel(cliActor(org.id));
    try {
      for (const env of [a, b]) {
        const res = await env.request('POST', '/v1/projects', { key: writer.key, body: { name: 'while read-only' } });
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('workspace_read_only');
      }
    } finally {
      await third.container.services.lifecycle.resume(cliActor(org.id));
    }
    for (const env of [b, a]) expect((await env.request('POST', '/v1/projects', { key: writer.key, body: { name: 'resumed' } })).status).toBe(201);
  });

});

describe('cached auth service (unit)', () => {
  const principal = (keyId: string, userId: string): Principal => ({ keyId, userId, orgId: 'org_1', email: 'a@example.com', role: 'admin', scope: { kind: 'full' }, workspace: ACTIVE_WORKSPACE, expiresAt: null, app: null });

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

  /** The database lookup, by hash as the cache calls it; `calls` lists the tokens looked up. */
  function countingInner(lookup: (token: string) => Principal | null, gate?: () => Promise<void>) {
    const calls: string[] = [];
    const tokens = new Map<string, string>();
    const inner = {
      calls,
      async authenticate(token: string) {
        return inner.authenticateHash(sha256Hex(token));
      },
      async authenticateHash(hash: string) {
        const token = tokens.get(hash) ?? `unknown:${hash}`;
        calls.push(token);
        if (gate) await gate();
        return lookup(token);
      },
      /** Tokens must be known by hash to be reported by name. */
      know(...names: string[]) {
        for (const name of names) tokens.set(sha256Hex(name), name);
        return inner;
      },
    };
    return inner;
  }

  it('serves repeats from the cache, and unknown keys from the negative cache', async () => {
    const inner = countingInner((t) => (t === 'good' ? principal('key_1', 'user_1') : null)).know('good', 'bad');
    const cached = createCachedAuthService(inner, fakeSource());
    expect((await cached.authenticate('good'))?.keyId).toBe('key_1');
    expect((await cached.authenticate('good'))?.keyId).toBe('key_1');
    expect(await cached.authenticate('bad')).toBeNull();
    expect(await cached.authenticate('bad')).toBeNull();
    expect(inner.calls).toEqual(['good', 'bad']);
    expect(cached.size()).toBe(1);
    expect(cached.negativeSize()).toBe(1);
  });

  it('keeps a refused key only briefly, and never more of them than its bound', async () => {
    let now = 0;
    const inner = countingInner(() => null).know('bad');
    const cached = createCachedAuthService(inner, fakeSource(), { negativeTtlMs: 5000, maxNegativeEntries: 100, now: () => now });
    await cached.authenticate('bad');
    now = 4999;
    await cached.authenticate('bad');
    expect(inner.calls).toEqual(['bad']);
    now = 5001;
    expect(await cached.authenticate('bad')).toBeNull();
    expect(inner.calls).toEqual(['bad', 'bad']);
    // Guessing: thousands of different tokens, the map stays at its bound.
    for (let i = 0; i < 5000; i++) expect(await cached.authenticate(`guess-${i}`)).toBeNull();
    expect(cached.negativeSize()).toBe(100);
    expect(cached.size()).toBe(0);
  });

  it('forgets every refused key on any invalidation, so a key made valid again works at once', async () => {
    const source = fakeSource();
    let valid = false;
    const inner = countingInner(() => (valid ? principal('key_1', 'user_1') : null)).know('t');
    const cached = createCachedAuthService(inner, source);
    expect(await cached.authenticate('t')).toBeNull();
    valid = true;
    source.send({ kind: 'user', userId: 'user_1' });
    expect(cached.negativeSize()).toBe(0);
    expect((await cached.authenticate('t'))?.keyId).toBe('key_1');
  });

  it('drops entries by key, by user and by organisation, and everything on reset', async () => {
    const source = fakeSource();
    const inner = countingInner((t) => ({ ...principal(`key_${t}`, t === 'c' ? 'user_2' : t === 'd' ? 'user_3' : 'user_1'), orgId: t === 'd' ? 'org_2' : 'org_1' })).know('a', 'b', 'c', 'd');
    const cached = createCachedAuthService(inner, source);
    for (const t of ['a', 'b', 'c', 'd']) await cached.authenticate(t);
    expect(cached.size()).toBe(4);
    source.send({ kind: 'key', keyId: 'key_a' });
    expect(cached.size()).toBe(3);
    source.send({ kind: 'user', userId: 'user_1' });
    expect(cached.size()).toBe(2);
    source.send({ kind: 'org', orgId: 'org_2' });
    expect(cached.size()).toBe(1);
    source.send({ kind: 'reset' });
    expect(cached.size()).toBe(0);
  });

  it('reads the database every time while the invalidation channel is down, and caches nothing then', async () => {
    const source = fakeSource();
    const inner = countingInner((t) => (t === 't' ? principal('key_1', 'user_1') : null)).know('t', 'bad');
    const cached = createCachedAuthService(inner, source);
    source.up = false;
    await cached.authenticate('t');
    await cached.authenticate('t');
    await cached.authenticate('bad');
    await cached.authenticate('bad');
    expect(inner.calls).toEqual(['t', 't', 'bad', 'bad']);
    expect(cached.size()).toBe(0);
    expect(cached.negativeSize()).toBe(0);
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

  it('does not cache a lookup when the check after it delivers a change (a counter that moved meanwhile)', async () => {
    // A source like SQLite's: `listening()` itself finds the change and resets before answering.
    let listener: (i: AuthInvalidation) => void = () => {};
    let changed = false;
    const source: AuthInvalidationSource = {
      listening() {
        if (changed) {
          changed = false;
          listener({ kind: 'reset' });
        }
        return true;
      },
      subscribe: (l) => {
        listener = l;
        return () => {};
      },
    };
    const inner = countingInner(() => {
      changed = true; // committed by another process while this lookup ran
      return principal('key_1', 'user_1');
    });
    const cached = createCachedAuthService(inner, source);
    await cached.authenticate('t');
    expect(cached.size()).toBe(0);
  });

  it('expires entries after the TTL and stays within its size bound', async () => {
    let now = 0;
    const inner = countingInner((t) => principal(`key_${t}`, 'user_1')).know('a', 'b', 'c');
    const cached = createCachedAuthService(inner, fakeSource(), { ttlMs: 1000, maxEntries: 2, now: () => now });
    await cached.authenticate('a');
    now = 1001;
    await cached.authenticate('a');
    expect(inner.calls).toEqual(['a', 'a']);
    await cached.authenticate('b');
    await cached.authenticate('c');
    expect(cached.size()).toBe(2);
  });

  it('never looks up an over-long token', async () => {
    const inner = countingInner(() => principal('key_1', 'user_1'));
    const cached = createCachedAuthService(inner, fakeSource());
    expect(await cached.authenticate('x'.repeat(513))).toBeNull();
    expect(inner.calls).toEqual([]);
  });
});
