import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import type { DB } from '../schema.js';

/** The root database or a transaction: repositories run on whichever the service hands them. */
export type Executor = Kysely<DB>;

export interface RepoContext {
  readonly db: Executor;
  readonly dialect: SqlDialect;
  /** SQLite's connection itself, for prepared hot-path reads outside transactions (see prepared.ts). */
  readonly direct?: DirectSqlite | null;
}

export interface DirectSqlite {
  /** Runs one statement synchronously: the rows of a query, [] for a statement that returns none. */
  run(sql: string, parameters: readonly unknown[]): unknown[];
  /** True while a transaction is open on the connection. */
  readonly inTransaction: boolean;
}

export interface Page<T> {
  rows: T[];
  /** `seq` of the last row when more rows follow, else null. */
  nextSeq: number | null;
}

/** Splits a `limit + 1` fetch into a page and whether another page follows. */
export function toPage<T extends { seq: number }>(rows: T[], limit: number): Page<T> {
  if (rows.length > limit) {
    const page = rows.slice(0, limit);
    return { rows: page, nextSeq: page[page.length - 1]!.seq };
  }
  return { rows, nextSeq: null };
}
