import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteFilePath } from '../../src/db/database.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

// The hot paths run on prepared queries (src/db/repositories/prepared.ts) and, on SQLite, straight on
// the connection outside transactions. These pin what that must not change.
describe.each(testDialects())('hot paths (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;
  const created: { id: string; status: string }[] = [];

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg();
    other = await env.createOrg('Other');
    for (let i = 0; i < 7; i++) {
      const status = i % 3 === 0 ? 'draft' : 'active';
      const res = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: `P${i}`, status } });
      expect(res.status).toBe(201);
      created.push({ id: res.body.id, status });
    }
    await env.request('POST', '/v1/projects', { key: other.ownerKey, body: { name: 'Elsewhere' } });
  });
  afterAll(async () => env?.close());

  async function walk(query: string): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/v1/projects?limit=2${query}${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await env.request('GET', url, { key: org.ownerKey });
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(['created_at', 'id', 'name', 'status']);
      ids.push(...res.body.data.map((p: { id: string }) => p.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    return ids;
  }

  it('walks every page newest first, with and without a status filter, within the organisation only', async () => {
    expect(await walk('')).toEqual(created.map((p) => p.id).reverse());
    const drafts = created.filter((p) => p.status === 'draft').map((p) => p.id).reverse();
    expect(await walk('&status=draft')).toEqual(drafts);
  });

  it('reads a project by id only within its organisation', async () => {
    const own = await env.request('GET', `/v1/projects/${created[0]!.id}`, { key: org.ownerKey });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id: created[0]!.id, name: 'P0', status: 'draft', description: null });
    const foreign = await env.request('GET', `/v1/projects/${created[0]!.id}`, { key: other.ownerKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
  });

  it('never shows a read the uncommitted writes of an open transaction', async () => {
    const { store } = env.container;
    const id = 'proj_uncommitteduncommitted1';
    let inserted!: () => void;
    const insertedSignal = new Promise<void>((resolve) => (inserted = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const rolledBack = store
      .transaction(async (repos) => {
        await repos.projects.insert({ id, org_id: org.id, name: 'Ghost', description: null, status: 'active', created_at: 1, updated_at: 1 });
        inserted();
        await held;
        throw new Error('roll back');
      })
      .catch((err: Error) => err.message);
    await insertedSignal;
    const read = store.repos.projects.findById(org.id, id);
    const list = store.repos.projects.list(org.id, 100, null, { status: null, visibility: null, viewer: null });
    release();
    expect(await rolledBack).toBe('roll back');
    expect(await read).toBeUndefined();
    expect((await list).rows.map((r) => r.id)).not.toContain(id);
  });

  it('refuses a revoked key on the very next request', async () => {
    const member = await org.member('member');
    expect((await env.request('GET', '/v1/projects', { key: member.key })).status).toBe(200);
    await env.container.services.admin.revokeKey(member.keyId);
    const res = await env.request('GET', '/v1/projects', { key: member.key });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });

  // The auth cache skips `PRAGMA data_version` while the WAL-index header is unchanged; that is only sound if
  // every commit, from any connection or process, changes the header, and nothing else does.
  it.runIf(dialect === 'sqlite')('sees a commit by another connection in the WAL-index header, and only a commit', async () => {
    const direct = env.container.database.direct!;
    direct.unchangedSinceLastAsked();
    expect(direct.unchangedSinceLastAsked()).toBe(true);
    const other = new BetterSqlite3(sqliteFilePath({ dataDir: env.dataDir }));
    try {
      other.prepare('select count(*) from projects').get();
      expect(direct.unchangedSinceLastAsked()).toBe(true);
      other.exec('begin immediate; update projects set name = name where id = \'none\'; rollback');
      expect(direct.unchangedSinceLastAsked()).toBe(true);
      // (A real change: SQLite writes no page, so commits nothing, for an UPDATE to the same value.)
      other.prepare('update organizations set name = ? where id = ?').run('Acme Renamed', org.id);
      expect(direct.unchangedSinceLastAsked()).toBe(false);
      expect(direct.unchangedSinceLastAsked()).toBe(true);
      // And a revocation by that other connection still reaches the very next request.
      const member = await org.member('member');
      expect((await env.request('GET', '/v1/projects', { key: member.key })).status).toBe(200);
      other.prepare('update api_keys set revoked_at = ? where id = ?').run(Date.now(), member.keyId);
      expect((await env.request('GET', '/v1/projects', { key: member.key })).status).toBe(401);
    } finally {
      other.close();
    }
  });
});
