import type { webhooks } from './openapi.js';

/** The name of an event the service delivers: `project.created`, ... */
export type WebhookEventType = keyof webhooks & string;

/** The body of one event, as documented in the OpenAPI document's `webhooks` section. */
export type WebhookEventOf<E extends WebhookEventType> = NonNullable<webhooks[E]['post']['requestBody']>['content']['application/json'];

/**
 * The body of any delivery: `{ event, timestamp, data }`, a union over the events, so `switch (event.event)`
 * narrows `event.data` to that event's fields.
 */
export type WebhookEvent = { [E in WebhookEventType]: WebhookEventOf<E> }[WebhookEventType];

/** Every event name, for checking a body at run time (the types alone vanish at build). */
export const WEBHOOK_EVENT_TYPES = [
  'project.created',
  'project.updated',
  'project.deleted',
  'workflow.completed',
  'workflow.failed',
  'task.assigned',
] as const satisfies readonly WebhookEventType[];

// Fails to compile when the document gains an event this list lacks (regenerated src/client/openapi.ts).
const _everyEventListed: [Exclude<WebhookEventType, (typeof WEBHOOK_EVENT_TYPES)[number]>] extends [never] ? true : never = true;

export type WebhookVerificationReason =
  /** No X-Service-Signature header. */
  | 'missing_signature'
  /** The signature is malformed, or not the one of these bytes under this secret (tampered body, wrong secret). */
  | 'invalid_signature'
  /** Signed correctly, but not an event body (not UTF-8 JSON of `{ event, timestamp, data }`). */
  | 'malformed_body'
  /** X-Service-Event is missing or names another event than the body. */
  | 'event_mismatch'
  /** An event this version of the client does not know (update the package). */
  | 'unknown_event';

/** Thrown by `verifyWebhook`: refuse the request (e.g. `401` for the signature reasons, `400` otherwise). */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

/** Request headers as Node (`req.headers`) or the Fetch API (`request.headers`) gives them. */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  let value = record[name];
  if (value === undefined) {
    // Node lower-cases names; a hand-built record may not.
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  // Repeated headers: Node joins most with ", " itself; an array is joined the same way (and then fails).
  return Array.isArray(value) ? value.join(', ') : value;
}

type NodeCrypto = typeof import('node:crypto');

// Loaded when first needed, not imported: this module is part of the client entry, which must still load
// (for the API client) in browsers and bundlers that have no node:crypto.
let nodeCrypto: NodeCrypto | undefined;
function crypto(): NodeCrypto {
  nodeCrypto ??= globalThis.process?.getBuiltinModule?.('node:crypto');
  if (!nodeCrypto) throw new Error('verifyWebhook needs node:crypto (Node 20.16 or later, or a runtime that provides it)');
  return nodeCrypto;
}

const SIGNATURE = /^[0-9a-f]{64}$/i;

/**
 * Verifies a delivery of Workspace Service and returns its event. For Node (receivers are servers): it
 * uses node:crypto.
 *
 * - `rawBody`: the request body exactly as received, before any JSON parsing (a re-serialised body has
 *   other bytes and fails).
 * - `headers`: Node's `req.headers` or a Fetch API `Headers`; names in any case.
 * - `secret`: the subscription's signing secret.
 *
 * Checks `X-Service-Signature` (hex HMAC-SHA256 of the raw bytes keyed by the secret, compared in constant
 * time), then that the body is an event whose `event` is the `X-Service-Event` header. Throws a
 * `WebhookVerificationError` (its `reason` says which check failed) otherwise. Delivery is at least once:
 * de-duplicate by the `X-Service-Event-Id` header.
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookEvent {
  if (typeof secret !== 'string' || secret.length === 0) throw new TypeError('verifyWebhook: secret must be a non-empty string');
  const { createHmac, timingSafeEqual } = crypto();

  const signature = headerValue(headers, 'x-service-signature')?.trim();
  if (!signature) throw new WebhookVerificationError('missing_signature', 'X-Service-Signature header is missing');
  if (!SIGNATURE.test(signature)) throw new WebhookVerificationError('invalid_signature', 'X-Service-Signature is not 64 hex characters');
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) {
    throw new WebhookVerificationError('invalid_signature', 'X-Service-Signature does not match the body under this secret');
  }

  let body: unknown;
  try {
    body = JSON.parse(typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: true }).decode(rawBody));
  } catch {
    throw new WebhookVerificationError('malformed_body', 'the body is not UTF-8 JSON');
  }
  if (!isEnvelope(body)) throw new WebhookVerificationError('malformed_body', 'the body is not an event: { event, timestamp, data }');

  const eventHeader = headerValue(headers, 'x-service-event')?.trim();
  if (eventHeader !== body.event) {
    throw new WebhookVerificationError('event_mismatch', eventHeader ? `X-Service-Event is ${eventHeader}, the body is ${body.event}` : 'X-Service-Event header is missing');
  }
  if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(body.event)) {
    throw new WebhookVerificationError('unknown_event', `unknown event ${body.event}`);
  }
  return body as WebhookEvent;
}

function isEnvelope(value: unknown): value is { event: string; timestamp: string; data: object } {
  if (typeof value !== 'object' || value === null) return false;
  const { event, timestamp, data } = value as Record<string, unknown>;
  return typeof event === 'string' && typeof timestamp === 'string' && typeof data === 'object' && data !== null && !Array.isArray(data);
}
