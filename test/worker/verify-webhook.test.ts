import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  verifyWebhook,
  WebhookVerificationError,
  WEBHOOK_EVENT_TYPES,
  type WebhookEvent,
  type WebhookEventOf,
  type WebhookEventType,
  type WebhookVerificationReason,
} from '../../src/client/verify-webhook.js';
import { EVENT_TYPES } from '../../src/schemas/events.js';
import { deliverEveryEvent } from '../helpers/event-flows.js';
import { startDeliveryHarness, type DeliveryHarness, type ReceivedRequest } from '../helpers/https-receiver.js';
import { testDialects } from '../helpers/test-env.js';

const SECRET = 'verify-webhook-secret-0123456789';

/** What `verifyWebhook` threw, or a failure when it returned. */
function refusal(run: () => unknown): WebhookVerificationError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return err as WebhookVerificationError;
  }
  throw new Error('verifyWebhook accepted it');
}
const reasonOf = (run: () => unknown): WebhookVerificationReason => refusal(run).reason;

/** Node's `req.headers` of a delivery as a Fetch API `Headers`. */
function fetchHeaders(delivery: ReceivedRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(delivery.headers)) {
    if (typeof value === 'string') headers.set(name, value);
  }
  return headers;
}

/**
 * `verifyWebhook` of the client against real deliveries: the worker signs and sends them to a real HTTPS
 * receiver, and the test checks what the receiver got, as Node hands it over and as the Fetch API would.
 */
