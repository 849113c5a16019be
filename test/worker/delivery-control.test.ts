import fs from 'node:fs';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeliveryWorker, type RunningWorker } from '../../src/worker/index.js';
import { retryAfterMs } from '../../src/delivery/retry-after.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { DashboardClient, textOf } from '../helpers/dashboard.js';
import { ARRIVAL_JITTER_MS, busiestSecond, inFlightCounter } from '../helpers/receiver-counts.js';
import { makeSelfSignedCertificate, startHttpsReceiver, waitFor, type HttpsReceiver, type ReceivedRequest, type TestCertificate } from '../helpers/https-receiver.js';

/** What the receiver saw of one request: when it arrived and ended, and how many of the path were open then. */
interface Arrival {
  at: number;
  eventId: string;
  name: string;
  open: number;
}

describe('retryAfterMs', () => {
  const now = Date.parse('2026-11-27T10:00:00Z');
  it('reads delay-seconds and HTTP dates, and nothing else', () => {
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Fri, 27 Nov 2026 10:02:00 GMT', now)).toBe(120_000);
    expect(retryAfterMs('Fri, 27 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('30, 60', now)).toBe(30_000);
    expect(retryAfterMs(undefined, now)).toBeNull();
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs('-5', now)).toBeNull();
    expect(retryAfterMs('1.5', now)).toBeNull();
  });
  it('counts windows as a receiver would', () => {
    expect(busiestSecond([0, 999, 1000, 1999])).toBe(2);
    expect(busiestSecond([0, 500, 999, 1000])).toBe(3);
  });
});

/**
 * Delivery control (CONTRACT 14) against a real HTTPS receiver, with two delivery workers sharing the
 * database (on SQLite two queue threads on two connections to the file: the embedded build runs one worker
 * process, so the workers are in one process; test/worker/delivery-control-processes.test.ts runs processes).
 */
describe.each(testDialects())('delivery control (%s)', (dialect) => {
  let env: TestEnv;
  let cert: TestCertificate;
  let receiver: HttpsReceiver;
  const workers: RunningWorker[] = [];
  let org: TestOrg;
  let paths = 0;

  beforeAll(async () => {
    cert = makeSelfSignedCertificate();
    receiver = await startHttpsReceiver(cert);
    env = await createTestEnv(dialect, { env: { WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms,100ms,100ms', WEBHOOK_TIMEOUT: '2s', WEBHOOK_RETRY_AFTER_MAX: '3s' } });
    for (let i = 0; i < 2; i++) workers.push(await startDeliveryWorker(env.container, { ca: cert.cert, pollIntervalMs: 50 }));
    org = await env.createOrg('Control');
  });
  afterAll(async () => {
    for (const w of workers) await w.stop();
    await receiver?.close();
    await env?.close();
    if (cert) fs.rmSync(cert.dir, { recursive: true, force: true });
  });

  /** A path on the receiver that records arrivals; `answer` decides each response (default 200 after `delayMs`). */
  function endpoint(options: { delayMs?: number; answer?: (req: ReceivedRequest, res: ServerResponse, n: number) => void } = {}) {
    const pathname = `/control-${++paths}`;
    const arrivals: Arrival[] = [];
    const inFlight = inFlightCounter();
    receiver.on(pathname, (req, res) => {
      const open = inFlight.track(res);
      const body = JSON.parse(req.body.toString()) as { data: { name?: string; project_id?: string } };
      arrivals.push({ at: performance.now(), eventId: String(req.headers['x-service-event-id']), name: body.data.name ?? '', open });
      if (options.answer) return options.answer(req, res, arrivals.length);
      setTimeout(() => res.writeHead(200).end('ok'), options.delayMs ?? 0);
    });
    return { url: receiver.url(pathname), arrivals, maxOpen: inFlight.max };
  }

  async function subscribe(url: string, extra: Record<string, unknown>) {
    const res = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url, events: ['project.created'], ...extra } });
    expect(res.status).toBe(201);
    return res.body as { id: string; rate_limit: number | null; ordering: string };
  }

  async function createProjects(prefix: string, n: number): Promise<string[]> {
    const names: string[] = [];
    for (let i = 0; i < n; i++) {
      const name = `${prefix}-${String(i).padStart(3, '0')}`;
      const res = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name } });
      expect(res.status).toBe(201);
      names.push(name);
    }
    return names;
  }

  /** First arrivals per event, in arrival order (a retry or a resend after a crash counts once). */
  const firstArrivals = (arrivals: Arrival[]) => {
    const seen = new Set<string>();
    return arrivals.filter((a) => !seen.has(a.eventId) && seen.add(a.eventId));
  };

  it('rate_limit: never more starts in any second than the limit, across two workers, and none is failed or counted as an attempt', async () => {
    const target = endpoint({ delayMs: 5 });
    const hook = await subscribe(target.url, { rate_limit: 10 });
    expect(hook.rate_limit).toBe(10);
    const names = await createProjects('rate', 40);
    await waitFor('every event delivered', () => firstArrivals(target.arrivals).length === names.length, 20_000);
    const times = target.arrivals.map((a) => a.at);
    // What the contract counts, strictly: the attempts' starts. What the receiver counts: the same, but
    // for the network's jitter.
    const starts = (await waitFor('every attempt recorded', async () => {
      const rows = await heldAttempts(hook.id);
      return rows.length === names.length ? rows : null;
    })).map((a) => Number(a.started_at));
    expect(busiestSecond(starts)).toBeLessThanOrEqual(10);
    expect(busiestSecond(times, 1000 - ARRIVAL_JITTER_MS)).toBeLessThanOrEqual(10);
    // 40 starts at 10 a second take about 4 s: the limit paces, it does not stall.
    const span = Math.max(...times) - Math.min(...times);
    expect(span).toBeGreaterThan(3_000);
    expect(span).toBeLessThan(8_000);
    expect(target.arrivals).toHaveLength(names.length);
    // Recorded by the workers' next cycles, shortly after the last answer.
    const rows = await waitFor('every delivery recorded', async () => {
      const history = await env.request('GET', `/v1/webhooks/${hook.id}/deliveries?limit=100`, { key: org.ownerKey });
      const data = history.body.data as { status: string; attempts: number }[];
      return data.every((d) => d.status === 'delivered') ? data : null;
    });
    expect(rows).toHaveLength(names.length);
    expect(rows.every((d) => d.attempts === 1)).toBe(true);
    // The history says which ones were held back, and for how long.
    const held = await heldAttempts(hook.id);
    expect(held.filter((a) => a.held_reason === 'rate_limit').length).toBeGreaterThan(20);
    // The last one waited longest; its attempt says for how long, in the API and on its page.
    const last = (rows as unknown as { id: string }[])[0]!;
    const detail = await env.request('GET', `/v1/webhooks/${hook.id}/deliveries/${last.id}`, { key: org.ownerKey });
    expect(detail.body.attempt_history[0]).toMatchObject({ held_reason: 'rate_limit', held_ms: expect.any(Number) });
    expect(detail.body.attempt_history[0].held_ms).toBeGreaterThan(1000);
    const browser = await DashboardClient.signedIn(env, org.id, org.ownerId);
    const page = textOf((await browser.get(`/dashboard/webhooks/${hook.id}/deliveries/${last.id}`)).text);
    expect(page).toMatch(/Held back \d+\.\d s by the rate limit/);
  }, 30_000);

  async function heldAttempts(webhookId: string) {
    const { db } = env.container.database;
    return db
      .selectFrom('delivery_attempts as a')
      .innerJoin('deliveries as d', 'd.id', 'a.delivery_id')
      .select(['a.held_reason', 'a.held_ms', 'a.started_at', 'd.seq'])
      .where('d.webhook_id', '=', webhookId)
      .orderBy('d.seq')
      .execute();
  }

  it('ordering fifo: one attempt in flight at a time, in commit order, across two workers', async () => {
    const target = endpoint({ delayMs: 20 });
    const hook = await subscribe(target.url, { ordering: 'fifo' });
    expect(hook.ordering).toBe('fifo');
    const names = await createProjects('fifo', 30);
    await waitFor('every event delivered', () => firstArrivals(target.arrivals).length === names.length, 20_000);
    expect(target.arrivals.map((a) => a.name)).toEqual(names);
    expect(target.maxOpen()).toBe(1);
    // Only the head of the order had a due time: the later ones waited with none, and say so.
    const held = await heldAttempts(hook.id);
    expect(held.some((a) => a.held_reason === 'order' && Number(a.held_ms) > 0)).toBe(true);
  }, 30_000);

  it('ordering fifo: a failing head holds the rest through its retries, and releases them when it fails for good', async () => {
    const target = endpoint({
      answer: (req, res) => {
        const name = (JSON.parse(req.body.toString()) as { data: { name: string } }).data.name;
        res.writeHead(name.endsWith('-000') ? 500 : 200).end();
      },
    });
    const hook = await subscribe(target.url, { ordering: 'fifo' });
    const names = await createProjects('head', 5);
    await waitFor('the rest delivered', () => new Set(target.arrivals.map((a) => a.name)).size === names.length, 20_000);
    const order = target.arrivals.map((a) => a.name);
    // Six attempts of the head (the schedule's five retries), then the others in order.
    expect(order).toEqual([...Array<string>(6).fill(names[0]!), ...names.slice(1)]);
    const statuses = async () => {
      const history = await env.request('GET', `/v1/webhooks/${hook.id}/deliveries?limit=10`, { key: org.ownerKey });
      return (history.body.data as { status: string }[]).map((d) => d.status).reverse().join(' ');
    };
    await waitFor('the history recorded', async () => (await statuses()) === 'failed delivered delivered delivered delivered');
  }, 30_000);

  it('ordering fifo: a disabled subscription keeps its order when enabled and its missed deliveries replayed', async () => {
    let gone = true;
    const target = endpoint({ answer: (_req, res) => void res.writeHead(gone ? 410 : 200).end() });
    const hook = await subscribe(target.url, { ordering: 'fifo' });
    await createProjects('gone', 1);
    await waitFor('the subscription disabled on 410 Gone', async () => (await env.request('GET', `/v1/webhooks/${hook.id}`, { key: org.ownerKey })).body.status === 'disabled');
    const missed = await createProjects('missed', 8);
    gone = false;
    const enabled = await env.request('POST', `/v1/webhooks/${hook.id}/enable`, { key: org.ownerKey });
    expect(enabled.status).toBe(200);
    const before = target.arrivals.length;
    const replay = await env.request('POST', `/v1/webhooks/${hook.id}/replay-failed`, { key: org.ownerKey, body: { since: new Date(Date.now() - 3_600_000).toISOString() } });
    expect(replay.status).toBeLessThan(300);
    await waitFor('the missed deliveries sent', () => target.arrivals.length - before >= missed.length + 1, 20_000);
    const replayed = target.arrivals.slice(before).map((a) => a.name);
    // The one that was failed by the 410 first, then the missed ones in the order they were committed.
    expect(replayed).toEqual([expect.stringMatching(/^gone-000$/), ...missed]);
    expect(target.maxOpen()).toBe(1);
  }, 30_000);

  it('ordering fifo: a single replay and a test event stand outside the order', async () => {
    let hold = true;
    const target = endpoint({ answer: (_req, res) => void res.writeHead(hold ? 500 : 200).end() });
    const hook = await subscribe(target.url, { ordering: 'fifo' });
    const test = await env.request('POST', `/v1/webhooks/${hook.id}/test`, { key: org.ownerKey, body: {} });
    expect(test.status).toBe(202);
    await waitFor('the test event sent', () => target.arrivals.length === 1);
    hold = false;
    await createProjects('outside', 2);
    await waitFor('both delivered', () => target.arrivals.length === 3, 10_000);
    expect(target.arrivals.slice(1).map((a) => a.name)).toEqual(['outside-000', 'outside-001']);
  }, 30_000);

  it('ordering turned off releases the deliveries waiting their turn', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const target = endpoint({ answer: (_req, res) => void gate.then(() => res.writeHead(200).end()) });
    const hook = await subscribe(target.url, { ordering: 'fifo' });
    await createProjects('switch', 4);
    await waitFor('the head on the wire', () => target.arrivals.length === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(target.arrivals).toHaveLength(1);
    // The API and the dashboard say why the others wait.
    const waiting = await env.request('GET', `/v1/webhooks/${hook.id}/deliveries`, { key: org.ownerKey });
    expect((waiting.body.data as { waiting: string | null }[]).map((d) => d.waiting)).toEqual(['order', 'order', 'order', null]);
    const browser = await DashboardClient.signedIn(env, org.id, org.ownerId);
    const page = textOf((await browser.get(`/dashboard/webhooks/${hook.id}`)).text);
    expect(page).toContain('delivered in order, one at a time.');
    expect(page.match(/Pending — waiting: in order/g)).toHaveLength(3);
    const patched = await env.request('PATCH', `/v1/webhooks/${hook.id}`, { key: org.ownerKey, body: { ordering: 'none' } });
    expect(patched.status).toBe(200);
    expect(patched.body.ordering).toBe('none');
    await waitFor('the rest sent at once', () => target.arrivals.length === 4, 10_000);
    release();
  }, 30_000);

  it('Retry-After on 503 (seconds) and 429 (HTTP date) moves the retry out; above WEBHOOK_RETRY_AFTER_MAX it is capped', async () => {
    const cases = [
      { status: 503, header: () => '1', atLeast: 1000 },
      { status: 429, header: () => new Date(Date.now() + 2000).toUTCString(), atLeast: 1000 },
      { status: 429, header: () => '3600', atLeast: 2900 },
    ];
    for (const c of cases) {
      const target = endpoint({ answer: (_req, res, n) => void (n === 1 ? res.writeHead(c.status, { 'retry-after': c.header() }).end() : res.writeHead(200).end()) });
      await subscribe(target.url, {});
      await createProjects(`retry-${c.status}`, 1);
      await waitFor('the retry', () => target.arrivals.length === 2, 10_000);
      const gap = target.arrivals[1]!.at - target.arrivals[0]!.at;
      expect(gap).toBeGreaterThanOrEqual(c.atLeast - 50);
      // Capped at WEBHOOK_RETRY_AFTER_MAX (3 s): an hour asked for is three seconds here.
      expect(gap).toBeLessThan(c.header() === '3600' ? 4500 : 3500);
    }
  }, 40_000);

  it('Retry-After never adds attempts: a receiver that always answers 429 gets six', async () => {
    const target = endpoint({ answer: (_req, res) => void res.writeHead(429, { 'retry-after': '0' }).end() });
    const hook = await subscribe(target.url, {});
    await createProjects('six', 1);
    await waitFor('the delivery failed for good', async () => {
      const res = await env.request('GET', `/v1/webhooks/${hook.id}/deliveries`, { key: org.ownerKey });
      return res.body.data[0]?.status === 'failed';
    }, 10_000);
    expect(target.arrivals).toHaveLength(6);
  }, 20_000);

  it('refuses a rate_limit out of range or a wrong ordering, and changes nothing', async () => {
    const target = endpoint();
    const hook = await subscribe(target.url, { rate_limit: 5 });
    for (const body of [{ rate_limit: 0 }, { rate_limit: 1001 }, { rate_limit: 2.5 }, { rate_limit: '10' }, { ordering: 'lifo' }, { ordering: null }]) {
      const res = await env.request('PATCH', `/v1/webhooks/${hook.id}`, { key: org.ownerKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      const create = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: target.url, events: ['project.created'], ...body } });
      expect(create.status).toBe(400);
    }
    const after = await env.request('GET', `/v1/webhooks/${hook.id}`, { key: org.ownerKey });
    expect(after.body).toMatchObject({ rate_limit: 5, ordering: 'none' });
    const cleared = await env.request('PATCH', `/v1/webhooks/${hook.id}`, { key: org.ownerKey, body: { rate_limit: null } });
    expect(cleared.body.rate_limit).toBeNull();
  });
});
