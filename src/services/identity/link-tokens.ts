import { sha256Hex } from '../../lib/crypto.js';

/**
 * Credentials a person carries in a link or cookie (invitations, password links, sign-in choices,
 * sessions): 32 random bytes, base64url, 43 characters. Anything far longer is not worth hashing.
 */
const MAX_TOKEN_LENGTH = 512;

/** The stored hash of a presented token, or null when the text cannot be one of ours. */
export function tokenHash(token: string): string | null {
  return token.length === 0 || token.length > MAX_TOKEN_LENGTH ? null : sha256Hex(token);
}

export type TokenLookup<R> = { state: 'open'; row: R } | { state: 'not_found' } | { state: 'expired' };

/** Unknown, used and superseded tokens are all "not found"; an open one past its time is "expired". */
export function tokenState<R extends { used_at: number | null; expires_at: number }>(row: R | undefined, now: number): TokenLookup<R> {
  if (!row || row.used_at !== null) return { state: 'not_found' };
  if (now >= row.expires_at) return { state: 'expired' };
  return { state: 'open', row };
}
