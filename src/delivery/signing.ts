import { createHmac } from 'node:crypto';
import { hmacSha256Hex, safeEqual } from '../lib/crypto.js';

/** `X-Service-Signature`: hex HMAC-SHA256 of the exact body bytes, keyed by the subscription's secret. */
export function signBody(secret: string, body: string | Buffer): string {
  return hmacSha256Hex(secret, body);
}

/**
 * The HMAC key of the Standard Webhooks signature (CONTRACT 7): the base64-decoded part of a `whsec_` secret
 * (so `new Webhook(secret)` of the `standardwebhooks` and `svix` libraries verifies as is), and the UTF-8
 * bytes of any other secret (`new Webhook(secretBytes, { format: 'raw' })`). Node's decoder also takes the
 * base64url alphabet of secrets generated before standard base64 was used.
 */
export function standardKey(secret: string): Buffer {
  let key = keys.get(secret);
  if (key === undefined) {
    key = secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
    // Decoded once per secret, not per attempt (bounded, oldest out).
    if (keys.size >= 10_000) keys.delete(keys.keys().next().value!);
    keys.set(secret, key);
  }
  return key;
}

const keys = new Map<string, Buffer>();

/** One `webhook-signature` entry: `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`. */
export function standardSignature(secret: string, msgId: string, timestamp: number, body: string | Buffer): string {
  const hmac = createHmac('sha256', standardKey(secret));
  hmac.update(`${msgId}.${timestamp}.`);
  hmac.update(body);
  return `v1,${hmac.digest('base64')}`;
}

/** The signing secrets valid at an attempt's start: the current one, and a rotated-out one until it expires. */
export interface SigningSecrets {
  current: string;
  previous: string | null;
}

/**
 * The signature headers of one attempt (CONTRACT 7): `X-Service-Signature` (and `-Previous` while a
 * rotated-out secret is valid), and the Standard Webhooks trio, one `v1` entry per valid secret, newest first.
 * `timestamp` is the attempt's start in Unix seconds: every retry is signed anew.
 */
export function signatureHeaders(secrets: SigningSecrets, msgId: string, timestamp: number, body: string | Buffer): Record<string, string> {
  const entries = [standardSignature(secrets.current, msgId, timestamp, body)];
  const headers: Record<string, string> = { 'x-service-signature': signBody(secrets.current, body) };
  if (secrets.previous !== null) {
    headers['x-service-signature-previous'] = signBody(secrets.previous, body);
    entries.push(standardSignature(secrets.previous, msgId, timestamp, body));
  }
  headers['webhook-id'] = msgId;
  headers['webhook-timestamp'] = String(timestamp);
  headers['webhook-signature'] = entries.join(' ');
  return headers;
}

/**
 * For receivers: true when `signatureHeader` is the signature of `rawBody` (the bytes as received, before
 * any JSON parsing) under `secret`. The comparison is constant-time; a missing or malformed header is
 * simply false.
 */
export function verifySignature(rawBody: string | Buffer | Uint8Array, signatureHeader: string | string[] | null | undefined, secret: string): boolean {
  const header = Array.isArray(signatureHeader) ? signatureHeader[0] : signatureHeader;
  if (typeof header !== 'string' || !/^[0-9a-fA-F]{64}$/.test(header.trim())) return false;
  const bytes = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  return safeEqual(signBody(secret, bytes), header.trim().toLowerCase());
}
