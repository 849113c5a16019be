import net from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { openDeliveryQueue, type DeliveryQueue, type QueueClaim } from '../../src/db/delivery-queue.js';
import type { AttemptCompletion } from '../../src/db/repositories/delivery-queue-repo.js';
import { createDeliveryAgent } from '../../src/delivery/agent.js';
import { sendAttempt } from '../../src/delivery/sender.js';
import { createDeliveryWorker } from '../../src/delivery/worker.js';
import { newId } from '../../src/lib/ids.js';
import { recordEvent } from '../../src/services/events/outbox.js';
import { cliActor } from '../../src/services/access/actor.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { makeSelfSignedCertificate, startHttpsReceiver, waitFor, type HttpsReceiver, type TestCertificate } from '../helpers/https-receiver.js';

/**
 * The worker's queue (claims and completions in one transaction per cycle; on SQLite run by the queue
 * thread, on PostgreSQL by the repository in store.transaction) and the worker's bookkeeping around it.
 */
describe.each(testDialects())('delivery queue (%s)', (dialect) => {
  let env: TestEnv;
  let queue: DeliveryQueue;
  let org: TestOrg;

  beforeAll(async () => {
    env = await createTestEnv(dialect, { env: { WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: '5' } });
    queue = await openDeliveryQueue(env.container.database, env.container.store);
  });
  afterAll(async () => {
    await queue?.close();
    await env?.close();
  });
  beforeEach(async () => {
    // The queue serves every organisation: earlier tests' pending rows would be claimed too.
    await db().updateTable('deliveries').set({ status: 'cancelled', lease_owner: null, lease_expires_at: null }).where('status', '=', 'pending').execute();
    org = await env.createOrg();
  });

  const db = () => env.container.database.db;

  async function subscribe(o: TestOrg, n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const hook = await env.container.services.webhooks.create(cliActor(o.id), { url: `https://127.0.0.1:9/hook-${i}`, events: ['project.created'] });
      ids.push(hook.id);
    }
    return ids;
  }

  async function emit(o: TestOrg, count: number): Promise<void> {
    const { store, clock } = env.container;
    await store.transaction(async (repos) => {
      // One millisecond apart, so due order is event order.
      const at = clock.now() - count;
      for (let i = 0; i < count; i++) await recordEvent(repos, { orgId: o.id, type: 'project.created', data: { project_id: `proj_${i}` }, occurredAt: at + i });
    });
  }

  /** The claim the worker makes: every subscription at the default room except those given. */
  function claim(limit: number, rooms: Record<string, number> = {}, window?: number): QueueClaim {
    return {
      now: env.container.clock.now() + 1,
      leaseMs: 60_000,
      limit,
      window,
      excludeWebhooks: Object.entries(rooms).filter(([, room]) => room <= 0).map(([id]) => id),
      perWebhookRoom: (id) => rooms[id] ?? 5,
      defaultRoom: 5,
      busyWebhooks: Object.keys(rooms),
    };
  }

  function completion(d: { id: string; org_id: string; webhook_id: string }, attemptId = newId('att')): AttemptCompletion {
    return {
      webhookId: d.webhook_id,
      attempt: {
        id: attemptId, org_id: d.org_id, delivery_id: d.id, attempt_number: 1, trigger: 'automatic', started_at: env.container.clock.now(),
        duration_ms: 3, request_headers: '{}', response_status: 200, response_headers: '{}', response_body: 'ok', error: null, outcome: 'success',
      },
      delivery: { status: 'delivered', attempt_count: 1, failure_count: 0, next_attempt_at: null, last_status_code: 200, last_error: null },
    };
  }

  const rowsOf = (orgId: string) =>
    db().selectFrom('deliveries').select(['id', 'webhook_id', 'status', 'lease_owner', 'attempt_count']).where('org_id', '=', orgId).orderBy('seq').execute();
  const attemptsOf = (orgId: string) => db().selectFrom('delivery_attempts').select(['id', 'delivery_id']).where('org_id', '=', orgId).execute();

  it('a claim of many still takes at most each subscription’s room, in due order, under the lease', async () => {
    const [busy, a, b] = await subscribe(org, 3);
    await emit(org, 40);
    // 120 pending; a claim of up to 96 (the worker's ready queue) may take 2 of the busy one and 5 of each other.
    const claimed = await queue.cycle('wkr_a', [], claim(96, { [busy!]: 2 }), env.container.clock.now());
    const per = (id: string) => claimed.filter((d) => d.webhook_id === id).length;
    expect([per(busy!), per(a!), per(b!)]).toEqual([2, 5, 5]);
    expect(claimed.every((d) => d.url.startsWith('https://') && d.secret.length > 0 && d.body.includes('proj_'))).toBe(true);
    // The oldest events first: the claimed ones are the first events' deliveries.
    const rows = await rowsOf(org.id);
    const leased = rows.filter((r) => r.lease_owner === 'wkr_a').map((r) => r.id);
    expect(new Set(leased)).toEqual(new Set(claimed.map((d) => d.id)));
    expect(claimed.map((d) => d.id)).toEqual(rows.filter((r) => leased.includes(r.id)).map((r) => r.id));
    // A subscription with no room left is not claimed at all; leased rows are not claimed twice.
    const again = await queue.cycle('wkr_b', [], claim(96, { [busy!]: 0, [a!]: 5, [b!]: 1 }), env.container.clock.now());
    expect(again.filter((d) => d.webhook_id === busy).length).toBe(0);
    expect(again.filter((d) => d.webhook_id === b).length).toBe(1);
    expect(again.filter((d) => d.webhook_id === a).length).toBe(5);
    expect(again.some((d) => claimed.some((c) => c.id === d.id))).toBe(false);
  });

  it('a narrow window (the worker’s when no room can bind) claims the same first rows', async () => {
    const [a, b] = await subscribe(org, 2);
    await emit(org, 10);
    const claimed = await queue.cycle('wkr_w', [], claim(4, {}, 4), env.container.clock.now());
    expect(claimed).toHaveLength(4);
    // The first two events' deliveries (two subscriptions each), the due ones first.
    const firstFour = (await rowsOf(org.id)).slice(0, 4).map((r) => r.id);
    expect(new Set(claimed.map((d) => d.id))).toEqual(new Set(firstFour));
    expect(new Set(claimed.map((d) => d.webhook_id))).toEqual(new Set([a, b]));
  });

  it('records completions and claims in one transaction: a completion the database refuses fails the whole cycle', async () => {
    await subscribe(org, 1);
    await emit(org, 3);
    const claimed = await queue.cycle('wkr_c', [], claim(3), env.container.clock.now());
    expect(claimed).toHaveLength(3);
    const [first, second, third] = claimed;
    const duplicate = newId('att');
    // The second completion reuses the first one's attempt id: a unique violation.
    await expect(queue.cycle('wkr_c', [completion(first!, duplicate), completion(second!, duplicate)], null, env.container.clock.now())).rejects.toThrow();
    expect(await attemptsOf(org.id)).toEqual([]);
    expect((await rowsOf(org.id)).map((r) => r.status)).toEqual(['pending', 'pending', 'pending']);
    // Alone, each records; the state moves on only under the lease that claimed it.
    await queue.cycle('wkr_c', [completion(first!)], null, env.container.clock.now());
    await queue.cycle('wkr_other', [completion(third!)], null, env.container.clock.now());
    const rows = await rowsOf(org.id);
    expect(rows.map((r) => [r.status, r.lease_owner])).toEqual([
      ['delivered', null],
      ['pending', 'wkr_c'],
      ['pending', 'wkr_c'],
    ]);
    // The attempt is history even when the lease was not ours; the roll-up counts both recorded attempts.
    expect((await attemptsOf(org.id)).map((r) => r.delivery_id).sort()).toEqual([first!.id, third!.id].sort());
    const hourly = await db().selectFrom('delivery_hourly').select(['delivered', 'failed']).where('org_id', '=', org.id).execute();
    expect(hourly.map((h) => [Number(h.delivered), Number(h.failed)])).toEqual([[2, 0]]);
  });

  it('never sends for an organisation being deleted: its claimed rows are cancelled, and a vanished delivery records nothing', async () => {
    await subscribe(org, 1);
    await emit(org, 2);
    const [held] = await queue.cycle('wkr_d', [], claim(1), env.container.clock.now());
    await db().updateTable('organizations').set({ state: 'deleting' }).where('id', '=', org.id).execute();
    expect(await queue.cycle('wkr_d', [], claim(10), env.container.clock.now())).toEqual([]);
    const rows = await rowsOf(org.id);
    expect(rows.map((r) => [r.status, r.lease_owner])).toEqual([
      ['pending', 'wkr_d'],
      ['cancelled', null],
    ]);
    // The send under way finishes after its delivery is gone: nothing of the organisation is written.
    await db().deleteFrom('deliveries').where('id', '=', held!.id).execute();
    await queue.cycle('wkr_d', [completion(held!)], null, env.container.clock.now());
    expect(await attemptsOf(org.id)).toEqual([]);
    expect(await db().selectFrom('delivery_hourly').select('hour').where('org_id', '=', org.id).execute()).toEqual([]);
  });
});

