import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import type { DB } from '../schema.js';

/** The root database or a transaction: repositories run on whichever the service hands them. */
export type Executor = Kysely<DB>;

export interface RepoContext {
  readonly db: Executor;
  readonly dialect: SqlDialect;
  /** SQLite only: a read-only connection for prepared hot-path reads outside transactions (prepared.ts). */
  readonly direct?: DirectSqlite | null;
  /** Set inside `store.transaction`: what the unit of work did, read by the store after commit. */
  readonly unit?: UnitOfWork;
}

export interface UnitOfWork {
  /** Work for the workers (pending deliveries, due runs, replay jobs); the store wakes them after commit when above zero. */
  workCreated: number;
  /**
   * The trace context of whoever began the unit (a request, a run step), captured at `store.transaction`:
   * on SQLite the unit runs inside a shared commit, in another caller's async context. Null when untraced.
   */
  readonly traceParent: string | null;
}

export interface DirectSqlite {
  /**
   * Runs a read-only statement synchronously on a read-only connection, which sees committed data
   * only; undefined (not run) for a statement that writes.
   */
  read(sql: string, parameters: readonly unknown[]): unknown[] | undefined;
  /**
   * True when no transaction has committed to the database file, from any connection or process, since
   * the previous call: its WAL-index header (in the `-shm` file) is byte-for-byte what that call read.
   * False whenever that cannot be told (the first call, a changed header, a failed read): a caller then
   * asks SQLite itself. One `pread` and no lock, where asking SQLite takes a read transaction.
   */
  unchangedSinceLastAsked(): boolean;
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
