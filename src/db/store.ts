import type { Database } from './database.js';
import type { SqlDialect } from './dialect.js';
import { createRepositories, type Repositories } from './repositories/index.js';

/**
 * What services see of persistence: repositories on the root connection, and `transaction`, which runs
 * a unit of work on repositories bound to one transaction. Services own transaction boundaries.
 */
export interface Store {
  readonly dialect: SqlDialect;
  readonly repos: Repositories;
  transaction<T>(work: (repos: Repositories) => Promise<T>): Promise<T>;
}

export function createStore(database: Database): Store {
  const { db, dialect, direct } = database;
  return {
    dialect,
    repos: createRepositories({ db, dialect, direct }),
    transaction: (work) => db.transaction().execute((trx) => work(createRepositories({ db: trx, dialect }))),
  };
}
