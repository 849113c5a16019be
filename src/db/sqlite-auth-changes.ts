import type { FastifyBaseLogger } from 'fastify';
import type { AuthChangesRepository } from './repositories/auth-changes-repo.js';
import type { AuthInvalidation, AuthInvalidationSource } from './auth-events.js';

/**
 * The principal cache's invalidation source on SQLite. Every change that affects authentication bumps a
 * counter in its own transaction (a trigger, migration 008), whichever process makes it: this one, the CLI,
 * another `serve` on the same file. Before each use of the cache, `listening()` first looks whether anything
 * committed at all since it last looked (the WAL-index header, one `pread` without a lock); only if so does it
 * ask the read connection for `PRAGMA data_version` (a read transaction, which moves only when some other
 * connection committed), then the counter, and only when the counter moved is the cache dropped. A change is
 * therefore applied on the very next request of every process, with no channel that could be down.
 *
 * If either read fails, the cache is dropped and bypassed until a read succeeds again.
 */
export function createSqliteAuthChanges(repo: AuthChangesRepository, logger?: FastifyBaseLogger): AuthInvalidationSource {
  const listeners = new Set<(invalidation: AuthInvalidation) => void>();
  let dataVersion: number | null = null;
  let version: number | null = null;

  function reset(): void {
    for (const listener of listeners) listener({ kind: 'reset' });
  }

  return {
    listening() {
      try {
        // Asked first even when the answer cannot be used, so the next call compares with this moment.
        if (repo.unchangedSinceLastAsked() && dataVersion !== null) return true;
        const seen = repo.dataVersion();
        if (seen === dataVersion) return true;
        const current = repo.version();
        if (current !== version) {
          // The first check starts from an empty cache too: nothing was cached before it.
          if (version !== null) reset();
          version = current;
        }
        dataVersion = seen;
        return true;
      } catch (err) {
        if (dataVersion !== null) {
          logger?.error({ err: (err as Error).message }, 'could not check for authentication changes; API keys are read from the database until the check works again');
          reset();
        }
        dataVersion = null;
        version = null;
        return false;
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
