import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ABANDONED_AFTER_MS, fingerprint } from '../../src/services/shared/idempotency-service.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const DAY_MS = 24 * 60 * 60 * 1000;

describe.each(testDialects())('idempotency (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  const clock = new ManualClock();
  let counter = 0;
  const freshKey = () => `idem-${Date.now()}-${++counter}`;

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
    org = await env.createOrg();
  });
  afterAll(async () => env?.close());
  afterEach(() => vi.restoreAllMocks());

  async function projectNames(): Promise<string[]> {
    const res = await env.request('GET', '/v1/projects?limit=100', { key: org.ownerKey });
    expect(res.status).toBe(200);
    return res.body.data.map((p: { name: string }) => p.name);
  }

  /** What a first request holds while it runs: the key claimed, no response yet. */
  async function claimInFlight(apiKey: string, idem: string, body: unknown): Promise<void> {
    const principal = await env.container.services.auth.authenticate(apiKey);
    await env.container.store.repos.idempotency.claim({
      org_id: org.id,
      api_key_id: principal!.keyId,
      key: idem,
      fingerprint: fingerprint('POST', '/v1/projects', body),
      state: 'in_flight',
      response_status: null,
      response_body: null,
      created_at: clock.now(),
      expires_at: clock.now() + DAY_MS,
    });
  }

  const post = (key: string, idempotencyKey: string, body: unknown, url = '/v1/projects') =>
    env.request('POST', url, { key, body, headers: { 'idempotency-key': idempotencyKey } });

  it('replays the first response for the same key and request, creating nothing more', async () => {
    const idem = freshKey();
    const first = await post(org.ownerKey, idem, { name: 'Once', description: 'd' });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    clock.advance(5_000);
    // The same body with its keys in another order is the same request.
    const second = await post(org.ownerKey, idem, { description: 'd', name: 'Once' });
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(String(second.headers['content-type'])).toContain('application/json');
    expect(second.body).toEqual(first.body);
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);

    const third = await post(org.ownerKey, idem, { name: 'Once', description: 'd' });
    expect(third.body).toEqual(first.body);
    expect((await projectNames()).filter((n) => n === 'Once')).toHaveLength(1);
  });

  it('refuses the same key with a different body or path with 422 idempotency_key_reused', async () => {
    const idem = freshKey();
    expect((await post(org.ownerKey, idem, { name: 'Original' })).status).toBe(201);
    const before = await projectNames();

    const otherBody = await post(org.ownerKey, idem, { name: 'Different' });
    expect(otherBody.status).toBe(422);
    expect(otherBody.body.error.code).toBe('idempotency_key_reused');
    expect(otherBody.headers['idempotent-replayed']).toBeUndefined();

    const extraField = await post(org.ownerKey, idem, { name: 'Original', status: 'active' });
    expect(extraField.status).toBe(422);

    const otherPath = await post(org.ownerKey, idem, { url: 'https://example.com/hook', events: ['project.created'] }, '/v1/webhooks');
    expect(otherPath.status).toBe(422);
    expect(otherPath.body.error.code).toBe('idempotency_key_reused');

    expect(await projectNames()).toEqual(before);
    const hooks = await env.request('GET', '/v1/webhooks', { key: org.ownerKey });
    expect(hooks.body.data).toEqual([]);
  });

  it('answers 409 conflict while the first request is still in flight', async () => {
    const idem = freshKey();
    const body = { name: 'In flight' };
    const member = await org.member('owner');
    await claimInFlight(member.key, idem, body);
    const res = await post(member.key, idem, body);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    expect(await projectNames()).not.toContain('In flight');
  });

  it('lets a retry run a request whose first attempt was abandoned mid-flight', async () => {
    const idem = freshKey();
    const body = { name: 'Abandoned' };
    await claimInFlight(org.ownerKey, idem, body);
    clock.advance(ABANDONED_AFTER_MS - 1);
    expect((await post(org.ownerKey, idem, body)).status).toBe(409);
    // A different request is still refused as a reuse, whatever the state of the first.
    expect((await post(org.ownerKey, idem, { name: 'Other' })).status).toBe(422);
    clock.advance(1);
    const retried = await post(org.ownerKey, idem, body);
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    const replay = await post(org.ownerKey, idem, body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.id).toBe(retried.body.id);
    expect((await projectNames()).filter((n) => n === 'Abandoned')).toHaveLength(1);
  });

  it('lets exactly one of two concurrent identical requests run', async () => {
    const idem = freshKey();
    const body = { name: 'Concurrent' };
    const responses = await Promise.all([post(org.ownerKey, idem, body), post(org.ownerKey, idem, body), post(org.ownerKey, idem, body)]);
    const created = responses.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const res of responses) expect([201, 409]).toContain(res.status);
    for (const res of created) expect(res.body.id).toBe(created[0]!.body.id);
    expect((await projectNames()).filter((n) => n === 'Concurrent')).toHaveLength(1);
  });

  it('scopes keys to the API key: another key of the organisation can use the same string', async () => {
    const idem = freshKey();
    const other = await org.member('admin');
    const a = await post(org.ownerKey, idem, { name: 'Key A' });
    const b = await post(other.key, idem, { name: 'Key B' });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.body.id).not.toBe(a.body.id);

    // And another organisation's key too.
    const orgB = await env.createOrg('Other');
    const c = await post(orgB.ownerKey, idem, { name: 'Key A' });
    expect(c.status).toBe(201);
    expect(c.headers['idempotent-replayed']).toBeUndefined();
    expect(c.body.id).not.toBe(a.body.id);
    expect(await projectNames()).toEqual(expect.arrayContaining(['Key A', 'Key B']));
  });

  it('keeps a key for 24 hours, then lets it be used again', async () => {
    const idem = freshKey();
    const first = await post(org.ownerKey, idem, { name: 'Day one' });
    expect(first.status).toBe(201);

    clock.advance(DAY_MS - 1);
    const replay = await post(org.ownerKey, idem, { name: 'Day one' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.id).toBe(first.body.id);
    expect((await post(org.ownerKey, idem, { name: 'Day two' })).status).toBe(422);

    clock.advance(1);
    const reused = await post(org.ownerKey, idem, { name: 'Day two' });
    expect(reused.status).toBe(201);
    expect(reused.headers['idempotent-replayed']).toBeUndefined();
    expect(reused.body.name).toBe('Day two');
    const again = await post(org.ownerKey, idem, { name: 'Day two' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(reused.body.id);
  });

  it('stores nothing for a request that fails validation, authentication or permission', async () => {
    const idem = freshKey();
    const invalid = await post(org.ownerKey, idem, { name: '' });
    expect(invalid.status).toBe(400);
    const malformed = await env.request('POST', '/v1/projects', {
      key: org.ownerKey,
      payload: '{',
      headers: { 'content-type': 'application/json', 'idempotency-key': idem },
    });
    expect(malformed.status).toBe(400);
    const viewer = await org.member('viewer');
    expect((await post(viewer.key, idem, { name: 'Viewer' })).status).toBe(403);

    const valid = await post(org.ownerKey, idem, { name: 'After invalid' });
    expect(valid.status).toBe(201);
    expect(valid.headers['idempotent-replayed']).toBeUndefined();
  });

  it('releases the key when the first request fails with a server error', async () => {
    const idem = freshKey();
    vi.spyOn(env.container.services.projects, 'create').mockRejectedValueOnce(new Error('database went away'));
    const failed = await post(org.ownerKey, idem, { name: 'Retried' });
    expect(failed.status).toBe(500);
    const retried = await post(org.ownerKey, idem, { name: 'Retried' });
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect((await projectNames()).filter((n) => n === 'Retried')).toHaveLength(1);
  });

  it('stores nothing when a service refuses a field, so the corrected request can use the key', async () => {
    const idem = freshKey();
    const body = { url: 'http://insecure.example.com/hook', events: ['project.created'] };
    const first = await post(org.ownerKey, idem, body, '/v1/webhooks');
    expect(first.status).toBe(400);
    expect(first.body.error.code).toBe('validation_failed');
    const fixed = await post(org.ownerKey, idem, { url: 'https://example.com/fixed', events: ['project.created'] }, '/v1/webhooks');
    expect(fixed.status).toBe(201);
    const replay = await post(org.ownerKey, idem, { url: 'https://example.com/fixed', events: ['project.created'] }, '/v1/webhooks');
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(fixed.body); // the secret of the creation response included
    const list = await env.request('GET', '/v1/webhooks', { key: org.ownerKey });
    expect(list.body.data).toHaveLength(1);
  });

  it('replays a refusal of an executed request (409) as well', async () => {
    const idem = freshKey();
    const owner = await env.request('GET', `/v1/users/${org.ownerId}`, { key: org.ownerKey });
    expect(owner.status).toBe(200);
    const body = { email: owner.body.email, role: 'member' };
    const first = await post(org.ownerKey, idem, body, '/v1/users');
    expect(first.status).toBe(409);
    expect(first.body.error.code).toBe('conflict');
    const replay = await post(org.ownerKey, idem, body, '/v1/users');
    expect(replay.status).toBe(409);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['with a space', 'has space'],
    ['with a tab', 'tab\there'],
  ])('refuses a bad Idempotency-Key (%s) with 400 and creates nothing', async (_label, value) => {
    const name = `Bad key ${_label}`;
    const res = await post(org.ownerKey, value, { name });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    expect(await projectNames()).not.toContain(name);
  });

  it('accepts a 255-character key and ignores the header on methods other than POST', async () => {
    expect((await post(org.ownerKey, 'k'.repeat(255), { name: 'Long key' })).status).toBe(201);
    const idem = freshKey();
    const created = await post(org.ownerKey, freshKey(), { name: 'Put target' });
    const put = (name: string) =>
      env.request('PUT', `/v1/projects/${created.body.id}`, { key: org.ownerKey, body: { name }, headers: { 'idempotency-key': idem } });
    expect((await put('First')).body.name).toBe('First');
    const second = await put('Second');
    expect(second.status).toBe(200);
    expect(second.body.name).toBe('Second');
    expect(second.headers['idempotent-replayed']).toBeUndefined();
  });
});
