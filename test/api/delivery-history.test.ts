import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { migrationProvider } from '../../src/db/migrations/index.js';
import type { DeliveryStatus } from '../../src/db/schema.js';
import type { DomainError } from '../../src/errors.js';
import { newId } from '../../src/lib/ids.js';
import { cliActor } from '../../src/services/access/actor.js';
import { HISTORY_SCAN_LIMIT, type HistoryState } from '../../src/services/webhooks/deliveries-service.js';
import { HISTORY_STATES, MAX_BULK_REPLAY } from '../../src/schemas/deliveries.js';
import type { EventType } from '../../src/schemas/events.js';
import { startDeliveryHarness, waitFor, type DeliveryHarness, type HttpsReceiver } from '../helpers/https-receiver.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createPgDatabase, createTestEnv, testDialects, type ApiResponse, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** How a seeded delivery stands; `replay-queued` is a failed delivery whose replay waits for the worker. */
type Kind = 'delivered' | 'retrying' | 'pending' | 'replay-queued' | 'failed' | 'cancelled';

const STATE_OF: Record<Kind, HistoryState> = {
  delivered: 'delivered',
  retrying: 'retrying',
  pending: 'pending',
  'replay-queued': 'pending',
  failed: 'failed',
  cancelled: 'cancelled',
};

interface SeedSpec {
  kind: Kind;
  at: number;
  event?: EventType;
  /** Another subscription's delivery of the same event: no new `events` row. */
  eventId?: string;
}

interface Seeded {
  id: string;
  eventId: string;
  kind: Kind;
  at: number;
  event: EventType;
  webhookId: string;
  /** Insertion order across the whole test file (seq grows with it). */
  order: number;
}

let insertions = 0;

function deliveryColumns(kind: Kind, at: number): { status: DeliveryStatus; attempt_count: number; failure_count: number; next_attempt_at: number | null; last_status_code: number | null; last_error: string | null; replay_requested_at: number | null } {
  switch (kind) {
    case 'delivered':
      return { status: 'delivered', attempt_count: 1, failure_count: 0, next_attempt_at: null, last_status_code: 200, last_error: null, replay_requested_at: null };
    case 'retrying':
      return { status: 'pending', attempt_count: 1, failure_count: 1, next_attempt_at: at + 30_000, last_status_code: 503, last_error: 'HTTP 503', replay_requested_at: null };
    case 'pending':
      return { status: 'pending', attempt_count: 0, failure_count: 0, next_attempt_at: at, last_status_code: null, last_error: null, replay_requested_at: null };
    case 'replay-queued':
      return { status: 'pending', attempt_count: 6, failure_count: 6, next_attempt_at: at + 60_000, last_status_code: null, last_error: 'connection refused', replay_requested_at: at + 60_000 };
    case 'failed':
      return { status: 'failed', attempt_count: 6, failure_count: 6, next_attempt_at: null, last_status_code: 500, last_error: 'HTTP 500', replay_requested_at: null };
    case 'cancelled':
      return { status: 'cancelled', attempt_count: 0, failure_count: 0, next_attempt_at: null, last_status_code: null, last_error: null, replay_requested_at: null };
  }
}

/**
 * Deliveries in chosen states, written straight into the tables (with their events) as the outbox and the
 * worker leave them: one multi-row INSERT per 500 rows, in one transaction, so thousands are quick.
 */
async function seed(env: TestEnv, orgId: string, webhookId: string, specs: readonly SeedSpec[]): Promise<Seeded[]> {
  const seeded = specs.map((s) => ({
    id: newId('dlv'),
    eventId: s.eventId ?? newId('evt'),
    kind: s.kind,
    at: s.at,
    event: s.event ?? 'project.created',
    webhookId,
    order: insertions++,
    newEvent: s.eventId === undefined,
  }));
  await env.container.database.db.transaction().execute(async (trx) => {
    for (let i = 0; i < seeded.length; i += 500) {
      const chunk = seeded.slice(i, i + 500);
      const events = chunk
        .filter((d) => d.newEvent)
        .map((d) => ({ id: d.eventId, org_id: orgId, type: d.event, body: JSON.stringify({ event: d.event, timestamp: iso(d.at), data: { n: d.order } }), occurred_at: d.at }));
      if (events.length > 0) await trx.insertInto('events').values(events).execute();
      await trx
        .insertInto('deliveries')
        .values(
          chunk.map((d) => ({
            id: d.id,
            org_id: orgId,
            event_id: d.eventId,
            webhook_id: webhookId,
            event_type: d.event,
            ...deliveryColumns(d.kind, d.at),
            lease_owner: null,
            lease_expires_at: null,
            created_at: d.at,
            updated_at: d.at,
          })),
        )
        .execute();
    }
  });
  return seeded.map(({ newEvent: _newEvent, ...d }) => d);
}

async function seedAttempt(env: TestEnv, orgId: string, deliveryId: string, n: number, startedAt: number, trigger: 'automatic' | 'replay', ok: boolean): Promise<void> {
  await env.container.database.db
    .insertInto('delivery_attempts')
    .values({
      id: newId('att'),
      org_id: orgId,
      delivery_id: deliveryId,
      attempt_number: n,
      trigger,
      started_at: startedAt,
      duration_ms: 40,
      request_headers: JSON.stringify({ 'x-service-delivery-attempt': String(n) }),
      response_status: ok ? 200 : 500,
      response_headers: '{}',
      response_body: ok ? 'ok' : 'nope',
      error: ok ? null : 'HTTP 500',
      outcome: ok ? 'success' : 'failure',
    })
    .execute();
}

/** Newest first by creation time, then by insertion. */
const newestFirst = (rows: readonly Seeded[]) => [...rows].sort((a, b) => b.at - a.at || b.order - a.order);
const idsOf = (rows: readonly { id: string }[]) => rows.map((r) => r.id);
const dataIds = (res: ApiResponse): string[] => res.body.data.map((d: { id: string }) => d.id);

function expectValidation(res: ApiResponse, field: string, label = field): void {
  expect(res.status, label).toBe(400);
  expect(res.body.error.code, label).toBe('validation_failed');
  expect(res.body.error.details.map((d: { field: string }) => d.field), label).toContain(field);
}

function expectError(res: ApiResponse, status: number, code: string, label = ''): void {
  expect(res.status, label).toBe(status);
  expect(res.body.error.code, label).toBe(code);
}

