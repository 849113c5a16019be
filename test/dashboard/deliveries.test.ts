import type { Insertable } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DB } from '../../src/db/schema.js';
import { newId } from '../../src/lib/ids.js';
import { formatUtc, toIso, durationInWords } from '../../src/lib/time.js';
import { cliActor } from '../../src/services/access/actor.js';
import { HISTORY_SCAN_LIMIT } from '../../src/services/webhooks/deliveries-service.js';
import { EVENT_TYPES, type EventType } from '../../src/schemas/events.js';
import type { ReplayJob } from '../../src/schemas/deliveries.js';
import { jobProgress, responseInWords } from '../../src/dashboard/views/delivery-views.js';
import { DashboardClient, noticeOf, tableRows, textOf, type PageResponse } from '../helpers/dashboard.js';
import { startDeliveryHarness, waitFor, type DeliveryHarness } from '../helpers/https-receiver.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** One row of the "Deliveries" table, each cell as its text, and the row's link. */
interface Row {
  status: string;
  event: string;
  eventId: string;
  attempts: string;
  response: string;
  lastAttempt: string;
  replayed: string;
  href: string;
}

function deliveryRows(html: string): Row[] {
  const caption = html.search(/<caption[^>]*>Deliveries<\/caption>/);
  if (caption < 0) throw new Error('no "Deliveries" table on the page');
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html.slice(caption))![1]!;
  const rows: Row[] = [];
  for (const [, tr] of body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)) {
    const cells = [...tr!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!);
    if (cells.length !== 7) continue; // the "no deliveries" row
    const [status, event, eventId, attempts, response, lastAttempt, replayed] = cells.map(textOf) as [string, string, string, string, string, string, string];
    const href = /href="([^"]+)"/.exec(cells[1]!)![1]!.replace(/&amp;/g, '&');
    rows.push({ status, event: event.split(' ')[0]!, eventId, attempts, response, lastAttempt, replayed, href });
  }
  return rows;
}

/** The href of a link by its text, with the HTML escaping of `&` undone. */
function linkHref(html: string, text: string): string | null {
  const match = new RegExp(`<a href="([^"]+)"[^>]*>${text}</a>`).exec(html);
  return match ? match[1]!.replace(/&amp;/g, '&') : null;
}

/** The exact text of a `<pre>` named by a heading id: the renderer's escaping undone, whitespace kept. */
function preText(html: string, labelledBy: string): string {
  const match = new RegExp(`<pre class="payload" tabindex="0" aria-labelledby="${labelledBy}">([\\s\\S]*?)</pre>`).exec(html);
  if (!match) throw new Error(`no <pre> labelled by ${labelledBy}`);
  return match[1]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
}

/** The exact bytes under "Raw payload", the renderer's escaping undone. */
function rawPayload(html: string): string {
  const match = /<pre class="payload" tabindex="0" aria-label="Raw payload">([\s\S]*?)<\/pre>/.exec(html);
  if (!match) throw new Error('no raw payload');
  return match[1]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
}

/** The HTML of the section "Attempt N". */
function attemptSection(html: string, n: number): string {
  const match = new RegExp(`<section class="attempt panel" aria-labelledby="attempt-${n}">([\\s\\S]*?)</section>`).exec(html);
  if (!match) throw new Error(`no section "Attempt ${n}"`);
  return match[1]!;
}

/** A datetime-local value (minutes, no zone) for an instant; the pages read it as UTC. */
const localValue = (ms: number) => toIso(ms).slice(0, 16);

function expectFilterError(res: PageResponse, message: string, field: string) {
  expect(res.status).toBe(400);
  expect(res.text).toContain('role="alert"');
  expect(textOf(res.text)).toContain(message);
  expect(res.text).toMatch(new RegExp(`id="${field}"[^>]*aria-invalid="true"`));
  expect(res.text).not.toMatch(/<caption[^>]*>Deliveries<\/caption>/);
}

type SeedState = 'delivered' | 'failed' | 'retrying' | 'pending' | 'cancelled';

interface SeedAttempt {
  at: number;
  /** The response status; null: no response (then `error` says why). */
  status: number | null;
  error?: string;
  body?: string | null;
  trigger?: 'automatic' | 'replay';
  responseHeaders?: Record<string, string>;
  durationMs?: number;
}

interface SeedInput {
  orgId: string;
  webhookId: string;
  state: SeedState;
  createdAt: number;
  event?: EventType;
  /** The event's stored body; a small envelope by default. */
  body?: string;
  attempts?: SeedAttempt[];
  nextAttemptAt?: number;
  replayRequestedAt?: number;
}

interface Seeded {
  id: string;
  eventId: string;
  body: string;
}

const ok = (a: SeedAttempt) => a.status !== null && a.status >= 200 && a.status < 300;

/**
 * One delivery with its event and attempts, written straight into the tables as the outbox and the worker
 * leave them (the hourly roll-up included), in any state: Retrying is a pending row that failed before.
 */
async function seedDelivery(env: TestEnv, input: SeedInput): Promise<Seeded> {
  const db = env.container.database.db;
  const id = newId('dlv');
  const eventId = newId('evt');
  const event = input.event ?? 'project.created';
  const body = input.body ?? JSON.stringify({ event, timestamp: toIso(input.createdAt), data: { delivery: id } });
  const defaults: Record<SeedState, SeedAttempt[]> = {
    delivered: [{ at: input.createdAt + 1000, status: 200 }],
    failed: [{ at: input.createdAt + 1000, status: 500 }],
    retrying: [{ at: input.createdAt + 1000, status: 503 }],
    pending: [],
    cancelled: [],
  };
  const attempts = input.attempts ?? defaults[input.state];
  const last = attempts.at(-1);
  const stored = input.state === 'retrying' ? 'pending' : input.state;
  const nextAttemptAt = stored === 'pending' ? (input.nextAttemptAt ?? input.createdAt + 5 * MINUTE_MS) : null;
  await db.insertInto('events').values({ id: eventId, org_id: input.orgId, type: event, body, occurred_at: input.createdAt }).execute();
  await db
    .insertInto('deliveries')
    .values({
      id,
      org_id: input.orgId,
      event_id: eventId,
      webhook_id: input.webhookId,
      event_type: event,
      status: stored,
      attempt_count: attempts.length,
      failure_count: attempts.filter((a) => !ok(a)).length,
      next_attempt_at: nextAttemptAt,
      lease_owner: null,
      lease_expires_at: null,
      last_status_code: last?.status ?? null,
      last_error: last && !ok(last) ? (last.error ?? `HTTP ${last.status}`) : null,
      created_at: input.createdAt,
      updated_at: last?.at ?? input.createdAt,
      replay_requested_at: input.replayRequestedAt ?? null,
    })
    .execute();
  for (const [i, a] of attempts.entries()) {
    await db
      .insertInto('delivery_attempts')
      .values({
        id: newId('att'),
        org_id: input.orgId,
        delivery_id: id,
        attempt_number: i + 1,
        trigger: a.trigger ?? 'automatic',
        started_at: a.at,
        duration_ms: a.durationMs ?? 120,
        request_headers: JSON.stringify({ 'content-type': 'application/json', 'x-service-event-id': eventId, 'x-service-delivery-attempt': String(i + 1) }),
        response_status: a.status,
        response_headers: a.status === null ? null : JSON.stringify(a.responseHeaders ?? { 'content-type': 'text/plain' }),
        response_body: a.status === null ? null : (a.body ?? 'ok'),
        error: ok(a) ? null : (a.error ?? `HTTP ${a.status}`),
        outcome: ok(a) ? 'success' : 'failure',
      })
      .execute();
    await env.container.store.repos.deliveryQueue.addHourly([
      { orgId: input.orgId, webhookId: input.webhookId, hour: Math.floor(a.at / HOUR_MS), delivered: ok(a) ? 1 : 0, failed: ok(a) ? 0 : 1 },
    ]);
  }
  return { id, eventId, body };
}

