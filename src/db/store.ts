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
 */
export interface Store {
  readonly dialect: SqlDialect;
  readonly repos: Repositories;
  transaction<T>(work: (repos: Repositories) => Promise<T>): Promise<T>;
}

export function createStore(database: Database, waker?: { wake(): void }): Store {
  const { db, dialect, direct } = database;
  return {
    dialect,
    repos: createRepositories({ db, dialect, direct }),
    async transaction(work) {
      const unit: UnitOfWork = { workCreated: 0 };
      const result = await db.transaction().execute((trx) => work(createRepositories({ db: trx, dialect, unit })));
      if (unit.workCreated > 0) waker?.wake();
      return result;
    },
  };
}
