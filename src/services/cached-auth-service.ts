import { sha256Hex } from '../lib/crypto.js';
import type { AuthService } from './auth-service.js';
import type { Principal } from './permissions.js';
import type { AuthInvalidation, AuthInvalidationSource } from './redis-auth-events.js';

export interface AuthCacheOptions {
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  principal: Principal;
  expiresAt: number;
}

/**
 * Caches principals by key hash for a short time, trusted only while the invalidation channel is up:
 * every instance drops a revoked key or a changed user on receipt, and while the channel is down every
 * request reads the database. A lookup that was in flight when an invalidation arrived is not cached
 * (the generation check), so a read that raced a revocation cannot re-insert the old principal.
 * Unknown keys are never cached, so guessing keys cannot fill memory.
 */
export function createCachedAuthService(inner: AuthService, source: AuthInvalidationSource, options: AuthCacheOptions = {}): AuthService & { size(): number } {
  const ttlMs = options.ttlMs ?? 30_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? (() => performance.now());
  const entries = new Map<string, Entry>();
  let generation = 0;

  source.subscribe((invalidation) => {
    generation++;
    if (invalidation.kind === 'reset') {
      entries.clear();
      return;
    }
    for (const [hash, entry] of entries) {
      const p = entry.principal;
      if (matches(p, invalidation)) entries.delete(hash);
    }
  });

  return {
    async authenticate(token) {
      if (token.length > 512 || !source.listening()) return inner.authenticate(token);
      const hash = sha256Hex(token);
      const hit = entries.get(hash);
      if (hit && hit.expiresAt > now()) return hit.principal;
      if (hit) entries.delete(hash);

      const startedAt = generation;
      const principal = await inner.authenticate(token);
      if (principal && startedAt === generation && source.listening()) {
        // Map order is insertion order: evicting the first entry drops the oldest.
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
        entries.set(hash, { principal, expiresAt: now() + ttlMs });
      }
      return principal;
    },
    size: () => entries.size,
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