describe.each(testDialects())('delivery worker bookkeeping (%s)', (dialect) => {
  let cert: TestCertificate;
  let receiver: HttpsReceiver;
  let env: TestEnv;

  beforeAll(async () => {
    cert = makeSelfSignedCertificate();
    receiver = await startHttpsReceiver(cert);
    env = await createTestEnv(dialect, { env: { WEBHOOK_CONCURRENCY: '8', WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: '8', WEBHOOK_TIMEOUT: '2s' } });
  });
  afterAll(async () => {
    await receiver?.close();
    await env?.close();
  });

  async function subscribedOrg(pathname: string) {
    const org = await env.createOrg();
    const hook = await env.container.services.webhooks.create(cliActor(org.id), { url: receiver.url(pathname), events: ['project.created'] });
    return { org, hookId: hook.id };
  }

  async function emit(orgId: string, count: number): Promise<void> {
    const { store, clock } = env.container;
    await store.transaction(async (repos) => {
      for (let i = 0; i < count; i++) await recordEvent(repos, { orgId, type: 'project.created', data: { project_id: `proj_${i}` }, occurredAt: clock.now() });
    });
  }

  function startWorker(queue: DeliveryQueue) {
    const outcomes: string[] = [];
    const errors: unknown[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => void errors.push(JSON.parse(line)) });
    const dispatcher = createDeliveryAgent({ allowPrivateNetworks: true, connectTimeoutMs: 2000, ca: cert.cert });
    const worker = createDeliveryWorker(
      { config: env.config, store: env.container.store, clock: env.container.clock, logger, waker: env.container.waker, dispatcher, queue, onAttemptFinished: (o) => outcomes.push(o) },
      { pollIntervalMs: 50, pruneIntervalMs: 3_600_000 },
    );
    return {
      worker,
      outcomes,
      errors,
      async stop() {
        await worker.stop();
        await dispatcher.close();
      },
    };
  }

  let opened: DeliveryQueue[] = [];
  afterEach(async () => {
    for (const q of opened) await q.close();
    opened = [];
  });
  async function realQueue(): Promise<DeliveryQueue> {
    const q = await openDeliveryQueue(env.container.database, env.container.store);
    opened.push(q);
    return q;
  }

  it('a completion that cannot be recorded fails alone: the rest of its batch is recorded, it stays leased', async () => {
    const { org } = await subscribedOrg('/batch');
    // The first eight answers (all slots) are held and then given together, so their outcomes share a cycle.
    const held: import('node:http').ServerResponse[] = [];
    receiver.on('/batch', (_req, res) => {
      if (held.length >= 8) return void res.writeHead(200).end('ok');
      held.push(res);
      if (held.length === 8) for (const r of held) r.writeHead(200).end('ok');
    });
    await emit(org.id, 12);
    const all = await env.container.database.db.selectFrom('deliveries').select('id').where('org_id', '=', org.id).execute();
    const poisoned = all[5]!.id;
    const real = await realQueue();
    let failedBatches = 0;
    // The database refuses the poisoned delivery's completion (as it would a row breaking a constraint).
    const queue: DeliveryQueue = {
      ...real,
      cycle(owner, completions, claim, at) {
        if (completions.some((c) => c.attempt.delivery_id === poisoned)) {
          if (completions.length > 1) failedBatches++;
          return Promise.reject(Object.assign(new Error('refused'), { code: 'SQLITE_CONSTRAINT' }));
        }
        return real.cycle(owner, completions, claim, at);
      },
    };
    const run = startWorker(queue);
    run.worker.kick();
    await waitFor('12 requests', () => receiver.at('/batch').length >= 12);
    await waitFor('11 recorded', () => run.outcomes.length >= 11);
    await run.stop();
    const rows = await env.container.database.db.selectFrom('deliveries').select(['id', 'status', 'lease_owner']).where('org_id', '=', org.id).execute();
    expect(rows.filter((r) => r.status === 'delivered').map((r) => r.id).sort()).toEqual(all.map((r) => r.id).filter((id) => id !== poisoned).sort());
    const stuck = rows.find((r) => r.id === poisoned)!;
    expect(stuck.status).toBe('pending');
    expect(stuck.lease_owner).not.toBeNull();
    expect(run.outcomes).toEqual(Array(11).fill('delivered'));
    expect(failedBatches).toBeGreaterThanOrEqual(1);
    expect(run.errors.some((e) => (e as { delivery_id?: string }).delivery_id === poisoned)).toBe(true);
  });

  it('stop sends what it claimed and records every outcome: no lease is left behind', async () => {
    const { org } = await subscribedOrg('/stop');
    receiver.on('/stop', (_req, res) => void setTimeout(() => res.writeHead(200).end('ok'), 30));
    await emit(org.id, 40);
    const run = startWorker(await realQueue());
    run.worker.kick();
    await waitFor('a first request', () => receiver.at('/stop').length >= 1);
    await run.stop();
    const rows = await env.container.database.db.selectFrom('deliveries').select(['status', 'lease_owner']).where('org_id', '=', org.id).execute();
    expect(rows.filter((r) => r.lease_owner !== null)).toEqual([]);
    const delivered = rows.filter((r) => r.status === 'delivered').length;
    // Every request made was recorded (claimed deliveries waiting for a slot went out before stop returned).
    expect(delivered).toBe(receiver.at('/stop').length);
    expect(run.outcomes).toHaveLength(delivered);
    expect(delivered).toBeLessThan(40);
  });

  it('keeps a receiver’s U+0000 out of the history (stored as U+FFFD)', async () => {
    const { org } = await subscribedOrg('/nul');
    receiver.on('/nul', (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('a\u0000b'));
    await emit(org.id, 1);
    const run = startWorker(await realQueue());
    run.worker.kick();
    await waitFor('the recorded attempt', () => run.outcomes.length >= 1);
    await run.stop();
    const [attempt] = await env.container.database.db.selectFrom('delivery_attempts').select(['response_body', 'outcome']).where('org_id', '=', org.id).execute();
    expect(attempt).toEqual({ response_body: 'a\uFFFDb', outcome: 'success' });
  });
});

describe('an attempt’s deadline', () => {
  it('covers the connection: a server that never completes TLS times the attempt out at the deadline', async () => {
    const silent = net.createServer(() => {}); // accepts, never answers the TLS handshake
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    // The connector's own timeout is far off: only the attempt's deadline can end it.
    const dispatcher = createDeliveryAgent({ allowPrivateNetworks: true, connectTimeoutMs: 30_000 });
    try {
      const started = Date.now();
      const result = await sendAttempt(
        { url: `https://127.0.0.1:${port}/x`, secrets: { current: 'test-secret-0123456789', previous: null }, body: '{}', eventType: 'project.created', eventId: 'evt_x', deliveryId: 'dlv_x', attemptNumber: 1 },
        { dispatcher, timeoutMs: 300, now: () => Date.now() },
      );
      const took = Date.now() - started;
      expect(result).toMatchObject({ success: false, status: null, responseHeaders: null, responseBody: null });
      expect(result.error).toMatch(/^timeout/);
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(2000);
    } finally {
      await dispatcher.destroy();
      silent.close();
    }
  });
});