describe.each(testDialects())('delivery history API (%s)', (dialect) => {
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 9, 30));
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;

  const db = () => env.container.database.db;
  const services = () => env.container.services;

  async function subscribe(o: TestOrg, name: string): Promise<string> {
    const res = await env.request('POST', '/v1/webhooks', { key: o.ownerKey, body: { url: `https://127.0.0.1:9/${name}`, events: ['project.created'] } });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  const list = (webhookId: string, query = '', key: string | null = org.ownerKey) =>
    env.request('GET', `/v1/webhooks/${webhookId}/deliveries${query ? `?${query}` : ''}`, { key });

  /** Follows next_cursor from the first page to the end; every page's ids in order. */
  async function walk(webhookId: string, query: string, between?: (page: ApiResponse) => Promise<void>): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(webhookId, [query, cursor ? `cursor=${cursor}` : ''].filter(Boolean).join('&'));
      expect(res.status).toBe(200);
      ids.push(...dataIds(res));
      cursor = res.body.next_cursor;
      pages++;
      if (between) await between(res);
      expect(pages).toBeLessThan(500);
    } while (cursor);
    return { ids, pages };
  }

  const deliveryRow = (id: string) => db().selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const replayAudits = (orgId: string) =>
    db().selectFrom('audit_log').selectAll().where('org_id', '=', orgId).where('action', '=', 'delivery.replayed').orderBy('seq').execute();
  const jobCount = async () => Number((await db().selectFrom('replay_jobs').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  /** Runs the job runner's batches until none has work left. */
  async function drainJobs(): Promise<number> {
    let batches = 0;
    while ((await services().replayJobs.runBatch()) > 0) {
      batches++;
      expect(batches).toBeLessThan(1000);
    }
    return batches;
  }

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
    org = await env.createOrg();
    other = await env.createOrg('Other');
  });
  afterAll(async () => env?.close());

  describe('filters', () => {
    const T = Date.UTC(2026, 10, 20, 12, 0, 0);
    let hook: string;
    let sibling: string;
    let rows: Seeded[];
    let shared: Seeded;

    beforeAll(async () => {
      hook = await subscribe(org, 'filters');
      sibling = await subscribe(org, 'filters-sibling');
      rows = await seed(env, org.id, hook, [
        { kind: 'delivered', at: T, event: 'project.created' },
        { kind: 'retrying', at: T + 1000, event: 'project.updated' },
        { kind: 'pending', at: T + 2000, event: 'project.created' },
        { kind: 'replay-queued', at: T + 3000, event: 'project.deleted' },
        { kind: 'failed', at: T + 4000, event: 'project.created' },
        { kind: 'cancelled', at: T + 5000, event: 'project.updated' },
        { kind: 'delivered', at: T + 6000, event: 'task.assigned' },
        { kind: 'failed', at: T + 6000, event: 'workflow.failed' }, // the same millisecond, inserted later: listed first
        { kind: 'delivered', at: T + 7000, event: 'project.created' },
        { kind: 'retrying', at: T + 8000, event: 'project.created' },
      ]);
      // Inserted last but created earlier: its place is by created_at, not by insertion.
      rows.push(...(await seed(env, org.id, hook, [{ kind: 'pending', at: T + 500, event: 'workflow.completed' }])));
      // The same event delivered to a second subscription, and deliveries of the other organisation.
      shared = (await seed(env, org.id, sibling, [{ kind: 'delivered', at: T + 7000, eventId: rows[8]!.eventId }, { kind: 'failed', at: T + 4000 }]))[0]!;
      const otherHook = await subscribe(other, 'filters-other');
      await seed(env, other.id, otherHook, [{ kind: 'delivered', at: T + 1 }, { kind: 'failed', at: T + 2 }]);
      // Attempts: the first delivered one once; the failed one automatically, then by a replay.
      await seedAttempt(env, org.id, rows[0]!.id, 1, T + 10, 'automatic', true);
      await seedAttempt(env, org.id, rows[4]!.id, 1, T + 4010, 'automatic', false);
      await seedAttempt(env, org.id, rows[4]!.id, 2, T + 9000, 'replay', false);
    });

    it('lists newest first by creation time, and by insertion within one millisecond', async () => {
      const res = await list(hook);
      expect(res.status).toBe(200);
      expect(dataIds(res)).toEqual(idsOf(newestFirst(rows)));
      expect(res.body.next_cursor).toBeNull();
      const sameMs = dataIds(res).filter((id) => id === rows[6]!.id || id === rows[7]!.id);
      expect(sameMs).toEqual([rows[7]!.id, rows[6]!.id]);
      // The late insert sits between the two oldest, where its creation time puts it.
      expect(dataIds(res).slice(-3)).toEqual([rows[1]!.id, rows[10]!.id, rows[0]!.id]);
    });

    it.each(HISTORY_STATES)('filters by status=%s (state words, pending split from retrying)', async (state) => {
      const res = await list(hook, `status=${state}`);
      expect(res.status).toBe(200);
      expect(dataIds(res)).toEqual(idsOf(newestFirst(rows.filter((r) => STATE_OF[r.kind] === state))));
      expect(res.body.data.length).toBeGreaterThan(0);
      for (const d of res.body.data) expect(d.status).toBe(state);
      expect(res.body.next_cursor).toBeNull();
    });

    it('counts a queued replay as pending and a failed-then-waiting delivery as retrying', async () => {
      const pending = dataIds(await list(hook, 'status=pending'));
      expect(pending).toContain(rows[3]!.id); // failure_count 6, replay requested
      expect(pending).toContain(rows[2]!.id); // first attempt not made yet
      const retrying = dataIds(await list(hook, 'status=retrying'));
      expect(retrying).toEqual([rows[9]!.id, rows[1]!.id]);
    });

    it('filters by event', async () => {
      for (const event of ['project.created', 'project.updated', 'task.assigned', 'workflow.completed', 'project.deleted'] as const) {
        const res = await list(hook, `event=${event}`);
        expect(dataIds(res), event).toEqual(idsOf(newestFirst(rows.filter((r) => r.event === event))));
      }
      expect((await list(hook, 'event=workflow.completed')).body.data[0].event_type).toBe('workflow.completed');
    });

    it('filters by creation time: from inclusive, to exclusive, to the millisecond', async () => {
      const between = (from: number, to: number) => idsOf(newestFirst(rows.filter((r) => r.at >= from && r.at < to)));
      expect(dataIds(await list(hook, `from=${iso(T + 2000)}`))).toEqual(between(T + 2000, Infinity));
      expect(dataIds(await list(hook, `from=${iso(T + 2001)}`))).toEqual(between(T + 3000, Infinity));
      expect(dataIds(await list(hook, `to=${iso(T + 6000)}`))).toEqual(between(0, T + 6000));
      expect(dataIds(await list(hook, `to=${iso(T + 6001)}`))).toEqual(between(0, T + 6001));
      expect(dataIds(await list(hook, `from=${iso(T + 6000)}&to=${iso(T + 6001)}`))).toEqual([rows[7]!.id, rows[6]!.id]);
      // Any offset is the same instant.
      expect(dataIds(await list(hook, `from=${encodeURIComponent('2026-11-20T13:00:02+01:00')}&to=${encodeURIComponent('2026-11-20T07:00:04-05:00')}`))).toEqual(
        between(T + 2000, T + 4000),
      );
      expect((await list(hook, `from=${iso(T + 8001)}`)).body).toEqual({ data: [], next_cursor: null });
    });

    it('filters by a delivery id or an event id, within the subscription only', async () => {
      expect(dataIds(await list(hook, `id=${rows[4]!.id}`))).toEqual([rows[4]!.id]);
      expect(dataIds(await list(hook, `id=${rows[8]!.eventId}`))).toEqual([rows[8]!.id]);
      expect(dataIds(await list(sibling, `id=${rows[8]!.eventId}`))).toEqual([shared.id]);
      expect(dataIds(await list(hook, `id=${encodeURIComponent(` ${rows[4]!.id} `)}`))).toEqual([rows[4]!.id]);
      // Another subscription's delivery, and an unknown id: no match, not an error.
      expect((await list(hook, `id=${shared.id}`)).body).toEqual({ data: [], next_cursor: null });
      expect((await list(hook, 'id=evt_doesnotexist')).body).toEqual({ data: [], next_cursor: null });
    });

    it('combines filters', async () => {
      expect(dataIds(await list(hook, `status=delivered&event=project.created&from=${iso(T)}&to=${iso(T + 7000)}`))).toEqual([rows[0]!.id]);
      expect(dataIds(await list(hook, `status=delivered&event=project.created`))).toEqual([rows[8]!.id, rows[0]!.id]);
      expect(dataIds(await list(hook, `status=failed&id=${rows[4]!.id}`))).toEqual([rows[4]!.id]);
      expect(dataIds(await list(hook, `status=delivered&id=${rows[4]!.id}`))).toEqual([]);
      expect(dataIds(await list(hook, `status=failed&event=workflow.failed&from=${iso(T + 6000)}`))).toEqual([rows[7]!.id]);
      expect(dataIds(await list(hook, `status=retrying&from=${iso(T + 1000)}&to=${iso(T + 8000)}`))).toEqual([rows[1]!.id]);
      expect(dataIds(await list(hook, `event=project.created&id=${rows[8]!.eventId}`))).toEqual([rows[8]!.id]);
      expect(dataIds(await list(hook, `event=project.updated&id=${rows[8]!.eventId}`))).toEqual([]);
    });

    it('answers each item with its state, last attempt and replay marker', async () => {
      const byId = new Map<string, Record<string, unknown>>((await list(hook)).body.data.map((d: { id: string }) => [d.id, d]));
      const keys = ['id', 'event_id', 'event_type', 'webhook_id', 'status', 'attempts', 'next_attempt_at', 'last_status_code', 'last_error', 'last_attempt_at', 'replayed', 'test', 'cancel_reason', 'waiting', 'created_at', 'updated_at'];
      for (const item of byId.values()) expect(Object.keys(item).sort()).toEqual([...keys].sort());
      expect(byId.get(rows[0]!.id)).toEqual({
        id: rows[0]!.id,
        event_id: rows[0]!.eventId,
        event_type: 'project.created',
        webhook_id: hook,
        status: 'delivered',
        attempts: 1,
        next_attempt_at: null,
        last_status_code: 200,
        last_error: null,
        last_attempt_at: iso(T + 10),
        replayed: false,
        test: false,
        cancel_reason: null,
        waiting: null,
        created_at: iso(T),
        updated_at: iso(T),
      });
      expect(byId.get(rows[1]!.id)).toMatchObject({ status: 'retrying', attempts: 1, next_attempt_at: iso(T + 31_000), last_status_code: 503, last_error: 'HTTP 503', last_attempt_at: null, replayed: false });
      expect(byId.get(rows[2]!.id)).toMatchObject({ status: 'pending', attempts: 0, next_attempt_at: iso(T + 2000), last_attempt_at: null, replayed: false });
      expect(byId.get(rows[3]!.id)).toMatchObject({ status: 'pending', attempts: 6, next_attempt_at: iso(T + 63_000), last_error: 'connection refused', replayed: true });
      expect(byId.get(rows[4]!.id)).toMatchObject({ status: 'failed', next_attempt_at: null, last_status_code: 500, last_error: 'HTTP 500', last_attempt_at: iso(T + 9000), replayed: true });
      expect(byId.get(rows[5]!.id)).toMatchObject({ status: 'cancelled', attempts: 0, next_attempt_at: null, last_attempt_at: null, replayed: false });
    });

    it('reads one delivery with its payload and attempts in order', async () => {
      const res = await env.request('GET', `/v1/webhooks/${hook}/deliveries/${rows[4]!.id}`, { key: org.ownerKey });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: rows[4]!.id, status: 'failed', last_attempt_at: iso(T + 9000), replayed: true });
      const event = await db().selectFrom('events').select('body').where('id', '=', rows[4]!.eventId).executeTakeFirstOrThrow();
      expect(res.body.payload).toBe(event.body);
      expect(res.body.attempt_history.map((a: { attempt_number: number; trigger: string; started_at: string }) => [a.attempt_number, a.trigger, a.started_at])).toEqual([
        [1, 'automatic', iso(T + 4010)],
        [2, 'replay', iso(T + 9000)],
      ]);
      expect(res.body.attempt_history[1]).toMatchObject({ outcome: 'failure', response_status: 500, response_body: 'nope', error: 'HTTP 500', request_headers: { 'x-service-delivery-attempt': '2' } });
      // Through the wrong subscription, it does not exist.
      expectError(await env.request('GET', `/v1/webhooks/${sibling}/deliveries/${rows[4]!.id}`, { key: org.ownerKey }), 404, 'not_found');
    });

    it('refuses bad parameters with validation_failed naming the field', async () => {
      // An organisation without subscriptions, so its projects add no deliveries here.
      const third = await env.createOrg('Third');
      for (const name of ['P1', 'P2']) expect((await env.request('POST', '/v1/projects', { key: third.ownerKey, body: { name } })).status).toBe(201);
      const projectsCursor = (await env.request('GET', '/v1/projects?limit=1', { key: third.ownerKey })).body.next_cursor;
      expect(projectsCursor).toEqual(expect.any(String));
      const from = iso(T + 2000);
      const cases: [string, string][] = [
        ['status=bogus', 'status'],
        ['status=Delivered', 'status'],
        ['status=', 'status'],
        ['event=project.exploded', 'event'],
        ['event=project.*', 'event'],
        ['from=yesterday', 'from'],
        ['from=2026-11-20', 'from'],
        ['from=2026-11-20T12:00:00', 'from'], // no offset: which zone?
        ['to=2026-13-01T00:00:00Z', 'to'],
        ['to=1732270000000', 'to'],
        [`from=${encodeURIComponent('2026-06-30T23:59:60Z')}`, 'from'], // a leap second the format allows, that no clock here names
        [`to=${encodeURIComponent('2026-12-31T23:59:60Z')}`, 'to'],
        [`from=${from}&to=${from}`, 'to'],
        [`from=${from}&to=${iso(T + 1999)}`, 'to'],
        ['id=abc', 'id'],
        ['id=wh_0123456789', 'id'],
        ['id=dlv_ABC', 'id'],
        ['id=dlv_', 'id'],
        [`id=dlv_${'a'.repeat(100)}`, 'id'],
        ['cursor=!!!', 'cursor'],
        ['cursor=Zm9vYmFy', 'cursor'],
        [`cursor=${projectsCursor}`, 'cursor'],
        [`cursor=${Buffer.from('h2:o:1:1').toString('base64url')}`, 'cursor'],
        [`cursor=${Buffer.from('h1:x:1:1').toString('base64url')}`, 'cursor'],
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        ['limit=x', 'limit'],
        ['limit=1.5', 'limit'],
      ];
      for (const [query, field] of cases) expectValidation(await list(hook, query), field, query);
      // Every offending field is named.
      const both = await list(hook, 'status=bogus&event=bogus');
      expect(both.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['event', 'status']);
      // The contract's order: 401, 403, then 400, then 404.
      expectError(await list(hook, 'status=bogus', null), 401, 'unauthorized');
      const projectsOnly = await org.member('owner', 'projects');
      expectError(await list(hook, 'status=bogus', projectsOnly.key), 403, 'forbidden');
      expectValidation(await list('wh_doesnotexist', 'status=bogus'), 'status');
      expectValidation(await list('wh_doesnotexist', 'cursor=!!!'), 'cursor');
      expectError(await list('wh_doesnotexist', 'status=failed'), 404, 'not_found');
    });
  });

  describe('paging', () => {
    const T = Date.UTC(2026, 10, 18, 8, 0, 0);
    let hook: string;
    let rows: Seeded[];

    beforeAll(async () => {
      hook = await subscribe(org, 'paging');
      // Three deliveries share each millisecond, and the states vary.
      const kinds: Kind[] = ['delivered', 'failed', 'delivered', 'retrying', 'delivered', 'cancelled', 'pending'];
      rows = await seed(env, org.id, hook, Array.from({ length: 25 }, (_, i) => ({ kind: kinds[i % kinds.length]!, at: T + Math.floor(i / 3) * 1000 })));
    });

    it('visits every delivery exactly once by following next_cursor, in list order', async () => {
      for (const limit of [1, 2, 3, 4, 7, 25, 100]) {
        const { ids, pages } = await walk(hook, `limit=${limit}`);
        expect(ids, `limit=${limit}`).toEqual(idsOf(newestFirst(rows)));
        expect(pages).toBe(Math.max(1, Math.ceil(rows.length / limit)));
      }
    });

    it('gives a null next_cursor on a page that ends exactly at the last item', async () => {
      const first = await list(hook, 'limit=5');
      expect(first.body.data).toHaveLength(5);
      let res = first;
      for (let i = 1; i < 5; i++) res = await list(hook, `limit=5&cursor=${res.body.next_cursor}`);
      expect(res.body.data).toHaveLength(5);
      expect(res.body.next_cursor).toBeNull();
    });

    it('is stable while deliveries are created during the walk, also in the same millisecond as the cursor', async () => {
      const before = idsOf(newestFirst(rows));
      const added: Seeded[] = [];
      const { ids } = await walk(hook, 'limit=4', async (page) => {
        const last = page.body.data.at(-1);
        const specs: SeedSpec[] = [{ kind: 'pending', at: T + 100_000 + added.length }];
        if (last) specs.push({ kind: 'delivered', at: Date.parse(last.created_at) });
        added.push(...(await seed(env, org.id, hook, specs)));
      });
      expect(ids).toEqual(before);
      expect(new Set(ids).size).toBe(ids.length);
      rows.push(...added);
      expect(dataIds(await list(hook, 'limit=100'))).toEqual(idsOf(newestFirst(rows)));
    });

    it('walks a filtered list the same way', async () => {
      for (const state of HISTORY_STATES) {
        const { ids } = await walk(hook, `status=${state}&limit=2`);
        expect(ids, state).toEqual(idsOf(newestFirst(rows.filter((r) => STATE_OF[r.kind] === state))));
      }
      const { ids } = await walk(hook, `from=${iso(T + 2000)}&to=${iso(T + 6000)}&limit=2`);
      expect(ids).toEqual(idsOf(newestFirst(rows.filter((r) => r.at >= T + 2000 && r.at < T + 6000))));
    });

    it('bounds the page size: default 20, 1 to 100', async () => {
      expect((await list(hook)).body.data).toHaveLength(20);
      expect((await list(hook, 'limit=1')).body.data).toHaveLength(1);
      expect((await list(hook, 'limit=100')).body.data).toHaveLength(rows.length);
      for (const limit of ['0', '101', '-1', '1e1', ' 5']) expectValidation(await list(hook, `limit=${encodeURIComponent(limit)}`), 'limit', limit);
    });

    it('leads back to newer pages with prevCursor (the dashboard’s "Newer")', async () => {
      const actor = cliActor(org.id);
      const pages: string[][] = [];
      let page = await services().deliveries.list(actor, hook, { limit: 4 });
      expect(page.prevCursor).toBeNull();
      pages.push(idsOf(page.items));
      while (page.nextCursor) {
        page = await services().deliveries.list(actor, hook, { limit: 4, cursor: page.nextCursor });
        pages.push(idsOf(page.items));
      }
      // Back from the oldest page: each newer page is the one seen before it.
      for (let i = pages.length - 2; i >= 0; i--) {
        expect(page.prevCursor).not.toBeNull();
        page = await services().deliveries.list(actor, hook, { limit: 4, cursor: page.prevCursor! });
        expect(idsOf(page.items)).toEqual(pages[i]);
      }
      expect(page.prevCursor).toBeNull();
    });

    it('links back from an empty older page, also from the first position there is', async () => {
      const actor = cliActor(org.id);
      const empty = await services().deliveries.list(actor, hook, { limit: 4, cursor: Buffer.from('h1:o:0:1').toString('base64url') });
      expect(empty.items).toEqual([]);
      expect(empty.nextCursor).toBeNull();
      expect(empty.prevCursor).toEqual(expect.any(String));
      const back = await services().deliveries.list(actor, hook, { limit: 4, cursor: empty.prevCursor! });
      expect(idsOf(back.items)).toEqual(idsOf(newestFirst(rows)).slice(-4));
      expect(back.nextCursor).toEqual(expect.any(String));
      expect((await list(hook, `cursor=${empty.prevCursor}`)).status).toBe(200);
    });
  });

  describe('bounded scans', () => {
    const B = Date.UTC(2026, 9, 1);
    const DELIVERED = HISTORY_SCAN_LIMIT + 200;
    let hook: string;
    let oldest: Seeded[];
    let newest: Seeded;
    let filler: Seeded[];

    beforeAll(async () => {
      hook = await subscribe(org, 'bounded');
      oldest = await seed(env, org.id, hook, [
        { kind: 'retrying', at: B, event: 'workflow.completed' },
        { kind: 'retrying', at: B + 1, event: 'workflow.completed' },
        { kind: 'failed', at: B + 2 },
      ]);
      filler = await seed(env, org.id, hook, Array.from({ length: DELIVERED }, (_, i) => ({ kind: 'delivered' as const, at: B + 10 + i })));
      newest = (await seed(env, org.id, hook, [{ kind: 'retrying', at: B + 10 + DELIVERED }]))[0]!;
    });

    it('returns a short page with next_cursor when the scan ends first, and following it finds the older matches', async () => {
      const first = await list(hook, 'status=retrying&limit=20');
      expect(first.status).toBe(200);
      expect(dataIds(first)).toEqual([newest.id]);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const second = await list(hook, `status=retrying&limit=20&cursor=${first.body.next_cursor}`);
      expect(dataIds(second)).toEqual([oldest[1]!.id, oldest[0]!.id]);
      expect(second.body.next_cursor).toBeNull();
      const { ids } = await walk(hook, 'status=retrying&limit=1');
      expect(ids).toEqual([newest.id, oldest[1]!.id, oldest[0]!.id]);
    });

    it('bounds an event filter the same way', async () => {
      const first = await list(hook, 'event=workflow.completed');
      expect(first.body.data).toEqual([]);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const second = await list(hook, `event=workflow.completed&cursor=${first.body.next_cursor}`);
      expect(dataIds(second)).toEqual([oldest[1]!.id, oldest[0]!.id]);
      expect(second.body.next_cursor).toBeNull();
    });

    it('says how far the scan searched (the dashboard’s "Searched back to"), and walks back with prevCursor', async () => {
      const actor = cliActor(org.id);
      const first = await services().deliveries.list(actor, hook, { limit: 20, filter: { status: 'retrying' } });
      expect(idsOf(first.items)).toEqual([newest.id]);
      // The scan examined the newest HISTORY_SCAN_LIMIT deliveries: the retrying one and the newest filler.
      expect(first.searchedTo).toBe(iso(filler[DELIVERED - (HISTORY_SCAN_LIMIT - 1)]!.at));
      const second = await services().deliveries.list(actor, hook, { limit: 20, cursor: first.nextCursor!, filter: { status: 'retrying' } });
      expect(idsOf(second.items)).toEqual([oldest[1]!.id, oldest[0]!.id]);
      expect(second.searchedTo).toBeNull();
      expect(second.nextCursor).toBeNull();
      const back: string[] = [];
      let cursor = second.prevCursor;
      for (let n = 0; cursor && n < 10; n++) {
        const page = await services().deliveries.list(actor, hook, { limit: 20, cursor, filter: { status: 'retrying' } });
        back.push(...idsOf(page.items));
        cursor = page.prevCursor;
      }
      expect(cursor).toBeNull();
      expect(back).toEqual([newest.id]);
    });

    it('serves the failed and cancelled filters from their partial indexes, without a bound', async () => {
      const [cancelled] = await seed(env, org.id, hook, [{ kind: 'cancelled', at: B + 3 }]);
      for (const [status, expected] of [['failed', oldest[2]!.id], ['cancelled', cancelled!.id]] as const) {
        const res = await list(hook, `status=${status}`);
        expect(dataIds(res), status).toEqual([expected]);
        expect(res.body.next_cursor).toBeNull();
        const page = await services().deliveries.list(cliActor(org.id), hook, { limit: 20, filter: { status } });
        expect(page.searchedTo).toBeNull();
      }
    });

    it('gives no next_cursor when the history ends exactly where the scan stops', async () => {
      const exact = await subscribe(org, 'bounded-exact');
      await seed(env, org.id, exact, Array.from({ length: HISTORY_SCAN_LIMIT }, (_, i) => ({ kind: 'delivered' as const, at: B + i })));
      const res = await list(exact, 'status=retrying');
      expect(res.body).toEqual({ data: [], next_cursor: null });
      const page = await services().deliveries.list(cliActor(org.id), exact, { limit: 20, filter: { status: 'retrying' } });
      expect(page.searchedTo).toBeNull();
      // One more delivery and the scan no longer reaches the end: the cursor leads on.
      await seed(env, org.id, exact, [{ kind: 'retrying', at: B - 1 }]);
      const first = await list(exact, 'status=retrying');
      expect(first.body.data).toEqual([]);
      const rest = await list(exact, `status=retrying&cursor=${first.body.next_cursor}`);
      expect(rest.body.data).toHaveLength(1);
      expect(rest.body.next_cursor).toBeNull();
    });
  });

  describe('permissions and isolation', () => {
    const T = Date.UTC(2026, 10, 21, 10, 0, 0);
    let hook: string;
    let sibling: string;
    let failed: Seeded;
    let delivered: Seeded;
    let jobId: string;
    let siblingJobId: string;

    beforeAll(async () => {
      hook = await subscribe(org, 'perm');
      sibling = await subscribe(org, 'perm-sibling');
      const seeded = await seed(env, org.id, hook, [{ kind: 'failed', at: T }, { kind: 'delivered', at: T + 1 }]);
      failed = seeded[0]!;
      delivered = seeded[1]!;
      // Jobs that take nothing: they exist to be read.
      const job = await env.request('POST', `/v1/webhooks/${hook}/replay-failed`, { key: org.ownerKey, body: { since: iso(T + 10) } });
      expect(job.status).toBe(202);
      jobId = job.body.id;
      siblingJobId = (await env.request('POST', `/v1/webhooks/${sibling}/replay-failed`, { key: org.ownerKey, body: { since: iso(T) } })).body.id;
    });

    const reads = (): [string, string][] => [
      ['GET', `/v1/webhooks/${hook}/deliveries`],
      ['GET', `/v1/webhooks/${hook}/deliveries/${failed.id}`],
      ['GET', `/v1/webhooks/${hook}/replay-jobs/${jobId}`],
    ];
    const writes = (): [string, string, unknown][] => [
      ['POST', `/v1/webhooks/${hook}/deliveries/${failed.id}/replay`, undefined],
      ['POST', `/v1/webhooks/${hook}/replay-failed`, { since: iso(T - 1000) }],
    ];

    async function unchanged<T>(work: () => Promise<T>): Promise<T> {
      const rows = [await deliveryRow(failed.id), await deliveryRow(delivered.id)];
      const audits = (await replayAudits(org.id)).length;
      const jobs = await jobCount();
      const result = await work();
      expect([await deliveryRow(failed.id), await deliveryRow(delivered.id)]).toEqual(rows);
      expect((await replayAudits(org.id)).length).toBe(audits);
      expect(await jobCount()).toBe(jobs);
      return result;
    }

    it('lets every role read the history; only admins and owners replay', async () => {
      const viewer = await org.member('viewer');
      const member = await org.member('member');
      const readOnly = await org.member('owner', 'read');
      const webhooksRead = await org.member('admin', 'webhooks:read');
      await unchanged(async () => {
        for (const key of [viewer.key, member.key, readOnly.key, webhooksRead.key]) {
          for (const [method, url] of reads()) expect((await env.request(method, url, { key })).status, url).toBe(200);
          for (const [method, url, body] of writes()) expectError(await env.request(method, url, { key, body }), 403, 'forbidden', url);
        }
      });
    });

    it('refuses a projects-only key (403) and a missing key (401)', async () => {
      const projectsOnly = await org.member('owner', 'projects');
      await unchanged(async () => {
        for (const [method, url] of reads()) expectError(await env.request(method, url, { key: projectsOnly.key }), 403, 'forbidden', url);
        for (const [method, url, body] of writes()) expectError(await env.request(method, url, { key: projectsOnly.key, body }), 403, 'forbidden', url);
        for (const [method, url] of reads()) expectError(await env.request(method, url), 401, 'unauthorized', url);
        for (const [method, url, body] of writes()) expectError(await env.request(method, url, { body }), 401, 'unauthorized', url);
      });
    });

    it('hides another organisation’s subscriptions, deliveries and jobs (404), and nothing changes', async () => {
      const theirHook = await subscribe(other, 'perm-theirs');
      await unchanged(async () => {
        for (const [method, url, body] of [...reads().map(([m, u]): [string, string, unknown] => [m, u, undefined]), ...writes()]) {
          expectError(await env.request(method, url, { key: other.ownerKey, body }), 404, 'not_found', url);
        }
        // Our delivery and our job addressed through their own subscription.
        for (const [method, url] of [
          ['GET', `/v1/webhooks/${theirHook}/deliveries/${failed.id}`],
          ['POST', `/v1/webhooks/${theirHook}/deliveries/${failed.id}/replay`],
          ['GET', `/v1/webhooks/${theirHook}/replay-jobs/${jobId}`],
        ] as const) {
          expectError(await env.request(method, url, { key: other.ownerKey }), 404, 'not_found', url);
        }
        expect((await list(theirHook, `id=${failed.id}`, other.ownerKey)).body).toEqual({ data: [], next_cursor: null });
        await expect(services().deliveries.replay(cliActor(other.id), null, failed.id)).rejects.toMatchObject({ status: 404 });
      });
    });

    it('answers 404 for a job of another subscription and for unknown or odd ids', async () => {
      await unchanged(async () => {
        expectError(await env.request('GET', `/v1/webhooks/${hook}/replay-jobs/${siblingJobId}`, { key: org.ownerKey }), 404, 'not_found');
        expectError(await env.request('GET', `/v1/webhooks/${sibling}/replay-jobs/${jobId}`, { key: org.ownerKey }), 404, 'not_found');
        for (const url of [
          `/v1/webhooks/${hook}/replay-jobs/rpl_doesnotexist`,
          `/v1/webhooks/${hook}/replay-jobs/bad%00id`,
          `/v1/webhooks/${hook}/deliveries/dlv_doesnotexist`,
          `/v1/webhooks/${hook}/deliveries/bad%00id`,
          `/v1/webhooks/wh_doesnotexist/deliveries`,
          `/v1/webhooks/bad%00id/deliveries`,
          `/v1/webhooks/bad%00id/replay-jobs/${jobId}`,
        ]) {
          expectError(await env.request('GET', url, { key: org.ownerKey }), 404, 'not_found', url);
        }
        for (const url of [`/v1/webhooks/${hook}/deliveries/bad%00id/replay`, `/v1/webhooks/${hook}/deliveries/dlv_doesnotexist/replay`, `/v1/webhooks/${sibling}/deliveries/${failed.id}/replay`]) {
          expectError(await env.request('POST', url, { key: org.ownerKey }), 404, 'not_found', url);
        }
        expectError(await env.request('POST', '/v1/webhooks/bad%00id/replay-failed', { key: org.ownerKey, body: { since: iso(T) } }), 404, 'not_found');
      });
    });
  });

  describe('replaying one delivery', () => {
    const T = Date.UTC(2026, 10, 21, 12, 0, 0);
    let hook: string;
    let rows: Seeded[];

    beforeAll(async () => {
      hook = await subscribe(org, 'replay-one');
      rows = await seed(env, org.id, hook, [
        { kind: 'pending', at: T },
        { kind: 'retrying', at: T + 1 },
        { kind: 'replay-queued', at: T + 2 },
        { kind: 'cancelled', at: T + 3 },
        { kind: 'failed', at: T + 4 },
        { kind: 'delivered', at: T + 5 },
      ]);
    });

    it('refuses pending, retrying and cancelled deliveries with 409 saying why, and changes nothing', async () => {
      const expected: [Seeded, RegExp][] = [
        [rows[0]!, /still being attempted.*once it is delivered or has failed/],
        [rows[1]!, /still being attempted/],
        [rows[2]!, /still being attempted/],
        [rows[3]!, /cancelled delivery cannot be replayed.*subscription was deleted before it was sent/],
      ];
      const audits = (await replayAudits(org.id)).length;
      for (const [row, message] of expected) {
        const before = await deliveryRow(row.id);
        const res = await env.request('POST', `/v1/webhooks/${hook}/deliveries/${row.id}/replay`, { key: org.ownerKey });
        expectError(res, 409, 'conflict', row.kind);
        expect(res.body.error.message, row.kind).toMatch(message);
        expect(await deliveryRow(row.id)).toEqual(before);
      }
      expect((await replayAudits(org.id)).length).toBe(audits);
    });

    it('queues a failed or delivered delivery once: 202 pending and replayed, one audit row; again is 409', async () => {
      for (const row of [rows[4]!, rows[5]!]) {
        clock.advance(1000);
        const audits = (await replayAudits(org.id)).length;
        const res = await env.request('POST', `/v1/webhooks/${hook}/deliveries/${row.id}/replay`, { key: org.ownerKey });
        expect(res.status).toBe(202);
        expect(res.body).toMatchObject({ id: row.id, status: 'pending', replayed: true, next_attempt_at: iso(clock.now()) });
        const stored = await deliveryRow(row.id);
        expect(stored).toMatchObject({ status: 'pending', replay_requested_at: clock.now() });
        const after = await replayAudits(org.id);
        expect(after).toHaveLength(audits + 1);
        expect(after.at(-1)).toMatchObject({ target_type: 'delivery', target_id: row.id, outcome: 'success' });
        expect(JSON.parse(after.at(-1)!.changes!)).toEqual({ status: { old: row.kind, new: 'pending' } });
        const again = await env.request('POST', `/v1/webhooks/${hook}/deliveries/${row.id}/replay`, { key: org.ownerKey });
        expectError(again, 409, 'conflict');
        expect(again.body.error.message).toMatch(/still being attempted/);
        expect(await deliveryRow(row.id)).toEqual(stored);
        expect(await replayAudits(org.id)).toHaveLength(audits + 1);
      }
    });

    it('refuses a delivery whose subscription was deleted: 409 through the service, 404 through its route', async () => {
      const gone = await subscribe(org, 'replay-gone');
      const [dead, deadFailed] = await seed(env, org.id, gone, [{ kind: 'delivered', at: T }, { kind: 'failed', at: T + 1 }]);
      expect((await env.request('DELETE', `/v1/webhooks/${gone}`, { key: org.ownerKey })).status).toBe(204);
      const audits = (await replayAudits(org.id)).length;
      for (const row of [dead!, deadFailed!]) {
        const before = await deliveryRow(row.id);
        const refused = await services()
          .deliveries.replay(cliActor(org.id), null, row.id)
          .then(
            () => null,
            (err: DomainError) => err,
          );
        expect(refused).toMatchObject({ status: 409, code: 'conflict' });
        expect(refused!.message).toMatch(/^the subscription of this delivery was deleted/);
        const res = await env.request('POST', `/v1/webhooks/${gone}/deliveries/${row.id}/replay`, { key: org.ownerKey });
        expectError(res, 404, 'not_found');
        expect(await deliveryRow(row.id)).toEqual(before);
      }
      expect(await replayAudits(org.id)).toHaveLength(audits);
      expectError(await list(gone), 404, 'not_found');
      expectError(await env.request('GET', `/v1/webhooks/${gone}/deliveries/${dead!.id}`, { key: org.ownerKey }), 404, 'not_found');
      expectError(await env.request('POST', `/v1/webhooks/${gone}/replay-failed`, { key: org.ownerKey, body: { since: iso(T) } }), 404, 'not_found');
    });
  });

  describe('bulk replay of failed deliveries', () => {
    const F = Date.UTC(2026, 10, 15, 0, 0, 0);
    let hook: string;
    let sibling: string;
    let rows: Seeded[];
    let counted: Seeded[];

    const replayFailed = (webhookId: string, body: unknown, key: string | null = org.ownerKey) =>
      env.request('POST', `/v1/webhooks/${webhookId}/replay-failed`, { key, body });
    const job = (webhookId: string, id: string) => env.request('GET', `/v1/webhooks/${webhookId}/replay-jobs/${id}`, { key: org.ownerKey });
    const items = (jobId: string) => db().selectFrom('replay_job_items').selectAll().where('job_id', '=', jobId).execute();

    beforeAll(async () => {
      hook = await subscribe(org, 'bulk');
      sibling = await subscribe(org, 'bulk-sibling');
      rows = await seed(env, org.id, hook, [
        { kind: 'failed', at: F - 1 }, // just before since
        { kind: 'failed', at: F }, // exactly since
        { kind: 'delivered', at: F + 500 },
        { kind: 'cancelled', at: F + 600 },
        { kind: 'retrying', at: F + 700 },
        { kind: 'replay-queued', at: F + 800 },
        { kind: 'failed', at: F + 1000 },
        { kind: 'failed', at: F + 1000 },
      ]);
      counted = [rows[1]!, rows[6]!, rows[7]!];
      await seed(env, org.id, sibling, [{ kind: 'failed', at: F + 100 }]);
      const theirs = await subscribe(other, 'bulk-theirs');
      await seed(env, other.id, theirs, [{ kind: 'failed', at: F + 100 }]);
    });

    it('refuses bad bodies (400, 415) and creates nothing', async () => {
      const jobs = await jobCount();
      const audits = (await replayAudits(org.id)).length;
      const cases: [unknown, string][] = [
        [{}, 'since'],
        [{ since: 'yesterday' }, 'since'],
        [{ since: '2026-11-15' }, 'since'],
        [{ since: '2026-11-15T00:00:00' }, 'since'],
        [{ since: '2026-06-30T23:59:60Z' }, 'since'],
        [{ since: F }, 'since'],
        [{ since: null }, 'since'],
        [{ since: iso(F), extra: 1 }, 'extra'],
        [{ since: iso(F), webhook_id: sibling }, 'webhook_id'],
      ];
      for (const [body, field] of cases) expectValidation(await replayFailed(hook, body), field, JSON.stringify(body));
      expectError(await replayFailed(hook, [iso(F)]), 400, 'validation_failed');
      expectError(await env.request('POST', `/v1/webhooks/${hook}/replay-failed`, { key: org.ownerKey }), 400, 'invalid_json');
      expectError(
        await env.request('POST', `/v1/webhooks/${hook}/replay-failed`, { key: org.ownerKey, payload: '{"since":', headers: { 'content-type': 'application/json' } }),
        400,
        'invalid_json',
      );
      expectError(
        await env.request('POST', `/v1/webhooks/${hook}/replay-failed`, { key: org.ownerKey, payload: `since=${iso(F)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
        415,
        'unsupported_media_type',
      );
      expectError(
        await env.request('POST', `/v1/webhooks/${hook}/replay-failed`, { key: org.ownerKey, payload: JSON.stringify({ since: iso(F) }), headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
      );
      expect(await jobCount()).toBe(jobs);
      expect(await replayAudits(org.id)).toHaveLength(audits);
      for (const row of rows) expect((await deliveryRow(row.id)).status).toBe(deliveryColumns(row.kind, row.at).status);
    });

    it('lets only admins and owners ask (member and viewer 403)', async () => {
      const jobs = await jobCount();
      for (const role of ['member', 'viewer'] as const) {
        const { key } = await org.member(role);
        expectError(await replayFailed(hook, { since: iso(F) }, key), 403, 'forbidden', role);
        // 403 comes before the body's 400.
        expectError(await replayFailed(hook, { since: 'nope' }, key), 403, 'forbidden', role);
      }
      expect(await jobCount()).toBe(jobs);
      const admin = await org.member('admin');
      const res = await replayFailed(sibling, { since: iso(F) }, admin.key);
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ webhook_id: sibling, count: 1, status: 'running' });
      await drainJobs();
    });

    it('takes exactly the failed deliveries created at or after since, audits once, and the runner re-queues them', async () => {
      clock.advance(60_000);
      const askedAt = clock.now();
      const preview = await services().replayJobs.preview(cliActor(org.id), hook, F);
      expect(preview).toEqual({ count: 3, more: false });
      const audits = (await replayAudits(org.id)).length;
      const res = await replayFailed(hook, { since: iso(F) });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^rpl_[0-9a-z]+$/),
        webhook_id: hook,
        since: iso(F),
        status: 'running',
        count: 3,
        more: false,
        queued: 0,
        skipped: 0,
        delivered: 0,
        failed: 0,
        pending: 0,
        requested_by: expect.stringMatching(/@example\.com$/),
        created_at: iso(askedAt),
        finished_at: null,
      });
      const jobId = res.body.id;
      expect((await items(jobId)).map((i) => [i.delivery_id, i.state]).sort()).toEqual(counted.map((r) => [r.id, 'waiting']).sort());
      const audit = (await replayAudits(org.id)).slice(audits);
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ target_type: 'webhook', target_id: hook, outcome: 'success', occurred_at: askedAt });
      const changes = JSON.parse(audit[0]!.changes!);
      expect(changes).toMatchObject({ replayed: { new: 3 }, job: { new: jobId }, failed_since: { new: iso(F) } });
      // Nothing is re-queued until the runner's turn.
      for (const row of counted) expect((await deliveryRow(row.id)).status).toBe('failed');

      clock.advance(1000);
      const ranAt = clock.now();
      expect(await drainJobs()).toBeGreaterThan(0);
      for (const row of counted) expect(await deliveryRow(row.id)).toMatchObject({ status: 'pending', replay_requested_at: ranAt, next_attempt_at: ranAt });
      expect((await deliveryRow(rows[0]!.id)).status).toBe('failed');
      const after = await job(hook, jobId);
      expect(after.status).toBe(200);
      expect(after.body).toMatchObject({ id: jobId, status: 'done', count: 3, queued: 3, skipped: 0, pending: 3, delivered: 0, failed: 0, finished_at: iso(ranAt) });
      expect((await items(jobId)).every((i) => i.state === 'queued')).toBe(true);
      expect((await list(hook, 'status=pending')).body.data.filter((d: { replayed: boolean }) => d.replayed)).toHaveLength(4);
      expect((await services().replayJobs.listRecent(cliActor(org.id), hook)).map((j) => j.id)).toContain(jobId);
    });

    it('answers a job with nothing to take as done with count 0', async () => {
      const audits = (await replayAudits(org.id)).length;
      const res = await replayFailed(hook, { since: iso(clock.now() + HOUR) });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ status: 'done', count: 0, more: false, queued: 0, skipped: 0, finished_at: iso(clock.now()), created_at: iso(clock.now()) });
      expect(await items(res.body.id)).toEqual([]);
      expect((await job(hook, res.body.id)).body).toEqual(res.body);
      const audit = (await replayAudits(org.id)).slice(audits);
      expect(audit).toHaveLength(1);
      expect(JSON.parse(audit[0]!.changes!)).toMatchObject({ replayed: { new: 0 }, job: { new: res.body.id } });
      expect(await services().replayJobs.runBatch()).toBe(0);
    });

    it('skips a delivery replayed one by one before its turn, without queueing it twice', async () => {
      const own = await subscribe(org, 'bulk-skip');
      const failed = await seed(env, org.id, own, [{ kind: 'failed', at: F }, { kind: 'failed', at: F + 1 }, { kind: 'failed', at: F + 2 }]);
      const started = await replayFailed(own, { since: iso(F) });
      expect(started.body).toMatchObject({ count: 3, status: 'running' });
      clock.advance(1000);
      const singleAt = clock.now();
      expect((await env.request('POST', `/v1/webhooks/${own}/deliveries/${failed[1]!.id}/replay`, { key: org.ownerKey })).status).toBe(202);
      clock.advance(1000);
      const ranAt = clock.now();
      await drainJobs();
      const done = await job(own, started.body.id);
      expect(done.body).toMatchObject({ status: 'done', count: 3, queued: 2, skipped: 1, pending: 2 });
      expect(await deliveryRow(failed[1]!.id)).toMatchObject({ status: 'pending', replay_requested_at: singleAt, updated_at: singleAt });
      for (const row of [failed[0]!, failed[2]!]) expect(await deliveryRow(row.id)).toMatchObject({ status: 'pending', replay_requested_at: ranAt });
      const states = new Map((await items(started.body.id)).map((i) => [i.delivery_id, i.state]));
      expect(states.get(failed[1]!.id)).toBe('skipped');
      expect(states.get(failed[0]!.id)).toBe('queued');
    });

    it('skips the deliveries of a subscription deleted while its job runs: they stay failed', async () => {
      const own = await subscribe(org, 'bulk-deleted');
      const failed = await seed(env, org.id, own, [{ kind: 'failed', at: F }, { kind: 'failed', at: F + 1 }]);
      const started = await replayFailed(own, { since: iso(F) });
      expect(started.body.count).toBe(2);
      expect((await env.request('DELETE', `/v1/webhooks/${own}`, { key: org.ownerKey })).status).toBe(204);
      await drainJobs();
      for (const row of failed) expect(await deliveryRow(row.id)).toMatchObject({ status: 'failed', replay_requested_at: null });
      const stored = await db().selectFrom('replay_jobs').selectAll().where('id', '=', started.body.id).executeTakeFirstOrThrow();
      expect(stored).toMatchObject({ status: 'done', queued: 0, skipped: 2 });
    });

    it(`takes at most ${MAX_BULK_REPLAY}, the oldest, and says there are more`, async () => {
      const big = await subscribe(org, 'bulk-bound');
      const failed = await seed(env, org.id, big, Array.from({ length: MAX_BULK_REPLAY + 1 }, (_, i) => ({ kind: 'failed' as const, at: F + i })));
      expect(await services().replayJobs.preview(cliActor(org.id), big, F)).toEqual({ count: MAX_BULK_REPLAY, more: true });
      const res = await replayFailed(big, { since: iso(F) });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ count: MAX_BULK_REPLAY, more: true, status: 'running' });
      const taken = new Set((await items(res.body.id)).map((i) => i.delivery_id));
      expect(taken.size).toBe(MAX_BULK_REPLAY);
      expect(taken.has(failed[0]!.id)).toBe(true);
      expect(taken.has(failed[MAX_BULK_REPLAY - 1]!.id)).toBe(true);
      expect(taken.has(failed[MAX_BULK_REPLAY]!.id)).toBe(false);
      const audit = (await replayAudits(org.id)).at(-1)!;
      expect(JSON.parse(audit.changes!)).toMatchObject({ replayed: { new: MAX_BULK_REPLAY }, job: { new: res.body.id } });
      await drainJobs();
      expect((await job(big, res.body.id)).body).toMatchObject({ status: 'done', queued: MAX_BULK_REPLAY, skipped: 0, pending: MAX_BULK_REPLAY });
      expect((await deliveryRow(failed[MAX_BULK_REPLAY]!.id)).status).toBe('failed');
      // The next request takes the one left.
      expect(await services().replayJobs.preview(cliActor(org.id), big, F)).toEqual({ count: 1, more: false });
    });

    it('queues every item exactly once with two runners at once, also across two jobs over the same deliveries', async () => {
      const busy = await subscribe(org, 'bulk-concurrent');
      const n = 2_600;
      const failed = await seed(env, org.id, busy, Array.from({ length: n }, (_, i) => ({ kind: 'failed' as const, at: F + i })));
      const first = await replayFailed(busy, { since: iso(F) });
      const second = await replayFailed(busy, { since: iso(F) });
      expect([first.body.count, second.body.count]).toEqual([n, n]);
      let rounds = 0;
      for (;;) {
        const [a, b] = await Promise.all([services().replayJobs.runBatch(), services().replayJobs.runBatch()]);
        if (a === 0 && b === 0) break;
        expect(++rounds).toBeLessThan(200);
      }
      const jobs = [(await job(busy, first.body.id)).body, (await job(busy, second.body.id)).body];
      for (const j of jobs) {
        expect(j.status).toBe('done');
        expect(j.queued + j.skipped).toBe(n);
      }
      expect(jobs[0].queued + jobs[1].queued).toBe(n);
      const states = await db()
        .selectFrom('replay_job_items')
        .select(['state', (eb) => eb.fn.countAll().as('n')])
        .where('job_id', 'in', [first.body.id, second.body.id])
        .groupBy('state')
        .execute();
      const byState = Object.fromEntries(states.map((s) => [s.state, Number(s.n)]));
      expect(byState.waiting).toBeUndefined();
      expect(byState.queued).toBe(n);
      expect(byState.skipped).toBe(n);
      const stillFailed = await db().selectFrom('deliveries').select('id').where('webhook_id', '=', busy).where('status', '!=', 'pending').execute();
      expect(stillFailed).toEqual([]);
      expect(failed).toHaveLength(n);
    });
  });

  describe('OpenAPI', () => {
    it('marks the history routes as extensions and documents the query parameters', async () => {
      const doc = (await env.request('GET', '/openapi.json')).body;
      const ops = [
        doc.paths['/v1/webhooks/{id}/deliveries'].get,
        doc.paths['/v1/webhooks/{id}/deliveries/{delivery_id}'].get,
        doc.paths['/v1/webhooks/{id}/deliveries/{delivery_id}/replay'].post,
        doc.paths['/v1/webhooks/{id}/replay-failed'].post,
        doc.paths['/v1/webhooks/{id}/replay-jobs/{job_id}'].get,
      ];
      for (const op of ops) {
        expect(op['x-extension']).toBe(true);
        expect(op.summary).toMatch(/extension/);
      }
      const params = new Map<string, { in: string; schema: Record<string, unknown>; description?: string }>(
        ops[0].parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => [p.name, p]),
      );
      expect([...params.keys()].sort()).toEqual(['cursor', 'event', 'from', 'id', 'limit', 'status', 'to']);
      expect(JSON.stringify(params.get('status'))).toContain('retrying');
      // Named schemas are components: follow the reference.
      const named = (ref: unknown) => doc.components.schemas[String((ref as { $ref: string }).$ref).split('/').pop()!];
      expect(named(params.get('status')!.schema).enum).toEqual([...HISTORY_STATES]);
      expect(named(params.get('event')!.schema).enum).toContain('project.created');
      expect(params.get('from')!.schema).toMatchObject({ format: 'date-time' });
      expect(params.get('to')!.schema).toMatchObject({ format: 'date-time' });
      expect(ops[0].description).toContain(String(HISTORY_SCAN_LIMIT));
      const body = named(ops[3].requestBody.content['application/json'].schema);
      expect(body).toMatchObject({ additionalProperties: false, required: ['since'] });
      expect(ops[3].responses['202']).toBeDefined();
      expect(ops[3].responses['415']).toBeDefined();
      expect(ops[4].parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['id', 'job_id']));
    });
  });
});

/** The hourly roll-up as the real worker writes it beside the attempts, and the bulk replay's runner. */
describe.each(testDialects())('delivery roll-up and replay runner with a real worker (%s)', (dialect) => {
  let harness: DeliveryHarness;
  let receiver: HttpsReceiver;
  let env: TestEnv;

  beforeAll(async () => {
    harness = await startDeliveryHarness(dialect, { WEBHOOK_RETRY_SCHEDULE: '30ms,30ms' });
    ({ receiver, env } = harness);
  });
  afterAll(async () => harness?.close());

  /** The roll-up's rows, and the same counted from the attempts themselves. */
  async function rollUpAndAttempts(orgId: string) {
    const db = env.container.database.db;
    const rollUp = await db.selectFrom('delivery_hourly').selectAll().where('org_id', '=', orgId).execute();
    const counted = await sql<{ webhook_id: string; hour: number | string; delivered: number | string; failed: number | string }>`
      SELECT d.webhook_id, a.started_at / ${sql.lit(HOUR)} AS hour,
             SUM(CASE WHEN a.outcome = 'success' THEN 1 ELSE 0 END) AS delivered,
             SUM(CASE WHEN a.outcome = 'success' THEN 0 ELSE 1 END) AS failed
      FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
      WHERE a.org_id = ${orgId}
      GROUP BY d.webhook_id, a.started_at / ${sql.lit(HOUR)}
    `.execute(db);
    const norm = (rows: { webhook_id: string; hour: number | string; delivered: number | string; failed: number | string }[]) =>
      rows.map((r) => `${r.webhook_id} ${Number(r.hour)} ${Number(r.delivered)} ${Number(r.failed)}`).sort();
    return { rollUp: norm(rollUp), attempts: norm(counted.rows) };
  }

  it('keeps delivery_hourly equal to the attempts per hour and subscription, replays included', async () => {
    let flaky = 0;
    receiver.on('/flaky', (_req, res) => void res.writeHead(++flaky <= 3 ? 200 : 503).end());
    const org = await env.createOrg();
    const create = async (p: string) => (await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: receiver.url(p), events: ['project.created'] } })).body.id as string;
    const okHook = await create('/ok');
    const flakyHook = await create('/flaky');
    for (let i = 0; i < 6; i++) expect((await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: `P${i}` } })).status).toBe(201);
    const settled = async (hook: string, status: string, n: number) => (await env.request('GET', `/v1/webhooks/${hook}/deliveries?status=${status}`, { key: org.ownerKey })).body.data.length === n;
    await waitFor('every delivery settled', async () => (await settled(okHook, 'delivered', 6)) && (await settled(flakyHook, 'delivered', 3)) && (await settled(flakyHook, 'failed', 3)));

    let { rollUp, attempts } = await rollUpAndAttempts(org.id);
    expect(rollUp).toEqual(attempts);
    const total = (rows: string[], hook: string) =>
      rows.filter((r) => r.startsWith(`${hook} `)).reduce((sum, r) => sum.map((v, i) => v + Number(r.split(' ')[i + 2])), [0, 0]);
    expect(total(rollUp, okHook)).toEqual([6, 0]);
    expect(total(rollUp, flakyHook)).toEqual([3, 9]);

    // The receiver recovers; a bulk replay sent through the worker's runner counts in the roll-up too.
    receiver.on('/flaky', (_req, res) => void res.writeHead(200).end());
    const job = await env.request('POST', `/v1/webhooks/${flakyHook}/replay-failed`, { key: org.ownerKey, body: { since: '2000-01-01T00:00:00Z' } });
    expect(job.status).toBe(202);
    expect(job.body.count).toBe(3);
    const done = await waitFor('the replays delivered', async () => {
      const res = await env.request('GET', `/v1/webhooks/${flakyHook}/replay-jobs/${job.body.id}`, { key: org.ownerKey });
      return res.body.status === 'done' && res.body.delivered === 3 ? res.body : null;
    });
    expect(done).toMatchObject({ queued: 3, skipped: 0, failed: 0, pending: 0 });
    ({ rollUp, attempts } = await rollUpAndAttempts(org.id));
    expect(rollUp).toEqual(attempts);
    expect(total(rollUp, flakyHook)).toEqual([6, 9]);
    const replayed = await env.request('GET', `/v1/webhooks/${flakyHook}/deliveries?status=delivered`, { key: org.ownerKey });
    expect(replayed.body.data.filter((d: { replayed: boolean }) => d.replayed)).toHaveLength(3);
  });
});

/** Migration 005 fills the roll-up from the attempts already stored, so the charts read the same after it. */
describe.each(testDialects())('migration 005 roll-up backfill (%s)', (dialect) => {
  it('sums the existing attempts per subscription and UTC hour', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-backfill-'));
    const pgDb = dialect === 'postgres' ? await createPgDatabase() : null;
    const database = openDatabase({ databaseUrl: pgDb?.url ?? null, dataDir: dir });
    try {
      const migrator = new Migrator({ db: database.db, provider: migrationProvider(database.dialect) });
      expect((await migrator.migrateTo('004_usage_stats')).error).toBeUndefined();
      const h = Math.floor(Date.UTC(2026, 10, 20, 10) / HOUR);
      const attempts: [string, string, number, boolean][] = [
        ['org_a', 'wh_1', h * HOUR, true], // the first instant of an hour
        ['org_a', 'wh_1', h * HOUR + HOUR - 1, false], // its last millisecond
        ['org_a', 'wh_1', h * HOUR + HOUR - 1, true],
        ['org_a', 'wh_1', (h + 1) * HOUR, false],
        ['org_a', 'wh_2', h * HOUR + 5, true],
        ['org_b', 'wh_3', h * HOUR + 5, false],
      ];
      const deliveries = new Map<string, string>();
      for (const [orgId, webhookId, startedAt, ok] of attempts) {
        let deliveryId = deliveries.get(webhookId);
        if (!deliveryId) {
          deliveryId = newId('dlv');
          deliveries.set(webhookId, deliveryId);
          await database.db
            .insertInto('deliveries')
            .values({
              id: deliveryId,
              org_id: orgId,
              event_id: newId('evt'),
              webhook_id: webhookId,
              event_type: 'project.created',
              status: 'failed',
              attempt_count: 0,
              failure_count: 0,
              next_attempt_at: null,
              lease_owner: null,
              lease_expires_at: null,
              last_status_code: null,
              last_error: null,
              created_at: startedAt,
              updated_at: startedAt,
            })
            .execute();
        }
        await database.db
          .insertInto('delivery_attempts')
          .values({
            id: newId('att'),
            org_id: orgId,
            delivery_id: deliveryId,
            attempt_number: 1,
            trigger: 'automatic',
            started_at: startedAt,
            duration_ms: 1,
            request_headers: '{}',
            response_status: null,
            response_headers: null,
            response_body: null,
            error: null,
            outcome: ok ? 'success' : 'failure',
          })
          .execute();
      }
      expect((await migrator.migrateTo('005_delivery_history')).error).toBeUndefined();
      const rows = await database.db.selectFrom('delivery_hourly').selectAll().execute();
      expect(rows.map((r) => `${r.org_id} ${r.webhook_id} ${Number(r.hour) - h} ${Number(r.delivered)} ${Number(r.failed)}`).sort()).toEqual([
        'org_a wh_1 0 2 1',
        'org_a wh_1 1 0 1',
        'org_a wh_2 0 1 0',
        'org_b wh_3 0 0 1',
      ]);
    } finally {
      await database.close();
      await pgDb?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
