import { randomBytes } from 'node:crypto';

export type IdPrefix = 'org' | 'user' | 'proj' | 'wh' | 'key' | 'evt' | 'dlv' | 'inv' | 'wf' | 'task' | 'att' | 'req';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * `prefix_` followed by 24 base-36 characters drawn from 16 random bytes (about 124 bits), above the
 * contract's floor of 80 unguessable bits. Rejection sampling keeps every character uniform.
 */
export function newId(prefix: IdPrefix): string {
  let out = `${prefix}_`;
  while (out.length < prefix.length + 1 + 24) {
    for (const byte of randomBytes(32)) {
      if (byte >= 252) continue; // 252 = 36 * 7: keep the distribution uniform
      out += ALPHABET[byte % 36];
      if (out.length === prefix.length + 1 + 24) break;
    }
  }
  return out;
}

/** A random secret token in base64url, for keys, invitation links and webhook secrets. */
export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}
