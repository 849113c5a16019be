import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type ApiResponse, type TestEnv, type TestOrg } from '../helpers/test-env.js';

function expectUnauthorized(res: ApiResponse): void {
  expect(res.status).toBe(401);
  expect(res.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
  expect(res.headers['x-request-id']).toBeTruthy();
  // No rate-limit headers: nothing is known about an unauthenticated caller's key.
  expect(res.headers['x-ratelimit-limit']).toBeUndefined();
}

describe.each(testDialects())('authentication (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg();
  });
  afterAll(async () => env?.close());

  const get = (authorization?: string) =>
    env.request('GET', '/v1/projects', { headers: authorization === undefined ? {} : { authorization } });

  it('accepts a valid key with the Bearer scheme in any case', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const res = await get(`${scheme} ${org.ownerKey}`);
      expect(res.status).toBe(200);
    }
    expect((await get(`Bearer   ${org.ownerKey}  `)).status).toBe(200);
  });

  it('refuses a missing or malformed header with 401 unauthorized', async () => {
    expectUnauthorized(await get());
    for (const header of [
      '',
      'Bearer',
      'Bearer ',
      'Bearer    ',
      org.ownerKey,
      `Basic ${org.ownerKey}`,
      `Token ${org.ownerKey}`,
      `Bearer: ${org.ownerKey}`,
      `Bearer${org.ownerKey}`,
      `Bearer ${org.ownerKey} extra`,
      `Basic ${Buffer.from(`${org.ownerKey}:`).toString('base64')}`,
    ]) {
      expectUnauthorized(await get(header));
    }
  });

  it('refuses an unknown key with 401 unauthorized', async () => {
    expectUnauthorized(await get('Bearer wsk_doesnotexist'));
    expectUnauthorized(await get(`Bearer ${org.ownerKey.slice(0, -1)}`));
    expectUnauthorized(await get(`Bearer ${org.ownerKey}x`));
    expectUnauthorized(await get(`Bearer ${org.ownerKey.toUpperCase()}`));
    expectUnauthorized(await get(`Bearer ${'a'.repeat(5000)}`));
  });

  it('refuses a revoked key from the next request on', async () => {
    const member = await org.member('member');
    expect((await env.request('GET', '/v1/projects', { key: member.key })).status).toBe(200);
    await env.container.services.admin.revokeKey(member.keyId);
    expectUnauthorized(await env.request('GET', '/v1/projects', { key: member.key }));
    expectUnauthorized(await env.request('POST', '/v1/projects', { key: member.key, body: { name: 'x' } }));
    // Other keys are unaffected.
    expect((await env.request('GET', '/v1/projects', { key: org.ownerKey })).status).toBe(200);
  });

  it('refuses the key of a user who is no longer active', async () => {
    const member = await org.member('admin');
    expect((await env.request('GET', '/v1/projects', { key: member.key })).status).toBe(200);
    await env.container.store.repos.users.update(org.id, member.userId, { status: 'invited', updated_at: Date.now() });
    // Announced as every service does after its commit (the principal cache must hear of it everywhere).
    await env.container.authEvents.userChanged(member.userId);
    expectUnauthorized(await env.request('GET', '/v1/projects', { key: member.key }));
    expectUnauthorized(await env.request('POST', '/v1/projects', { key: member.key, body: { name: 'x' } }));
  });

  it('uses the current role of the key user on every request', async () => {
    const member = await org.member('member');
    expect((await env.request('POST', '/v1/projects', { key: member.key, body: { name: 'by member' } })).status).toBe(201);
    await env.container.store.repos.users.update(org.id, member.userId, { role: 'viewer', updated_at: Date.now() });
    await env.container.authEvents.userChanged(member.userId);
    const res = await env.request('POST', '/v1/projects', { key: member.key, body: { name: 'by viewer' } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
  });

  it('never writes the Authorization header or the key to the logs', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    // A plain logger without redaction: the app itself must not log request headers.
    const logger = pino({ level: 'trace' }, stream);
    const app = await buildApp({ ...env.container, logger });
    app.get('/v1/log-boom', { config: { auth: { resource: 'projects', action: 'read' } } }, async () => {
      throw new Error('boom');
    });
    // Any route whose path carries a token (as invitation links do) logs at the default level here.
    app.get('/v1/log-token/:token/x', async () => ({ ok: true }));
    await app.ready();
    const member = await org.member('viewer');
    const INVITE_TOKEN = 'InviteTokenSecret0123456789abcdefXYZ';
    try {
      const calls: { method: 'GET' | 'POST'; url: string; key: string; payload?: string }[] = [
        { method: 'GET', url: '/v1/projects', key: org.ownerKey },
        { method: 'POST', url: '/v1/projects', key: org.ownerKey, payload: '{"name":"logged"}' },
        { method: 'POST', url: '/v1/projects', key: org.ownerKey, payload: '{"name":5}' },
        { method: 'POST', url: '/v1/projects', key: member.key, payload: '{"name":"x"}' },
        { method: 'GET', url: '/v1/projects/proj_nope', key: org.ownerKey },
        { method: 'GET', url: '/v1/log-boom', key: org.ownerKey },
        { method: 'GET', url: '/v1/projects', key: 'wsk_wrongwrongwrong' },
        { method: 'GET', url: '/v1/nope', key: org.ownerKey },
        // Invitation tokens are credentials in the path: the request log must not keep them either.
        { method: 'GET', url: `/invitations/${INVITE_TOKEN}`, key: 'none' },
        { method: 'POST', url: `/invitations/${INVITE_TOKEN}/accept`, key: 'none', payload: '{"name":"N","password":"correct horse battery"}' },
        { method: 'GET', url: `/v1/log-token/${INVITE_TOKEN}/x`, key: 'none' },
      ];
      for (const call of calls) {
        await app.inject({
          method: call.method,
          url: call.url,
          headers: { authorization: `Bearer ${call.key}`, 'content-type': 'application/json' },
          ...(call.payload === undefined ? {} : { payload: call.payload }),
        });
      }
    } finally {
      await app.close();
    }
    const log = lines.join('');
    expect(lines.length).toBeGreaterThanOrEqual(8); // the logger did receive the requests
    expect(log).toContain('request completed');
    expect(log).toContain('request failed');
    for (const secret of [org.ownerKey, member.key, 'wsk_wrongwrongwrong', org.ownerKey.slice(4, 20), INVITE_TOKEN, 'correct horse']) {
      expect(log).not.toContain(secret);
    }
    expect(log).toContain('/v1/log-token/[redacted]/x');
    expect(log.toLowerCase()).not.toContain('bearer');
    expect(log.toLowerCase()).not.toContain('authorization');
  });
});

