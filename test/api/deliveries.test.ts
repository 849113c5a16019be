import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { startDeliveryHarness, waitFor, type DeliveryHarness, type HttpsReceiver } from '../helpers/https-receiver.js';

describe.each(testDialects())('deliveries API (%s)', (dialect) => {
  let harness: DeliveryHarness;
  let receiver: HttpsReceiver;
  let env: TestEnv;
  let org: TestOrg;
  let hookId: string;
  let failingHookId: string;

  beforeAll(async () => {
    harness = await startDeliveryHarness(dialect, { WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms,50ms,50ms' });
    ({ receiver, env } = harness);
    receiver.on('/down', (_req, res) => void res.writeHead(500).end('nope'));
    org = await env.createOrg();
    const ok = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: receiver.url('/ok'), events: ['project.created'] } });
    const down = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: receiver.url('/down'), events: ['project.created'] } });
    hookId = ok.body.id;
    failingHookId = down.body.id;
    for (const name of ['A', 'B', 'C']) {
      expect((await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name } })).status).toBe(201);
    }
    await waitFor('all six deliveries settled', async () => {
      const a = await env.request('GET', `/v1/webhooks/${hookId}/deliveries?status=delivered`, { key: org.ownerKey });
      const b = await env.request('GET', `/v1/webhooks/${failingHookId}/deliveries?status=failed`, { key: org.ownerKey });
      return a.body.data.length === 3 && b.body.data.length === 3;
    });
  });
  afterAll(async () => harness?.close());

  it('lists a subscription’s deliveries newest first with limit/cursor paging and a status filter', async () => {
    const all = await env.request('GET', `/v1/webhooks/${hookId}/deliveries`, { key: org.ownerKey });
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(3);
    expect(all.body.next_cursor).toBeNull();
    const names = all.body.data.map((d: { event_id: string }) => d.event_id);
    expect(all.body.data[0]).toMatchObject({ webhook_id: hookId, event_type: 'project.created', status: 'delivered', attempts: 1, last_status_code: 200, last_error: null, next_attempt_at: null });
    expect(all.body.data[0].id).toMatch(/^dlv_/);

    const first = await env.request('GET', `/v1/webhooks/${hookId}/deliveries?limit=2`, { key: org.ownerKey });
    expect(first.body.data).toHaveLength(2);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await env.request('GET', `/v1/webhooks/${hookId}/deliveries?limit=2&cursor=${first.body.next_cursor}`, { key: org.ownerKey });
    expect(second.body.data).toHaveLength(1);
    expect(second.body.next_cursor).toBeNull();
    expect([...first.body.data, ...second.body.data].map((d: { event_id: string }) => d.event_id)).toEqual(names);

    const failed = await env.request('GET', `/v1/webhooks/${failingHookId}/deliveries?status=failed`, { key: org.ownerKey });
    expect(failed.body.data).toHaveLength(3);
    expect(failed.body.data[0]).toMatchObject({ status: 'failed', attempts: 6, last_status_code: 500, last_error: 'HTTP 500' });
    const none = await env.request('GET', `/v1/webhooks/${hookId}/deliveries?status=failed`, { key: org.ownerKey });
    expect(none.body).toEqual({ data: [], next_cursor: null });
  });

  it('rejects bad list parameters with validation_failed', async () => {
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'status=bogus', 'cursor=!!!']) {
      const res = await env.request('GET', `/v1/webhooks/${hookId}/deliveries?${query}`, { key: org.ownerKey });
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details[0].field).toBe(query.split('=')[0]);
    }
  });

  it('shows one delivery with its payload and every attempt', async () => {
    const list = await env.request('GET', `/v1/webhooks/${failingHookId}/deliveries?limit=1`, { key: org.ownerKey });
    const id = list.body.data[0].id;
    const res = await env.request('GET', `/v1/webhooks/${failingHookId}/deliveries/${id}`, { key: org.ownerKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, status: 'failed', attempts: 6 });
    expect(JSON.parse(res.body.payload)).toMatchObject({ event: 'project.created', data: { name: 'C' } });
    expect(res.body.attempt_history).toHaveLength(6);
    res.body.attempt_history.forEach((a: Record<string, unknown>, i: number) => {
      expect(a).toMatchObject({ attempt_number: i + 1, trigger: 'automatic', outcome: 'failure', response_status: 500, response_body: 'nope', error: 'HTTP 500' });
      expect(a.request_headers).toMatchObject({ 'x-service-delivery-id': id, 'x-service-delivery-attempt': String(i + 1), 'x-service-event-id': res.body.event_id });
    });
  });

  it('replays a failed delivery: 202 with the pending delivery, then a replay attempt', async () => {
    const list = await env.request('GET', `/v1/webhooks/${failingHookId}/deliveries?limit=1`, { key: org.ownerKey });
    const id = list.body.data[0].id;
    receiver.on('/down', (_req, res) => void res.writeHead(200).end('fixed'));
    const res = await env.request('POST', `/v1/webhooks/${failingHookId}/deliveries/${id}/replay`, { key: org.ownerKey });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id, status: 'pending', attempts: 6 });
    const again = await env.request('POST', `/v1/webhooks/${failingHookId}/deliveries/${id}/replay`, { key: org.ownerKey });
    if (again.status !== 202) {
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('conflict');
    }
    const done = await waitFor('the replay delivered', async () => {
      const r = await env.request('GET', `/v1/webhooks/${failingHookId}/deliveries/${id}`, { key: org.ownerKey });
      return r.body.status === 'delivered' ? r.body : null;
    });
    expect(done.attempt_history.at(-1)).toMatchObject({ trigger: 'replay', outcome: 'success', response_status: 200, response_body: 'fixed' });
    receiver.on('/down', (_req, r) => void r.writeHead(500).end('nope'));
  });

  it('hides other organisations’ subscriptions and deliveries (404) and unknown ids', async () => {
    const other = await env.createOrg('Other');
    const list = await env.request('GET', `/v1/webhooks/${hookId}/deliveries`, { key: org.ownerKey });
    const id = list.body.data[0].id;
    const cases: [string, string][] = [
      ['GET', `/v1/webhooks/${hookId}/deliveries`],
      ['GET', `/v1/webhooks/${hookId}/deliveries/${id}`],
      ['POST', `/v1/webhooks/${hookId}/deliveries/${id}/replay`],
    ];
    for (const [method, url] of cases) {
      const res = await env.request(method, url, { key: other.ownerKey });
      expect(res.status, url).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    // A delivery addressed through the wrong subscription, and ids that do not exist.
    for (const url of [`/v1/webhooks/${failingHookId}/deliveries/${id}`, `/v1/webhooks/${hookId}/deliveries/dlv_nope`, '/v1/webhooks/wh_nope/deliveries']) {
      const res = await env.request('GET', url, { key: org.ownerKey });
      expect(res.status, url).toBe(404);
    }
    const after = await env.request('GET', `/v1/webhooks/${hookId}/deliveries/${id}`, { key: org.ownerKey });
    expect(after.body.status).toBe('delivered');
    expect(after.body.attempts).toBe(1);
  });

  it('uses the webhook permissions: any role reads, only owner/admin replay; scopes apply', async () => {
    const list = await env.request('GET', `/v1/webhooks/${hookId}/deliveries`, { key: org.ownerKey });
    const id = list.body.data[0].id;
    const viewer = await org.member('viewer');
    const member = await org.member('member');
    const admin = await org.member('admin');
    const readOnly = await org.member('owner', 'read');
    const projectsOnly = await org.member('owner', 'projects');
    expect((await env.request('GET', `/v1/webhooks/${hookId}/deliveries`, { key: viewer.key })).status).toBe(200);
    expect((await env.request('GET', `/v1/webhooks/${hookId}/deliveries/${id}`, { key: readOnly.key })).status).toBe(200);
    for (const key of [viewer.key, member.key, readOnly.key, projectsOnly.key]) {
      const res = await env.request('POST', `/v1/webhooks/${hookId}/deliveries/${id}/replay`, { key });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
    expect((await env.request('GET', `/v1/webhooks/${hookId}/deliveries`, { key: projectsOnly.key })).status).toBe(403);
    expect((await env.request('GET', `/v1/webhooks/${hookId}/deliveries`)).status).toBe(401);
    // Nothing was queued by the refused calls.
    expect((await env.request('GET', `/v1/webhooks/${hookId}/deliveries/${id}`, { key: org.ownerKey })).body.status).toBe('delivered');
    const ok = await env.request('POST', `/v1/webhooks/${hookId}/deliveries/${id}/replay`, { key: admin.key });
    expect(ok.status).toBe(202);
  });

  it('marks the delivery routes as extensions in the OpenAPI document', async () => {
    const res = await env.request('GET', '/openapi.json');
    const paths = res.body.paths;
    expect(paths['/v1/webhooks/{id}/deliveries'].get['x-extension']).toBe(true);
    expect(paths['/v1/webhooks/{id}/deliveries/{delivery_id}'].get['x-extension']).toBe(true);
    expect(paths['/v1/webhooks/{id}/deliveries/{delivery_id}/replay'].post['x-extension']).toBe(true);
    expect(paths['/v1/webhooks/{id}/deliveries'].get.summary).toMatch(/extension/);
  });
});