describe('delivery history in words', () => {
  it('names the last response by status and reason, or by the kind of failure', () => {
    expect(responseInWords(503, 'HTTP 503')).toEqual({ words: '503 Service Unavailable', detail: null });
    expect(responseInWords(200, null)).toEqual({ words: '200 OK', detail: null });
    expect(responseInWords(302, 'redirect not followed: HTTP 302').words).toBe('302 Found (redirect not followed)');
    expect(responseInWords(null, null).words).toBe('No response yet');
    const cases: [string, string][] = [
      ['timeout: no response status within 10000 ms', 'Timeout'],
      ['ECONNREFUSED: connect ECONNREFUSED 203.0.113.5:443', 'Connection refused'],
      ['CERT_HAS_EXPIRED: certificate has expired', 'TLS error'],
      ['DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate', 'TLS error'],
      ['refused by SSRF guard: target address 10.0.0.8 is not public (private)', 'Blocked address'],
      ['ENOTFOUND: hooks.example.invalid did not resolve to any address', 'Host not found'],
      ['ECONNRESET: other side closed', 'Connection closed by the receiver'],
      ['something else entirely', 'Connection failed'],
    ];
    for (const [error, words] of cases) expect(responseInWords(null, error), error).toEqual({ words, detail: error });
  });

  it('says retention periods and bulk replay progress in words', () => {
    expect(durationInWords(7 * DAY_MS)).toBe('7 days');
    expect(durationInWords(DAY_MS)).toBe('1 day');
    expect(durationInWords(36 * HOUR_MS)).toBe('36 hours');
    expect(durationInWords(90 * MINUTE_MS)).toBe('90 minutes');
    const job: ReplayJob = {
      id: 'rpl_x',
      webhook_id: 'wh_x',
      since: toIso(0),
      status: 'running',
      count: 300,
      more: false,
      queued: 120,
      skipped: 0,
      delivered: 0,
      failed: 0,
      pending: 0,
      requested_by: 'a@example.com',
      created_at: toIso(0),
      finished_at: null,
    };
    expect(jobProgress(job)).toBe('Running: 120 of 300 sent again, 0 delivered, 0 failed');
    expect(jobProgress({ ...job, status: 'done', queued: 300, delivered: 290, failed: 10 })).toBe('Done: 300 sent again, 290 delivered, 10 failed, 0 skipped');
    expect(jobProgress({ ...job, status: 'done', count: 0, queued: 0 })).toBe('Done: no failed deliveries to send again');
  });
});

