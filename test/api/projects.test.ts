import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

describe.each(testDialects())('projects (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg();
  });
  afterAll(async () => env?.close());

  it('creates, reads, updates and deletes a project', async () => {
    const created = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Apollo' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Apollo', description: null, status: 'active' });
    expect(created.body.id).toMatch(/^proj_[a-z0-9]{24}$/);
    expect(created.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(created.headers['x-request-id']).toBeTruthy();

    const read = await env.request('GET', `/v1/projects/${created.body.id}`, { key: org.ownerKey });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);

    const updated = await env.request('PUT', `/v1/projects/${created.body.id}`, { key: org.ownerKey, body: { status: 'archived', description: 'x' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ status: 'archived', description: 'x', name: 'Apollo' });

    const deleted = await env.request('DELETE', `/v1/projects/${created.body.id}`, { key: org.ownerKey });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    const gone = await env.request('GET', `/v1/projects/${created.body.id}`, { key: org.ownerKey });
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('not_found');
  });

  it('rejects an unknown body field with validation_failed naming it', async () => {
    const res = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'X', colour: 'red' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toEqual([{ field: 'colour', message: 'is not an accepted field' }]);
  });
});
