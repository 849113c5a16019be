import { sha256Hex } from '../../lib/crypto.js';
import type { AuthInvalidation, AuthInvalidationSource } from '../../db/auth-events.js';
import { isAppToken, type AuthService, type KeyLookup } from './auth-service.js';
import type { Principal } from '../access/permissions.js';

export interface AuthCacheOptions {
  /** How long a verified principal is reused at most (a bound if an invalidation were ever missed). */
  ttlMs?: number;
  maxEntries?: number;
  /** How long an unknown or refused key is answered 401 without a lookup. */
  negativeTtlMs?: number;
  /** Bound of the negative cache: guessing keys evicts its oldest entries, it never grows past this. */
  maxNegativeEntries?: number;
  now?: () => number;
}

export interface CachedAuthService extends AuthService {
  /** Verified principals held (tests, diagnostics). */
  size(): number;
  /** Refused keys held. */
  negativeSize(): number;
}

interface Entry {
  principal: Principal;
  expiresAt: number;
}

/**
 * Caches principals by key hash, and refused keys briefly, trusted only while the invalidation source says
 * every committed change has reached it (`listening()`, asked before each use): the Redis or PostgreSQL
 * channel is up, or SQLite's change counter was just checked. While it is not, every request reads the
 * database. A lookup that was in flight when an invalidation arrived is not cached (the generation check),
 * so a read that raced a revocation cannot re-insert the old principal.
 *
 * Refused keys are cached for a few seconds only, in a bounded map, so a client retrying a revoked key costs
 * no query while guessing cannot fill memory; any invalidation empties that map, so a change that could turn
 * a refused key into a valid one (a user made active again) applies at once. A newly created key cannot be in
 * it: its secret is drawn at creation and nobody can have presented it before. Failures are still counted
 * per client address by the caller (CONTRACT 8): a cached refusal returns null exactly like a lookup.
 */
export function createCachedAuthService(inner: KeyLookup, source: AuthInvalidationSource, options: AuthCacheOptions = {}): CachedAuthService {
  const ttlMs = options.ttlMs ?? 30_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const negativeTtlMs = options.negativeTtlMs ?? 5_000;
  const maxNegativeEntries = options.maxNegativeEntries ?? 4_096;
  const now = options.now ?? (() => performance.now());
  const entries = new Map<string, Entry>();
  const refused = new Map<string, number>();
  let generation = 0;

  source.subscribe((invalidation) => {
    generation++;
    refused.clear();
    if (invalidation.kind === 'reset') {
      entries.clear();
      return;
    }
    for (const [hash, entry] of entries) {
      if (matches(entry.principal, invalidation)) entries.delete(hash);
    }
  });

  /** The cached principal of a current entry: the source is listening and the entry has not expired. */
  function current(hash: string, at: number): Principal | undefined {
    const hit = entries.get(hash);
    if (!hit) return undefined;
    if (hit.expiresAt > at) return hit.principal;
    entries.delete(hash);
    return undefined;
  }

  return {
    authenticateNow(token) {
      if (token.length > 512 || !source.listening()) return undefined;
      return current(sha256Hex(token), now());
    },
    async authenticate(token) {
      if (token.length > 512) return null;
      const hash = sha256Hex(token);
      if (!source.listening()) return inner.authenticateHash(hash, isAppToken(token));
      const at = now();
      const hit = current(hash, at);
      if (hit) return hit;
      const refusedUntil = refused.get(hash);
      if (refusedUntil !== undefined) {
        if (refusedUntil > at) return null;
        refused.delete(hash);
      }

      const startedAt = generation;
      const principal = await inner.authenticateHash(hash, isAppToken(token));
      // `listening()` first: it may deliver an invalidation (and move the generation) right now.
      if (source.listening() && startedAt === generation) {
        // Map order is insertion order: evicting the first entry drops the oldest.
        if (principal) {
          if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
          entries.set(hash, { principal, expiresAt: now() + ttlMs });
        } else {
          if (refused.size >= maxNegativeEntries) refused.delete(refused.keys().next().value!);
          refused.set(hash, now() + negativeTtlMs);
        }
      }
      return principal;
    },
    size: () => entries.size,
    negativeSize: () => refused.size,
  };
}

function matches(p: Principal, invalidation: Exclude<AuthInvalidation, { kind: 'reset' }>): boolean {
  switch (invalidation.kind) {
    case 'key':
      return p.keyId === invalidation.keyId;
    case 'user':
      return p.userId === invalidation.userId;
    case 'org':
      return p.orgId === invalidation.orgId;
  }
}
