import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const INFO = 'workspace-session-flash-v1';

/** A 256-bit key derived from a bearer token: whoever holds only the token's hash cannot make it. */
function keyFor(token: string): Buffer {
  return Buffer.from(hkdfSync('sha256', token, Buffer.alloc(0), INFO, 32));
}

/**
 * Seals text so that only a holder of `token` can read it again (AES-256-GCM, random IV): the session's
 * one-time slot may carry a new API key to the page that shows it, and the database only ever stores the
 * session token's hash, so a copy of the database (or a backup) cannot open it.
 */
export function sealForToken(token: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(token), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${iv.toString('base64url')}.${body.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
}

/** The text `sealForToken` sealed with this token, or null when it was sealed with another or altered. */
export function openForToken(token: string, sealed: string): string | null {
  const [iv, body, tag] = sealed.split('.');
  if (iv === undefined || body === undefined || tag === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyFor(token), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
