import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsListener, type MetricsListener } from '../../src/http/metrics.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** The value of one series in Prometheus text, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) found[pair[1]!] = pair[2]!;
    if (Object.entries(labels).every(([k, v]) => found[k] === v) && Object.keys(found).length === Object.keys(labels).length) {
      return Number(match[3]);
    }
  }
  return undefined;
}

describe.each(testDialects())('GET /metrics (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let apiUrl: string;
  // The API counts its requests; the separate listener (as `serve` starts it) serves them.
  let listener: MetricsListener;
  const clock = new ManualClock();

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
    org = await env.createOrg();
    apiUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
    listener = await startMetricsListener(env.container.metrics, { port: 0, host: '127.0.0.1', token: null, logger: env.container.logger });
  });
  afterAll(async () => {
    await listener?.close();
    await env?.close();
  });

  async function scrape(): Promise<string> {
    const res = await fetch(`${listener.address}/metrics`);
    expect(res.status).toBe(200);
    return res.text();
  }

  it('is served on its own listener without a key, in Prometheus text format, and is not in the OpenAPI document', async () => {
    const res = await fetch(`${listener.address}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('# TYPE workspace_http_requests_total counter');
    expect(text).toContain('# TYPE workspace_http_request_duration_seconds histogram');
    const spec = await env.request('GET', '/openapi.json');
    expect(Object.keys(spec.body.paths)).not.toContain('/metrics');
  });

  it('counts requests by route pattern and status, with a latency histogram', async () => {
    const created = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Metered' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    for (let i = 0; i < 3; i++) expect((await env.request('GET', `/v1/projects/${id}`, { key: org.ownerKey })).status).toBe(200);
    expect((await env.request('GET', '/v1/projects/proj_nope', { key: org.ownerKey })).status).toBe(404);
    expect((await env.request('GET', '/v1/projects', { key: null })).status).toBe(401);
    expect((await env.request('GET', '/no/such/route')).status).toBe(404);

    const text = await scrape();
    const byId = { method: 'GET', route: '/v1/projects/:id' };
    expect(sample(text, 'workspace_http_requests_total', { ...byId, status_code: '200' })).toBe(3);
    expect(sample(text, 'workspace_http_requests_total', { ...byId, status_code: '404' })).toBe(1);
    expect(sample(text, 'workspace_http_requests_total', { method: 'POST', route: '/v1/projects', status_code: '201' })).toBe(1);
    expect(sample(text, 'workspace_http_requests_total', { method: 'GET', route: '/v1/projects', status_code: '401' })).toBe(1);
    expect(sample(text, 'workspace_http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    // Raw URLs (ids) never become labels.
    expect(text).not.toContain(id);
    expect(text).not.toContain('/no/such/route');
    // The histogram: every request falls under +Inf, and the count matches the counter.
    expect(sample(text, 'workspace_http_request_duration_seconds_bucket', { ...byId, status_code: '200', le: '+Inf' })).toBe(3);
    expect(sample(text, 'workspace_http_request_duration_seconds_count', { ...byId, status_code: '200' })).toBe(3);
    expect(sample(text, 'workspace_http_request_duration_seconds_sum', { ...byId, status_code: '200' })).toBeGreaterThan(0);
  });

  it('reports pending deliveries and the age of the oldest, read from the database at scrape time', async () => {
    let text = await scrape();
    expect(sample(text, 'workspace_deliveries_pending')).toBe(0);
    expect(sample(text, 'workspace_deliveries_oldest_pending_age_seconds')).toBe(0);

    const hook = await env.request('POST', '/v1/webhooks', {
      key: org.ownerKey,
      body: { url: 'https://127.0.0.1:9/hook', events: ['project.created'] },
    });
    expect(hook.status).toBe(201);
    // No worker runs in this test: the deliveries stay pending.
    expect((await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'first' } })).status).toBe(201);
    clock.advance(30_000);
    expect((await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'second' } })).status).toBe(201);
    clock.advance(60_000);

    text = await scrape();
    expect(sample(text, 'workspace_deliveries_pending')).toBe(2);
    expect(sample(text, 'workspace_deliveries', { status: 'pending' })).toBe(2);
    expect(sample(text, 'workspace_deliveries', { status: 'delivered' })).toBe(0);
    // The first delivery was created 90 s ago on the service's clock.
    expect(sample(text, 'workspace_deliveries_oldest_pending_age_seconds')).toBe(90);
  });

  it('counts delivery attempts by outcome as the worker reports them', async () => {
    let text = await scrape();
    expect(sample(text, 'workspace_delivery_attempts_total', { outcome: 'delivered' })).toBe(0);
    env.container.metrics.deliveryAttempt('delivered');
    env.container.metrics.deliveryAttempt('delivered');
    env.container.metrics.deliveryAttempt('retry_scheduled');
    text = await scrape();
    expect(sample(text, 'workspace_delivery_attempts_total', { outcome: 'delivered' })).toBe(2);
    expect(sample(text, 'workspace_delivery_attempts_total', { outcome: 'retry_scheduled' })).toBe(1);
    expect(sample(text, 'workspace_delivery_attempts_total', { outcome: 'failed' })).toBe(0);
  });

  // Last: its request is counted as `unmatched`, which the counting test above expects exactly once.
  it('is not served on the API port: 404 not_found there', async () => {
    expect(new URL(listener.address).port).not.toBe(new URL(apiUrl).port);
    const res = await fetch(`${apiUrl}/metrics`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
  });
});
