import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { errors } from '../../errors.js';
import { migrateToLatest, schemaStatus, type SchemaStatus } from '../database.js';
import type { DB } from '../schema.js';

/** The first 16 bytes of every SQLite database file. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** The maintenance commands' shared refusal when DATA_DIR holds no database (they never create one). */
export function requireDatabaseFile(file: string): void {
  if (!fs.existsSync(file)) throw errors.refused('no_database', `there is no embedded database at ${file} (check DATA_DIR)`);
}

/**
 * Opens the embedded database for a command that must be its only user (restore, copy-to-postgres) and
 * keeps it that way until closed. How it knows no other process has it open: in WAL mode every open
 * connection (a `serve`, a `worker`, another command, the sqlite3 shell) holds a shared lock on the file for
 * as long as it is open, so SQLite can grant this connection its exclusive lock only when there is none.
 * `locking_mode = EXCLUSIVE` keeps that lock after the first transaction, so nothing opens it meanwhile.
 */
export function openSqliteExclusive(file: string, purpose: string): BetterSqlite3.Database {
  requireDatabaseFile(file);
  const raw = new BetterSqlite3(file, { fileMustExist: true, timeout: 1000 });
  try {
    raw.pragma('locking_mode = EXCLUSIVE');
    raw.exec('begin exclusive; commit');
  } catch (err) {
    raw.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      throw errors.refused(
        'database_in_use',
        `the embedded database ${file} is open in another process: SQLite refused an exclusive lock on it, which it grants ` +
          `only when no other connection has the file open. Stop every \`workspace serve\`, \`worker\` and other command ` +
          `using this DATA_DIR, then run ${purpose} again`,
      );
    }
    throw err;
  }
  return raw;
}

/** A Kysely over a connection this process already holds (the exclusive one), for the migrator and status. */
export function kyselyOver(raw: BetterSqlite3.Database): Kysely<DB> {
  // Kysely would close the connection on destroy; its owner closes it instead.
  return new Kysely<DB>({ dialect: new SqliteDialect({ database: { close() {}, prepare: (sql: string) => raw.prepare(sql) } }) });
}

export async function statusOver(raw: BetterSqlite3.Database): Promise<SchemaStatus> {
  return schemaStatus({ db: kyselyOver(raw), dialect: 'sqlite' });
}

/** Applies this release's pending migrations through a connection this process holds; returns their names. */
export async function migrateOver(raw: BetterSqlite3.Database, status: SchemaStatus): Promise<string[]> {
  return migrateToLatest({ db: kyselyOver(raw), dialect: 'sqlite', pgPool: null }, status);
}

/** True when the file starts with SQLite's header (read without opening it as a database). */
export function looksLikeSqlite(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(SQLITE_HEADER.length);
    return fs.readSync(fd, head, 0, head.length, 0) === head.length && head.equals(SQLITE_HEADER);
  } finally {
    fs.closeSync(fd);
  }
}

/** `PRAGMA integrity_check`: null when the file is sound, otherwise the first problems SQLite names. */
export function integrityProblems(raw: BetterSqlite3.Database): string | null {
  try {
    const rows = raw.prepare('pragma integrity_check(5)').pluck().all() as string[];
    return rows.length === 1 && rows[0] === 'ok' ? null : rows.join('; ');
  } catch (err) {
    // A damaged header or page map makes SQLite give up before it can list anything.
    return (err as Error).message;
  }
}

/** Every table that holds the service's data (SQLite's own and the migrator's bookkeeping left out). */
export function dataTableNames(raw: BetterSqlite3.Database): string[] {
  return raw
    .prepare(`select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\' and name not like 'kysely\\_%' escape '\\' order by name`)
    .pluck()
    .all() as string[];
}

/** Rows per data table, and their total. */
export function countRows(raw: BetterSqlite3.Database): { tables: number; rows: number } {
  let rows = 0;
  const tables = dataTableNames(raw);
  for (const table of tables) rows += raw.prepare(`select count(*) from "${table}"`).pluck().get() as number;
  return { tables: tables.length, rows };
}

/** Makes a rename durable: the directory entry is flushed as well as the file. */
export function fsyncFile(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function fsyncDirectory(file: string): void {
  fsyncFile(path.dirname(file));
}

/** A timestamp usable in a file name: 20261126T113000Z. */
export function fileStamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}
