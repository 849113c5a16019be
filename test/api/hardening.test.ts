import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { safeDashboardPath } from '../../src/dashboard/context.js';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';

/** Sends bytes as they are (no client would let us frame a request this badly) and returns the raw answer. */
function rawRequest(port: number, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(payload));
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      answer += chunk;
      // One answer is all we want; a kept-alive connection would otherwise wait for the server's timeout.
      if (/\r\n\r\n/.test(answer) && answer.includes('}')) socket.end();
    });
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    setTimeout(() => socket.destroy(), 3000).unref();
  });
}

function parse(answer: string) {
  const [head, body] = answer.split('\r\n\r\n');
  const [statusLine, ...lines] = head!.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body!) as { error: { code: string; message: string } } };
}

describe('hardening found by an external scan', () => {
  let env: TestEnv;
  let https: TestEnv;
  let port: number;
  let key: string;
  beforeAll(async () => {
    env = await createTestEnv('sqlite');
    https = await createTestEnv('sqlite', { env: { PUBLIC_BASE_URL: 'https://workspace.example.com' } });
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    port = (env.app.server.address() as net.AddressInfo).port;
    key = (await env.createOrg()).ownerKey;
  });
  afterAll(async () => {
    await env.close();
    await https.close();
  });

  it('/v1 answers carry nosniff and no-store, successes and errors alike', async () => {
    for (const res of [
      await env.request('GET', '/v1/projects', { key }),
      await env.request('POST', '/v1/webhooks', { key, body: { url: 'https://hooks.example.com/x', events: ['project.created'] } }),
      await env.request('GET', '/v1/projects'),
      await env.request('GET', '/v1/nothing-here', { key }),
    ]) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['cache-control']).toBe('no-store');
    }
    // Outside /v1 nosniff too, but the service's own caching rules stand.
    const spec = await env.request('GET', '/openapi.json');
    expect(spec.headers['x-content-type-options']).toBe('nosniff');
    expect(spec.headers['cache-control']).toBeUndefined();
  });

  it('Strict-Transport-Security on every answer when PUBLIC_BASE_URL is https (HSTS_MAX_AGE), never over http', async () => {
    for (const url of ['/v1/projects', '/healthz', '/dashboard/login', '/docs', '/nowhere']) {
      expect((await https.request('GET', url)).headers['strict-transport-security'], url).toBe('max-age=31536000; includeSubDomains');
      expect((await env.request('GET', url)).headers['strict-transport-security'], url).toBeUndefined();
    }
    const custom = await createTestEnv('sqlite', { env: { PUBLIC_BASE_URL: 'https://w.example.com', HSTS_MAX_AGE: '600' } });
    const off = await createTestEnv('sqlite', { env: { PUBLIC_BASE_URL: 'https://w.example.com', HSTS_MAX_AGE: '0' } });
    try {
      expect((await custom.request('GET', '/healthz')).headers['strict-transport-security']).toBe('max-age=600; includeSubDomains');
      expect((await off.request('GET', '/healthz')).headers['strict-transport-security']).toBeUndefined();
    } finally {
      await custom.close();
      await off.close();
    }
  });

  it.each([
    ['a Content-Length that is not a number', 'POST /v1/projects HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n'],
    ['Content-Length with Transfer-Encoding', 'POST /v1/projects HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['two Content-Length values', 'POST /v1/projects HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'],
    ['a request line that is not HTTP', 'HELLO THERE\r\n\r\n'],
  ])("the HTTP parser's 400 for %s is the contract's JSON error", async (_what, payload) => {
    const answer = parse(await rawRequest(port, payload));
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['x-request-id']).toMatch(/^req_/);
    expect(answer.headers.connection).toBe('close');
    expect(answer.body).toEqual({ error: { code: 'bad_request', message: 'the HTTP request is malformed and cannot be read' } });
  });

  it('a duplicate Host is 400 with the JSON error, and nothing is created', async () => {
    const body = '{"name":"smuggled"}';
    const answer = parse(
      await rawRequest(
        port,
        `POST /v1/projects HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      ),
    );
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: { code: 'bad_request', message: 'the request has more than one Host header' } });
    const list = await env.request('GET', '/v1/projects', { key });
    expect(list.body.data.map((p: { name: string }) => p.name)).not.toContain('smuggled');
  });

  it('a missing file under /docs/static is 404 (not 405); another method there is still 405', async () => {
    const missing = await env.request('GET', '/docs/static/no-such-file.js');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: 'not_found', message: 'route not found' } });
    expect((await env.request('GET', '/docs/static/theme/docs.css')).status).toBe(200);
    const post = await env.request('POST', '/docs/static/theme/docs.css');
    expect(post.status).toBe(405);
  });

  it('the sign-in return path refuses dot segments, however spelt', async () => {
    for (const next of ['/dashboard/..//evil.example', '/dashboard/../evil', '/dashboard/./x', '/dashboard/%2e%2e//evil.example', '/dashboard/%2E./x', '/dashboard/..?x=1', '/dashboard/..']) {
      expect(safeDashboardPath(next), next).toBeNull();
    }
    for (const next of ['/dashboard', '/dashboard/projects', '/dashboard/projects?q=..', '/dashboard/a..b', '/dashboard/...']) {
      expect(safeDashboardPath(next), next).toBe(next);
    }
    // Through the form: the sign-in page carries the refused path nowhere, and a failed sign-in stays home.
    const page = await env.request('GET', `/dashboard/login?next=${encodeURIComponent('/dashboard/..//evil.example')}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('evil.example');
  });
});
