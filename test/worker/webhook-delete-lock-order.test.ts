import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';

/**
 * Deleting a subscription while a worker records an attempt of one of its deliveries (PostgreSQL, row locks):
 * the worker's transaction locks the delivery, then the subscription (its failure streak). The delete must take
 * them in the same order; taken the other way round, PostgreSQL found a deadlock and the DELETE answered 500
 * (seen once under a full CI run in test/worker/delivery-worker.test.ts).
 */
describe('deleting a subscription while an attempt is being recorded (postgres)', () => {
  let env: TestEnv;

  beforeAll(async () => {
    env = await createTestEnv('postgres');
  });
  afterAll(async () => env?.close());

  it('waits for the recording and then deletes: 204, no deadlock, the delivery cancelled', async () => {
    const org = await env.createOrg('Locks');
    const hook = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://127.0.0.1:9/hook', events: ['project.created'], secret: 'test-secret-0123456789' } });
    expect(hook.status).toBe(201);
    expect((await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Locked' } })).status).toBe(201);
    const db = env.container.database.db;
    const delivery = await db.selectFrom('deliveries').select('id').where('webhook_id', '=', hook.body.id).executeTakeFirstOrThrow();

    let deleting: Promise<{ status: number }> | null = null;
    const now = Date.now();
    // The worker's recording transaction, held open between its two statements while the DELETE arrives.
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('deliveries').set({ updated_at: now }).where('id', '=', delivery.id).execute();
      deleting = env.request('DELETE', `/v1/webhooks/${hook.body.id}`, { key: org.ownerKey });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await trx.updateTable('webhooks').set({ failing_since: now }).where('id', '=', hook.body.id).execute();
    });
    expect((await deleting!).status).toBe(204);
    expect((await db.selectFrom('deliveries').select('status').where('id', '=', delivery.id).executeTakeFirstOrThrow()).status).toBe('cancelled');
    expect(await db.selectFrom('webhooks').select('id').where('id', '=', hook.body.id).execute()).toHaveLength(0);
  });
});
