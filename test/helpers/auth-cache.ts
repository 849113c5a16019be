import { sql } from 'kysely';
import type { Container } from '../../src/container.js';

/**
 * Revokes a key in the database without announcing it, as no code path of the service can: the way to
 * prove a principal is served from the cache. SQLite: the revocation and a decrement of the change counter
 * in one transaction, so the counter the trigger bumped reads as before. PostgreSQL: with the session's
 * triggers off (`session_replication_role = replica`, superuser), so no NOTIFY goes out.
 */
export async function revokeBehindTheCache(container: Container, orgId: string, keyId: string): Promise<void> {
  await container.database.db.transaction().execute(async (trx) => {
    if (container.database.dialect === 'postgres') await sql`SET LOCAL session_replication_role = replica`.execute(trx);
    await trx.updateTable('api_keys').set({ revoked_at: Date.now() }).where('org_id', '=', orgId).where('id', '=', keyId).execute();
    if (container.database.dialect === 'sqlite') await sql`UPDATE auth_changes SET version = version - 1 WHERE id = 1`.execute(trx);
  });
}

/** Announces a key's change the way the mode does: the counter (SQLite) or the container's AuthEvents. */
export async function announceKeyChange(container: Container, keyId: string): Promise<void> {
  if (container.database.dialect === 'sqlite') await sql`UPDATE auth_changes SET version = version + 1 WHERE id = 1`.execute(container.database.db);
  else await container.authEvents.keyRevoked(keyId);
}

/** Counts the key lookups that reach the database (the principal cache's misses) from now on. */
export function countLookups(container: Container): { count(): number; restore(): void } {
  const repo = container.store.repos.apiKeys;
  const original = repo.findPrincipalByHash;
  let n = 0;
  repo.findPrincipalByHash = (hash: string) => {
    n++;
    return original.call(repo, hash);
  };
  return {
    count: () => n,
    restore: () => {
      repo.findPrincipalByHash = original;
    },
  };
}