describe.each(testDialects())('delivery history pruning (%s)', (dialect) => {
  let harness: DeliveryHarness;
  let receiver: HttpsReceiver;
  let env: TestEnv;

  beforeAll(async () => {
    harness = await startDeliveryHarness(
      dialect,
      { WEBHOOK_RETRY_SCHEDULE: '10ms', WEBHOOK_DELIVERED_RETENTION: '300ms', WEBHOOK_FAILED_RETENTION: '1h' },
      { pruneIntervalMs: 100 },
    );
    ({ receiver, env } = harness);
    receiver.on('/down', (_req, res) => void res.writeHead(500).end());
  });
  afterAll(async () => harness?.close());

  it('prunes delivered history after its retention and keeps failed history longer', async () => {
    const org = await env.createOrg();
    const ok = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: receiver.url('/ok'), events: ['project.created'] } });
    const down = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: receiver.url('/down'), events: ['project.created'] } });
    await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'P' } });
    const repos = env.container.store.repos;
    const [event] = await repos.events.listEvents(org.id);
    const deliveries = await repos.events.listDeliveriesForEvent(org.id, event!.id);
    const delivered = deliveries.find((d) => d.webhook_id === ok.body.id)!;
    const failed = deliveries.find((d) => d.webhook_id === down.body.id)!;
    await waitFor('the failed delivery', async () => (await repos.deliveries.findById(org.id, failed.id))?.status === 'failed');
    await waitFor('the delivered one pruned', async () => (await repos.deliveries.findById(org.id, delivered.id)) === undefined);
    expect(await repos.deliveries.listAttempts(org.id, delivered.id)).toEqual([]);
    expect((await repos.deliveries.findById(org.id, failed.id))?.status).toBe('failed');
    expect(await repos.deliveries.listAttempts(org.id, failed.id)).toHaveLength(2);
    // The event stays while a delivery still refers to it.
    expect(await repos.events.findEvent(org.id, event!.id)).toBeDefined();
  });
});
