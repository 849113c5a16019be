import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { cliActor } from '../../src/services/access/actor.js';
import { createUsageService, USAGE_FLUSH_INTERVAL_MS } from '../../src/services/lifecycle/usage-service.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type TestEnv } from '../helpers/test-env.js';

const DAY = 86_400_000;
/** 'YYYY-MM-DD' of a time. */
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Requests per day (overview): counted in memory on the request path, added to `request_counts` by each process. */
describe.each(testDialects())('API requests per day (%s)', (dialect) => {
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 9, 30));
  let env: TestEnv;

  beforeAll(async () => {
    // A low limit so a test can reach it; each test uses keys of its own organisation.
    env = await createTestEnv(dialect, { clock, env: { RATE_LIMIT_PER_MINUTE: '20' } });
  });
  afterAll(async () => env?.close());

  const usage = () => env.container.services.usage;

  /** What the table holds for the organisation, after this process has flushed. */
  async function stored(orgId: string): Promise<{ day: string; count: number }[]> {
    await usage().flush();
    const rows = await env.container.database.db.selectFrom('request_counts').select(['day', 'count']).where('org_id', '=', orgId).orderBy('day').execute();
    return rows.map((r) => ({ day: r.day, count: Number(r.count) }));
  }

  async function call(key: string | null, method: string, url: string, body?: unknown): Promise<number> {
    return (await env.request(method, url, { key, body })).status;
  }

  it('counts every request made with a valid key, whatever its answer', async () => {
    const org = await env.createOrg();
    const viewer = await org.member('viewer');
    for (let i = 0; i < 5; i++) expect(await call(org.ownerKey, 'GET', '/v1/projects')).toBe(200);
    expect(await call(org.ownerKey, 'GET', '/v1/projects/proj_missing')).toBe(404);
    expect(await call(org.ownerKey, 'POST', '/v1/projects', { name: '' })).toBe(400);
    expect(await call(viewer.key, 'POST', '/v1/projects', { name: 'Viewer try' })).toBe(403);
    expect(await stored(org.id)).toEqual([{ day: '2026-11-22', count: 8 }]);
  });

  it('does not count requests refused 401 or by the rate limiter', async () => {
    const org = await env.createOrg();
    const revoked = await org.member('member');
    await env.container.services.apiKeys.revoke(cliActor(org.id), revoked.keyId);
    expect(await call(null, 'GET', '/v1/projects')).toBe(401);
    expect(await call(`${org.ownerKey}x`, 'GET', '/v1/projects')).toBe(401);
    expect(await call(revoked.key, 'GET', '/v1/projects')).toBe(401);
    expect(await stored(org.id)).toEqual([]);

    const statuses: number[] = [];
    for (let i = 0; i < 23; i++) statuses.push(await call(org.ownerKey, 'GET', '/v1/projects'));
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    expect(await stored(org.id)).toEqual([{ day: '2026-11-22', count: 20 }]);
    clock.advance(60_000); // the next test starts with a fresh window
  });

  it('adds the shares of several processes, and of several flushes, without counting anything twice', async () => {
    const org = await env.createOrg();
    // A second API process on the same database: its own usage service, flushing on its own.
    const second = createUsageService({ store: env.container.store, clock, flushIntervalMs: 0 });
    for (let i = 0; i < 7; i++) second.count(org.id);
    for (let i = 0; i < 3; i++) expect(await call(org.ownerKey, 'GET', '/v1/projects')).toBe(200);

    const today = (days: { day: string; count: number }[]) => days.find((d) => d.day === '2026-11-22')?.count;
    // Each process sees what is stored plus its own counts not yet written.
    expect(today(await usage().dailyRequests(cliActor(org.id)))).toBe(3);
    await second.flush();
    expect(today(await usage().dailyRequests(cliActor(org.id)))).toBe(10);
    expect(today(await second.dailyRequests(cliActor(org.id)))).toBe(7); // the first process's 3 are not written yet

    expect(await stored(org.id)).toEqual([{ day: '2026-11-22', count: 10 }]);
    await second.flush();
    await usage().flush();
    expect(await stored(org.id)).toEqual([{ day: '2026-11-22', count: 10 }]);

    second.count(org.id);
    expect(await call(org.ownerKey, 'GET', '/v1/projects')).toBe(200);
    await second.close();
    expect(await stored(org.id)).toEqual([{ day: '2026-11-22', count: 12 }]);
  });

  it('puts each request on its UTC day, across midnight and across flushes', async () => {
    const org = await env.createOrg();
    clock.set(Date.UTC(2026, 10, 22, 23, 59, 59, 999));
    expect(await call(org.ownerKey, 'GET', '/v1/projects')).toBe(200);
    await usage().flush();
    expect(await call(org.ownerKey, 'GET', '/v1/projects')).toBe(200);
    clock.advance(1);
    for (let i = 0; i < 3; i++) expect(await call(org.ownerKey, 'GET', '/v1/projects')).toBe(200);
    expect(await stored(org.id)).toEqual([
      { day: '2026-11-22', count: 2 },
      { day: '2026-11-23', count: 3 },
    ]);

    const days = await usage().dailyRequests(cliActor(org.id));
    expect(days.slice(-2)).toEqual([
      { day: '2026-11-22', count: 2 },
      { day: '2026-11-23', count: 3 },
    ]);
    clock.set(Date.UTC(2026, 10, 22, 9, 30));
  });

  it('gives 30 days, oldest first, zeros filled, for the organisation only, unwritten counts included', async () => {
    const org = await env.createOrg();
    const other = await env.createOrg('Other');
    const now = clock.now();
    const repo = env.container.store.repos.requestCounts;
    await repo.add(org.id, dayOf(now - 30 * DAY), 1000); // 31 days ago: outside the window
    await repo.add(org.id, dayOf(now - 29 * DAY), 5);
    await repo.add(org.id, dayOf(now - 29 * DAY), 6); // adds to the stored row
    await repo.add(org.id, dayOf(now - 3 * DAY), 40);
    await repo.add(other.id, dayOf(now - 3 * DAY), 99);
    await repo.add(other.id, dayOf(now), 99);
    expect(await call(org.ownerKey, 'GET', '/v1/projects')).toBe(200);
    expect(await call(other.ownerKey, 'GET', '/v1/projects')).toBe(200);

    const days = await usage().dailyRequests(cliActor(org.id));
    expect(days).toHaveLength(30);
    expect(days.map((d) => d.day)).toEqual(Array.from({ length: 30 }, (_, i) => dayOf(now - (29 - i) * DAY)));
    expect(days[0]).toEqual({ day: '2026-10-24', count: 11 });
    expect(days[26]).toEqual({ day: '2026-11-19', count: 40 });
    expect(days[29]).toEqual({ day: '2026-11-22', count: 1 });
    expect(days.reduce((sum, d) => sum + d.count, 0)).toBe(52);

    expect(await usage().dailyRequests(cliActor(org.id), 7)).toHaveLength(7);
    const fresh = await env.createOrg('Fresh');
    const none = await usage().dailyRequests(cliActor(fresh.id));
    expect(none).toHaveLength(30);
    expect(none.every((d) => d.count === 0)).toBe(true);
  });
});

