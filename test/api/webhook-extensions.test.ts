import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/schemas/events.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { cancelSubscription, orgSnapshot } from '../helpers/read-only.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** The subscription extensions of CONTRACT 11: reads, edits, rotation, test events and enabling, with their error matrices. */
describe.each(testDialects())('webhook subscription extensions (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;
  let hookId: string;
  let otherHookId: string;

  beforeAll(async () => {
    // Private networks refused, as in production: the SSRF rules of creation apply to PATCH.
    env = await createTestEnv(dialect, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' } });
  });
  afterAll(async () => env?.close());

  beforeEach(async () => {
    org = await env.createOrg('Acme');
    other = await env.createOrg('Other');
    hookId = (await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://93.184.215.14/hook', events: ['project.created', 'task.assigned'], secret: 'a-chosen-secret-0123' } })).body.id;
    otherHookId = (await env.request('POST', '/v1/webhooks', { key: other.ownerKey, body: { url: 'https://93.184.215.14/other', events: ['project.created'] } })).body.id;
  });

  const auditActions = async (orgId: string) =>
    (await env.container.database.db.selectFrom('audit_log').select('action').where('org_id', '=', orgId).orderBy('seq').execute()).map((r) => r.action);

  /** Disables the subscription the way the worker does (a 410 streak), then lets the health sweep announce it. */
  async function disable(id: string, orgId = org.id) {
    await env.container.store.repos.webhooks.update(orgId, id, { status: 'disabled', failing_since: env.container.clock.now(), disabled_at: env.container.clock.now(), disabled_reason: 'gone' });
    await env.container.services.webhookHealth.sweep();
  }

  it('GET answers the object for every role, never the secret; 404 for another organisation and unknown ids', async () => {
    for (const role of ['admin', 'member', 'viewer'] as const) {
      const { key } = await org.member(role);
      const res = await env.request('GET', `/v1/webhooks/${hookId}`, { key });
      expect(res.status, role).toBe(200);
      expect(res.body).toMatchObject({ id: hookId, url: 'https://93.184.215.14/hook', events: ['project.created', 'task.assigned'], active: true, status: 'active', failing_since: null, disabled_at: null, disabled_reason: null });
      expect(res.text).not.toContain('a-chosen-secret');
    }
    for (const id of [otherHookId, 'wh_unknown', 'not-an-id', '%00']) {
      const res = await env.request('GET', `/v1/webhooks/${encodeURIComponent(id)}`, { key: org.ownerKey });
      expect(res.status, id).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await env.request('GET', `/v1/webhooks/${hookId}`)).status).toBe(401);
    const restricted = await org.member('admin', 'projects');
    expect((await env.request('GET', `/v1/webhooks/${hookId}`, { key: restricted.key })).body.error.code).toBe('forbidden');
  });

  it('PATCH changes the URL and events with the creation rules, audited; nothing to change is a no-op', async () => {
    const res = await env.request('PATCH', `/v1/webhooks/${hookId}`, { key: org.ownerKey, body: { url: 'https://93.184.215.14/v2', events: ['task.assigned', 'task.assigned', 'project.deleted'] } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: hookId, url: 'https://93.184.215.14/v2', events: ['task.assigned', 'project.deleted'], status: 'active' });
    expect((await env.request('GET', `/v1/webhooks/${hookId}`, { key: org.ownerKey })).body.url).toBe('https://93.184.215.14/v2');
    const admin = await org.member('admin');
    const same = await env.request('PATCH', `/v1/webhooks/${hookId}`, { key: admin.key, body: { url: 'https://93.184.215.14/v2' } });
    expect(same.status).toBe(200);
    expect((await auditActions(org.id)).filter((a) => a === 'webhook.updated')).toHaveLength(1);
    const row = await env.container.database.db.selectFrom('audit_log').selectAll().where('org_id', '=', org.id).where('action', '=', 'webhook.updated').executeTakeFirstOrThrow();
    expect(JSON.parse(String(row.changes))).toEqual({ url: { old: 'https://93.184.215.14/hook', new: 'https://93.184.215.14/v2' }, events: { old: ['project.created', 'task.assigned'], new: ['task.assigned', 'project.deleted'] } });
  });

  it('PATCH refuses what creation refuses, with the field named, and changes nothing', async () => {
    const before = await orgSnapshot(env.container, org.id);
    const cases: [unknown, string | null][] = [
      [{}, null],
      [{ url: 'http://93.184.215.14/hook' }, 'url'],
      [{ url: 'https://user:pw@93.184.215.14/hook' }, 'url'],
      [{ url: 'https://127.0.0.1/hook' }, 'url'],
      [{ url: 'https://10.0.0.8/hook' }, 'url'],
      [{ url: 'https://[::1]/hook' }, 'url'],
      [{ url: `https://93.184.215.14/${'a'.repeat(2048)}` }, 'url'],
      [{ url: 'https://93.184.215.14/a b' }, 'url'],
      [{ url: 42 }, 'url'],
      [{ events: [] }, 'events'],
      [{ events: ['project.*'] }, 'events'],
      [{ events: 'project.created' }, 'events'],
      [{ secret: 'changing-the-secret-here' }, null],
      [{ url: 'https://93.184.215.14/ok', active: false }, null],
    ];
    for (const [body, field] of cases) {
      const res = await env.request('PATCH', `/v1/webhooks/${hookId}`, { key: org.ownerKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      if (field) expect(res.body.error.details.map((d: { field: string }) => d.field.replace(/^\//, '').split(/[/.[]/)[0])).toContain(field);
    }
    const badJson = await env.request('PATCH', `/v1/webhooks/${hookId}`, { key: org.ownerKey, payload: '{"url":', headers: { 'content-type': 'application/json' } });
    expect(badJson.body.error.code).toBe('invalid_json');
    const text = await env.request('PATCH', `/v1/webhooks/${hookId}`, { key: org.ownerKey, payload: 'url=x', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(await orgSnapshot(env.container, org.id)).toEqual(before);
  });

  it('every change needs an admin or owner (403 before 400 before 404), and is refused while read-only', async () => {
    const calls: [string, string, unknown][] = [
      ['PATCH', '', { url: 'https://93.184.215.14/x' }],
      ['POST', '/rotate-secret', {}],
      ['POST', '/test', {}],
      ['POST', '/enable', undefined],
    ];
    const member = await org.member('member');
    const viewer = await org.member('viewer');
    const readOnlyKey = await org.member('admin', 'read');
    const before = await orgSnapshot(env.container, org.id);
    for (const [method, suffix, body] of calls) {
      for (const key of [member.key, viewer.key, readOnlyKey.key]) {
        const res = await env.request(method, `/v1/webhooks/${hookId}${suffix}`, { key, body });
        expect(res.status, `${method} ${suffix}`).toBe(403);
        expect(res.body.error.code).toBe('forbidden');
        // Forbidden comes before a bad body and before an unknown id.
        const bad = await env.request(method, `/v1/webhooks/${otherHookId}${suffix}`, { key, body: { nonsense: true } });
        expect(bad.body.error.code, `${method} ${suffix} order`).toBe('forbidden');
      }
      const unauthenticated = await env.request(method, `/v1/webhooks/${hookId}${suffix}`, { body });
      expect(unauthenticated.status).toBe(401);
      // Another organisation's subscription is indistinguishable from an unknown one.
      for (const id of [otherHookId, 'wh_nope']) {
        const res = await env.request(method, `/v1/webhooks/${id}${suffix}`, { key: org.ownerKey, body });
        expect(res.status, `${method} ${suffix} ${id}`).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
    }
    expect(await orgSnapshot(env.container, org.id)).toEqual(before);

    await cancelSubscription(env.container, org.id);
    const frozen = await orgSnapshot(env.container, org.id);
    for (const [method, suffix, body] of calls) {
      const res = await env.request(method, `/v1/webhooks/${hookId}${suffix}`, { key: org.ownerKey, body });
      expect(res.status, `${method} ${suffix}`).toBe(403);
      expect(res.body.error.code).toBe('workspace_read_only');
    }
    // Reads still answer.
    expect((await env.request('GET', `/v1/webhooks/${hookId}`, { key: org.ownerKey })).status).toBe(200);
    expect(await orgSnapshot(env.container, org.id)).toEqual(frozen);
  });

  it('rotate-secret audits the rotation without the secret; the stored secret changes', async () => {
    const res = await env.request('POST', `/v1/webhooks/${hookId}/rotate-secret`, { key: org.ownerKey, body: { previous_expires_in: 120 } });
    expect(res.status).toBe(200);
    const row = await env.container.store.repos.webhooks.findById(org.id, hookId);
    expect(row).toMatchObject({ secret: res.body.secret, secret_previous: 'a-chosen-secret-0123' });
    expect(Number(row!.secret_previous_expires_at)).toBe(Date.parse(res.body.previous_expires_at));
    const audit = await env.container.database.db.selectFrom('audit_log').selectAll().where('org_id', '=', org.id).where('action', '=', 'webhook.secret_rotated').executeTakeFirstOrThrow();
    expect(JSON.stringify(audit)).not.toContain(res.body.secret);
    expect(JSON.stringify(audit)).not.toContain('a-chosen-secret');
  });

  it('test events: the event must be one of the subscription\'s, its data validates against the published schema', async () => {
    const served = await env.request('GET', '/openapi.json');
    const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));
    ajv.addSchema(served.body, 'openapi.json');
    const all = (await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://93.184.215.14/all', events: [...EVENT_TYPES] } })).body.id as string;
    for (const event of EVENT_TYPES) {
      const res = await env.request('POST', `/v1/webhooks/${all}/test`, { key: org.ownerKey, body: { event } });
      expect(res.status, event).toBe(202);
      const delivery = await env.container.store.repos.deliveries.findById(org.id, res.body.delivery_id);
      expect(delivery).toMatchObject({ test: 1, status: 'pending', webhook_id: all, event_type: event });
      const body = JSON.parse((await env.container.store.repos.events.findEvent(org.id, delivery!.event_id))!.body);
      const validate = ajv.getSchema(`openapi.json#/webhooks/${event}/post/requestBody/content/application~1json/schema`)!;
      expect(validate(body), `${event}: ${JSON.stringify(validate.errors)}`).toBe(true);
      // Only this subscription got a delivery of the test event.
      expect(await env.container.store.repos.events.listDeliveriesForEvent(org.id, delivery!.event_id)).toHaveLength(1);
    }
    // Without a body or with {}: the subscription's first event.
    for (const body of [undefined, {}]) {
      const res = await env.request('POST', `/v1/webhooks/${hookId}/test`, { key: org.ownerKey, body });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      expect((await env.container.store.repos.deliveries.findById(org.id, res.body.delivery_id))!.event_type).toBe('project.created');
    }
    const before = await orgSnapshot(env.container, org.id);
    for (const body of [{ event: 'project.deleted' }, { event: 'nope' }, { event: 1 }, { other: true }]) {
      const res = await env.request('POST', `/v1/webhooks/${hookId}/test`, { key: org.ownerKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
    await disable(hookId);
    const disabledBefore = await orgSnapshot(env.container, org.id);
    const refused = await env.request('POST', `/v1/webhooks/${hookId}/test`, { key: org.ownerKey, body: {} });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('conflict');
    expect(await orgSnapshot(env.container, org.id)).toEqual(disabledBefore);
    expect(before.webhooks).not.toEqual(disabledBefore.webhooks);
  });

  it('enable brings a disabled subscription back with its streak forgotten, audited once; an active one is unchanged', async () => {
    const active = await env.request('POST', `/v1/webhooks/${hookId}/enable`, { key: org.ownerKey });
    expect(active.status).toBe(200);
    expect(active.body.status).toBe('active');
    expect(await auditActions(org.id)).not.toContain('webhook.enabled');

    await disable(hookId);
    const read = await env.request('GET', `/v1/webhooks/${hookId}`, { key: org.ownerKey });
    expect(read.body).toMatchObject({ active: false, status: 'disabled', disabled_reason: 'gone' });
    expect(read.body.disabled_at).toEqual(expect.any(String));
    expect((await env.request('GET', '/v1/webhooks', { key: org.ownerKey })).body.data.find((w: { id: string }) => w.id === hookId).status).toBe('disabled');
    const actions = await auditActions(org.id);
    expect(actions.filter((a) => a === 'webhook.disabled')).toHaveLength(1);
    const admin = await org.member('admin');
    const res = await env.request('POST', `/v1/webhooks/${hookId}/enable`, { key: admin.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ active: true, status: 'active', failing_since: null, disabled_at: null, disabled_reason: null });
    expect(await env.container.store.repos.webhooks.findById(org.id, hookId)).toMatchObject({ failing_since: null, failing_mail_at: null, disabled_notified_at: null });
    expect((await auditActions(org.id)).filter((a) => a === 'webhook.enabled')).toHaveLength(1);
    const again = await env.request('POST', `/v1/webhooks/${hookId}/enable`, { key: admin.key });
    expect(again.status).toBe(200);
    expect((await auditActions(org.id)).filter((a) => a === 'webhook.enabled')).toHaveLength(1);
  });

  it('replays are refused while the subscription is disabled', async () => {
    await disable(hookId);
    const bulk = await env.request('POST', `/v1/webhooks/${hookId}/replay-failed`, { key: org.ownerKey, body: { since: '2020-01-01T00:00:00.000Z' } });
    expect(bulk.status).toBe(409);
    expect(bulk.body.error.code).toBe('conflict');
    expect(bulk.body.error.message).toMatch(/disabled/);
  });

  it('documents each extension in OpenAPI with x-extension, examples and its errors', async () => {
    const doc = (await env.request('GET', '/openapi.json')).body;
    const ops = [
      ['get', '/v1/webhooks/{id}', '200'],
      ['patch', '/v1/webhooks/{id}', '200'],
      ['post', '/v1/webhooks/{id}/rotate-secret', '200'],
      ['post', '/v1/webhooks/{id}/test', '202'],
      ['post', '/v1/webhooks/{id}/enable', '200'],
    ] as const;
    for (const [method, path, ok] of ops) {
      const op = doc.paths[path][method];
      expect(op['x-extension'], `${method} ${path}`).toBe(true);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining([ok, '401', '403', '404']));
      expect(JSON.stringify(op.responses[ok])).toContain('example');
    }
    expect(Object.keys(doc.paths['/v1/webhooks/{id}/test'].post.responses)).toContain('409');
  });
});