describe.each(testDialects())('failed-authentication limit (%s)', (dialect) => {
  const LIMIT = 4;
  let env: TestEnv;
  let org: TestOrg;
  const clock = new ManualClock();

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock, env: { AUTH_FAILURE_LIMIT_PER_MINUTE: String(LIMIT) } });
    org = await env.createOrg();
  });
  afterAll(async () => env?.close());

  const from = (ip: string, authorization?: string) =>
    env.app.inject({ method: 'GET', url: '/v1/projects', remoteAddress: ip, headers: authorization ? { authorization } : {} });

  it('refuses keyless requests from an address after too many failures, but still serves valid keys', async () => {
    const ip = '203.0.113.7';
    const failures = [undefined, 'Bearer wsk_guess1', 'Basic abc', 'Bearer wsk_guess2'];
    for (const header of failures) expect((await from(ip, header)).statusCode).toBe(401);
    clock.advance(10_000);

    for (const header of [undefined, 'Bearer wsk_guess3', 'Bearer']) {
      const res = await from(ip, header);
      expect(res.statusCode).toBe(429);
      expect(res.json().error.code).toBe('rate_limited');
      // The first failure leaves the window 50 s from now.
      expect(res.headers['retry-after']).toBe('50');
    }

    // A valid key from the same address is never refused for others' failures.
    const valid = await from(ip, `Bearer ${org.ownerKey}`);
    expect(valid.statusCode).toBe(200);
    const created = await env.app.inject({
      method: 'POST',
      url: '/v1/projects',
      remoteAddress: ip,
      headers: { authorization: `Bearer ${org.ownerKey}` },
      payload: { name: 'still served' },
    });
    expect(created.statusCode).toBe(201);

    // Another address has its own budget.
    expect((await from('198.51.100.9')).statusCode).toBe(401);

    // Once the window has rolled past the failures, the address is answered 401 again.
    clock.advance(50_000);
    expect((await from(ip, 'Bearer wsk_guess4')).statusCode).toBe(401);
  });

  it('keeps Retry-After a whole number of seconds, at least 1', async () => {
    const ip = '203.0.113.8';
    for (let i = 0; i < LIMIT; i++) {
      expect((await from(ip)).statusCode).toBe(401);
      clock.advance(i === 0 ? 59_999 - 3 : 1);
    }
    // The first failure leaves the window in 1 ms: still rounded up to 1 second.
    const res = await from(ip);
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('1');
    clock.advance(1);
    expect((await from(ip)).statusCode).toBe(401);
  });
});