/** The usage service's own rules, over a stand-in store whose writes can fail. */
describe('usage service flushing', () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 9, 30));

  function fakeStore(fail: (call: number) => unknown | null) {
    const written: { orgId: string; day: string; count: number }[] = [];
    let calls = 0;
    const store = {
      repos: {
        requestCounts: {
          async add(orgId: string, day: string, count: number) {
            const err = fail(++calls);
            if (err) throw err;
            written.push({ orgId, day, count });
          },
          async range() {
            return [];
          },
        },
      },
    } as unknown as Store;
    return { store, written };
  }

  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps the counts while the database is away and writes them at the next flush', async () => {
    const away = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const { store, written } = fakeStore((call) => (call === 1 ? away : null));
    const errors: unknown[] = [];
    const usage = createUsageService({ store, clock, flushIntervalMs: 0, onFlushError: (err) => errors.push(err) });
    usage.count('org_a');
    usage.count('org_a');
    usage.count('org_b');
    await usage.flush();
    expect(written).toEqual([]);
    expect(errors).toEqual([away]); // reported once, the other row not even tried
    usage.count('org_a');
    await usage.flush();
    expect(written).toEqual([
      { orgId: 'org_a', day: '2026-11-22', count: 3 },
      { orgId: 'org_b', day: '2026-11-22', count: 1 },
    ]);
  });

  it('drops a count the database refuses for good (its organisation is gone) and writes the others', async () => {
    const refused = Object.assign(new Error('FOREIGN KEY constraint failed'), { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
    const { store, written } = fakeStore((call) => (call === 1 ? refused : null));
    const errors: unknown[] = [];
    const usage = createUsageService({ store, clock, flushIntervalMs: 0, onFlushError: (err) => errors.push(err) });
    usage.count('org_gone');
    usage.count('org_b');
    await usage.flush();
    await usage.flush();
    expect(written).toEqual([{ orgId: 'org_b', day: '2026-11-22', count: 1 }]);
    expect(errors).toEqual([refused]);
  });

  it('flushes every 30 seconds on its own, and once more on close', async () => {
    vi.useFakeTimers();
    const { store, written } = fakeStore(() => null);
    const usage = createUsageService({ store, clock });
    usage.count('org_a');
    await vi.advanceTimersByTimeAsync(USAGE_FLUSH_INTERVAL_MS - 1);
    expect(written).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(written).toEqual([{ orgId: 'org_a', day: '2026-11-22', count: 1 }]);
    usage.count('org_a');
    await usage.close();
    expect(written).toHaveLength(2);
    usage.count('org_a');
    await vi.advanceTimersByTimeAsync(5 * USAGE_FLUSH_INTERVAL_MS);
    expect(written).toHaveLength(2); // closed: the timer is gone
  });
});
