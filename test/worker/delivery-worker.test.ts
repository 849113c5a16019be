import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/index.js';
import { recordEvent } from '../../src/services/events/outbox.js';
import { type EventType } from '../../src/schemas/events.js';
import { testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { startDeliveryHarness, startHttpsReceiver, waitFor, type DeliveryHarness, type HttpsReceiver, type TestCertificate } from '../helpers/https-receiver.js';
import { cliActor } from '../../src/services/access/actor.js';
import { startMetricsListener, type MetricsListener } from '../../src/http/metrics.js';

const SCHEDULE = '100ms,100ms,100ms,100ms,100ms';

describe.each(testDialects())('delivery worker (%s)', (dialect) => {
  let harness: DeliveryHarness;
  let cert: TestCertificate;
  let receiver: HttpsReceiver;
  let env: TestEnv;
  let org: TestOrg;
  let paths = 0;
  // The worker's counters, read where an operator reads them: the metrics listener, not the API port.
  let metricsListener: MetricsListener;

  beforeAll(async () => {
    harness = await startDeliveryHarness(dialect, { WEBHOOK_RETRY_SCHEDULE: SCHEDULE, WEBHOOK_TIMEOUT: '2s', WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: '2' });
    ({ cert, receiver, env } = harness);
    metricsListener = await startMetricsListener(env.container.metrics, { port: 0, host: '127.0.0.1', token: null, logger: env.container.logger });
  });
  // A fresh organisation per test, so each test sees only its own subscriptions and deliveries.
  beforeEach(async () => {
    org = await env.createOrg();
  });
  afterAll(async () => {
    await metricsListener?.close();
    await harness?.close();
  });

  const freshPath = () => `/hook-${++paths}`;

  async function subscribe(o: TestOrg, pathname: string, events: EventType[] = ['project.created'], secret = 'test-secret-0123456789') {
    const res = await env.request('POST', '/v1/webhooks', { key: o.ownerKey, body: { url: receiver.url(pathname), events, secret } });
    expect(res.status).toBe(201);
    return { id: res.body.id as string, secret };
  }

  async function emit(orgId: string, type: EventType, data: Record<string, unknown> = { project_id: 'proj_x' }) {
    const { store, clock, waker } = env.container;
    const event = await store.transaction((repos) => recordEvent(repos, { orgId, type, data, occurredAt: clock.now() }));
    waker.wake();
    return event.id;
  }

  const deliveriesOf = (orgId: string, eventId: string) => env.container.store.repos.events.listDeliveriesForEvent(orgId, eventId);
  const attemptsOf = (orgId: string, deliveryId: string) => env.container.store.repos.deliveries.listAttempts(orgId, deliveryId);

  async function settled(orgId: string, deliveryId: string, status: string) {
    return waitFor(`delivery ${deliveryId} ${status}`, async () => {
      const row = await env.container.store.repos.deliveries.findById(orgId, deliveryId);
      return row?.status === status ? row : null;
    });
  }

  it('POSTs the exact stored bytes, signed, with the contract headers', async () => {
    const pathname = freshPath();
    const hook = await subscribe(org, pathname);
    const created = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Apollo ✓' } });
    expect(created.status).toBe(201);
    const [received] = await waitFor('the delivery', () => (receiver.at(pathname).length > 0 ? receiver.at(pathname) : null));
    const events = await env.container.store.repos.events.listEvents(org.id);
    const event = events.find((e) => e.body.includes(created.body.id))!;
    const [delivery] = await deliveriesOf(org.id, event.id);

    expect(received!.method).toBe('POST');
    expect(received!.body.equals(Buffer.from(event.body, 'utf8'))).toBe(true);
    expect(verifySignature(received!.body, received!.headers['x-service-signature'], hook.secret)).toBe(true);
    expect(verifySignature(received!.body, received!.headers['x-service-signature'], 'another-secret-000000')).toBe(false);
    expect(received!.headers).toMatchObject({
      'content-type': 'application/json',
      'x-service-event': 'project.created',
      'x-service-event-id': event.id,
      'x-service-delivery-id': delivery!.id,
      'x-service-delivery-attempt': '1',
    });
    expect(received!.headers['x-service-event-id']).toMatch(/^evt_/);
    expect(received!.headers['x-service-delivery-id']).toMatch(/^dlv_/);
    expect(received!.headers['user-agent']).toMatch(/^WorkspaceService-Webhooks\//);
    const body = JSON.parse(received!.body.toString('utf8'));
    expect(Object.keys(body)).toEqual(['event', 'timestamp', 'data']);
    expect(body).toMatchObject({ event: 'project.created', data: { project_id: created.body.id, name: 'Apollo ✓', status: 'active' } });
    expect(body.timestamp).toBe(created.body.created_at);

    const row = await settled(org.id, delivery!.id, 'delivered');
    expect(row).toMatchObject({ attempt_count: 1, failure_count: 0, last_status_code: 200, last_error: null, lease_owner: null });
  });

  async function attemptCounts(): Promise<Record<string, number>> {
    const res = await fetch(`${metricsListener.address}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const counts: Record<string, number> = {};
    for (const m of text.matchAll(/^workspace_delivery_attempts_total\{outcome="(\w+)"\} (\S+)$/gm)) counts[m[1]!] = Number(m[2]);
    return counts;
  }

  it('reports each finished attempt on GET /metrics by outcome', async () => {
    const before = await attemptCounts();
    expect(Object.keys(before).sort()).toEqual(['delivered', 'failed', 'retry_scheduled']);
    const ok = freshPath();
    await subscribe(org, ok);
    const [delivered] = await deliveriesOf(org.id, await emit(org.id, 'project.created'));
    await settled(org.id, delivered!.id, 'delivered');
    let after = await attemptCounts();
    expect(after).toEqual({ ...before, delivered: before.delivered! + 1 });

    // Another organisation, so its event does not also go to the first subscription.
    const other = await env.createOrg('Other');
    const down = freshPath();
    receiver.on(down, (_req, res) => void res.writeHead(503).end('down'));
    await subscribe(other, down);
    const [failing] = await deliveriesOf(other.id, await emit(other.id, 'project.created'));
    await settled(other.id, failing!.id, 'failed');
    after = await attemptCounts();
    // Six attempts: five failures that schedule a retry, then the sixth gives up.
    expect(after).toEqual({ delivered: before.delivered! + 1, retry_scheduled: before.retry_scheduled! + 5, failed: before.failed! + 1 });
  });

  it('sends each event type to subscriptions listening for it, and only to those', async () => {
    const all = freshPath();
    const onlyDeleted = freshPath();
    await subscribe(org, all, ['project.created', 'project.updated', 'project.deleted', 'workflow.completed', 'workflow.failed', 'task.assigned']);
    await subscribe(org, onlyDeleted, ['project.deleted']);
    const types: EventType[] = ['project.created', 'project.updated', 'project.deleted', 'workflow.completed', 'workflow.failed', 'task.assigned'];
    const ids = new Map<EventType, string>();
    for (const type of types) ids.set(type, await emit(org.id, type, { marker: type }));
    await waitFor('six deliveries', () => receiver.at(all).length === 6);
    await waitFor('the project.deleted delivery', () => receiver.at(onlyDeleted).length === 1);
    for (const type of types) {
      const got = receiver.at(all).find((r) => r.headers['x-service-event'] === type)!;
      expect(got.headers['x-service-event-id']).toBe(ids.get(type));
      expect(JSON.parse(got.body.toString())).toMatchObject({ event: type, data: { marker: type } });
    }
    expect(receiver.at(onlyDeleted)[0]!.headers['x-service-event']).toBe('project.deleted');
    // One delivery per listening subscription: the other five events made none for the second one.
    expect((await deliveriesOf(org.id, ids.get('project.created')!)).length).toBe(1);
    expect((await deliveriesOf(org.id, ids.get('project.deleted')!)).length).toBe(2);
  });

  it("never delivers one organisation's events to another's subscription", async () => {
    const other = await env.createOrg('Other');
    const mine = freshPath();
    const theirs = freshPath();
    await subscribe(org, mine);
    await subscribe(other, theirs);
    const eventId = await emit(org.id, 'project.created');
    await waitFor('own delivery', () => receiver.at(mine).length === 1);
    const otherEvent = await emit(other.id, 'project.created');
    await waitFor('their delivery', () => receiver.at(theirs).length === 1);
    expect(receiver.at(mine).map((r) => r.headers['x-service-event-id'])).toEqual([eventId]);
    expect(receiver.at(theirs).map((r) => r.headers['x-service-event-id'])).toEqual([otherEvent]);
  });

  it('retries on the schedule and fails permanently after the sixth failure', async () => {
    const pathname = freshPath();
    receiver.on(pathname, (_req, res) => void res.writeHead(503).end('down'));
    await subscribe(org, pathname);
    const eventId = await emit(org.id, 'project.created');
    const [delivery] = await deliveriesOf(org.id, eventId);
    const row = await settled(org.id, delivery!.id, 'failed');
    expect(row).toMatchObject({ attempt_count: 6, failure_count: 6, next_attempt_at: null, last_status_code: 503, last_error: 'HTTP 503' });
    const got = receiver.at(pathname);
    expect(got.map((r) => r.headers['x-service-delivery-attempt'])).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(new Set(got.map((r) => r.headers['x-service-event-id']))).toEqual(new Set([eventId]));
    expect(new Set(got.map((r) => r.body.toString()))).toHaveLength(1);
    const attempts = await attemptsOf(org.id, delivery!.id);
    expect(attempts.map((a) => [a.attempt_number, a.outcome, a.trigger])).toEqual([1, 2, 3, 4, 5, 6].map((n) => [n, 'failure', 'automatic']));
    // Nothing more: a few schedule steps later there is still no seventh attempt.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.at(pathname)).toHaveLength(6);
  });

  it('stops retrying once an attempt succeeds', async () => {
    const pathname = freshPath();
    let calls = 0;
    receiver.on(pathname, (_req, res) => void res.writeHead(++calls <= 2 ? 500 : 204).end());
    await subscribe(org, pathname);
    const eventId = await emit(org.id, 'project.created');
    const [delivery] = await deliveriesOf(org.id, eventId);
    const row = await settled(org.id, delivery!.id, 'delivered');
    expect(row).toMatchObject({ attempt_count: 3, failure_count: 2, last_status_code: 204, next_attempt_at: null });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(receiver.at(pathname)).toHaveLength(3);
  });

  it('counts a response slower than WEBHOOK_TIMEOUT as a failure', async () => {
    const pathname = freshPath();
    receiver.on(pathname, () => {}); // never answers
    const hook = await subscribe(org, pathname);
    const eventId = await emit(org.id, 'project.created');
    const [delivery] = await deliveriesOf(org.id, eventId);
    const [attempt] = await waitFor('a timed-out attempt', async () => {
      const a = await attemptsOf(org.id, delivery!.id);
      return a.length > 0 ? a : null;
    });
    expect(attempt).toMatchObject({ outcome: 'failure', response_status: null });
    expect(attempt!.error).toMatch(/timeout/);
    expect(await env.request('DELETE', `/v1/webhooks/${hook.id}`, { key: org.ownerKey })).toMatchObject({ status: 204 });
  });

  it('does not follow redirects: a 3xx is a failure and the Location is never requested', async () => {
    const pathname = freshPath();
    const target = freshPath();
    receiver.on(pathname, (_req, res) => void res.writeHead(302, { location: receiver.url(target) }).end());
    const hook = await subscribe(org, pathname);
    const eventId = await emit(org.id, 'project.created');
    const [delivery] = await deliveriesOf(org.id, eventId);
    const [attempt] = await waitFor('the redirect attempt', async () => {
      const a = await attemptsOf(org.id, delivery!.id);
      return a.length > 0 ? a : null;
    });
    expect(attempt).toMatchObject({ outcome: 'failure', response_status: 302 });
    expect(attempt!.error).toMatch(/redirect/);
    expect(JSON.parse(attempt!.response_headers!)).toMatchObject({ location: receiver.url(target) });
    await env.request('DELETE', `/v1/webhooks/${hook.id}`, { key: org.ownerKey });
    expect(receiver.at(target)).toHaveLength(0);
  });

  it('cancels pending retries when the subscription is deleted, and never attempts again', async () => {
    const pathname = freshPath();
    receiver.on(pathname, (_req, res) => void res.writeHead(500).end());
    const hook = await subscribe(org, pathname);
    const eventId = await emit(org.id, 'project.created');
    const [delivery] = await deliveriesOf(org.id, eventId);
    await waitFor('a first failure', () => receiver.at(pathname).length >= 1);
    expect((await env.request('DELETE', `/v1/webhooks/${hook.id}`, { key: org.ownerKey })).status).toBe(204);
    const seen = receiver.at(pathname).length;
    await settled(org.id, delivery!.id, 'cancelled');
    await new Promise((resolve) => setTimeout(resolve, 500));
    // At most the attempt already on the wire when the delete committed; none after it.
    expect(receiver.at(pathname).length).toBeLessThanOrEqual(seen + 1);
    expect((await env.container.store.repos.deliveries.findById(org.id, delivery!.id))!.status).toBe('cancelled');
  });

  it('replays one delivery (same event id and body) and bulk-replays failed ones', async () => {
    const pathname = freshPath();
    let healthy = false;
    // While held, the receiver keeps its answer back, so a replay's attempt stays in flight (pending).
    let hold: Promise<void> | null = null;
    receiver.on(pathname, (_req, res) => {
      void (hold ?? Promise.resolve()).then(() => res.writeHead(healthy ? 200 : 500).end());
    });
    const hook = await subscribe(org, pathname);
    const first = await emit(org.id, 'project.created');
    const second = await emit(org.id, 'project.created');
    const [d1] = await deliveriesOf(org.id, first);
    const [d2] = await deliveriesOf(org.id, second);
    await settled(org.id, d1!.id, 'failed');
    await settled(org.id, d2!.id, 'failed');
    healthy = true;

    const deliveries = env.container.services.deliveries;
    const queued = await deliveries.replay(cliActor(org.id), hook.id, d1!.id);
    expect(queued).toMatchObject({ id: d1!.id, status: 'pending', attempts: 6 });
    const done = await settled(org.id, d1!.id, 'delivered');
    expect(done).toMatchObject({ attempt_count: 7, failure_count: 6 });
    const replayed = receiver.at(pathname).filter((r) => r.headers['x-service-delivery-id'] === d1!.id);
    expect(replayed).toHaveLength(7);
    expect(replayed[6]!.headers).toMatchObject({ 'x-service-event-id': first, 'x-service-delivery-attempt': '7' });
    expect(replayed[6]!.body.equals(replayed[0]!.body)).toBe(true);
    const history = await attemptsOf(org.id, d1!.id);
    expect(history.at(-1)).toMatchObject({ attempt_number: 7, trigger: 'replay', outcome: 'success' });

    // A replay of a delivered delivery is allowed; one still pending (its attempt held open) is refused.
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    await expect(deliveries.replay(cliActor(org.id), hook.id, d1!.id)).resolves.toMatchObject({ status: 'pending' });
    await expect(deliveries.replay(cliActor(org.id), hook.id, d1!.id)).rejects.toMatchObject({ status: 409, code: 'conflict' });
    hold = null;
    release();
    await settled(org.id, d1!.id, 'delivered');

    const replayJobs = env.container.services.replayJobs;
    const bulk = await replayJobs.start(cliActor(org.id), hook.id, 0);
    expect(bulk).toMatchObject({ count: 1, more: false });
    const d2done = await settled(org.id, d2!.id, 'delivered');
    expect(d2done.attempt_count).toBe(7);
    await waitFor('the job to finish', async () => (await replayJobs.get(cliActor(org.id), hook.id, bulk.id)).status === 'done');
    expect(await replayJobs.get(cliActor(org.id), hook.id, bulk.id)).toMatchObject({ count: 1, queued: 1, skipped: 0, delivered: 1 });
    expect(await replayJobs.start(cliActor(org.id), hook.id, 0)).toMatchObject({ count: 0, status: 'done' });
  });

  it('a failed replay leaves the delivery failed without automatic retries', async () => {
    const pathname = freshPath();
    receiver.on(pathname, (_req, res) => void res.writeHead(500).end());
    const hook = await subscribe(org, pathname);
    const eventId = await emit(org.id, 'project.created');
    const [d] = await deliveriesOf(org.id, eventId);
    await settled(org.id, d!.id, 'failed');
    await env.container.services.deliveries.replay(cliActor(org.id), hook.id, d!.id);
    await waitFor('the replay attempt', async () => (await attemptsOf(org.id, d!.id)).length === 7);
    const row = await settled(org.id, d!.id, 'failed');
    expect(row).toMatchObject({ attempt_count: 7, failure_count: 6, next_attempt_at: null });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await attemptsOf(org.id, d!.id)).toHaveLength(7);
  });

  it('records headers, status, a body cut at 64 KiB, and network errors in the history', async () => {
    const big = freshPath();
    receiver.on(big, (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain', 'x-receiver': 'yes' }).end('a'.repeat(64 * 1024) + 'b'.repeat(40_000)));
    await subscribe(org, big);
    const eventId = await emit(org.id, 'project.created');
    const [d] = await deliveriesOf(org.id, eventId);
    await settled(org.id, d!.id, 'delivered');
    const [attempt] = await attemptsOf(org.id, d!.id);
    expect(attempt!.response_status).toBe(200);
    expect(attempt!.response_body).toBe('a'.repeat(64 * 1024));
    expect(JSON.parse(attempt!.response_headers!)).toMatchObject({ 'content-type': 'text/plain', 'x-receiver': 'yes' });
    const sent = JSON.parse(attempt!.request_headers);
    expect(sent).toMatchObject({ 'x-service-event-id': eventId, 'x-service-delivery-id': d!.id, 'x-service-delivery-attempt': '1', 'content-type': 'application/json' });
    expect(sent['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(attempt!.started_at).toBeGreaterThan(0);
    expect(attempt!.duration_ms).toBeGreaterThanOrEqual(0);

    // A closed port: connection refused, no status, the error text kept.
    const closed = await startHttpsReceiver(cert);
    const deadUrl = closed.url('/gone');
    await closed.close();
    const res = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: deadUrl, events: ['project.created'] } });
    const deadEvent = await emit(org.id, 'project.created');
    const dead = (await deliveriesOf(org.id, deadEvent)).find((x) => x.webhook_id === res.body.id)!;
    const [refused] = await waitFor('a refused attempt', async () => {
      const a = await attemptsOf(org.id, dead.id);
      return a.length > 0 ? a : null;
    });
    expect(refused).toMatchObject({ outcome: 'failure', response_status: null, response_headers: null, response_body: null });
    expect(refused!.error).toMatch(/ECONNREFUSED/);
    await env.request('DELETE', `/v1/webhooks/${res.body.id}`, { key: org.ownerKey });
  });

  it('keeps a slow endpoint from holding back the others', async () => {
    const slow = freshPath();
    const fast = freshPath();
    receiver.on(slow, () => {}); // never answers; each attempt holds its slot until the timeout
    const slowHook = await subscribe(org, slow);
    await subscribe(org, fast);
    for (let i = 0; i < 10; i++) await emit(org.id, 'project.created');
    await waitFor('all ten on the fast endpoint', () => receiver.at(fast).length >= 10);
    // The per-subscription limit (2) caps what the slow one holds.
    expect(receiver.at(slow).length).toBeLessThanOrEqual(2 * 6);
    await env.request('DELETE', `/v1/webhooks/${slowHook.id}`, { key: org.ownerKey });
  });
});

describe.each(testDialects())('delivery worker SSRF guard (%s)', (dialect) => {
  let harness: DeliveryHarness;
  let receiver: HttpsReceiver;
  let env: TestEnv;

  beforeAll(async () => {
    harness = await startDeliveryHarness(dialect, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', WEBHOOK_RETRY_SCHEDULE: SCHEDULE });
    ({ receiver, env } = harness);
  });
  afterAll(async () => harness?.close());

  it('refuses a target on a private address at delivery time and records why', async () => {
    const org = await env.createOrg();
    // A subscription that passed creation (e.g. its name resolved publicly then) but now points inside.
    await env.container.store.repos.webhooks.insert({
      id: 'wh_ssrftest000000000000000',
      org_id: org.id,
      url: receiver.url('/internal'),
      events: JSON.stringify(['project.created']),
      secret: 'test-secret-0123456789',
      created_at: env.container.clock.now(),
    });
    const { store, clock, waker } = env.container;
    const event = await store.transaction((repos) => recordEvent(repos, { orgId: org.id, type: 'project.created', data: {}, occurredAt: clock.now() }));
    waker.wake();
    const [d] = await store.repos.events.listDeliveriesForEvent(org.id, event.id);
    const [attempt] = await waitFor('the refused attempt', async () => {
      const a = await store.repos.deliveries.listAttempts(org.id, d!.id);
      return a.length > 0 ? a : null;
    });
    expect(attempt).toMatchObject({ outcome: 'failure', response_status: null });
    expect(attempt!.error).toMatch(/SSRF/);
    expect(attempt!.error).toMatch(/loopback/);
    expect(receiver.at('/internal')).toHaveLength(0);
  });
});
