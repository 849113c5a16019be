import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { AuditLogRow, OrganizationRow } from '../../src/db/schema.js';
import { cliActor } from '../../src/services/access/actor.js';
import { GRACE_PERIOD_MS } from '../../src/services/lifecycle/lifecycle-service.js';
import { runCli } from '../helpers/cli.js';
import { DashboardClient, textOf } from '../helpers/dashboard.js';
import { outboxMessages } from '../helpers/mail-outbox.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type ApiResponse, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const SECRET_KEY = 'sk_test_51WorkspaceStandIn';
const WEBHOOK_SECRET = 'whsec_c3RyaXBlLXN0YW5kLWlu';
const STRIPE_ENV = { STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET };
const START = Date.UTC(2026, 10, 22, 9, 30);
const WEBHOOK = '/billing/stripe/webhook';

interface StandInRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  form: URLSearchParams;
}

/**
 * The one stand-in of the suite: api.stripe.com cannot be reached here, so a local HTTP server answers the
 * Stripe client (pointed at it with ContainerOptions.stripeApi) and keeps what it was sent.
 */
async function startStripeStandIn() {
  const received: StandInRequest[] = [];
  let answer: (req: StandInRequest) => { status: number; body: unknown } = (req) => ({
    status: 200,
    body: {
      id: 'bps_test_1',
      object: 'billing_portal.session',
      customer: req.form.get('customer'),
      return_url: req.form.get('return_url'),
      url: 'https://billing.stripe.test/p/session/test_bps_1',
      livemode: false,
    },
  });
  const server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const req = { method: request.method!, path: request.url!, headers: request.headers, form: new URLSearchParams(body) };
      received.push(req);
      const { status, body: out } = answer(req);
      response.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_standin_${received.length}` });
      response.end(JSON.stringify(out));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    answerWith(fn: typeof answer) {
      answer = fn;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface EventSpec {
  id: string;
  type: string;
  /** Seconds, as Stripe sends it. */
  created: number;
  status?: string;
  customer?: string;
  subscription?: string;
  orgId?: string | null;
}

/** A subscription event shaped like Stripe's (API version 2025), with the subscription as `data.object`. */
function subscriptionEvent({ id, type, created, status = 'active', customer = 'cus_test_1', subscription = 'sub_test_1', orgId = null }: EventSpec) {
  return {
    id,
    object: 'event',
    api_version: '2025-09-30.clover',
    created,
    livemode: false,
    pending_webhooks: 1,
    request: { id: `req_${id}`, idempotency_key: null },
    type,
    data: {
      object: {
        id: subscription,
        object: 'subscription',
        customer,
        status,
        cancel_at_period_end: false,
        canceled_at: type === 'customer.subscription.deleted' ? created : null,
        created: created - 86_400,
        currency: 'eur',
        items: { object: 'list', data: [{ id: 'si_test_1', object: 'subscription_item', price: { id: 'price_test_1', object: 'price' } }] },
        metadata: orgId ? { org_id: orgId } : {},
      },
    },
  };
}

describe.each(testDialects())('Stripe webhook and customer portal (%s)', (dialect) => {
  const clock = new ManualClock(START);
  const seconds = () => Math.floor(clock.now() / 1000);
  let env: TestEnv;
  let standIn: Awaited<ReturnType<typeof startStripeStandIn>>;
  let eventCounter = 0;

  const nextEventId = () => `evt_test_${dialect}_${++eventCounter}`;

  /** Stripe's bytes: pretty-printed like Stripe's own, so a re-serialised body would not verify. */
  const payloadOf = (event: unknown) => JSON.stringify(event, null, 2);

  function sign(payload: string, options: { secret?: string; timestamp?: number } = {}): string {
    return Stripe.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? WEBHOOK_SECRET, timestamp: options.timestamp ?? seconds() });
  }

  async function deliver(event: unknown, options: { signature?: string | null; payload?: string | Buffer } = {}): Promise<ApiResponse> {
    const payload = options.payload ?? payloadOf(event);
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' };
    const signature = options.signature === undefined ? sign(payload.toString()) : options.signature;
    if (signature !== null) headers['stripe-signature'] = signature;
    return env.request('POST', WEBHOOK, { payload, headers });
  }

  const organization = async (orgId: string): Promise<OrganizationRow> => (await env.container.store.repos.organizations.findById(orgId))!;
  const auditRows = async (orgId: string, action: string): Promise<AuditLogRow[]> =>
    (await env.container.store.repos.audit.list(orgId, { action }, 100, null)).rows;
  const stripeEvents = (orgId: string) => env.container.store.repos.stripeEvents.listForOrg(orgId);
  const mailsTo = (email: string) => outboxMessages(env.dataDir).filter((m) => new RegExp(`^To: ${email}$`, 'im').test(m.raw));
  const ownerEmail = async (org: TestOrg) => (await env.container.store.repos.users.findById(org.id, org.ownerId))!.email;

  /** A new organisation, linked to its own Stripe customer and subscription by a first `created` event. */
  async function linkedOrg(name: string): Promise<{ org: TestOrg; customer: string; subscription: string }> {
    const org = await env.createOrg(name);
    const customer = `cus_${org.id.replace(/[^A-Za-z0-9]/g, '')}`;
    const subscription = `sub_${org.id.replace(/[^A-Za-z0-9]/g, '')}`;
    const res = await deliver(subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.created', created: seconds() - 3600, customer, subscription, orgId: org.id }));
    expect(res.body).toEqual({ received: true, duplicate: false, outcome: 'ignored_no_change' });
    return { org, customer, subscription };
  }

  beforeAll(async () => {
    standIn = await startStripeStandIn();
    env = await createTestEnv(dialect, { clock, env: STRIPE_ENV, stripeApi: { host: '127.0.0.1', port: standIn.port, protocol: 'http' } });
  });
  afterAll(async () => {
    await env?.close();
    await standIn?.close();
  });
  beforeEach(() => {
    clock.advance(60_000);
  });

  describe('POST /billing/stripe/webhook', () => {
    it('customer.subscription.deleted makes the workspace read-only for 30 days, as the system, with the owners e-mailed', async () => {
      const { org, customer, subscription } = await linkedOrg('Deleted Ltd');
      const admin = await org.member('admin');
      const id = nextEventId();
      const res = await deliver(subscriptionEvent({ id, type: 'customer.subscription.deleted', created: seconds(), status: 'canceled', customer, subscription, orgId: org.id }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true, duplicate: false, outcome: 'applied' });

      const row = await organization(org.id);
      expect(row.state).toBe('read_only');
      expect(row.cancelled_at).toBe(clock.now());
      expect(row.deletion_at).toBe(clock.now() + GRACE_PERIOD_MS);
      expect(row.stripe_customer_id).toBe(customer);
      expect(row.stripe_subscription_id).toBe(subscription);
      expect(row.stripe_event_at).toBe(seconds() * 1000);

      const audit = await auditRows(org.id, 'subscription.cancelled');
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ actor_type: 'system', actor_id: null, source: 'system', target_id: org.id });
      expect(JSON.parse(audit[0]!.changes!)).toMatchObject({ state: { old: 'active', new: 'read_only' } });

      const owner = await ownerEmail(org);
      await expect.poll(() => mailsTo(owner).length).toBe(1);
      expect(mailsTo(owner)[0]!.raw).toMatch(/subscription cancelled/);
      // Owners only: the admin is not mailed.
      const adminUser = await env.container.store.repos.users.findById(org.id, admin.userId);
      expect(mailsTo(adminUser!.email)).toHaveLength(0);

      // The API refuses writes at once (the state travels with the key).
      const write = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'After' } });
      expect(write.status).toBe(403);
      expect(write.body.error.code).toBe('workspace_read_only');

      const events = await stripeEvents(org.id);
      expect(events.map((e) => [e.type, e.outcome])).toEqual([
        ['customer.subscription.created', 'ignored_no_change'],
        ['customer.subscription.deleted', 'applied'],
      ]);
      expect(events[1]).toMatchObject({ id, org_id: org.id, created: seconds() * 1000, received_at: clock.now() });
    });

    it('refuses a bad signature, a missing header, a tampered body and an expired timestamp with 400 invalid_signature, changing nothing', async () => {
      const { org, customer, subscription } = await linkedOrg('Forged Inc');
      const before = await organization(org.id);
      const event = subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.deleted', created: seconds(), status: 'canceled', customer, subscription, orgId: org.id });
      const payload = payloadOf(event);
      const tampered = payload.replace(org.id, 'org_someone_else');
      const attempts: Array<[string, { signature?: string | null; payload?: string }]> = [
        ['wrong secret', { signature: sign(payload, { secret: 'whsec_bm90LXRoZS1zZWNyZXQ' }) }],
        ['missing header', { signature: null }],
        ['empty header', { signature: '' }],
        ['garbage header', { signature: 'not a signature' }],
        ['tampered body', { signature: sign(payload), payload: tampered }],
        ['re-serialised body', { signature: sign(payload), payload: JSON.stringify(event) }],
        ['older than 300 s', { signature: sign(payload, { timestamp: seconds() - 301 }) }],
      ];
      for (const [label, options] of attempts) {
        const res = await deliver(event, options);
        expect(res.status, label).toBe(400);
        expect(res.body.error.code, label).toBe('invalid_signature');
        expect(res.body.error.message, label).toMatch(/Stripe-Signature/);
      }
      expect(await organization(org.id)).toEqual(before);
      expect(await auditRows(org.id, 'subscription.cancelled')).toHaveLength(0);
      expect((await stripeEvents(org.id)).map((e) => e.type)).toEqual(['customer.subscription.created']);

      // Within the tolerance it verifies (the clock is the services' own).
      const fresh = await deliver(event, { signature: sign(payload, { timestamp: seconds() - 299 }) });
      expect(fresh.body).toMatchObject({ received: true, outcome: 'applied' });
    });

    it('acknowledges a replayed event id once more without a second transition', async () => {
      const { org, customer, subscription } = await linkedOrg('Replay plc');
      const event = subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.deleted', created: seconds(), status: 'canceled', customer, subscription, orgId: org.id });
      const first = await deliver(event);
      expect(first.body).toEqual({ received: true, duplicate: false, outcome: 'applied' });
      const cancelledAt = (await organization(org.id)).cancelled_at;
      clock.advance(5 * 60_000);

      // Stripe retries the same event (a new signature, the same id), sequentially and concurrently.
      const again = await deliver(event);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ received: true, duplicate: true });
      const concurrent = await Promise.all([deliver(event), deliver(event), deliver(event)]);
      for (const res of concurrent) expect(res.body).toEqual({ received: true, duplicate: true });

      expect((await organization(org.id)).cancelled_at).toBe(cancelledAt);
      expect(await auditRows(org.id, 'subscription.cancelled')).toHaveLength(1);
      await expect.poll(async () => mailsTo(await ownerEmail(org)).length).toBe(1);
      expect((await stripeEvents(org.id)).filter((e) => e.id === event.id)).toHaveLength(1);
    });

    it('applies concurrent first deliveries of one event exactly once', async () => {
      const { org, customer, subscription } = await linkedOrg('Race Ltd');
      const event = subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.deleted', created: seconds(), status: 'canceled', customer, subscription, orgId: org.id });
      const results = await Promise.all(Array.from({ length: 4 }, () => deliver(event)));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(results.filter((r) => r.body.duplicate === false).map((r) => r.body.outcome)).toEqual(['applied']);
      expect(await auditRows(org.id, 'subscription.cancelled')).toHaveLength(1);
    });

    it('ignores an event older than the last applied one (out of order), and applies a later one', async () => {
      const { org, customer, subscription } = await linkedOrg('Order GmbH');
      const deletedAt = seconds();
      const deleted = subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.deleted', created: deletedAt, status: 'canceled', customer, subscription, orgId: org.id });
      // Created a minute before the deletion, delivered after it.
      const earlierUpdate = subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.updated', created: deletedAt - 60, status: 'active', customer, subscription, orgId: org.id });
      expect((await deliver(deleted)).body.outcome).toBe('applied');
      clock.advance(120_000);
      const late = await deliver(earlierUpdate);
      expect(late.status).toBe(200);
      expect(late.body).toEqual({ received: true, duplicate: false, outcome: 'ignored_stale' });
      const row = await organization(org.id);
      expect(row.state).toBe('read_only');
      expect(row.stripe_event_at).toBe(deletedAt * 1000);
      expect(await auditRows(org.id, 'subscription.resumed')).toHaveLength(0);

      // A later `updated` with an active status: the customer paid again.
      const laterUpdate = subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.updated', created: seconds(), status: 'active', customer, subscription, orgId: org.id });
      expect((await deliver(laterUpdate)).body).toEqual({ received: true, duplicate: false, outcome: 'applied' });
      const resumed = await organization(org.id);
      expect(resumed).toMatchObject({ state: 'active', cancelled_at: null, deletion_at: null, stripe_event_at: seconds() * 1000 });
      const audit = await auditRows(org.id, 'subscription.resumed');
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ actor_type: 'system', source: 'system' });
      const write = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Writable again' } });
      expect(write.status).toBe(201);
    });

    it('ends in the later state when two events of one organisation arrive at once', async () => {
      const { org, customer, subscription } = await linkedOrg('Together SA');
      const t = seconds();
      const deleted = subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.deleted', created: t, status: 'canceled', customer, subscription, orgId: org.id });
      const earlier = subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.updated', created: t - 30, status: 'active', customer, subscription, orgId: org.id });
      const results = await Promise.all([deliver(earlier), deliver(deleted)]);
      expect(results.map((r) => r.status)).toEqual([200, 200]);
      expect((await organization(org.id)).state).toBe('read_only');
      expect(await auditRows(org.id, 'subscription.cancelled')).toHaveLength(1);
      expect(await auditRows(org.id, 'subscription.resumed')).toHaveLength(0);
    });

    it('finds the organisation by its Stripe customer when the subscription names none', async () => {
      const { org, customer, subscription } = await linkedOrg('Customer Co');
      const res = await deliver(subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.deleted', created: seconds(), status: 'canceled', customer, subscription }));
      expect(res.body.outcome).toBe('applied');
      expect((await organization(org.id)).state).toBe('read_only');
    });

    it('records an event for no organisation of ours (unknown id and customer) as ignored, with 200', async () => {
      const bystander = await env.createOrg('Bystander');
      const before = await organization(bystander.id);
      const event = subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.deleted', created: seconds(), status: 'canceled', customer: 'cus_nobody', orgId: 'org_doesnotexist' });
      const res = await deliver(event);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true, duplicate: false, outcome: 'ignored_unknown_org' });
      expect(await organization(bystander.id)).toEqual(before);
      // Remembered all the same: a replay is a duplicate.
      expect((await deliver(event)).body).toEqual({ received: true, duplicate: true });
    });

    it('records but does not transition for a status that is not a paid one, another subscription, or another event type', async () => {
      const { org, customer, subscription } = await linkedOrg('Status AB');
      const pastDue = await deliver(subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.updated', created: seconds(), status: 'past_due', customer, subscription, orgId: org.id }));
      expect(pastDue.body.outcome).toBe('ignored_status');
      expect((await organization(org.id)).state).toBe('active');

      // An old, second subscription of the customer ending does not cancel the one in use.
      clock.advance(60_000);
      const other = await deliver(
        subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.deleted', created: seconds(), status: 'canceled', customer, subscription: 'sub_old_one', orgId: org.id }),
      );
      expect(other.body.outcome).toBe('ignored_other_subscription');
      expect((await organization(org.id)).state).toBe('active');

      const invoice = {
        id: nextEventId(),
        object: 'event',
        created: seconds(),
        type: 'invoice.paid',
        data: { object: { id: 'in_test_1', object: 'invoice', customer } },
      };
      const res = await deliver(invoice);
      expect(res.body).toEqual({ received: true, duplicate: false, outcome: 'ignored_type' });
      expect(await auditRows(org.id, 'subscription.')).toHaveLength(0);
    });

    it('leaves an organisation being deleted alone', async () => {
      const { org, customer, subscription } = await linkedOrg('Leaving Ltd');
      await env.container.services.lifecycle.cancel(cliActor(org.id));
      await env.container.database.db.updateTable('organizations').set({ state: 'deleting', deletion_started_at: clock.now() }).where('id', '=', org.id).execute();
      const before = await organization(org.id);
      const res = await deliver(subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.updated', created: seconds(), status: 'active', customer, subscription, orgId: org.id }));
      expect(res.body).toEqual({ received: true, duplicate: false, outcome: 'ignored_deleting' });
      expect(await organization(org.id)).toEqual(before);
      // Nothing new is tied to the organisation that deletion would have to find.
      expect((await stripeEvents(org.id)).map((e) => e.outcome)).toEqual(['ignored_no_change']);
    });

    it('answers a signed body that is not an event with 400, never a 500', async () => {
      const notJson = 'this is not json';
      const res = await deliver(null, { payload: notJson, signature: sign(notJson) });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_json');

      const missing = JSON.stringify({ object: 'event', type: 'customer.subscription.deleted' });
      const bad = await deliver(null, { payload: missing, signature: sign(missing) });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('validation_failed');
      expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual(['id', 'created']);

      const nul = payloadOf({ ...subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.deleted', created: seconds(), orgId: 'org_\u0000' }), data: { object: { id: 'sub\u0000', status: 'active' } } });
      const withNul = await deliver(null, { payload: nul, signature: sign(nul) });
      expect(withNul.status).toBe(400);
      expect(withNul.body.error.details.map((d: { field: string }) => d.field)).toEqual(['data.object.id']);
    });

    it('takes bodies up to 1 MiB only, and JSON only', async () => {
      const big = JSON.stringify({ id: nextEventId(), padding: 'x'.repeat(1024 * 1024) });
      const tooBig = await deliver(null, { payload: big, signature: sign(big) });
      expect(tooBig.status).toBe(413);
      expect(tooBig.body.error.code).toBe('payload_too_large');

      const form = await env.request('POST', WEBHOOK, { payload: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded', 'stripe-signature': sign('a=b') } });
      expect(form.status).toBe(415);
    });

    it('leaves the API as it was: JSON bodies parsed, the route outside the OpenAPI document', async () => {
      const org = await env.createOrg('Still JSON');
      const created = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Parsed' } });
      expect(created.status).toBe(201);
      expect(created.body.name).toBe('Parsed');
      const doc = await env.request('GET', '/openapi.json');
      expect(doc.body.paths[WEBHOOK]).toBeUndefined();
      const get = await env.request('GET', WEBHOOK);
      expect(get.status).toBe(405);
    });
  });

  describe('POST /dashboard/billing/portal', () => {
    it('sends the owner to a Stripe customer portal session for the organisation, returning to the Billing page', async () => {
      const { org, customer } = await linkedOrg('Portal Co');
      const client = await DashboardClient.signedIn(env, org.id, org.ownerId);
      // The Billing page offers it (helper E's page): a form posting here, with the CSRF field.
      const billing = await client.get('/dashboard/billing');
      expect(billing.status).toBe(200);
      expect(billing.text).toMatch(/<form method="post" action="\/dashboard\/billing\/portal"[\s\S]*?name="_csrf"[\s\S]*?Manage billing[\s\S]*?<\/form>/);
      const before = standIn.received.length;
      const res = await client.post('/dashboard/billing/portal');
      expect(res.status).toBe(303);
      expect(res.location).toBe('https://billing.stripe.test/p/session/test_bps_1');

      expect(standIn.received).toHaveLength(before + 1);
      const sent = standIn.received.at(-1)!;
      expect(sent.method).toBe('POST');
      expect(sent.path).toBe('/v1/billing_portal/sessions');
      expect(sent.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
      expect(sent.form.get('customer')).toBe(customer);
      expect(sent.form.get('return_url')).toBe(`${env.config.publicBaseUrl}/dashboard/billing`);
    });

    it('works while the workspace is read-only: it is how the organisation pays again', async () => {
      const { org, customer, subscription } = await linkedOrg('Paying Again');
      await deliver(subscriptionEvent({ id: nextEventId(), type: 'customer.subscription.deleted', created: seconds(), status: 'canceled', customer, subscription, orgId: org.id }));
      expect((await organization(org.id)).state).toBe('read_only');
      const client = await DashboardClient.signedIn(env, org.id, org.ownerId);
      await client.get('/dashboard/account');
      const res = await client.post('/dashboard/billing/portal');
      expect(res.status).toBe(303);
      expect(standIn.received.at(-1)!.form.get('customer')).toBe(customer);
    });

    it('refuses everyone but an owner with the 403 page, before asking Stripe', async () => {
      const { org } = await linkedOrg('Owners Only');
      for (const role of ['admin', 'member', 'viewer'] as const) {
        const member = await org.member(role);
        const client = await DashboardClient.signedIn(env, org.id, member.userId);
        await client.get('/dashboard/account');
        const before = standIn.received.length;
        const res = await client.post('/dashboard/billing/portal');
        expect(res.status, role).toBe(403);
        expect(res.headers['content-type']).toMatch(/text\/html/);
        expect(textOf(res.text)).toMatch(/Only an owner can manage billing/);
        expect(standIn.received).toHaveLength(before);
      }
    });

    it('shows the Billing page with an error when the organisation has no Stripe customer', async () => {
      const org = await env.createOrg('Manual Billing');
      const client = await DashboardClient.signedIn(env, org.id, org.ownerId);
      await client.get('/dashboard/account');
      const before = standIn.received.length;
      const res = await client.post('/dashboard/billing/portal');
      expect(res.status).toBe(409);
      expect(res.text).toContain('<h1>Billing</h1>');
      expect(textOf(res.text)).toMatch(/not linked to a Stripe customer yet/);
      expect(standIn.received).toHaveLength(before);
    });

    it('shows the Billing page with a clear error when Stripe refuses, not a 500', async () => {
      const { org } = await linkedOrg('Refused Co');
      standIn.answerWith(() => ({
        status: 400,
        body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: "No such customer: 'cus_x'", param: 'customer' } },
      }));
      try {
        const client = await DashboardClient.signedIn(env, org.id, org.ownerId);
        await client.get('/dashboard/account');
        const res = await client.post('/dashboard/billing/portal');
        expect(res.status).toBe(502);
        expect(res.text).toContain('<h1>Billing</h1>');
        expect(textOf(res.text)).toMatch(/Stripe could not open the billing portal just now/);
        expect(res.text).not.toContain('No such customer');
      } finally {
        standIn.answerWith((req) => ({ status: 200, body: { id: 'bps_test_1', object: 'billing_portal.session', customer: req.form.get('customer'), url: 'https://billing.stripe.test/p/session/test_bps_1' } }));
      }
    });

    it('refuses a form without the CSRF token', async () => {
      const { org } = await linkedOrg('Csrf Co');
      const client = await DashboardClient.signedIn(env, org.id, org.ownerId);
      const res = await client.post('/dashboard/billing/portal', {}, { csrf: null });
      expect(res.status).toBe(403);
    });
  });
});

describe('Stripe not configured (sqlite)', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await createTestEnv('sqlite');
  });
  afterAll(async () => env?.close());

  it('has no webhook route and no portal: the normal 404s', async () => {
    expect(env.container.stripe).toBeNull();
    const payload = JSON.stringify({ id: 'evt_1', type: 'customer.subscription.deleted' });
    const res = await env.request('POST', WEBHOOK, {
      payload,
      headers: { 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET }) },
    });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');

    const org = await env.createOrg('No Stripe');
    const client = await DashboardClient.signedIn(env, org.id, org.ownerId);
    await client.get('/dashboard/account');
    const portal = await client.post('/dashboard/billing/portal');
    expect(portal.status).toBe(404);
  });
});

describe('Stripe configuration', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-stripe-config-'));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('takes both variables or neither', () => {
    expect(loadConfig({ DATA_DIR: scratch }).stripe).toBeNull();
    expect(loadConfig({ DATA_DIR: scratch, ...STRIPE_ENV }).stripe).toEqual({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });
    const alone: Array<[Record<string, string>, string]> = [
      [{ STRIPE_SECRET_KEY: SECRET_KEY }, 'STRIPE_WEBHOOK_SECRET'],
      [{ STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET }, 'STRIPE_SECRET_KEY'],
    ];
    for (const [env, missing] of alone) {
      expect(() => loadConfig({ DATA_DIR: scratch, ...env })).toThrow(ConfigError);
      expect(() => loadConfig({ DATA_DIR: scratch, ...env })).toThrow(missing);
    }
  });

  it.each([
    ['STRIPE_WEBHOOK_SECRET', { STRIPE_SECRET_KEY: SECRET_KEY }],
    ['STRIPE_SECRET_KEY', { STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET }],
  ])('./bin/workspace serve stops at start naming %s when only the other is set', async (missing, env) => {
    const res = await runCli(['serve'], { DATA_DIR: scratch, PORT: '0', ...env });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(missing);
    // The secret itself is never printed.
    expect(res.stderr + res.stdout).not.toContain(SECRET_KEY);
    expect(res.stderr + res.stdout).not.toContain(WEBHOOK_SECRET);
  });
});
