import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { standardSignature, signatureHeaders } from '../../src/index.js';
import { verifyWebhook, WebhookVerificationError } from '../../src/client/index.js';
import { recordEvent } from '../../src/services/events/outbox.js';
import { testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { startDeliveryHarness, waitFor, type DeliveryHarness, type HttpsReceiver, type ReceivedRequest } from '../helpers/https-receiver.js';

/** Node's headers as the Standard Webhooks library takes them: strings only. */
function plainHeaders(request: ReceivedRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') out[name] = value;
  return out;
}

/** What `new Webhook(secret).verify` says: 'ok' or its error's message. */
function libraryVerdict(secret: string | Uint8Array, request: ReceivedRequest, options?: { format: 'raw' }): string {
  try {
    new Webhook(secret, options).verify(request.body.toString('utf8'), plainHeaders(request));
    return 'ok';
  } catch (err) {
    return (err as Error).message;
  }
}

function reasonOf(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.reason;
    throw err;
  }
}

describe('Standard Webhooks signing function', () => {
  it('reproduces the specification test vector', () => {
    const signature = standardSignature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    // And the library agrees on the same input.
    const lib = new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').sign('msg_p5jXN8AQM9LWM0D4loKWxJek', new Date(1614265330 * 1000), '{"test": 2432232314}');
    expect(lib).toBe(signature);
  });

  it('lists one v1 entry per valid secret, newest first, and the hex pair', () => {
    const body = '{"event":"project.created"}';
    const headers = signatureHeaders({ current: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', previous: 'an-older-secret-0123' }, 'evt_1', 1700000000, body);
    const entries = headers['webhook-signature']!.split(' ');
    expect(entries).toEqual([standardSignature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'evt_1', 1700000000, body), standardSignature('an-older-secret-0123', 'evt_1', 1700000000, body)]);
    expect(headers['x-service-signature']).toBe(createHmac('sha256', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').update(body).digest('hex'));
    expect(headers['x-service-signature-previous']).toBe(createHmac('sha256', 'an-older-secret-0123').update(body).digest('hex'));
    const single = signatureHeaders({ current: 'an-older-secret-0123', previous: null }, 'evt_1', 1700000000, body);
    expect(single['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(single).not.toHaveProperty('x-service-signature-previous');
  });
});

describe.each(testDialects())('webhook signatures on real deliveries (%s)', (dialect) => {
  let harness: DeliveryHarness;
  let receiver: HttpsReceiver;
  let env: TestEnv;
  let org: TestOrg;
  let paths = 0;

  beforeAll(async () => {
    harness = await startDeliveryHarness(dialect, { WEBHOOK_RETRY_SCHEDULE: '1100ms,1100ms,1100ms,1100ms,1100ms', WEBHOOK_TIMEOUT: '3s' }, { healthPollMs: 100 });
    ({ receiver, env } = harness);
  });
  beforeEach(async () => {
    org = await env.createOrg();
  });
  afterAll(async () => {
    await harness?.close();
  });

  async function subscribe(secret?: string) {
    const pathname = `/sig-${++paths}`;
    const res = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: receiver.url(pathname), events: ['project.created'], ...(secret ? { secret } : {}) } });
    expect(res.status).toBe(201);
    return { id: res.body.id as string, secret: res.body.secret as string, pathname };
  }

  /** Creates a project (one project.created event) and waits until `pathname` has received `count` requests. */
  async function deliverOne(pathname: string, count: number): Promise<ReceivedRequest> {
    const res = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: `p${Date.now()}` } });
    expect(res.status).toBe(201);
    return waitFor(`request ${count} at ${pathname}`, () => receiver.at(pathname)[count - 1]);
  }

  it('a generated secret verifies as is with the standardwebhooks library and with verifyWebhook', async () => {
    const hook = await subscribe();
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const request = await deliverOne(hook.pathname, 1);
    expect(request.headers['webhook-id']).toBe(request.headers['x-service-event-id']);
    expect(Number(request.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 30);
    expect(libraryVerdict(hook.secret, request)).toBe('ok');
    expect(verifyWebhook(request.body, request.headers, hook.secret).event).toBe('project.created');
    expect(createHmac('sha256', hook.secret).update(request.body).digest('hex')).toBe(request.headers['x-service-signature']);
    expect(request.headers).not.toHaveProperty('x-service-test');
    expect(request.headers).not.toHaveProperty('x-service-signature-previous');

    // A tampered body, a changed timestamp, a changed id, another secret: all refused by both.
    const tampered = { ...request, body: Buffer.from(request.body.toString().replace('project', 'prbject')) };
    expect(libraryVerdict(hook.secret, tampered)).not.toBe('ok');
    expect(reasonOf(() => verifyWebhook(tampered.body, tampered.headers, hook.secret))).toBe('invalid_signature');
    const moved = { ...request, headers: { ...request.headers, 'webhook-timestamp': String(Number(request.headers['webhook-timestamp']) - 1) } };
    expect(libraryVerdict(hook.secret, moved)).not.toBe('ok');
    expect(reasonOf(() => verifyWebhook(moved.body, moved.headers, hook.secret))).toBe('invalid_signature');
    const renamed = { ...request, headers: { ...request.headers, 'webhook-id': 'evt_other' } };
    expect(libraryVerdict(hook.secret, renamed)).not.toBe('ok');
    expect(libraryVerdict('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', request)).not.toBe('ok');
  });

  it('a chosen secret verifies with its UTF-8 bytes in raw format', async () => {
    const secret = 'my chosen secret: 0123456789!';
    const hook = await subscribe(secret);
    const request = await deliverOne(hook.pathname, 1);
    expect(libraryVerdict(Buffer.from(secret, 'utf8'), request, { format: 'raw' })).toBe('ok');
    expect(verifyWebhook(request.body, request.headers, secret).event).toBe('project.created');
    expect(libraryVerdict(Buffer.from('another secret 0123456789', 'utf8'), request, { format: 'raw' })).not.toBe('ok');
  });

  it('a chosen whsec_ secret whose rest is not base64 is refused, nothing stored', async () => {
    const before = (await env.request('GET', '/v1/webhooks', { key: org.ownerKey })).body.data.length;
    const res = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: receiver.url('/x'), events: ['project.created'], secret: 'whsec_not base64 at all!' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details[0].field).toBe('secret');
    expect((await env.request('GET', '/v1/webhooks', { key: org.ownerKey })).body.data.length).toBe(before);
  });

  it('signs every retry anew: each attempt carries its own timestamp and verifies', async () => {
    const hook = await subscribe();
    let calls = 0;
    receiver.on(hook.pathname, (_req, res) => {
      calls++;
      res.writeHead(calls === 1 ? 503 : 200).end();
    });
    await deliverOne(hook.pathname, 1);
    const second = await waitFor('the retry', () => receiver.at(hook.pathname)[1]);
    const first = receiver.at(hook.pathname)[0]!;
    expect(second.headers['x-service-delivery-attempt']).toBe('2');
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(Number(second.headers['webhook-timestamp'])).toBeGreaterThan(Number(first.headers['webhook-timestamp']));
    expect(second.headers['webhook-signature']).not.toBe(first.headers['webhook-signature']);
    expect(libraryVerdict(hook.secret, first)).toBe('ok');
    expect(libraryVerdict(hook.secret, second)).toBe('ok');
  });

  it('verifyWebhook refuses a capture replayed outside the tolerance, and the tolerance is configurable', async () => {
    const hook = await subscribe();
    const request = await deliverOne(hook.pathname, 1);
    const sentAt = Number(request.headers['webhook-timestamp']) * 1000;
    expect(reasonOf(() => verifyWebhook(request.body, request.headers, hook.secret, { now: sentAt + 299_000 }))).toBe('ok');
    expect(reasonOf(() => verifyWebhook(request.body, request.headers, hook.secret, { now: sentAt + 301_000 }))).toBe('timestamp_out_of_tolerance');
    expect(reasonOf(() => verifyWebhook(request.body, request.headers, hook.secret, { now: sentAt - 301_000 }))).toBe('timestamp_out_of_tolerance');
    expect(reasonOf(() => verifyWebhook(request.body, request.headers, hook.secret, { now: sentAt + 3_600_000, toleranceSeconds: 7200 }))).toBe('ok');
    // A wrong secret is a signature failure whatever the time.
    expect(reasonOf(() => verifyWebhook(request.body, request.headers, 'another-secret-0123456789', { now: sentAt + 3_600_000 }))).toBe('invalid_signature');
    // Without the Standard Webhooks headers (a proxy dropped them), X-Service-Signature still verifies.
    const { 'webhook-id': _i, 'webhook-timestamp': _t, 'webhook-signature': _s, ...legacy } = request.headers;
    expect(verifyWebhook(request.body, legacy, hook.secret).event).toBe('project.created');
  });

  describe('rotation', () => {
    async function rotate(id: string, body: Record<string, unknown> = {}) {
      const res = await env.request('POST', `/v1/webhooks/${id}/rotate-secret`, { key: org.ownerKey, body });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['previous_expires_at', 'secret']);
      return res.body as { secret: string; previous_expires_at: string };
    }

    it('signs with both secrets inside the window: a receiver switching at any delivery never fails', async () => {
      const hook = await subscribe();
      await deliverOne(hook.pathname, 1);
      const before = Date.now();
      const rotated = await rotate(hook.id, { previous_expires_in: 3600 });
      expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(rotated.secret).not.toBe(hook.secret);
      expect(Date.parse(rotated.previous_expires_at) - before).toBeGreaterThanOrEqual(3_600_000 - 1000);
      expect(Date.parse(rotated.previous_expires_at) - Date.now()).toBeLessThanOrEqual(3_600_000);
      const requests: ReceivedRequest[] = [];
      for (let i = 2; i <= 5; i++) requests.push(await deliverOne(hook.pathname, i));
      // Whatever delivery the receiver switches at (old secret before it, new one from it on), all verify.
      for (let switchAt = 0; switchAt <= requests.length; switchAt++) {
        requests.forEach((request, i) => {
          const secret = i < switchAt ? hook.secret : rotated.secret;
          expect(libraryVerdict(secret, request), `switch at ${switchAt}, delivery ${i}`).toBe('ok');
          expect(reasonOf(() => verifyWebhook(request.body, request.headers, secret))).toBe('ok');
          const { 'webhook-id': _i, 'webhook-timestamp': _t, 'webhook-signature': _s, ...legacy } = request.headers;
          expect(reasonOf(() => verifyWebhook(request.body, legacy, secret))).toBe('ok');
        });
      }
      const last = requests[requests.length - 1]!;
      expect(String(last.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(last.headers['x-service-signature']).toBe(createHmac('sha256', rotated.secret).update(last.body).digest('hex'));
      expect(last.headers['x-service-signature-previous']).toBe(createHmac('sha256', hook.secret).update(last.body).digest('hex'));
      // The new secret is never shown again: not in the object, not in the list.
      const read = await env.request('GET', `/v1/webhooks/${hook.id}`, { key: org.ownerKey });
      expect(read.status).toBe(200);
      expect(read.text).not.toContain(rotated.secret.slice(6));
      expect(read.body.previous_secret_expires_at).toBe(rotated.previous_expires_at);
      expect((await env.request('GET', '/v1/webhooks', { key: org.ownerKey })).text).not.toContain(rotated.secret.slice(6));
    });

    it('after the window only the new secret signs, and the old one is forgotten', async () => {
      const hook = await subscribe();
      const rotated = await rotate(hook.id, { previous_expires_in: 1 });
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const request = await deliverOne(hook.pathname, 1);
      expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(request.headers).not.toHaveProperty('x-service-signature-previous');
      expect(libraryVerdict(rotated.secret, request)).toBe('ok');
      expect(libraryVerdict(hook.secret, request)).not.toBe('ok');
      expect(reasonOf(() => verifyWebhook(request.body, request.headers, hook.secret))).toBe('invalid_signature');
      await waitFor('the previous secret forgotten', async () => (await env.container.store.repos.webhooks.findById(org.id, hook.id))?.secret_previous === null);
      expect((await env.request('GET', `/v1/webhooks/${hook.id}`, { key: org.ownerKey })).body.previous_secret_expires_at).toBeNull();
    });

    it('a second rotation inside the window ends the older secret at once; a window of 0 ends it now', async () => {
      const hook = await subscribe();
      const second = await rotate(hook.id, { previous_expires_in: 3600 });
      const third = await rotate(hook.id, { previous_expires_in: 3600, secret: 'a chosen third secret 0123' });
      expect(third.secret).toBe('a chosen third secret 0123');
      let request = await deliverOne(hook.pathname, 1);
      expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(libraryVerdict(Buffer.from(third.secret), request, { format: 'raw' })).toBe('ok');
      expect(libraryVerdict(second.secret, request)).toBe('ok');
      expect(libraryVerdict(hook.secret, request)).not.toBe('ok');
      expect(reasonOf(() => verifyWebhook(request.body, request.headers, [hook.secret]))).toBe('invalid_signature');

      const fourth = await rotate(hook.id, { previous_expires_in: 0 });
      expect(Date.parse(fourth.previous_expires_at)).toBeLessThanOrEqual(Date.now());
      request = await deliverOne(hook.pathname, 2);
      expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(libraryVerdict(fourth.secret, request)).toBe('ok');
      expect(libraryVerdict(Buffer.from(third.secret), request, { format: 'raw' })).not.toBe('ok');
      // Replays sign with the current secret too (once the attempt is recorded: a pending delivery is not replayable).
      const deliveryId = String(request.headers['x-service-delivery-id']);
      await waitFor('the attempt recorded', async () => (await env.container.store.repos.deliveries.findById(org.id, deliveryId))?.status === 'delivered');
      const replay = await env.request('POST', `/v1/webhooks/${hook.id}/deliveries/${deliveryId}/replay`, { key: org.ownerKey });
      expect(replay.status).toBe(202);
      const replayed = await waitFor('the replay', () => receiver.at(hook.pathname)[2]);
      expect(libraryVerdict(fourth.secret, replayed)).toBe('ok');
    });

    it('refuses a window outside 0..604800 and unknown fields, changing nothing', async () => {
      const hook = await subscribe();
      const stored = await env.container.store.repos.webhooks.findById(org.id, hook.id);
      for (const body of [{ previous_expires_in: -1 }, { previous_expires_in: 604_801 }, { previous_expires_in: 1.5 }, { previous_expires_in: '60' }, { secret: 'short' }, { secret: 'x'.repeat(257) }, { secret: 'tab\there-0123456789' }, { other: 1 }]) {
        const res = await env.request('POST', `/v1/webhooks/${hook.id}/rotate-secret`, { key: org.ownerKey, body });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error.code).toBe('validation_failed');
      }
      expect(await env.container.store.repos.webhooks.findById(org.id, hook.id)).toEqual(stored);
      const request = await deliverOne(hook.pathname, 1);
      expect(libraryVerdict(hook.secret, request)).toBe('ok');
    });
  });

  it('a test event goes once, marked, with the example data, and is never retried', async () => {
    const hook = await subscribe();
    receiver.on(hook.pathname, (_req, res) => void res.writeHead(500).end('down'));
    const res = await env.request('POST', `/v1/webhooks/${hook.id}/test`, { key: org.ownerKey, body: {} });
    expect(res.status).toBe(202);
    const deliveryId = res.body.delivery_id as string;
    const request = await waitFor('the test event', () => receiver.at(hook.pathname)[0]);
    expect(request.headers['x-service-test']).toBe('true');
    expect(request.headers['x-service-delivery-id']).toBe(deliveryId);
    expect(libraryVerdict(hook.secret, request)).toBe('ok');
    const body = JSON.parse(request.body.toString());
    expect(body.event).toBe('project.created');
    expect(body.data).toMatchObject({ project_id: expect.stringMatching(/^proj_/), name: expect.any(String) });
    const detail = await waitFor('the test delivery failed', async () => {
      const d = await env.request('GET', `/v1/webhooks/${hook.id}/deliveries/${deliveryId}`, { key: org.ownerKey });
      return d.body.status === 'failed' ? d.body : null;
    });
    expect(detail).toMatchObject({ test: true, attempts: 1, next_attempt_at: null });
    expect(detail.attempt_history.map((a: { trigger: string }) => a.trigger)).toEqual(['test']);
    // Never retried (the schedule's first retry is 1.1 s away), and no health effect.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(receiver.at(hook.pathname)).toHaveLength(1);
    const row = await env.container.store.repos.webhooks.findById(org.id, hook.id);
    expect(row).toMatchObject({ failing_since: null, status: 'active' });
    // Not counted in the delivery chart either.
    const hourly = await env.container.store.repos.deliveries.hourlyOutcomes(org.id, 0, Number.MAX_SAFE_INTEGER, hook.id);
    expect(hourly).toEqual([]);
  });

  it('pending attempts go to the new URL after a PATCH', async () => {
    const hook = await subscribe();
    receiver.on(hook.pathname, (_req, res) => void res.writeHead(503).end());
    await deliverOne(hook.pathname, 1);
    const moved = `/moved-${paths}`;
    const res = await env.request('PATCH', `/v1/webhooks/${hook.id}`, { key: org.ownerKey, body: { url: receiver.url(moved) } });
    expect(res.status).toBe(200);
    expect(res.body.url).toBe(receiver.url(moved));
    const retried = await waitFor('the retry at the new URL', () => receiver.at(moved)[0]);
    expect(retried.headers['x-service-delivery-attempt']).toBe('2');
    expect(libraryVerdict(hook.secret, retried)).toBe('ok');
    expect(receiver.at(hook.pathname)).toHaveLength(1);
  });

  it('records one event for the test alone: no other subscription hears it', async () => {
    const a = await subscribe();
    const b = await subscribe();
    const res = await env.request('POST', `/v1/webhooks/${a.id}/test`, { key: org.ownerKey, body: { event: 'project.created' } });
    expect(res.status).toBe(202);
    await waitFor('the test event', () => receiver.at(a.pathname)[0]);
    // A real event right after reaches b first: the test never did.
    const { store, clock, waker } = env.container;
    await store.transaction((repos) => recordEvent(repos, { orgId: org.id, type: 'project.created', data: { project_id: 'proj_x' }, occurredAt: clock.now() }));
    waker.wake();
    const first = await waitFor('b hears the real event', () => receiver.at(b.pathname)[0]);
    expect(first.headers).not.toHaveProperty('x-service-test');
  });
});
