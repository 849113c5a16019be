import type { Database } from './database.js';
import type { SqlDialect } from './dialect.js';
import type { UnitOfWork } from './repositories/executor.js';
import { createRepositories, type Repositories } from './repositories/index.js';

/**
 * What services see of persistence: repositories on the root connection, and `transaction`, which runs
 * a unit of work on repositories bound to one transaction. Services own transaction boundaries.
 * A unit of work that created work for the workers (outbox deliveries, due runs) wakes them once it has
 * committed — never before, so a worker cannot look for rows it is not yet allowed to see, and never
 * after a rollback.
 *
 * On SQLite, units share commits (group-commit.ts): each runs in its own savepoint of a transaction that
 * concurrent units join, resolves only after the COMMIT that holds its writes, and fails alone when it
 * throws. A unit must use the repositories it is given: calling `transaction` from inside one is refused
 * (NestedTransactionError) on SQLite, where it would wait for its own batch. On PostgreSQL each unit is
 * its own transaction.
 */
export interface Store {
  readonly dialect: SqlDialect;
  readonly repos: Repositories;
  transaction<T>(work: (repos: Repositories) => Promise<T>): Promise<T>;
}

/**
 * `traceParent` reads the caller's active trace context (tracing on); the unit of work carries it to the
 * events it records (events-repo.ts).
 */
export function createStore(database: Database, waker?: { wake(): void }, traceParent?: () => string | null): Store {
  const { db, dialect, direct, groupCommit } = database;
  return {
    dialect,
    repos: createRepositories({ db, dialect, direct }),
    async transaction(work) {
      const unit: UnitOfWork = { workCreated: 0, traceParent: traceParent ? traceParent() : null };
      if (groupCommit) return groupCommit.run((trx) => work(createRepositories({ db: trx, dialect, unit })), unit, waker);
      for (let attempt = 1; ; attempt++) {
        try {
          const result = await db.transaction().execute((trx) => work(createRepositories({ db: trx, dialect, unit })));
          if (unit.workCreated > 0) waker?.wake();
          return result;
        } catch (error) {
          if (attempt >= DEADLOCK_ATTEMPTS || !isDeadlock(error)) throw error;
          // PostgreSQL rolled this unit back whole to break a lock cycle; run it again (a unit's writes are its
          // transaction's, and its mails and wake-ups happen after the commit).
          unit.workCreated = 0;
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
        }
      }
    },
  };
}

/**
 * How many times a unit of work runs when PostgreSQL picks it as a deadlock's victim. Row locks are taken in
 * orders that cannot all agree (an event's fan-out share-locks every listening subscription; a worker's claim
 * and its recording lock deliveries and then their subscriptions), so a cycle is rare but possible under load;
 * the victim's answer was a 500 (seen in CI on `POST /v1/projects` beside a FIFO subscription's claim).
 */
const DEADLOCK_ATTEMPTS = 3;

function isDeadlock(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '40P01';
}
