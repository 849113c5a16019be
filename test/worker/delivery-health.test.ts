import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/access/actor.js';
import { recordAttempt } from '../helpers/attempts.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { startDeliveryHarness, waitFor } from '../helpers/https-receiver.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const HOUR = 3_600_000;
const at = (day: number, hour: number, minute = 0, second = 0, ms = 0) => Date.UTC(2026, 10, day, hour, minute, second, ms);

/** Webhook health (overview, DASHBOARD 6's chart): delivery attempts per UTC hour by outcome, last 24 hours. */
describe.each(testDialects())('webhook health (%s)', (dialect) => {
  // 09:30 on 22 November: the window is 21 Nov 10:00 (inclusive) to 22 Nov 10:00 (exclusive), 24 hours.
  const clock = new ManualClock(at(22, 9, 30));
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;
  let hookA: string;
  let hookB: string;
  let otherHook: string;

  async function subscribe(o: TestOrg, path: string): Promise<string> {
    const res = await env.request('POST', '/v1/webhooks', { key: o.ownerKey, body: { url: `https://127.0.0.1:9/${path}`, events: ['project.created'] } });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  const attempt = (orgId: string, webhookId: string, startedAt: number, outcome: 'success' | 'failure') => recordAttempt(env, orgId, webhookId, startedAt, outcome);

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
    org = await env.createOrg();
    other = await env.createOrg('Other');
    hookA = await subscribe(org, 'a');
    hookB = await subscribe(org, 'b');
    otherHook = await subscribe(other, 'x');

    for (let i = 0; i < 3; i++) await attempt(org.id, hookA, at(22, 9, 5 + i), 'success');
    await attempt(org.id, hookA, at(22, 9, 10), 'failure');
    await attempt(org.id, hookA, at(21, 10), 'success'); // the first instant of the window
    await attempt(org.id, hookA, at(21, 10, 59, 59, 999), 'success');
    await attempt(org.id, hookA, at(21, 9, 59, 59, 999), 'failure'); // 1 ms too early
    await attempt(org.id, hookA, at(22, 10), 'success'); // the next hour, not begun yet (another worker's clock)
    await attempt(org.id, hookB, at(22, 8, 15), 'failure');
    await attempt(org.id, hookB, at(21, 23, 0), 'failure');
    await attempt(org.id, hookB, at(21, 23, 59), 'success');
    for (let i = 0; i < 4; i++) await attempt(other.id, otherHook, at(22, 9, 1), i === 0 ? 'failure' : 'success');
  });
  afterAll(async () => env?.close());

  const hourly = (o: TestOrg, webhookId?: string) => env.container.services.deliveryStats.hourly(cliActor(o.id), { webhookId });

  it('counts the organisation’s attempts per hour by outcome, with every empty hour as zeros', async () => {
    const health = await hourly(org);
    expect(health.from).toBe('2026-11-21T10:00:00.000Z');
    expect(health.to).toBe('2026-11-22T10:00:00.000Z');
    expect(health.hours).toHaveLength(24);
    expect(health.hours.map((h) => h.hour)).toEqual(Array.from({ length: 24 }, (_, i) => new Date(at(21, 10) + i * HOUR).toISOString()));
    const nonEmpty = health.hours.filter((h) => h.delivered + h.failed > 0);
    expect(nonEmpty).toEqual([
      { hour: '2026-11-21T10:00:00.000Z', delivered: 2, failed: 0 },
      { hour: '2026-11-21T23:00:00.000Z', delivered: 1, failed: 1 },
      { hour: '2026-11-22T08:00:00.000Z', delivered: 0, failed: 1 },
      { hour: '2026-11-22T09:00:00.000Z', delivered: 3, failed: 1 },
    ]);
    expect(health.hours.filter((h) => h.delivered === 0 && h.failed === 0)).toHaveLength(20);
    expect({ delivered: health.delivered, failed: health.failed }).toEqual({ delivered: 6, failed: 3 });
  });

  it('narrows to one subscription', async () => {
    const a = await hourly(org, hookA);
    expect({ delivered: a.delivered, failed: a.failed }).toEqual({ delivered: 5, failed: 1 });
    expect(a.hours[23]).toEqual({ hour: '2026-11-22T09:00:00.000Z', delivered: 3, failed: 1 });
    const b = await hourly(org, hookB);
    expect({ delivered: b.delivered, failed: b.failed }).toEqual({ delivered: 1, failed: 2 });
    expect(b.hours[23]).toEqual({ hour: '2026-11-22T09:00:00.000Z', delivered: 0, failed: 0 });
    expect(b.hours[22]).toEqual({ hour: '2026-11-22T08:00:00.000Z', delivered: 0, failed: 1 });
  });

  it('never shows another organisation’s attempts, nor its subscription', async () => {
    const mine = await hourly(other);
    expect({ delivered: mine.delivered, failed: mine.failed }).toEqual({ delivered: 3, failed: 1 });
    await expect(hourly(org, otherHook)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(hourly(org, 'wh_missing')).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('moves with the clock: an hour later the oldest hour has left the window', async () => {
    clock.advance(HOUR);
    try {
      const health = await hourly(org);
      expect(health.hours[0]!.hour).toBe('2026-11-21T11:00:00.000Z');
      expect(health.hours[23]).toEqual({ hour: '2026-11-22T10:00:00.000Z', delivered: 1, failed: 0 });
      expect({ delivered: health.delivered, failed: health.failed }).toEqual({ delivered: 5, failed: 3 });
    } finally {
      clock.advance(-HOUR);
    }
  });

  it('is empty for an organisation without attempts', async () => {
    const fresh = await env.createOrg('Fresh');
    const health = await hourly(fresh);
    expect(health.hours).toHaveLength(24);
    expect(health.hours.every((h) => h.delivered === 0 && h.failed === 0)).toBe(true);
    expect({ delivered: health.delivered, failed: health.failed }).toEqual({ delivered: 0, failed: 0 });
  });
});

/** The same figures from attempts the real worker made (real clock, real HTTPS receiver). */
describe.each(testDialects())('webhook health from the worker (%s)', (dialect) => {
  let harness: Awaited<ReturnType<typeof startDeliveryHarness>>;

  beforeAll(async () => {
    // Retries an hour apart: the failing subscription makes exactly one attempt during the test.
    harness = await startDeliveryHarness(dialect, { WEBHOOK_RETRY_SCHEDULE: '1h' });
    harness.receiver.on('/down', (_req, res) => void res.writeHead(503).end('busy'));
  });
  afterAll(async () => harness?.close());

  it('counts a delivered and a failed attempt in the current hour', async () => {
    const { env, receiver } = harness;
    const org = await env.createOrg();
    for (const path of ['/ok', '/down']) {
      const res = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: receiver.url(path), events: ['project.created'] } });
      expect(res.status).toBe(201);
    }
    expect((await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Launch' } })).status).toBe(201);
    const actor = cliActor(org.id);
    const health = await waitFor('both attempts recorded', async () => {
      const h = await env.container.services.deliveryStats.hourly(actor);
      return h.delivered + h.failed === 2 ? h : null;
    });
    expect({ delivered: health.delivered, failed: health.failed }).toEqual({ delivered: 1, failed: 1 });
    const current = new Date(Math.floor(Date.now() / HOUR) * HOUR).toISOString();
    // The attempts started in this hour, or (the test straddling the hour) in the one before it.
    const busy = health.hours.filter((h) => h.delivered + h.failed > 0);
    expect(busy.every((h) => h.hour === current || Date.parse(h.hour) === Date.parse(current) - HOUR)).toBe(true);
  });
});
