import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { cliActor } from '../../src/services/access/actor.js';

describe.each(testDialects())('pagination (%s)', (dialect) => {
  let env: TestEnv;
  // Fixed: every create below happens in the same millisecond, so only `seq` can order them.
  const clock = new ManualClock();

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
  });
  afterAll(async () => env?.close());

  async function createProjects(org: TestOrg, count: number, prefix: string, status?: 'active' | 'draft'): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const project = await env.container.services.projects.create(cliActor(org.id), { name: `${prefix} ${i}`, ...(status ? { status } : {}) });
      ids.push(project.id);
    }
    return ids;
  }

  /** Follows next_cursor to the end; checks every page's shape; returns the ids in the order seen. */
  async function walk(url: string, key: string, limit: number, between?: (page: number, seenSoFar: readonly string[]) => Promise<void>): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 1000; page++) {
      const sep = url.includes('?') ? '&' : '?';
      const res = await env.request('GET', `${url}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'next_cursor']);
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      ids.push(...res.body.data.map((item: { id: string }) => item.id));
      cursor = res.body.next_cursor;
      if (cursor === null) return ids;
      expect(res.body.data.length).toBe(limit);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      await between?.(page, ids);
    }
    throw new Error('walk did not end');
  }

  it('defaults to 20 items and allows at most 100', async () => {
    const org = await env.createOrg();
    await createProjects(org, 105, 'Bulk');
    const first = await env.request('GET', '/v1/projects', { key: org.ownerKey });
    expect(first.body.data).toHaveLength(20);
    expect(first.body.next_cursor).not.toBeNull();

    const max = await env.request('GET', '/v1/projects?limit=100', { key: org.ownerKey });
    expect(max.body.data).toHaveLength(100);
    const rest = await env.request('GET', `/v1/projects?limit=100&cursor=${max.body.next_cursor}`, { key: org.ownerKey });
    expect(rest.body.data).toHaveLength(5);
    expect(rest.body.next_cursor).toBeNull();

    const over = await env.request('GET', '/v1/projects?limit=101', { key: org.ownerKey });
    expect(over.status).toBe(400);
    expect(over.body.error.details).toEqual([{ field: 'limit', message: expect.any(String) }]);
  });

  it('lists strictly newest first, even within one millisecond', async () => {
    const org = await env.createOrg();
    const ids = await createProjects(org, 30, 'Same ms');
    const listed = await walk('/v1/projects', org.ownerKey, 100);
    expect(listed).toEqual([...ids].reverse());
    expect(await walk('/v1/projects', org.ownerKey, 4)).toEqual([...ids].reverse());
    const page = await env.request('GET', '/v1/projects?limit=1', { key: org.ownerKey });
    expect(Object.keys(page.body.data[0]).sort()).toEqual(['created_at', 'id', 'name', 'status']);
  });

  it('returns next_cursor null when a page ends exactly at the last item', async () => {
    const org = await env.createOrg();
    await createProjects(org, 10, 'Exact');
    const whole = await env.request('GET', '/v1/projects?limit=10', { key: org.ownerKey });
    expect(whole.body.data).toHaveLength(10);
    expect(whole.body.next_cursor).toBeNull();

    const half = await env.request('GET', '/v1/projects?limit=5', { key: org.ownerKey });
    expect(half.body.next_cursor).not.toBeNull();
    const second = await env.request('GET', `/v1/projects?limit=5&cursor=${half.body.next_cursor}`, { key: org.ownerKey });
    expect(second.body.data).toHaveLength(5);
    expect(second.body.next_cursor).toBeNull();

    const empty = await env.createOrg();
    const none = await env.request('GET', '/v1/projects', { key: empty.ownerKey });
    expect(none.body).toEqual({ data: [], next_cursor: null });
  });

  it('visits every item that existed at the start and still exists exactly once, under concurrent change', async () => {
    const org = await env.createOrg();
    const initial = await createProjects(org, 50, 'Walk');
    const deleted = new Set<string>();
    const created: string[] = [];
    const seen = await walk('/v1/projects', org.ownerKey, 7, async (page, seenIds) => {
      // Between pages: new items arrive, one item already seen and one not yet seen disappear.
      created.push(...(await createProjects(org, 3, `New ${page}`)));
      const seenSoFar = new Set(seenIds);
      const visited = initial.find((id) => !deleted.has(id) && seenSoFar.has(id));
      const ahead = [...initial].reverse().find((id) => !deleted.has(id) && !seenSoFar.has(id));
      for (const id of [visited, ahead]) {
        if (!id) continue;
        const res = await env.request('DELETE', `/v1/projects/${id}`, { key: org.ownerKey });
        expect(res.status).toBe(204);
        deleted.add(id);
      }
    });

    expect(new Set(seen).size).toBe(seen.length); // nothing twice
    const survivors = initial.filter((id) => !deleted.has(id));
    for (const id of survivors) expect(seen).toContain(id);
    // Only items of the start are visited (new ones are newer than the walk's position).
    for (const id of seen) expect(initial).toContain(id);
    expect(deleted.size).toBeGreaterThan(5);
    expect(created.length).toBeGreaterThan(5);
  });

  it('keeps seen items in order when items are deleted during the walk', async () => {
    const org = await env.createOrg();
    const initial = await createProjects(org, 20, 'Order');
    const seen = await walk('/v1/projects', org.ownerKey, 3, async () => {
      await createProjects(org, 1, 'Interloper');
    });
    expect(seen).toEqual([...initial].reverse());
  });

  it('pages through a status filter with cursors', async () => {
    const org = await env.createOrg();
    const drafts: string[] = [];
    const actives: string[] = [];
    for (let i = 0; i < 12; i++) {
      drafts.push(...(await createProjects(org, 1, `Draft ${i}`, 'draft')));
      actives.push(...(await createProjects(org, 2, `Active ${i}`, 'active')));
    }
    const archived = actives.slice(0, 4);
    for (const id of archived) await env.container.services.projects.update(cliActor(org.id), id, { status: 'archived' });

    expect(await walk('/v1/projects?status=draft', org.ownerKey, 5)).toEqual([...drafts].reverse());
    expect(await walk('/v1/projects?status=archived', org.ownerKey, 3)).toEqual([...archived].reverse());
    expect(await walk('/v1/projects?status=active', org.ownerKey, 7)).toEqual([...actives.slice(4)].reverse());
    const all = await walk('/v1/projects', org.ownerKey, 9);
    expect(all).toHaveLength(36);

    const items = await env.request('GET', '/v1/projects?status=draft&limit=100', { key: org.ownerKey });
    for (const item of items.body.data) expect(item.status).toBe('draft');
  });

  it("gives only the caller's items when it presents another organisation's cursor", async () => {
    const orgA = await env.createOrg('A');
    const orgB = await env.createOrg('B');
    const idsA = await createProjects(orgA, 6, 'A');
    const idsB = await createProjects(orgB, 6, 'B');
    const pageB = await env.request('GET', '/v1/projects?limit=2', { key: orgB.ownerKey });
    expect(pageB.body.next_cursor).not.toBeNull();

    const res = await env.request('GET', `/v1/projects?limit=100&cursor=${pageB.body.next_cursor}`, { key: orgA.ownerKey });
    expect(res.status).toBe(200);
    const ids: string[] = res.body.data.map((p: { id: string }) => p.id);
    for (const id of ids) expect(idsA).toContain(id);
    for (const id of idsB) expect(ids).not.toContain(id);
  });

  it('pages users and webhooks the same way', async () => {
    const org = await env.createOrg();
    const userIds = [org.ownerId];
    for (let i = 0; i < 8; i++) userIds.push((await org.member(i % 2 ? 'viewer' : 'member')).userId);
    const users = await walk('/v1/users', org.ownerKey, 3);
    expect(users).toEqual(expect.arrayContaining(userIds));
    expect(users).toHaveLength(new Set(users).size);
    // Newest first: the members were added after the owner (and their keys).
    expect(users.filter((id) => userIds.includes(id))).toEqual([...userIds].reverse());

    const hookIds: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await env.request('POST', '/v1/webhooks', {
        key: org.ownerKey,
        body: { url: `https://hooks.example.com/${i}`, events: ['project.created'] },
      });
      expect(res.status).toBe(201);
      hookIds.push(res.body.id);
    }
    expect(await walk('/v1/webhooks', org.ownerKey, 2)).toEqual([...hookIds].reverse());
    const first = await env.request('GET', '/v1/webhooks', { key: org.ownerKey });
    expect(first.body.data).toHaveLength(7);
    expect(first.body.next_cursor).toBeNull();
    for (const bad of ['0', '101', 'x']) {
      const res = await env.request('GET', `/v1/webhooks?limit=${bad}`, { key: org.ownerKey });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
    const badCursor = await env.request('GET', '/v1/users?cursor=nope', { key: org.ownerKey });
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.error.details).toEqual([{ field: 'cursor', message: expect.any(String) }]);
  });
});
