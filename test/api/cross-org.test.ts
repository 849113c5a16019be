import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

describe.each(testDialects())('organisation isolation (%s)', (dialect) => {
  let env: TestEnv;
  let orgA: TestOrg;
  let orgB: TestOrg;
  let projectA: Record<string, unknown>;
  let memberA: Record<string, unknown>;
  let webhookA: Record<string, unknown>;
  let deliveryA: Record<string, unknown>;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    orgA = await env.createOrg('A');
    orgB = await env.createOrg('B');
    projectA = (await env.request('POST', '/v1/projects', { key: orgA.ownerKey, body: { name: 'Secret A', description: 'a' } })).body;
    const member = await orgA.member('member');
    memberA = (await env.request('GET', `/v1/users/${member.userId}`, { key: orgA.ownerKey })).body;
    const hook = await env.request('POST', '/v1/webhooks', {
      key: orgA.ownerKey,
      body: { url: 'https://a.example.com/hook', events: ['project.created'] },
    });
    expect(hook.status).toBe(201);
    webhookA = hook.body;
    // A project created now gives A's subscription a delivery.
    await env.request('POST', '/v1/projects', { key: orgA.ownerKey, body: { name: 'Delivered A' } });
    const deliveries = await env.request('GET', `/v1/webhooks/${webhookA.id}/deliveries`, { key: orgA.ownerKey });
    expect(deliveries.body.data).toHaveLength(1);
    deliveryA = (await env.request('GET', `/v1/webhooks/${webhookA.id}/deliveries/${deliveries.body.data[0].id}`, { key: orgA.ownerKey })).body;
    expect(deliveryA.id).toMatch(/^dlv_/);
    // B has items of its own, so an empty list cannot pass by accident.
    await env.request('POST', '/v1/projects', { key: orgB.ownerKey, body: { name: 'Mine B' } });
    await env.request('POST', '/v1/webhooks', { key: orgB.ownerKey, body: { url: 'https://b.example.com/hook', events: ['project.created'] } });
  });
  afterAll(async () => env?.close());

  const routes = () => [
    { method: 'GET', url: `/v1/projects/${projectA.id}` },
    { method: 'PUT', url: `/v1/projects/${projectA.id}`, body: { name: 'Taken over', status: 'archived' } },
    { method: 'DELETE', url: `/v1/projects/${projectA.id}` },
    { method: 'GET', url: `/v1/users/${memberA.id}` },
    { method: 'PUT', url: `/v1/users/${memberA.id}`, body: { role: 'viewer' } },
    { method: 'PUT', url: `/v1/users/${orgA.ownerId}`, body: { role: 'viewer' } },
    { method: 'GET', url: `/v1/webhooks/${webhookA.id}/deliveries` },
    { method: 'GET', url: `/v1/webhooks/${webhookA.id}/deliveries/${deliveryA.id}` },
    { method: 'POST', url: `/v1/webhooks/${webhookA.id}/deliveries/${deliveryA.id}/replay` },
    { method: 'DELETE', url: `/v1/webhooks/${webhookA.id}` },
  ];

  it("answers 404 not_found for another organisation's ids, exactly as for unknown ids", async () => {
    for (const route of routes()) {
      const res = await env.request(route.method, route.url, { key: orgB.ownerKey, ...(route.body ? { body: route.body } : {}) });
      expect(res.status, `${route.method} ${route.url}`).toBe(404);
      expect(res.body.error.code).toBe('not_found');
      // Indistinguishable from an id that exists nowhere.
      const unknownUrl = route.url.replace(/_[a-z0-9]+(\/[a-z]+)?$/, '_000000000000000000000000$1');
      const unknown = await env.request(route.method, unknownUrl, { key: orgB.ownerKey, ...(route.body ? { body: route.body } : {}) });
      expect(unknown.status).toBe(404);
      expect(res.body).toEqual(unknown.body);
    }
  });

  it("leaves the other organisation's resources unchanged", async () => {
    for (const route of routes()) {
      await env.request(route.method, route.url, { key: orgB.ownerKey, ...(route.body ? { body: route.body } : {}) });
    }
    expect((await env.request('GET', `/v1/projects/${projectA.id}`, { key: orgA.ownerKey })).body).toEqual(projectA);
    expect((await env.request('GET', `/v1/users/${memberA.id}`, { key: orgA.ownerKey })).body).toEqual(memberA);
    const owner = await env.request('GET', `/v1/users/${orgA.ownerId}`, { key: orgA.ownerKey });
    expect(owner.body.role).toBe('owner');
    const hooks = await env.request('GET', '/v1/webhooks', { key: orgA.ownerKey });
    expect(hooks.body.data.map((h: { id: string }) => h.id)).toEqual([webhookA.id]);
    const delivery = await env.request('GET', `/v1/webhooks/${webhookA.id}/deliveries/${deliveryA.id}`, { key: orgA.ownerKey });
    expect(delivery.body).toEqual(deliveryA);
  });

  it("never lists another organisation's items", async () => {
    for (const [path, foreignId] of [
      ['/v1/projects', projectA.id],
      ['/v1/users', memberA.id],
      ['/v1/users', orgA.ownerId],
      ['/v1/webhooks', webhookA.id],
    ] as const) {
      const res = await env.request('GET', `${path}?limit=100`, { key: orgB.ownerKey });
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeGreaterThan(0);
      const ids = res.body.data.map((item: { id: string }) => item.id);
      expect(ids).not.toContain(foreignId);
    }
    const projects = await env.request('GET', '/v1/projects?limit=100', { key: orgB.ownerKey });
    expect(projects.body.data.map((p: { name: string }) => p.name)).toEqual(['Mine B']);
    const users = await env.request('GET', '/v1/users?limit=100', { key: orgB.ownerKey });
    expect(users.body.data.map((u: { id: string }) => u.id)).toEqual([orgB.ownerId]);
    for (const status of ['active', 'archived', 'draft']) {
      const filtered = await env.request('GET', `/v1/projects?status=${status}`, { key: orgB.ownerKey });
      expect(filtered.body.data.map((p: { id: string }) => p.id)).not.toContain(projectA.id);
    }
  });

  it('keeps e-mail addresses per organisation', async () => {
    // A's member's address can be invited in B: it is a different organisation's member.
    const res = await env.request('POST', '/v1/users', { key: orgB.ownerKey, body: { email: memberA.email, role: 'member' } });
    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe(memberA.id);
    expect((await env.request('GET', `/v1/users/${memberA.id}`, { key: orgA.ownerKey })).body).toEqual(memberA);
  });
});
