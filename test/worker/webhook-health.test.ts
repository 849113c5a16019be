import fs from 'node:fs';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startDeliveryWorker, type RunningWorker } from '../../src/worker/index.js';
import { recordEvent } from '../../src/services/events/outbox.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { makeSelfSignedCertificate, startHttpsReceiver, waitFor, type HttpsReceiver, type TestCertificate } from '../helpers/https-receiver.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { decodeQuotedPrintable, outboxMessages } from '../helpers/mail-outbox.js';
import { cliJson, startServe, type ServeProcess } from '../helpers/cli.js';
import { serveFixture, stopServe } from '../helpers/serve-fixture.js';

const HOUR = 3_600_000;
const LIMIT = 30 * HOUR;

/**
 * Endpoint health (CONTRACT 11) with a clock the test moves: the streak is kept by the attempts that start and
 * end it, the subscription is disabled exactly when every attempt has failed for WEBHOOK_DISABLE_AFTER (or at
 * once on 410 Gone), notices go out once each, and nothing is lost across disable, enable and replay.
 */
describe.each(testDialects())('webhook health (%s)', (dialect) => {
  const clock = new ManualClock();
  let env: TestEnv;
  let cert: TestCertificate;
  let receiver: HttpsReceiver;
  let worker: RunningWorker;
  let org: TestOrg;
  let paths = 0;

  beforeAll(async () => {
    cert = makeSelfSignedCertificate();
    receiver = await startHttpsReceiver(cert);
    // Retries an hour apart: between the test's steps only what it emits (and retries it lets fall due) is attempted.
    env = await createTestEnv(dialect, { clock, env: { WEBHOOK_RETRY_SCHEDULE: '1h,1h,1h,1h,1h', WEBHOOK_DISABLE_AFTER: '30h', WEBHOOK_TIMEOUT: '3s' } });
    worker = await startDeliveryWorker(env.container, { ca: cert.cert, pollIntervalMs: 30, healthPollMs: 30 });
  });
  afterAll(async () => {
    await worker?.stop();
    await receiver?.close();
    await env?.close();
    if (cert) fs.rmSync(cert.dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    org = await env.createOrg(`Health ${paths}`);
  });

  /** A subscription whose endpoint answers what `status()` says at the time of each request. */
  async function subscribe(status: () => number) {
    const pathname = `/health-${++paths}`;
    receiver.on(pathname, (_req, res: ServerResponse) => void res.writeHead(status()).end());
    const res = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: receiver.url(pathname), events: ['project.created'] } });
    expect(res.status).toBe(201);
    return { id: res.body.id as string, pathname };
  }

  const row = async (id: string) => (await env.container.store.repos.webhooks.findById(org.id, id))!;

  /** One event, and its attempt settled (recorded). Returns the delivery id. */
  async function attemptNow(): Promise<string> {
    const { store, waker } = env.container;
    const event = await store.transaction((repos) => recordEvent(repos, { orgId: org.id, type: 'project.created', data: { project_id: 'proj_x' }, occurredAt: clock.now() }));
    waker.wake();
    const [delivery] = await store.repos.events.listDeliveriesForEvent(org.id, event.id);
    await waitFor(`delivery ${delivery!.id} attempted`, async () => {
      const d = await store.repos.deliveries.findById(org.id, delivery!.id);
      return d && (d.attempt_count > 0 || d.status === 'cancelled');
    });
    return delivery!.id;
  }

  const mailsAbout = (url: string, subject: RegExp) =>
    outboxMessages(env.dataDir)
      .map((m) => decodeQuotedPrintable(m.raw))
      .filter((raw) => raw.includes(url) && subject.test(raw));

  it('disables exactly when the streak reaches WEBHOOK_DISABLE_AFTER, not before; notices go out once each', async () => {
    const admin = await org.member('admin');
    await org.member('member');
    const hook = await subscribe(() => 500);
    const start = clock.now();
    await attemptNow();
    expect(await row(hook.id)).toMatchObject({ status: 'active', failing_since: start });

    // 24 hours in: one mail to the owner and the admin (the member gets none), and only one however often the sweep runs.
    clock.advance(24 * HOUR);
    worker.kick();
    await waitFor('the 24-hour notice', async () => (await row(hook.id)).failing_mail_at !== null);
    const url = receiver.url(hook.pathname);
    const failingMails = () => mailsAbout(url, /failing for a day/);
    await waitFor('two failing mails', () => failingMails().length === 2);
    expect(failingMails().map((m) => /^To: (.*)$/m.exec(m)![1]).sort()).toEqual([expect.stringMatching(/^admin/), expect.stringMatching(/^owner/)]);
    expect(admin.userId).toMatch(/^user_/);

    clock.advance(LIMIT - 24 * HOUR - 1);
    await attemptNow();
    expect(await row(hook.id)).toMatchObject({ status: 'active', failing_since: start, disabled_at: null });

    clock.advance(1);
    await attemptNow();
    const disabled = await row(hook.id);
    expect(disabled).toMatchObject({ status: 'disabled', disabled_reason: 'failing', disabled_at: start + LIMIT });
    await waitFor('the disabling announced', async () => (await row(hook.id)).disabled_notified_at !== null);
    await waitFor('two disabled mails', () => mailsAbout(url, /was disabled/).length === 2);
    // Further sweeps send nothing more.
    clock.advance(HOUR);
    worker.kick();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(failingMails()).toHaveLength(2);
    expect(mailsAbout(url, /was disabled/)).toHaveLength(2);

    const audit = await env.container.database.db.selectFrom('audit_log').selectAll().where('org_id', '=', org.id).where('action', '=', 'webhook.disabled').execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_type: 'system', target_id: hook.id });
    expect(JSON.parse(String(audit[0]!.changes))).toMatchObject({ status: { old: 'active', new: 'disabled' }, reason: { new: 'failing' } });

    // While disabled: no attempt; waiting retries and new events are kept as cancelled with the reason.
    const sent = receiver.at(hook.pathname).length;
    const late = await attemptNow();
    clock.advance(6 * HOUR);
    worker.kick();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.at(hook.pathname)).toHaveLength(sent);
    expect(await env.container.store.repos.deliveries.findById(org.id, late)).toMatchObject({ status: 'cancelled', cancel_reason: 'subscription_disabled', attempt_count: 0 });
    const pending = await env.container.database.db.selectFrom('deliveries').select(['status', 'cancel_reason']).where('webhook_id', '=', hook.id).where('status', '=', 'pending').execute();
    expect(pending).toEqual([]);
    const api = await env.request('GET', `/v1/webhooks/${hook.id}/deliveries?status=cancelled`, { key: org.ownerKey });
    expect(api.body.data.length).toBeGreaterThan(0);
    expect(api.body.data.every((d: { cancel_reason: string }) => d.cancel_reason === 'subscription_disabled')).toBe(true);
  });

  it('a success in between ends the streak; the next failure starts a new one', async () => {
    let answer = 500;
    const hook = await subscribe(() => answer);
    const start = clock.now();
    await attemptNow();
    clock.advance(10 * HOUR);
    answer = 200;
    await attemptNow();
    expect(await row(hook.id)).toMatchObject({ status: 'active', failing_since: null });
    clock.advance(HOUR);
    answer = 500;
    await attemptNow();
    const restarted = start + 11 * HOUR;
    expect(await row(hook.id)).toMatchObject({ status: 'active', failing_since: restarted });
    // 30 hours after the first failure is only 20 into this streak: still active.
    clock.set(start + LIMIT + HOUR);
    await attemptNow();
    expect((await row(hook.id)).status).toBe('active');
    clock.set(restarted + LIMIT);
    await attemptNow();
    expect(await row(hook.id)).toMatchObject({ status: 'disabled', disabled_reason: 'failing' });
  });

  it('410 Gone disables at once; a test event neither starts nor ends a streak', async () => {
    let answer = 500;
    const hook = await subscribe(() => answer);
    const start = clock.now();
    await attemptNow();
    // A test that succeeds does not end the streak.
    answer = 200;
    const test = await env.request('POST', `/v1/webhooks/${hook.id}/test`, { key: org.ownerKey, body: {} });
    expect(test.status).toBe(202);
    await waitFor('the test delivered', async () => (await env.container.store.repos.deliveries.findById(org.id, test.body.delivery_id))?.status === 'delivered');
    expect((await row(hook.id)).failing_since).toBe(start);

    const fresh = await subscribe(() => answer);
    answer = 500;
    const failedTest = await env.request('POST', `/v1/webhooks/${fresh.id}/test`, { key: org.ownerKey, body: {} });
    await waitFor('the test failed', async () => (await env.container.store.repos.deliveries.findById(org.id, failedTest.body.delivery_id))?.status === 'failed');
    expect((await row(fresh.id)).failing_since).toBeNull();

    answer = 410;
    clock.advance(1000);
    await attemptNow();
    expect(await row(hook.id)).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
    expect(await row(fresh.id)).toMatchObject({ status: 'disabled', disabled_reason: 'gone', failing_since: clock.now() });
    await waitFor('the disabling announced', async () => (await row(fresh.id)).disabled_notified_at !== null);
    const audit = await env.container.database.db.selectFrom('audit_log').select('changes').where('org_id', '=', org.id).where('action', '=', 'webhook.disabled').where('target_id', '=', fresh.id).executeTakeFirstOrThrow();
    expect(JSON.parse(String(audit.changes)).reason.new).toBe('gone');
  });

  it('nothing is lost across disable, enable and replay: every event reaches the endpoint', async () => {
    let answer = 500;
    const hook = await subscribe(() => answer);
    const emitted: string[] = [];
    const eventOf = async (deliveryId: string) => (await env.container.store.repos.deliveries.findById(org.id, deliveryId))!.event_id;
    const start = clock.now();
    emitted.push(await eventOf(await attemptNow()));
    clock.advance(LIMIT / 2);
    emitted.push(await eventOf(await attemptNow()));
    clock.advance(LIMIT / 2);
    emitted.push(await eventOf(await attemptNow()));
    expect((await row(hook.id)).status).toBe('disabled');
    await waitFor('the disabling announced', async () => (await row(hook.id)).disabled_notified_at !== null);
    // Events while disabled.
    for (let i = 0; i < 3; i++) emitted.push(await eventOf(await attemptNow()));

    answer = 200;
    const enabled = await env.request('POST', `/v1/webhooks/${hook.id}/enable`, { key: org.ownerKey });
    expect(enabled.status).toBe(200);
    const job = await env.request('POST', `/v1/webhooks/${hook.id}/replay-failed`, { key: org.ownerKey, body: { since: new Date(start - 1000).toISOString() } });
    expect(job.status).toBe(202);
    expect(job.body.count).toBe(emitted.length);
    worker.kick();
    await waitFor('every event delivered', async () => {
      const rows = await env.container.database.db.selectFrom('deliveries').select('status').where('webhook_id', '=', hook.id).execute();
      return rows.length === emitted.length && rows.every((r) => r.status === 'delivered');
    });
    const succeeded = new Set(receiver.at(hook.pathname).filter((r) => r.headers['x-service-event-id']).map((r) => String(r.headers['x-service-event-id'])));
    for (const id of emitted) expect(succeeded.has(id), id).toBe(true);
    expect((await row(hook.id)).failing_since).toBeNull();
  });
});