describe.each(testDialects())('dashboard: delivery history and replay (%s)', (dialect) => {
  let env: TestEnv;
  const clock = new ManualClock();
  let org: TestOrg;
  let other: TestOrg;
  let admin: { userId: string };
  let member: { userId: string };
  let viewer: { userId: string };
  let otherHook: string;

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
    org = await env.createOrg('Hooks & Co');
    other = await env.createOrg('Elsewhere');
    admin = await org.member('admin');
    member = await org.member('member');
    viewer = await org.member('viewer');
    otherHook = await createHook(other, 'https://127.0.0.1:9/elsewhere');
  });
  afterAll(async () => env?.close());

  const db = () => env.container.database.db;
  const browserFor = (userId: string, orgId = org.id) => DashboardClient.signedIn(env, orgId, userId);

  async function createHook(owner: TestOrg, url: string, events: EventType[] = [...EVENT_TYPES]): Promise<string> {
    const res = await env.request('POST', '/v1/webhooks', { key: owner.ownerKey, body: { url, events } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  const seed = (webhookId: string, input: Omit<SeedInput, 'orgId' | 'webhookId'>, orgId = org.id) => seedDelivery(env, { orgId, webhookId, ...input });

  /** What a refused request must leave as it was. */
  async function snapshot(orgId = org.id) {
    const [deliveries, attempts, audit, jobs] = await Promise.all([
      db()
        .selectFrom('deliveries')
        .select(['id', 'status', 'attempt_count', 'next_attempt_at', 'replay_requested_at', 'updated_at'])
        .where('org_id', '=', orgId)
        .orderBy('id')
        .execute(),
      db().selectFrom('delivery_attempts').select('id').where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('audit_log').select('id').where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('replay_jobs').select(['id', 'status', 'queued']).where('org_id', '=', orgId).orderBy('id').execute(),
    ]);
    return { deliveries, attempts, audit, jobs };
  }

  const pageOf = (hook: string) => `/dashboard/webhooks/${hook}`;
  const deliveryPage = (hook: string, id: string) => `/dashboard/webhooks/${hook}/deliveries/${id}`;

  it('shows the subscription to every role, with the chart, the retention note and the filters; only admins and owners get the actions', async () => {
    const hook = await createHook(org, 'https://127.0.0.1:9/roles', ['project.created', 'task.assigned']);
    for (const [userId, acts] of [
      [org.ownerId, true],
      [admin.userId, true],
      [member.userId, false],
      [viewer.userId, false],
    ] as const) {
      const browser = await browserFor(userId);
      const res = await browser.get(pageOf(hook));
      expect(res.status).toBe(200);
      expect(res.text).toContain('<title>Subscription to 127.0.0.1:9 · Hooks &amp; Co · Workspace</title>');
      expect(textOf(/<h1>([^]*?)<\/h1>/.exec(res.text)![1]!)).toBe('Subscription to 127.0.0.1:9');
      expect(textOf(res.text)).toContain('Events: project.created , task.assigned');
      expect(res.text).toMatch(/<a href="\/dashboard\/webhooks" aria-current="page">Webhooks<\/a>/);
      // The chart with its summary and its table.
      expect(res.text).toContain('<h2 id="health-title">Deliveries per hour</h2>');
      expect(res.text).toMatch(/<caption[^>]*>Deliveries per hour<\/caption>/);
      expect(textOf(res.text)).toContain('No deliveries in the last 24 hours');
      expect(textOf(res.text)).toContain('Delivered deliveries are kept for 7 days, failed and cancelled ones for 30 days');
      // The filter form and its exact names.
      expect(res.text).toMatch(/<form method="get" action="\/dashboard\/webhooks\/wh_[a-z0-9]+" class="filters delivery-filters" role="search"/);
      for (const [id, label] of [['status', 'Status'], ['event', 'Event'], ['from', 'From'], ['to', 'To'], ['id', 'Event or delivery ID']]) {
        expect(res.text).toContain(`<label for="${id}">${label}</label>`);
      }
      // Days picked, not times typed (DASHBOARD 8's filters in words, the same on this page).
      expect(res.text).toMatch(/<input id="from" name="from" type="date"/);
      expect(res.text).toMatch(/<input id="to" name="to" type="date"/);
      for (const word of ['Any', 'Delivered', 'Retrying', 'Pending', 'Failed', 'Cancelled']) expect(res.text).toMatch(new RegExp(`<option value(="[a-z]+")?( selected)?>${word}</option>`));
      for (const event of EVENT_TYPES) expect(res.text).toContain(`<option value="${event}">${event}</option>`);
      expect(res.text).toContain('<button type="submit" class="secondary">Filter</button>');
      expect(res.text).toMatch(/<caption[^>]*>Deliveries<\/caption>/);
      expect(textOf(res.text)).toContain('No deliveries yet.');

      expect(linkHref(res.text, 'Replay failed deliveries')).toBe(acts ? `${pageOf(hook)}/replay-failed` : null);
      expect(linkHref(res.text, 'Delete subscription')).toBe(acts ? `${pageOf(hook)}/delete` : null);
      expect(res.text.includes('<h2 id="bulk-title">Bulk replays</h2>')).toBe(acts);
      expect(res.text).not.toMatch(/\sstyle=/);
      expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
    }
  });

  it('answers 404 pages for unknown subscriptions, other organisations’ and malformed ids', async () => {
    const browser = await browserFor(org.ownerId);
    const foreign = await seed(otherHook, { state: 'failed', createdAt: clock.now() - HOUR_MS }, other.id);
    for (const url of [
      pageOf('wh_nope'),
      pageOf(otherHook),
      `${pageOf(otherHook)}?status=bogus`,
      pageOf('bad%00id'),
      `${pageOf(otherHook)}/replay-failed`,
      deliveryPage(otherHook, foreign.id),
    ]) {
      const res = await browser.get(url);
      expect(res.status, url).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).not.toContain('127.0.0.1:9/elsewhere');
    }
  });

  it('lists deliveries newest first, with status and last response in words, attempts, replayed marker and a link each', async () => {
    const hook = await createHook(org, 'https://127.0.0.1:9/list');
    const t = clock.now() - 10 * HOUR_MS;
    const delivered = await seed(hook, { state: 'delivered', createdAt: t, event: 'project.created' });
    const failed = await seed(hook, {
      state: 'failed',
      createdAt: t + MINUTE_MS,
      event: 'project.updated',
      attempts: [
        { at: t + MINUTE_MS + 1000, status: 503 },
        { at: t + 2 * MINUTE_MS, status: null, error: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9' },
      ],
    });
    const retrying = await seed(hook, { state: 'retrying', createdAt: t + 2 * MINUTE_MS, event: 'task.assigned', nextAttemptAt: Date.UTC(2026, 10, 22, 14, 5) });
    const pending = await seed(hook, { state: 'pending', createdAt: t + 3 * MINUTE_MS, event: 'workflow.completed' });
    const cancelled = await seed(hook, { state: 'cancelled', createdAt: t + 4 * MINUTE_MS, event: 'workflow.failed' });
    const replayed = await seed(hook, {
      state: 'delivered',
      createdAt: t + 5 * MINUTE_MS,
      event: 'project.deleted',
      attempts: [
        { at: t + 5 * MINUTE_MS + 1000, status: null, error: 'timeout: no response status within 10000 ms' },
        { at: t + 7 * MINUTE_MS, status: 200, trigger: 'replay' },
      ],
    });

    const res = await (await browserFor(viewer.userId)).get(pageOf(hook));
    expect(res.status).toBe(200);
    const rows = deliveryRows(res.text);
    expect(rows.map((r) => r.eventId)).toEqual([replayed, cancelled, pending, retrying, failed, delivered].map((d) => d.eventId));
    expect(rows.map((r) => r.status)).toEqual(['Delivered', 'Cancelled', 'Pending', 'Retrying — next attempt 22 Nov 2026, 14:05:00 UTC', 'Failed', 'Delivered']);
    expect(res.text).toContain('Retrying — next attempt <time datetime="2026-11-22T14:05:00.000Z" title="22 Nov 2026, 14:05:00 UTC">22 Nov 2026, 14:05:00 UTC</time>');
    expect(rows.map((r) => r.event)).toEqual(['project.deleted', 'workflow.failed', 'workflow.completed', 'task.assigned', 'project.updated', 'project.created']);
    expect(rows.map((r) => r.attempts)).toEqual(['2', '0', '0', '1', '2', '1']);
    expect(rows.map((r) => r.response)).toEqual([
      '200 OK',
      'No response yet',
      'No response yet',
      '503 Service Unavailable',
      'Connection refused ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9',
      '200 OK',
    ]);
    expect(rows[0]!.lastAttempt).toBe(`${formatUtc(t + 7 * MINUTE_MS)}`);
    expect(rows[1]!.lastAttempt).toBe('never');
    expect(rows.map((r) => r.replayed)).toEqual(['Replayed', '', '', '', '', '']);
    expect(rows.map((r) => r.href)).toEqual([replayed, cancelled, pending, retrying, failed, delivered].map((d) => deliveryPage(hook, d.id)));
    // One page, so no pager links.
    expect(linkHref(res.text, 'Older')).toBeNull();
    expect(linkHref(res.text, 'Newer')).toBeNull();
  });

  it('filters by status in words, event, time range, delivery or event id, and their combination', async () => {
    const hook = await createHook(org, 'https://127.0.0.1:9/filters');
    const base = Date.UTC(2026, 10, 21, 12, 0);
    const at = (i: number) => base + i * 10 * MINUTE_MS;
    const d = {
      delivered: await seed(hook, { state: 'delivered', createdAt: at(0), event: 'project.created' }),
      failed: await seed(hook, { state: 'failed', createdAt: at(1), event: 'project.updated' }),
      retrying: await seed(hook, { state: 'retrying', createdAt: at(2), event: 'project.created' }),
      pending: await seed(hook, { state: 'pending', createdAt: at(3), event: 'project.created' }),
      cancelled: await seed(hook, { state: 'cancelled', createdAt: at(4), event: 'task.assigned' }),
      replayQueued: await seed(hook, { state: 'pending', createdAt: at(5), event: 'project.updated', attempts: [{ at: at(5) + 1000, status: 500 }], replayRequestedAt: at(6) }),
    };
    // Another subscription's delivery never shows, whatever the filter.
    const elsewhere = await seed(await createHook(org, 'https://127.0.0.1:9/filters-2'), { state: 'failed', createdAt: at(1) });
    const browser = await browserFor(member.userId);
    const eventIds = async (query: Record<string, string>) => {
      const res = await browser.get(`${pageOf(hook)}?${new URLSearchParams(query)}`);
      expect(res.status, JSON.stringify(query)).toBe(200);
      return deliveryRows(res.text).map((r) => r.eventId);
    };
    const ids = (...list: Seeded[]) => list.map((s) => s.eventId);

    expect(await eventIds({})).toEqual(ids(d.replayQueued, d.cancelled, d.pending, d.retrying, d.failed, d.delivered));
    expect(await eventIds({ status: 'delivered' })).toEqual(ids(d.delivered));
    expect(await eventIds({ status: 'failed' })).toEqual(ids(d.failed));
    expect(await eventIds({ status: 'retrying' })).toEqual(ids(d.retrying));
    // A queued replay waits like a first attempt: Pending, not Retrying.
    expect(await eventIds({ status: 'pending' })).toEqual(ids(d.replayQueued, d.pending));
    expect(await eventIds({ status: 'cancelled' })).toEqual(ids(d.cancelled));
    expect(await eventIds({ status: '' })).toHaveLength(6);
    expect(await eventIds({ event: 'project.created' })).toEqual(ids(d.pending, d.retrying, d.delivered));
    expect(await eventIds({ event: 'workflow.failed' })).toEqual([]);
    // From is inclusive, To exclusive, both read as UTC.
    expect(await eventIds({ from: localValue(at(2)) })).toEqual(ids(d.replayQueued, d.cancelled, d.pending, d.retrying));
    expect(await eventIds({ to: localValue(at(2)) })).toEqual(ids(d.failed, d.delivered));
    expect(await eventIds({ from: localValue(at(1)), to: localValue(at(3)) })).toEqual(ids(d.retrying, d.failed));
    expect(await eventIds({ id: d.failed.id })).toEqual(ids(d.failed));
    expect(await eventIds({ id: ` ${d.cancelled.eventId} ` })).toEqual(ids(d.cancelled));
    expect(await eventIds({ id: elsewhere.id })).toEqual([]);
    expect(await eventIds({ status: 'pending', event: 'project.created' })).toEqual(ids(d.pending));
    expect(await eventIds({ event: 'project.created', from: localValue(at(1)), to: localValue(at(3)) })).toEqual(ids(d.retrying));
    expect(await eventIds({ status: 'failed', id: d.delivered.eventId })).toEqual([]);

    // The chosen filters stay in the form, with a way to clear them.
    const filtered = await browser.get(`${pageOf(hook)}?${new URLSearchParams({ status: 'retrying', event: 'project.created', from: localValue(at(1)), id: d.retrying.id })}`);
    expect(filtered.text).toContain('<option value="retrying" selected>Retrying</option>');
    expect(filtered.text).toContain('<option value="project.created" selected>project.created</option>');
    expect(filtered.text).toMatch(new RegExp(`id="from"[^>]*value="${localValue(at(1))}"`));
    expect(filtered.text).toMatch(new RegExp(`id="id"[^>]*value="${d.retrying.id}"`));
    expect(linkHref(filtered.text, 'Clear filters')).toBe(pageOf(hook));
    expect(textOf((await browser.get(`${pageOf(hook)}?status=failed&event=task.assigned`)).text)).toContain('No deliveries match these filters');
  });

  it('lists filters it cannot read with status 400, each on its field, and a stale page link as a sentence', async () => {
    const hook = await createHook(org, 'https://127.0.0.1:9/bad-filters');
    await seed(hook, { state: 'failed', createdAt: clock.now() - HOUR_MS });
    const browser = await browserFor(viewer.userId);
    const get = (query: Record<string, string>) => browser.get(`${pageOf(hook)}?${new URLSearchParams(query)}`);
    expectFilterError(await get({ status: 'broken' }), 'Status must be one of Delivered, Retrying, Pending, Failed, Cancelled', 'status');
    expectFilterError(await get({ event: 'project.exploded' }), 'Event must be one of project.created', 'event');
    expectFilterError(await get({ from: 'yesterday' }), 'From must be a date, or a date and time in UTC such as 2026-01-31 14:30', 'from');
    expectFilterError(await get({ to: '2026-02-30T10:00' }), 'To must be a date, or a date and time', 'to');
    expectFilterError(await get({ from: '2026-11-22T10:00', to: '2026-11-22T09:00' }), 'To must be later than from', 'to');
    expectFilterError(await get({ id: 'not-an-id' }), 'Event or delivery ID must be a delivery id (dlv_…) or an event id (evt_…)', 'id');
    // Several at once are listed together; what was typed stays in the form.
    const both = await get({ status: 'broken', from: 'soon' });
    expectFilterError(both, 'Status must be one of', 'status');
    expectFilterError(both, 'From must be a date, or a date and time', 'from');
    expect(both.text).toMatch(/id="from"[^>]*value="soon"/);
    for (const cursor of ['bogus', Buffer.from('h1:o:12345678901234567:1').toString('base64url'), Buffer.from('h1:x:1:1').toString('base64url')]) {
      const stale = await get({ cursor, status: 'failed' });
      expect(stale.status, cursor).toBe(400);
      expect(textOf(stale.text)).toContain('This page link is no longer valid. Start again from the newest deliveries.');
      expect(stale.text).not.toMatch(/<caption[^>]*>Deliveries<\/caption>/);
    }
    // A value longer than any filter is refused before any work, still as a page.
    const huge = await get({ status: 'x'.repeat(100) });
    expect(huge.status).toBe(400);
    expect(huge.headers['content-type']).toMatch(/^text\/html/);
  });

  it('pages with "Older" and "Newer" both ways, 25 a page, keeping the filters in the links', async () => {
    const hook = await createHook(org, 'https://127.0.0.1:9/pages');
    const base = clock.now() - 3 * DAY_MS;
    const seeded: Seeded[] = [];
    for (let i = 0; i < 60; i++) {
      seeded.push(await seed(hook, { state: i % 2 === 0 ? 'delivered' : 'failed', createdAt: base + i * MINUTE_MS, event: i % 3 === 0 ? 'task.assigned' : 'project.created' }));
    }
    const newestFirst = [...seeded].reverse().map((s) => s.eventId);
    const browser = await browserFor(member.userId);

    const first = await browser.get(pageOf(hook));
    expect(deliveryRows(first.text).map((r) => r.eventId)).toEqual(newestFirst.slice(0, 25));
    expect(linkHref(first.text, 'Newer')).toBeNull();
    const second = await browser.get(linkHref(first.text, 'Older')!);
    expect(deliveryRows(second.text).map((r) => r.eventId)).toEqual(newestFirst.slice(25, 50));
    const third = await browser.get(linkHref(second.text, 'Older')!);
    expect(deliveryRows(third.text).map((r) => r.eventId)).toEqual(newestFirst.slice(50));
    expect(linkHref(third.text, 'Older')).toBeNull();
    // Back up: the same pages again, and the newest has no "Newer".
    const secondAgain = await browser.get(linkHref(third.text, 'Newer')!);
    expect(deliveryRows(secondAgain.text).map((r) => r.eventId)).toEqual(newestFirst.slice(25, 50));
    const firstAgain = await browser.get(linkHref(secondAgain.text, 'Newer')!);
    expect(deliveryRows(firstAgain.text).map((r) => r.eventId)).toEqual(newestFirst.slice(0, 25));
    expect(linkHref(firstAgain.text, 'Newer')).toBeNull();
    expect(linkHref(firstAgain.text, 'Older')).not.toBeNull();

    // Filtered: 30 failed, of which 10 are task.assigned; the links keep every filter.
    const failedIds = newestFirst.filter((_, i) => i % 2 === 0);
    const page1 = await browser.get(`${pageOf(hook)}?status=failed`);
    expect(deliveryRows(page1.text).map((r) => r.eventId)).toEqual(failedIds.slice(0, 25));
    const older = linkHref(page1.text, 'Older')!;
    expect(older).toMatch(/^\/dashboard\/webhooks\/wh_[a-z0-9]+\?status=failed&cursor=[A-Za-z0-9_-]+$/);
    const page2 = await browser.get(older);
    expect(deliveryRows(page2.text).map((r) => r.eventId)).toEqual(failedIds.slice(25));
    expect(linkHref(page2.text, 'Older')).toBeNull();
    const back = await browser.get(linkHref(page2.text, 'Newer')!);
    expect(deliveryRows(back.text).map((r) => r.eventId)).toEqual(failedIds.slice(0, 25));

    const from = localValue(base);
    const combined = await browser.get(`${pageOf(hook)}?${new URLSearchParams({ event: 'project.created', from })}`);
    const combinedIds = deliveryRows(combined.text).map((r) => r.eventId);
    expect(combinedIds).toHaveLength(25);
    const next = linkHref(combined.text, 'Older')!;
    expect(next).toContain(`event=project.created&from=${encodeURIComponent(from)}&cursor=`);
    const rest = deliveryRows((await browser.get(next)).text).map((r) => r.eventId);
    expect([...combinedIds, ...rest]).toEqual(newestFirst.filter((_, i) => (59 - i) % 3 !== 0));
  });

  it('says how far a bounded search went when a filter no index serves finds too little, and "Older" continues it', async () => {
    const hook = await createHook(org, 'https://127.0.0.1:9/big');
    const base = clock.now() - 2 * DAY_MS;
    // Oldest three task.assigned, then more than one scan's worth of project.created, then one task.assigned.
    const rows: Insertable<DB['deliveries']>[] = [];
    const total = HISTORY_SCAN_LIMIT + 9;
    for (let i = 0; i < total; i++) {
      const event = i < 3 || i === total - 1 ? 'task.assigned' : 'project.created';
      rows.push({
        id: `dlv_big${String(i).padStart(8, '0')}`,
        org_id: org.id,
        event_id: `evt_big${String(i).padStart(8, '0')}`,
        webhook_id: hook,
        event_type: event,
        status: 'delivered',
        attempt_count: 1,
        failure_count: 0,
        next_attempt_at: null,
        lease_owner: null,
        lease_expires_at: null,
        last_status_code: 200,
        last_error: null,
        created_at: base + i * 1000,
        updated_at: base + i * 1000,
      });
    }
    for (let i = 0; i < rows.length; i += 500) await db().insertInto('deliveries').values(rows.slice(i, i + 500)).execute();

    const browser = await browserFor(viewer.userId);
    const first = await browser.get(`${pageOf(hook)}?event=task.assigned`);
    expect(first.status).toBe(200);
    expect(deliveryRows(first.text).map((r) => r.eventId)).toEqual([`evt_big${String(total - 1).padStart(8, '0')}`]);
    // The scan stopped at the 5,000th newest delivery.
    const stop = toIso(base + (total - HISTORY_SCAN_LIMIT) * 1000);
    expect(textOf(first.text)).toContain(`Searched 5,000 deliveries back to ${formatUtc(Date.parse(stop), { seconds: true })} : no more match there. Older continues the search.`);
    expect(first.text).toContain(`<time datetime="${stop}" title=`);
    const older = linkHref(first.text, 'Older')!;
    expect(older).toContain('event=task.assigned&cursor=');

    const second = await browser.get(older);
    expect(deliveryRows(second.text).map((r) => r.eventId)).toEqual(['evt_big00000002', 'evt_big00000001', 'evt_big00000000']);
    expect(textOf(second.text)).not.toContain('Searched 5,000 deliveries');
    expect(linkHref(second.text, 'Older')).toBeNull();

    // Searching up from there, the scan ends before it reaches the newest match: nothing on this page, and it says so.
    const up = await browser.get(linkHref(second.text, 'Newer')!);
    expect(deliveryRows(up.text)).toEqual([]);
    expect(textOf(up.text)).toMatch(/Searched 5,000 deliveries as far as \d+ [A-Z][a-z]{2} \d{4}, [0-9:]+ UTC : none match there\. Older and Newer continue the search\./);
    const further = await browser.get(linkHref(up.text, 'Newer')!);
    expect(deliveryRows(further.text).map((r) => r.eventId)).toEqual([`evt_big${String(total - 1).padStart(8, '0')}`]);

    // A status no index serves is bounded the same way; Failed is served by its index and never says so.
    const retrying = await browser.get(`${pageOf(hook)}?status=retrying`);
    expect(deliveryRows(retrying.text)).toEqual([]);
    expect(textOf(retrying.text)).toContain('none match there. Older continues the search.');
    const failed = await browser.get(`${pageOf(hook)}?status=failed`);
    expect(textOf(failed.text)).not.toContain('Searched');
    expect(linkHref(failed.text, 'Older')).toBeNull();
  });

  it('draws the chart from this subscription’s attempts: the table behind it equals the seeded attempts', async () => {
    const hook = await createHook(org, 'https://127.0.0.1:9/chart');
    const now = clock.now();
    const hourStart = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;
    const oneHourAgo = hourStart(now) - HOUR_MS;
    const threeHoursAgo = hourStart(now) - 3 * HOUR_MS;
    await seed(hook, { state: 'delivered', createdAt: oneHourAgo + 60_000 });
    await seed(hook, { state: 'delivered', createdAt: oneHourAgo + 120_000 });
    await seed(hook, {
      state: 'failed',
      createdAt: threeHoursAgo + 60_000,
      attempts: [
        { at: threeHoursAgo + 61_000, status: 500 },
        { at: oneHourAgo + 5_000, status: null, error: 'timeout: no response status within 10000 ms' },
      ],
    });
    // Neither another subscription's attempts nor those older than 24 hours count.
    await seed(await createHook(org, 'https://127.0.0.1:9/chart-2'), { state: 'failed', createdAt: oneHourAgo });
    await seed(hook, { state: 'failed', createdAt: now - 2 * DAY_MS });

    const res = await (await browserFor(viewer.userId)).get(pageOf(hook));
    const hours = tableRows(res.text, 'Deliveries per hour');
    expect(hours).toHaveLength(24);
    const label = (ms: number) => formatUtc(ms);
    expect(hours).toContain(`${label(oneHourAgo)} 2 1 3`);
    expect(hours).toContain(`${label(threeHoursAgo)} 0 1 1`);
    expect(hours.filter((h) => !h.endsWith(' 0 0 0'))).toHaveLength(2);
    // The headline counts this subscription's deliveries of the window (2 of 3 delivered), the attempts apart.
    expect(textOf(res.text)).toContain('66.7% delivered (2 of 3 deliveries); 2 failed attempts along the way');
  });

  it('shows a delivery: its payload exactly, every attempt with headers and body as text, and says when a body was cut', async () => {
    const hook = await createHook(org, 'https://127.0.0.1:9/detail');
    const t = clock.now() - 2 * HOUR_MS;
    const payload = JSON.stringify({ event: 'project.created', timestamp: toIso(t), data: { name: '<b>Bold</b> & "quoted" </pre><script>alert(2)</script>', spaces: '  two\n lines' } });
    const big = 'x'.repeat(65_536);
    const d = await seed(hook, {
      state: 'failed',
      createdAt: t,
      body: payload,
      attempts: [
        { at: t + 1000, status: 503, body: '<script>alert(1)</script>', responseHeaders: { 'content-type': 'text/html', 'retry-after': '120' }, durationMs: 1234 },
        { at: t + 60_000, status: null, error: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9', durationMs: 3 },
        { at: t + 120_000, status: 502, body: big, trigger: 'replay' },
      ],
    });
    const res = await (await browserFor(viewer.userId)).get(deliveryPage(hook, d.id));
    expect(res.status).toBe(200);
    expect(res.text).toContain('<title>Delivery of project.created · Hooks &amp; Co · Workspace</title>');
    const text = textOf(res.text);
    for (const fact of ['Status Failed', 'Event project.created', `Event ID ${d.eventId}`, `Delivery ID ${d.id}`, `Created ${formatUtc(t, { seconds: true })}`, 'Attempts 3', 'Last response 502 Bad Gateway']) {
      expect(text).toContain(fact);
    }
    expect(linkHref(res.text, 'Back to the subscription')).toBe(pageOf(hook));
    // The payload pretty-printed first, byte for byte under "Raw payload", as text: nothing in it becomes markup.
    expect(preText(res.text, 'payload-title')).toBe(JSON.stringify(JSON.parse(payload), null, 2));
    expect(res.text).toContain('<summary>Raw payload</summary>');
    expect(rawPayload(res.text)).toBe(payload);
    // Newest attempt first and open; the older ones collapsed.
    expect(res.text.indexOf('id="attempt-3"')).toBeLessThan(res.text.indexOf('id="attempt-1"'));
    expect(attemptSection(res.text, 3)).not.toContain('<details>');
    expect(attemptSection(res.text, 1)).toContain('<details>');
    expect(res.text).not.toContain('<script>alert(2)</script>');
    expect(res.text).not.toContain('<b>Bold</b>');

    const first = attemptSection(res.text, 1);
    expect(first).toContain('<h3 id="attempt-1">Attempt 1</h3>');
    expect(textOf(first)).toContain('Trigger Automatic');
    expect(textOf(first)).toContain('Outcome Failed');
    expect(textOf(first)).toContain(`Started ${formatUtc(t + 1000, { seconds: true })}`);
    expect(textOf(first)).toContain('Duration 1,234 ms');
    expect(textOf(first)).toContain('Response status 503 Service Unavailable');
    expect(textOf(first)).toContain('Error HTTP 503');
    expect(tableRows(first, 'Request headers of attempt 1')).toContain(`x-service-event-id ${d.eventId}`);
    expect(tableRows(first, 'Response headers of attempt 1')).toEqual(['content-type text/html', 'retry-after 120']);
    expect(preText(first, 'attempt-1-body')).toBe('<script>alert(1)</script>');
    expect(res.text).not.toContain('<script>alert(1)</script>');
    expect(first).toContain('&lt;script>alert(1)&lt;/script>');
    expect(first).not.toContain('Showing the first 64 KiB');

    const second = attemptSection(res.text, 2);
    expect(textOf(second)).toContain('Response status No response');
    expect(textOf(second)).toContain('Error Connection refused: ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9');
    expect(tableRows(second, 'Response headers of attempt 2')).toEqual(['None.']);
    expect(textOf(second)).toContain('No response body.');

    const third = attemptSection(res.text, 3);
    expect(textOf(third)).toContain('Trigger Replay');
    expect(textOf(third)).toContain('Response status 502 Bad Gateway');
    expect(textOf(third)).toContain('Showing the first 64 KiB (stored size: 65,536 bytes)');
    expect(preText(third, 'attempt-3-body')).toBe(big);
    expect(res.text).not.toContain('<section class="attempt panel" aria-labelledby="attempt-4">');
  });

  it('answers 404 for a delivery of another subscription or organisation, and for unknown ids', async () => {
    const hookA = await createHook(org, 'https://127.0.0.1:9/a');
    const hookB = await createHook(org, 'https://127.0.0.1:9/b');
    const ofB = await seed(hookB, { state: 'failed', createdAt: clock.now() - HOUR_MS });
    const foreign = await seed(otherHook, { state: 'failed', createdAt: clock.now() - HOUR_MS }, other.id);
    const browser = await browserFor(org.ownerId);
    expect((await browser.get(deliveryPage(hookB, ofB.id))).status).toBe(200);
    const before = await snapshot();
    const beforeOther = await snapshot(other.id);
    for (const url of [deliveryPage(hookA, ofB.id), deliveryPage(otherHook, foreign.id), deliveryPage(hookA, foreign.id), deliveryPage(hookA, 'dlv_nope'), deliveryPage('wh_nope', ofB.id)]) {
      const res = await browser.get(url);
      expect(res.status, url).toBe(404);
      expect(textOf(res.text)).toContain('Page not found');
      const replay = await browser.post(`${url}/replay`);
      expect(replay.status, url).toBe(404);
    }
    expect(await snapshot()).toEqual(before);
    expect(await snapshot(other.id)).toEqual(beforeOther);
  });

  it('replays a failed or delivered delivery for admins and owners: 303 back, queued, audited, and the page says so', async () => {
    const hook = await createHook(org, 'https://127.0.0.1:9/replay');
    const failed = await seed(hook, { state: 'failed', createdAt: clock.now() - HOUR_MS });
    const delivered = await seed(hook, { state: 'delivered', createdAt: clock.now() - HOUR_MS });
    for (const [userId, d] of [
      [admin.userId, failed],
      [org.ownerId, delivered],
    ] as const) {
      const browser = await browserFor(userId);
      const page = await browser.get(deliveryPage(hook, d.id));
      expect(page.text).toContain(`<form method="post" action="${deliveryPage(hook, d.id)}/replay" class="inline-form">`);
      expect(page.text).toContain('<button type="submit" class="button">Replay delivery</button>');
      const res = await browser.post(`${deliveryPage(hook, d.id)}/replay`);
      expect(res.status).toBe(303);
      expect(res.location).toBe(deliveryPage(hook, d.id));
      expect(noticeOf((await browser.follow(res)).text)).toBe('Replay queued: it is sent again now.');

      const row = await db().selectFrom('deliveries').selectAll().where('id', '=', d.id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ status: 'pending', replay_requested_at: clock.now(), next_attempt_at: clock.now() });
      const audit = await db().selectFrom('audit_log').selectAll().where('org_id', '=', org.id).orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow();
      expect(audit).toMatchObject({ action: 'delivery.replayed', target_type: 'delivery', target_id: d.id, actor_id: userId, source: 'dashboard', session_id: browser.sessionId });

      const after = await browser.get(res.location!);
      expect(noticeOf(after.text)).toBe('');
      expect(textOf(after.text)).toContain('Status Pending');
      expect(textOf(after.text)).toContain('A replay is queued: it is sent again now.');
      expect(after.text).not.toContain('>Replay delivery</button>');
      const list = deliveryRows((await browser.get(pageOf(hook))).text).find((r) => r.eventId === d.eventId)!;
      expect(list.status).toBe('Pending');
      expect(list.replayed).toBe('Replayed');
    }
    // An unknown notice code shows nothing.
    expect((await (await browserFor(admin.userId)).get(`${deliveryPage(hook, failed.id)}?done=<b>hi</b>`)).text).not.toContain('hi</b>');
  });

  it('refuses members and viewers a replay with the 403 page, offering no button, and changes nothing', async () => {
    const hook = await createHook(org, 'https://127.0.0.1:9/no-replay');
    const d = await seed(hook, { state: 'failed', createdAt: clock.now() - HOUR_MS });
    // Signed in first: a sign-in is itself audited.
    const browsers = [await browserFor(member.userId), await browserFor(viewer.userId)];
    const before = await snapshot();
    for (const browser of browsers) {
      const page = await browser.get(deliveryPage(hook, d.id));
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('Replay delivery');
      const res = await browser.post(`${deliveryPage(hook, d.id)}/replay`);
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(textOf(res.text)).toContain('You cannot do that');

      for (const url of [`${pageOf(hook)}/replay-failed`, `${pageOf(hook)}/replay-failed?since=2026-11-01T00:00`, `${pageOf(hook)}/replay-failed?since=garbage`, `${pageOf('wh_nope')}/replay-failed`]) {
        const form = await browser.get(url);
        expect(form.status, url).toBe(403);
        expect(form.text).not.toContain('will be sent again');
      }
      for (const since of ['2026-11-01T00:00:00.000Z', 'garbage']) {
        const post = await browser.post(`${pageOf(hook)}/replay-failed`, { since });
        expect(post.status).toBe(403);
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  it('refuses to replay a pending, retrying or cancelled delivery, or one whose subscription is gone, with a 409 page (a deleted subscription’s with a 404); nothing changes', async () => {
    const hook = await createHook(org, 'https://127.0.0.1:9/conflicts');
    const t = clock.now() - HOUR_MS;
    const cases: [Seeded, string, string][] = [
      [await seed(hook, { state: 'pending', createdAt: t }), 'Pending', 'This delivery is still being attempted; it can be replayed once it is delivered or has failed'],
      [await seed(hook, { state: 'retrying', createdAt: t }), 'Retrying', 'This delivery is still being attempted'],
      [await seed(hook, { state: 'cancelled', createdAt: t }), 'Cancelled', 'A cancelled delivery cannot be replayed: its subscription was deleted before it was sent'],
    ];
    const browser = await browserFor(admin.userId);
    for (const [d, status, message] of cases) {
      const page = await browser.get(deliveryPage(hook, d.id));
      expect(page.text).not.toContain('>Replay delivery</button>');
      expect(textOf(page.text)).toMatch(/can be replayed once|cannot be replayed/);
      const before = await snapshot();
      const res = await browser.post(`${deliveryPage(hook, d.id)}/replay`);
      expect(res.status, status).toBe(409);
      expect(res.text).toContain('role="alert"');
      expect(textOf(res.text)).toContain(message);
      // The delivery page again, as it stands.
      expect(res.text).toContain('<title>Delivery of project.created');
      expect(textOf(res.text)).toContain(`Status ${status}`);
      expect(await snapshot()).toEqual(before);
    }

    // A deleted subscription's deliveries are gone from the dashboard with it: 404, as for reading.
    const doomed = await createHook(org, 'https://127.0.0.1:9/doomed');
    const orphan = await seed(doomed, { state: 'delivered', createdAt: t });
    await browser.get(deliveryPage(doomed, orphan.id));
    expect((await env.request('DELETE', `/v1/webhooks/${doomed}`, { key: org.ownerKey })).status).toBe(204);
    const before = await snapshot();
    const res = await browser.post(`${deliveryPage(doomed, orphan.id)}/replay`);
    expect(res.status).toBe(404);
    expect((await browser.get(deliveryPage(doomed, orphan.id))).status).toBe(404);
    expect(await snapshot()).toEqual(before);
  });

  it('replays failed deliveries in bulk: counts them since a time, starts a job of exactly that many, audited, and shows its progress', async () => {
    const hook = await createHook(org, 'https://127.0.0.1:9/bulk');
    const since = Date.UTC(2026, 10, 21, 12, 0);
    await seed(hook, { state: 'failed', createdAt: since - 2 * HOUR_MS });
    await seed(hook, { state: 'failed', createdAt: since - MINUTE_MS });
    const a = await seed(hook, { state: 'failed', createdAt: since });
    const b = await seed(hook, { state: 'failed', createdAt: since + HOUR_MS });
    const c = await seed(hook, { state: 'failed', createdAt: since + 2 * HOUR_MS });
    await seed(hook, { state: 'delivered', createdAt: since + HOUR_MS });
    await seed(hook, { state: 'retrying', createdAt: since + HOUR_MS });
    await seed(otherHook, { state: 'failed', createdAt: since + HOUR_MS }, other.id);
    const browser = await browserFor(admin.userId);
    const form = `${pageOf(hook)}/replay-failed`;

    // The form alone, "Since" 24 hours back by default.
    const empty = await browser.get(form);
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('<label for="since">Since</label>');
    expect(empty.text).toMatch(new RegExp(`<input id="since" name="since" type="text" value="${localValue(clock.now() - DAY_MS).replace('T', ' ')}"`));
    expect(empty.text).toContain('<button type="submit" class="secondary">Count failed deliveries</button>');
    expect(empty.text).not.toContain('will be sent again');

    const preview = await browser.get(`${form}?since=${localValue(since)}`);
    expect(preview.status).toBe(200);
    expect(await env.container.services.replayJobs.preview(cliActor(org.id), hook, since)).toEqual({ count: 3, more: false });
    expect(textOf(preview.text)).toContain('3 deliveries will be sent again');
    expect(preview.text).toContain('<button type="submit" class="button">Replay 3 deliveries</button>');
    expect(preview.text).toContain(`<input type="hidden" name="since" value="${toIso(since)}"/>`);
    expect(textOf((await browser.get(`${form}?since=${localValue(since + 2 * HOUR_MS)}`)).text)).toContain('1 delivery will be sent again Replay 1 delivery');
    const none = await browser.get(`${form}?since=${localValue(since + 3 * HOUR_MS)}`);
    expect(textOf(none.text)).toContain('No failed deliveries since then.');
    expect(none.text).not.toMatch(/>Replay \d/);
    const bad = await browser.get(`${form}?since=tomorrow`);
    expect(bad.status).toBe(400);
    expect(textOf(bad.text)).toContain('Since must be a date and time');
    expect(bad.text).toMatch(/id="since"[^>]*aria-invalid="true"/);

    // A POST with a time it cannot read starts nothing.
    const before = await snapshot();
    const refused = await browser.post(form, { since: 'tomorrow' });
    expect(refused.status).toBe(400);
    expect(textOf(refused.text)).toContain('Since must be a date and time');
    expect(await snapshot()).toEqual(before);

    await browser.get(`${form}?since=${localValue(since)}`);
    const started = await browser.post(form, { since: toIso(since) });
    expect(started.status).toBe(303);
    expect(started.location).toBe(pageOf(hook));
    const job = await db().selectFrom('replay_jobs').selectAll().where('webhook_id', '=', hook).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
    const jobId = job.id;
    expect(job).toMatchObject({ org_id: org.id, webhook_id: hook, since, total: 3, status: 'running', queued: 0 });
    const audit = await db().selectFrom('audit_log').selectAll().where('org_id', '=', org.id).orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ action: 'delivery.replayed', target_type: 'webhook', target_id: hook, actor_id: admin.userId, source: 'dashboard' });
    expect(JSON.parse(audit.changes!)).toMatchObject({ replayed: { old: null, new: 3 }, job: { old: null, new: jobId } });

    const landing = await browser.follow(started);
    expect(noticeOf(landing.text)).toBe('Bulk replay started: 3 deliveries to send again. Its progress is shown under Bulk replays.');
    // The page follows the job by itself while it runs (a fragment the script polls).
    expect(landing.text).toContain(`data-progress-url="${pageOf(hook)}/replays/progress"`);
    const fragment = await browser.get(`${pageOf(hook)}/replays/progress`);
    expect(JSON.parse(fragment.text)).toMatchObject({ active: true });
    const progress = () => browser.get(pageOf(hook)).then((p) => tableRows(p.text, 'Latest bulk replays'));
    // The requester by name (the job keeps the e-mail; people read names).
    const adminUser = (await env.container.store.repos.users.findById(org.id, admin.userId))!;
    expect(await progress()).toEqual([`${formatUtc(clock.now())} ${adminUser.name ?? adminUser.email} ${formatUtc(since)} Running: 0 of 3 sent again, 0 delivered, 0 failed`]);

    // One of them is replayed on its own meanwhile: the job skips it.
    await browser.get(deliveryPage(hook, a.id));
    expect((await browser.post(`${deliveryPage(hook, a.id)}/replay`)).status).toBe(303);
    while ((await env.container.services.replayJobs.runBatch()) > 0);
    expect((await progress())[0]).toContain('Done: 2 sent again, 0 delivered, 0 failed, 2 waiting for their attempt, 1 skipped');
    for (const d of [b, c]) {
      expect(await db().selectFrom('deliveries').select(['status', 'replay_requested_at']).where('id', '=', d.id).executeTakeFirstOrThrow()).toEqual({ status: 'pending', replay_requested_at: clock.now() });
    }
    // As the worker leaves them after the replay attempts.
    await db().updateTable('deliveries').set({ status: 'delivered', replay_requested_at: null }).where('id', '=', b.id).execute();
    await db().updateTable('deliveries').set({ status: 'failed', replay_requested_at: null }).where('id', '=', c.id).execute();
    expect((await progress())[0]).toContain('Done: 2 sent again, 1 delivered, 1 failed, 1 skipped');

    // Nothing left since then: the job is done at once, and the notice says there was nothing to replay.
    await browser.get(form);
    const nothing = await browser.post(form, { since: toIso(since + 3 * HOUR_MS) });
    expect(nothing.status).toBe(303);
    expect(textOf((await browser.get(nothing.location!)).text)).toContain('Nothing to replay: no failed deliveries since then.');
  });
});

describe.each(testDialects())('dashboard: deliveries made by the worker (%s)', (dialect) => {
  let harness: DeliveryHarness;
  let env: TestEnv;
  let org: TestOrg;

  beforeAll(async () => {
    harness = await startDeliveryHarness(dialect, { WEBHOOK_RETRY_SCHEDULE: '50ms' });
    env = harness.env;
    org = await env.createOrg();
  });
  afterAll(async () => harness?.close());

  it('shows real attempts as text and replays one from the delivery page into the same history', async () => {
    const { receiver } = harness;
    receiver.on('/flaky', (_req, res) => void res.writeHead(503, { 'content-type': 'text/html', 'x-receiver': 'yes' }).end('<script>alert(1)</script>'));
    const hook = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: receiver.url('/flaky'), events: ['project.created'] } });
    expect(hook.status).toBe(201);
    const hookId = hook.body.id as string;
    expect((await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Launch <now>' } })).status).toBe(201);
    const browser = await DashboardClient.signedIn(env, org.id, org.ownerId);

    const failed = await waitFor('the delivery failed twice', async () => {
      const rows = deliveryRows((await browser.get(`/dashboard/webhooks/${hookId}?status=failed`)).text);
      return rows[0];
    });
    expect(failed).toMatchObject({ status: 'Failed', event: 'project.created', attempts: '2', response: '503 Service Unavailable', replayed: '' });
    const page = await browser.get(failed.href);
    expect(rawPayload(page.text)).toBe(receiver.at('/flaky')[0]!.body.toString('utf8'));
    for (const n of [1, 2]) {
      const section = attemptSection(page.text, n);
      expect(textOf(section)).toContain('Trigger Automatic');
      expect(preText(section, `attempt-${n}-body`)).toBe('<script>alert(1)</script>');
      expect(tableRows(section, `Response headers of attempt ${n}`)).toContain('x-receiver yes');
      expect(tableRows(section, `Request headers of attempt ${n}`)).toContain(`x-service-delivery-attempt ${n}`);
    }
    expect(page.text).not.toContain('<script>alert(1)</script>');

    receiver.on('/flaky', (_req, res) => void res.writeHead(200).end('fixed'));
    const replay = await browser.post(`${failed.href}/replay`);
    expect(replay.status).toBe(303);
    const done = await waitFor('the replay delivered', async () => {
      const p = await browser.get(failed.href);
      return textOf(p.text).includes('Status Delivered') ? p : null;
    });
    const third = attemptSection(done.text, 3);
    expect(textOf(third)).toContain('Trigger Replay');
    expect(textOf(third)).toContain('Response status 200 OK');
    expect(preText(third, 'attempt-3-body')).toBe('fixed');
    const row = deliveryRows((await browser.get(`/dashboard/webhooks/${hookId}`)).text)[0]!;
    expect(row).toMatchObject({ status: 'Delivered', attempts: '3', response: '200 OK', replayed: 'Replayed' });
    // Same event id on every attempt, replay included.
    expect(new Set(receiver.at('/flaky').map((r) => r.headers['x-service-event-id'])).size).toBe(1);
  });
});
