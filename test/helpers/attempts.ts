import { newId } from '../../src/lib/ids.js';
import type { TestEnv } from './test-env.js';

/**
 * One finished delivery with its one attempt, written straight into the tables as the worker leaves them,
 * at a chosen time: for the webhook health figures without waiting on real sends.
 */
export async function recordAttempt(env: Pick<TestEnv, 'container'>, orgId: string, webhookId: string, startedAt: number, outcome: 'success' | 'failure'): Promise<void> {
  const db = env.container.database.db;
  const deliveryId = newId('dlv');
  const ok = outcome === 'success';
  await db
    .insertInto('deliveries')
    .values({
      id: deliveryId,
      org_id: orgId,
      event_id: newId('evt'),
      webhook_id: webhookId,
      event_type: 'project.created',
      status: ok ? 'delivered' : 'failed',
      attempt_count: 1,
      failure_count: ok ? 0 : 1,
      next_attempt_at: null,
      lease_owner: null,
      lease_expires_at: null,
      last_status_code: ok ? 200 : 500,
      last_error: ok ? null : 'HTTP 500',
      created_at: startedAt,
      updated_at: startedAt,
    })
    .execute();
  await db
    .insertInto('delivery_attempts')
    .values({
      id: newId('att'),
      org_id: orgId,
      delivery_id: deliveryId,
      attempt_number: 1,
      trigger: 'automatic',
      started_at: startedAt,
      duration_ms: 12,
      request_headers: '{}',
      response_status: ok ? 200 : 500,
      response_headers: '{}',
      response_body: '',
      error: ok ? null : 'HTTP 500',
      outcome,
    })
    .execute();
  // As the worker does in the same transaction: the attempt counts in its subscription's hour.
  await env.container.store.repos.deliveryQueue.addHourly([
    { orgId, webhookId, hour: Math.floor(startedAt / 3_600_000), delivered: ok ? 1 : 0, failed: ok ? 0 : 1 },
  ]);
}

/** `count` finished deliveries of one status created at `createdAt`, in one statement: bulk figures for the health headline. */
export async function recordDeliveries(env: Pick<TestEnv, 'container'>, orgId: string, webhookId: string, createdAt: number, status: 'delivered' | 'failed', count: number): Promise<void> {
  const rows = Array.from({ length: count }, () => ({
    id: newId('dlv'),
    org_id: orgId,
    event_id: newId('evt'),
    webhook_id: webhookId,
    event_type: 'project.created',
    status,
    attempt_count: 1,
    failure_count: status === 'failed' ? 1 : 0,
    next_attempt_at: null,
    lease_owner: null,
    lease_expires_at: null,
    last_status_code: status === 'failed' ? 500 : 200,
    last_error: status === 'failed' ? 'HTTP 500' : null,
    created_at: createdAt,
    updated_at: createdAt,
  }));
  // SQLite binds at most 32,766 values a statement: 100 rows of 15 are well inside it.
  for (let i = 0; i < rows.length; i += 100) await env.container.database.db.insertInto('deliveries').values(rows.slice(i, i + 100)).execute();
}
