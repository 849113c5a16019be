import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAKE_CHANNEL } from '../../src/db/pg-notify.js';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/redis.js';

/**
 * The delivery wake-up crosses processes on PostgreSQL: a commit that created deliveries in one instance
 * wakes the workers of every other instance. (SQLite is one process's database: its waker stays local.)
 */
describe('PostgreSQL LISTEN/NOTIFY wake relay', () => {
  let a: TestEnv;
  let b: TestEnv;
  let wakes = 0;
  let admin: pg.Client;
  let dbName: string;

  beforeAll(async () => {
    a = await createTestEnv('postgres');
    b = await createTestEnv('postgres', { env: { DATABASE_URL: a.config.databaseUrl! } });
    dbName = new URL(a.config.databaseUrl!).pathname.slice(1);
    admin = new pg.Client({ connectionString: a.config.databaseUrl! });
    await admin.connect();
    // Subscribing is what opens the LISTEN connection (a worker would do this).
    b.container.waker.subscribe(() => wakes++);
    await waitFor(async () => (await listeners()) === 1, 'the LISTEN connection');
  });
  afterAll(async () => {
    await admin?.end();
    await b?.close();
    await a?.close();
  });

  async function listeners(): Promise<number> {
    const { rows } = await admin.query<{ n: string }>(
      `select count(*) as n from pg_stat_activity where datname = $1 and query ilike $2`,
      [dbName, `listen ${WAKE_CHANNEL}%`],
    );
    return Number(rows[0]!.n);
  }

  it('a project created on one instance, with a subscription listening, wakes the other instance', async () => {
    const org = await a.createOrg();
    expect(
      (await a.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://127.0.0.1:9/hook', events: ['project.created'] } })).status,
    ).toBe(201);
    const before = wakes;
    expect((await a.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'wake b' } })).status).toBe(201);
    await waitFor(() => wakes > before, 'the wake-up on the other instance');
  });

  it('the waking instance is not woken twice by its own notification', async () => {
    let own = 0;
    const unsubscribe = a.container.waker.subscribe(() => own++);
    try {
      const before = wakes;
      a.container.waker.wake();
      // Local wake-up is synchronous.
      expect(own).toBe(1);
      await waitFor(() => wakes > before, 'the other instance');
      // a's LISTEN connection is open now too; a wake from b reaches a, a's own echo does not count.
      await waitFor(async () => (await listeners()) === 2, "a's LISTEN connection");
      const ownBefore = own;
      b.container.waker.wake();
      await waitFor(() => own > ownBefore, 'the wake-up from b');
      const afterB = own;
      a.container.waker.wake();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(own).toBe(afterB + 1);
    } finally {
      unsubscribe();
    }
  });

  it('reconnects after its LISTEN connection is killed, waking subscribers on return', async () => {
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and query ilike $2`, [dbName, `listen ${WAKE_CHANNEL}%`]);
    const before = wakes;
    // On reconnect the relay wakes its subscribers (notifications sent meanwhile were lost).
    await waitFor(() => wakes > before, 'the wake-up after reconnecting');
    await waitFor(async () => (await listeners()) === 2, 'both LISTEN connections back');
    const again = wakes;
    a.container.waker.wake();
    await waitFor(() => wakes > again, 'a notification over the new connection');
  });
});
