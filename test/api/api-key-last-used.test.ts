import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/** DASHBOARD 4: "last used" is written at most once a minute per key, after the request, never failing it. */
describe.each(testDialects())('API key last used (%s)', (dialect) => {
  const clock = new ManualClock();
  let env: TestEnv;
  let org: TestOrg;
  let member: { key: string; keyId: string };

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
    org = await env.createOrg();
    member = await org.member('member');
  });
  afterAll(async () => env?.close());

  async function lastUsed(keyId: string): Promise<number | null> {
    await env.container.services.apiKeys.flush();
    const row = await env.container.database.db.selectFrom('api_keys').select('last_used_at').where('id', '=', keyId).executeTakeFirstOrThrow();
    return row.last_used_at === null ? null : Number(row.last_used_at);
  }

  const use = async (key: string) => expect((await env.request('GET', '/v1/projects', { key })).status).toBe(200);

  it('is empty until the key is used, then written once a minute at most', async () => {
    expect(await lastUsed(member.keyId)).toBeNull();
    const first = clock.now();
    await use(member.key);
    expect(await lastUsed(member.keyId)).toBe(first);

    clock.advance(59_000);
    await use(member.key);
    await use(member.key);
    expect(await lastUsed(member.keyId)).toBe(first);

    clock.advance(1_000);
    await use(member.key);
    expect(await lastUsed(member.keyId)).toBe(first + 60_000);
  });

  it('is written off the request path: a write that hangs holds no response, and there is one write a minute', async () => {
    const m = await org.member('member');
    const repo = env.container.store.repos.apiKeys;
    const original = repo.touch;
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const writes: number[] = [];
    repo.touch = async (orgId, keyId, at) => {
      writes.push(at);
      await stuck;
      return original.call(repo, orgId, keyId, at);
    };
    try {
      // Each of these would hang if the request waited for the write.
      for (let i = 0; i < 5; i++) await use(m.key);
      await new Promise((resolve) => setImmediate(resolve));
      expect(writes).toEqual([clock.now()]);
    } finally {
      release();
      repo.touch = original;
    }
    expect(await lastUsed(m.keyId)).toBe(clock.now());
  });

  it('is not written for a refused request (unknown key) and is per key', async () => {
    const other = await org.member('viewer');
    expect((await env.request('GET', '/v1/projects', { key: `${other.key}x` })).status).toBe(401);
    expect(await lastUsed(other.keyId)).toBeNull();
    await use(other.key);
    expect(await lastUsed(other.keyId)).toBe(clock.now());
  });
});