describe.each(testDialects())('verifyWebhook on real deliveries (%s)', (dialect) => {
  let harness: DeliveryHarness;
  let deliveries: ReceivedRequest[];

  beforeAll(async () => {
    harness = await startDeliveryHarness(dialect, {});
    ({ deliveries } = await deliverEveryEvent(harness, SECRET));
  });
  afterAll(async () => harness?.close());

  const sample = () => deliveries.find((d) => d.headers['x-service-event'] === 'project.updated')!;

  it('returns the event of every delivery, equal to its body, from a Buffer, a plain Uint8Array or a string, with Node or Fetch headers', () => {
    expect(new Set(deliveries.map((d) => d.headers['x-service-event']))).toEqual(new Set(EVENT_TYPES));
    for (const delivery of deliveries) {
      const body = JSON.parse(delivery.body.toString('utf8')) as unknown;
      expect(verifyWebhook(delivery.body, delivery.headers, SECRET)).toEqual(body);
      expect(verifyWebhook(new Uint8Array(delivery.body), delivery.headers, SECRET)).toEqual(body);
      expect(verifyWebhook(delivery.body.toString('utf8'), fetchHeaders(delivery), SECRET)).toEqual(body);
    }
  });

  it('reads header names in any case from a plain record', () => {
    const delivery = sample();
    const shouted = Object.fromEntries(Object.entries(delivery.headers).map(([name, value]) => [name.toUpperCase(), value]));
    expect(verifyWebhook(delivery.body, shouted, SECRET).event).toBe('project.updated');
  });

  it('refuses a body changed by one byte, another secret, and a signature that is not one', () => {
    const delivery = sample();
    for (const at of [0, Math.floor(delivery.body.length / 2), delivery.body.length - 1]) {
      const tampered = Buffer.from(delivery.body);
      tampered[at] = tampered[at]! ^ 0x01;
      expect(reasonOf(() => verifyWebhook(tampered, delivery.headers, SECRET))).toBe('invalid_signature');
      expect(reasonOf(() => verifyWebhook(tampered.toString('latin1'), fetchHeaders(delivery), SECRET))).toBe('invalid_signature');
    }
    expect(reasonOf(() => verifyWebhook(delivery.body, delivery.headers, `${SECRET}x`))).toBe('invalid_signature');
    expect(reasonOf(() => verifyWebhook(delivery.body, delivery.headers, 'whsec_another'))).toBe('invalid_signature');
    for (const signature of ['nothex'.padEnd(64, 'z'), 'ab', (delivery.headers['x-service-signature'] as string).slice(0, 63)]) {
      expect(reasonOf(() => verifyWebhook(delivery.body, { ...delivery.headers, 'x-service-signature': signature }, SECRET))).toBe('invalid_signature');
    }
    // The signature in capitals is the same signature.
    const upper = (delivery.headers['x-service-signature'] as string).toUpperCase();
    expect(verifyWebhook(delivery.body, { ...delivery.headers, 'x-service-signature': upper }, SECRET).event).toBe('project.updated');
  });

  it('refuses a delivery without a signature, from Node headers and from Fetch headers', () => {
    const delivery = sample();
    const { 'x-service-signature': _signature, 'webhook-signature': _standard, ...unsigned } = delivery.headers;
    expect(reasonOf(() => verifyWebhook(delivery.body, unsigned, SECRET))).toBe('missing_signature');
    expect(reasonOf(() => verifyWebhook(delivery.body, { ...unsigned, 'x-service-signature': '' }, SECRET))).toBe('missing_signature');
    // The Standard Webhooks signature alone is a signature: removing only X-Service-Signature still verifies.
    const { 'x-service-signature': _only, ...standardOnly } = delivery.headers;
    expect(verifyWebhook(delivery.body, standardOnly, SECRET).event).toBe('project.updated');
    const headers = fetchHeaders(delivery);
    headers.delete('X-Service-Signature');
    headers.delete('webhook-signature');
    expect(reasonOf(() => verifyWebhook(delivery.body, headers, SECRET))).toBe('missing_signature');
  });

  it('refuses an X-Service-Event header that does not name the body, or is missing', () => {
    const delivery = sample();
    expect(reasonOf(() => verifyWebhook(delivery.body, { ...delivery.headers, 'x-service-event': 'project.deleted' }, SECRET))).toBe('event_mismatch');
    const headers = fetchHeaders(delivery);
    headers.set('X-Service-Event', 'task.assigned');
    expect(reasonOf(() => verifyWebhook(delivery.body, headers, SECRET))).toBe('event_mismatch');
    headers.delete('X-Service-Event');
    expect(reasonOf(() => verifyWebhook(delivery.body, headers, SECRET))).toBe('event_mismatch');
  });

  it('refuses correctly signed bytes that are not an event of this client', () => {
    const signed = (body: string, event = 'project.created') => ({
      'x-service-signature': createHmac('sha256', SECRET).update(body).digest('hex'),
      'x-service-event': event,
    });
    for (const body of ['not json', '[]', 'null', '{"event":"project.created"}', '{"event":"project.created","timestamp":"2026-11-22T09:30:00.000Z","data":[]}']) {
      expect(reasonOf(() => verifyWebhook(body, signed(body), SECRET)), body).toBe('malformed_body');
    }
    const invalidUtf8 = Buffer.from([0x7b, 0xff, 0x7d]);
    expect(reasonOf(() => verifyWebhook(invalidUtf8, { 'x-service-signature': createHmac('sha256', SECRET).update(invalidUtf8).digest('hex') }, SECRET))).toBe('malformed_body');
    const future = '{"event":"project.archived","timestamp":"2026-11-22T09:30:00.000Z","data":{}}';
    expect(reasonOf(() => verifyWebhook(future, signed(future, 'project.archived'), SECRET))).toBe('unknown_event');
  });

  it('refuses to run without a secret', () => {
    expect(() => verifyWebhook(sample().body, sample().headers, '')).toThrow(TypeError);
  });

  it('types the event as a union over the documented events that narrows on `event`', () => {
    expectTypeOf<WebhookEventType>().toEqualTypeOf<(typeof EVENT_TYPES)[number]>();
    expectTypeOf<(typeof WEBHOOK_EVENT_TYPES)[number]>().toEqualTypeOf<WebhookEventType>();
    expectTypeOf<WebhookEventOf<'project.updated'>['data']['previous']['status']>().toEqualTypeOf<'active' | 'archived' | 'draft' | undefined>();
    const event = verifyWebhook(sample().body, sample().headers, SECRET);
    expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    // What a receiver writes: each branch reads its own event's fields.
    const summary = (e: WebhookEvent): string => {
      switch (e.event) {
        case 'project.created':
          return `${e.data.project_id} ${e.data.description ?? ''}`;
        case 'project.updated':
          return `${e.data.project_id} was ${JSON.stringify(e.data.previous)}`;
        case 'project.deleted':
          return `${e.data.project_id} ${e.data.name}`;
        case 'workflow.completed':
          expectTypeOf(e.data.status).toEqualTypeOf<'completed'>();
          return `${e.data.run_id} ${e.data.finished_at}`;
        case 'workflow.failed':
          expectTypeOf(e.data.error_code).toEqualTypeOf<'approval_rejected' | 'task_cancelled' | 'cancelled'>();
          return `${e.data.run_id} ${e.data.error_code}`;
        case 'task.assigned':
          expectTypeOf(e.data.previous_assignee_id).toEqualTypeOf<string | null>();
          return `${e.data.task_id} ${e.data.assignee_id}`;
        default: {
          const unreachable: never = e;
          return unreachable;
        }
      }
    };
    expect(summary(event)).toContain('was {"name":"Launch"}');
  });
});