describe.each(testDialects())('webhook health across kill -9 (%s)', (dialect) => {
  const f = serveFixture(dialect, {
    env: { WEBHOOK_RETRY_SCHEDULE: '300ms,300ms,300ms,300ms,300ms', WEBHOOK_DISABLE_AFTER: '3s', WEBHOOK_TIMEOUT: '1s', LOG_LEVEL: 'info' },
    routes: (receiver) => receiver.on('/down', (_req, res) => void res.writeHead(503).end()),
  });
  let serve: ServeProcess | null = null;
  afterAll(() => stopServe(serve, 'SIGKILL'));

  it('a worker killed mid-streak keeps the streak; after the restart the subscription is disabled on time', async () => {
    const created = await cliJson(['org', 'create', '--name', 'Streak', '--owner-email', 'streak@example.com'], f.env);
    const key: string = created.api_key.key;
    serve = await startServe(f.env);
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${serve!.address}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const hook = await api('POST', '/v1/webhooks', { url: f.receiver.url('/down'), events: ['project.created'] });
    const id = String(hook.body.id);
    for (let i = 0; i < 3; i++) expect((await api('POST', '/v1/projects', { name: `p${i}` })).status).toBe(201);
    const failingSince = await waitFor('a streak', async () => (await api('GET', `/v1/webhooks/${id}`)).body.failing_since as string | null);
    serve.child.kill('SIGKILL');
    await serve.exited;
    serve = await startServe(f.env);
    expect((await api('GET', `/v1/webhooks/${id}`)).body.failing_since).toBe(failingSince);
    // Events keep coming, so attempts keep failing: the one that reaches the limit disables.
    let n = 0;
    const disabled = await waitFor('disabled', async () => {
      const body = (await api('GET', `/v1/webhooks/${id}`)).body;
      if (body.status === 'disabled') return body;
      await api('POST', '/v1/projects', { name: `later ${++n}` });
      await new Promise((resolve) => setTimeout(resolve, 250));
      return null;
    }, 20_000);
    expect(disabled).toMatchObject({ active: false, disabled_reason: 'failing', failing_since: failingSince });
    expect(Date.parse(String(disabled.disabled_at)) - Date.parse(failingSince)).toBeGreaterThanOrEqual(3000);
    // Once disabled, no attempt reaches the endpoint.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const count = f.receiver.at('/down').length;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(f.receiver.at('/down').length).toBe(count);
  });
});
