import { hmacSha256Hex, safeEqual } from '../lib/crypto.js';

/** `X-Service-Signature`: hex HMAC-SHA256 of the exact body bytes, keyed by the subscription's secret. */
export function signBody(secret: string, body: string | Buffer): string {
  return hmacSha256Hex(secret, body);
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
