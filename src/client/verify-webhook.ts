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
  /** Neither the Standard Webhooks headers nor X-Service-Signature. */
  | 'missing_signature'
  /** The signature is malformed, or not the one of these bytes under this secret (tampered body, wrong secret). */
  | 'invalid_signature'
  /** Signed correctly, but `webhook-timestamp` is further from now than the tolerance (a replayed capture). */
  | 'timestamp_out_of_tolerance'
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

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, in seconds; default 300 (5 minutes), as the Standard Webhooks libraries. */
  toleranceSeconds?: number;
  /** Now, for the tolerance check (tests, replays of archived requests); default the system clock. */
  now?: Date | number;
}

/** The Standard Webhooks HMAC key of a secret: the base64 part of `whsec_…`, else the secret's UTF-8 bytes. */
function standardKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
}

/** `webhook-signature` (+ id and timestamp): some `v1` entry is the HMAC of `id.timestamp.body` under one of the secrets. */
function verifyStandard(rawBody: string | Uint8Array, id: string, timestamp: string, header: string, secrets: readonly string[], options: VerifyWebhookOptions): void {
  const { createHmac, timingSafeEqual } = crypto();
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('invalid_signature', 'webhook-timestamp is not a Unix time in seconds');
  const nowMs = options.now === undefined ? Date.now() : typeof options.now === 'number' ? options.now : options.now.getTime();
  const tolerance = options.toleranceSeconds ?? 300;
  const skew = Math.abs(Math.floor(nowMs / 1000) - Number(timestamp));
  const given = header
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  let matched = false;
  for (const secret of secrets) {
    const hmac = createHmac('sha256', standardKey(secret));
    hmac.update(`${id}.${timestamp}.`);
    hmac.update(rawBody);
    const expected = hmac.digest();
    for (const signature of given) {
      // Every entry is compared (no early exit on a match), each in constant time.
      if (signature.length === expected.length && timingSafeEqual(signature, expected)) matched = true;
    }
  }
  if (!matched) throw new WebhookVerificationError('invalid_signature', 'no webhook-signature entry matches the id, timestamp and body under this secret');
  // Checked once the timestamp is known to be the sender's: a stale one means a replayed capture.
  if (skew > tolerance) {
    throw new WebhookVerificationError('timestamp_out_of_tolerance', `webhook-timestamp is ${skew} s from now (tolerance ${tolerance} s)`);
  }
}

/** `X-Service-Signature` (or, during a rotation, `X-Service-Signature-Previous`) under one of the secrets. */
function verifyServiceSignature(rawBody: string | Uint8Array, headers: WebhookHeaders, secrets: readonly string[]): void {
  const { createHmac, timingSafeEqual } = crypto();
  const signatures = ['x-service-signature', 'x-service-signature-previous']
    .map((name) => headerValue(headers, name)?.trim())
    .filter((value): value is string => value !== undefined && value !== '');
  if (signatures.length === 0) throw new WebhookVerificationError('missing_signature', 'X-Service-Signature header is missing');
  if (!signatures.every((signature) => SIGNATURE.test(signature))) throw new WebhookVerificationError('invalid_signature', 'X-Service-Signature is not 64 hex characters');
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(rawBody).digest();
    for (const signature of signatures) {
      if (timingSafeEqual(expected, Buffer.from(signature, 'hex'))) matched = true;
    }
  }
  if (!matched) throw new WebhookVerificationError('invalid_signature', 'X-Service-Signature does not match the body under this secret');
}

/**
 * Verifies a delivery of Workspace Service and returns its event. For Node (receivers are servers): it
 * uses node:crypto.
 *
 * - `rawBody`: the request body exactly as received, before any JSON parsing (a re-serialised body has
 *   other bytes and fails).
 * - `headers`: Node's `req.headers` or a Fetch API `Headers`; names in any case.
 * - `secret`: the subscription's signing secret, or several (during a rotation: the new one and the old one).
 * - `options.toleranceSeconds`: how old (or new) `webhook-timestamp` may be; default 5 minutes.
 *
 * When the Standard Webhooks headers are there (`webhook-id`, `webhook-timestamp`, `webhook-signature`), the
 * signature over `id.timestamp.body` is checked and then the timestamp's distance from now, so a captured
 * delivery cannot be replayed later. `X-Service-Signature` (hex HMAC-SHA256 of the raw bytes) is checked when
 * it is there, and must be when the others are not (a proxy dropped them, an older sender); during a rotation
 * `X-Service-Signature-Previous` is accepted in its place. Comparisons are constant-time. Then the body must be an event whose `event` is the `X-Service-Event`
 * header. Throws a `WebhookVerificationError` (its `reason` says which check failed) otherwise. Delivery is at
 * least once: de-duplicate by the `X-Service-Event-Id` header (the same as `webhook-id`).
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string | readonly string[], options: VerifyWebhookOptions = {}): WebhookEvent {
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new TypeError('verifyWebhook: secret must be a non-empty string (or a non-empty list of them)');
  }
  const id = headerValue(headers, 'webhook-id')?.trim();
  const timestamp = headerValue(headers, 'webhook-timestamp')?.trim();
  const standard = headerValue(headers, 'webhook-signature')?.trim();
  const hasStandard = Boolean(id && timestamp && standard);
  // Each signature that is there must hold: a tampered one is refused even when the other is intact.
  if (hasStandard) verifyStandard(rawBody, id!, timestamp!, standard!, secrets, options);
  if (!hasStandard || headerValue(headers, 'x-service-signature')?.trim()) verifyServiceSignature(rawBody, headers, secrets);

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
