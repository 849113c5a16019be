import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  sql,
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  type SqliteStatement,
} from 'kysely';
import pg from 'pg';
import type { SqlDialect } from './dialect.js';
import { createGroupCommit, type GroupCommit } from './group-commit.js';
import type { DirectSqlite } from './repositories/executor.js';
import { migrationProvider } from './migrations/index.js';
import { withPreparedStatements } from './pg-prepared.js';
import type { DB } from './schema.js';

export interface DatabaseOptions {
  /** `postgres://...`; null selects embedded SQLite in `dataDir`. */
  databaseUrl: string | null;
  dataDir: string;
  poolSize?: number;
  /** Overrides the SQLite file (tests use a temp file). */
  sqliteFile?: string;
}

export interface Database {
  readonly db: Kysely<DB>;
  readonly dialect: SqlDialect;
  /** The raw pg pool (PostgreSQL only): LISTEN/NOTIFY and health checks use it. */
  readonly pgPool: pg.Pool | null;
  /** SQLite only: the connection's statement cache, for the repositories' prepared hot paths. */
  readonly direct: DirectSqlite | null;
  /** SQLite only: the write connection's group commit, through which `store.transaction` runs (group-commit.ts). */
  readonly groupCommit: GroupCommit | null;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What `make` gives for a SQL text, made once and kept; once `capacity` texts are kept, the oldest goes. */
function bySqlText<T>(make: (sql: string) => T, capacity = 500): (sql: string) => T {
  const cache = new Map<string, T>();
  return (sql) => {
    let entry = cache.get(sql);
    if (entry === undefined) {
      entry = make(sql);
      if (cache.size >= capacity) cache.delete(cache.keys().next().value!);
      cache.set(sql, entry);
    }
    return entry;
  };
}

/**
 * Kysely prepares every statement anew; better-sqlite3 statements are reusable, so a bounded cache
 * keyed by SQL text removes the prepare cost from every hot query.
 */
function cachingSqlite(raw: BetterSqlite3.Database): SqliteDatabase {
  return { close: () => raw.close(), prepare: bySqlText((sql) => raw.prepare(sql) as unknown as SqliteStatement) };
}

/** A read statement of the direct path, prepared once: array rows, and the function that names their columns. */
interface DirectRead {
  statement: BetterSqlite3.Statement<unknown[], unknown[]>;
  toObject: (row: unknown[]) => Record<string, unknown>;
}

/**
 * The repositories' synchronous read path (prepared.ts), on its own read-only connection: in WAL mode
 * it reads the last committed state without waiting for the main connection's write transaction.
 * Rows come back as arrays and become objects here: better-sqlite3 builds row objects property by
 * property in native code, which costs more than the query itself for a page of 100 rows. Everything a
 * statement needs is settled when it is first prepared (array mode, whether it only reads, an object
 * literal of its columns), so a call is one map lookup and one native call: this path runs on every
 * authenticated request (the auth cache's change check) and every read by id.
 */
function directSqlite(reader: BetterSqlite3.Database, walIndex: WalIndexWatch): DirectSqlite {
  // null: the statement writes, so it is not run here.
  const readOf = bySqlText((sql): DirectRead | null => {
    const statement = reader.prepare(sql) as BetterSqlite3.Statement<unknown[], unknown[]>;
    if (!statement.readonly || !statement.reader) return null;
    const names = statement.columns().map((c) => c.name);
    // One object literal per row, so every row of a statement shares one shape (names are this code's own SQL).
    const toObject = new Function('row', `return { ${names.map((name, i) => `${JSON.stringify(name)}: row[${i}]`).join(', ')} };`) as DirectRead['toObject'];
    return { statement: statement.raw(true), toObject };
  });
  return {
    read(sql, parameters) {
      const entry = readOf(sql);
      if (entry === null) return undefined;
      const rows = entry.statement.all(parameters as unknown[]);
      const out = new Array<Record<string, unknown>>(rows.length);
      for (let i = 0; i < rows.length; i++) out[i] = entry.toObject(rows[i] as unknown[]);
      return out;
    },
    unchangedSinceLastAsked: walIndex.unchanged,
  };
}

/** Bytes of the WAL-index header's first copy (https://www.sqlite.org/walformat.html#the_wal_index_file_format). */
const WAL_INDEX_HEADER_BYTES = 48;

/**
 * Every commit in WAL mode rewrites the WAL-index header in the shared-memory file, the one place every
 * connection of every process reads to find the last commit: its change counter (`iChange`) and the last
 * valid frame (`mxFrame`) move with each transaction, and a WAL reset changes its salts. So an identical
 * header means no commit completed in between. A read racing a commit's header write may see a torn
 * header, which differs from the last one and so only costs a needless check. The file is SQLite's
 * documented, frozen format (version 3007000); where it cannot be read the answer is always false.
 */
interface WalIndexWatch {
  unchanged(): boolean;
  close(): void;
}

function walIndexWatch(shmFile: string): WalIndexWatch {
  let fd: number | null | undefined;
  let known = false;
  let last = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  let next = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  return {
    unchanged() {
      try {
        // Opened on first use: the connections have made the file by then.
        if (fd === undefined) fd = fs.openSync(shmFile, 'r');
        if (fd === null || fs.readSync(fd, next, 0, WAL_INDEX_HEADER_BYTES, 0) !== WAL_INDEX_HEADER_BYTES) return (known = false);
      } catch {
        fd ??= null;
        return (known = false);
      }
      const unchanged = known && next.equals(last);
      [last, next] = [next, last];
      known = true;
      return unchanged;
    },
    close() {
      if (typeof fd === 'number') fs.closeSync(fd);
      fd = null;
    },
  };
}

/**
 * Write transactions take SQLite's write lock at BEGIN (IMMEDIATE) so a second process (the CLI, a
 * worker) waits on busy_timeout instead of failing with SQLITE_BUSY when a deferred transaction upgrades.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly cfg: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(cfg);
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.cfg);
  }
}

function openSqlite(file: string): Database {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const raw = new BetterSqlite3(file);
  raw.pragma('journal_mode = WAL');
  // NORMAL in WAL mode survives a process crash (kill -9); only an OS crash can lose the last commits.
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  // Group commit runs each unit in a savepoint; the pages a unit changes are copied to a sub-journal, which
  // on the default temp store spills to a temporary file past 64 KiB (a project create already does).
  // In memory it costs no system calls; it holds one unit's pages at a time (emptied at each release).
  // Temporary tables and indices live in memory too; sorts still spill to temporary files.
  raw.pragma('temp_store = MEMORY');
  // Content freed on a b-tree page (an updated secret, a deleted row) is zeroed where that costs no extra I/O,
  // so a copy of the file holds less of what was replaced (a secret sealed under a retired key, say).
  raw.pragma('secure_delete = FAST');
  const statements = cachingSqlite(raw);
  const db = new Kysely<DB>({ dialect: new ImmediateSqliteDialect({ database: statements }) });
  // Opened after the main connection has switched the file to WAL (the mode is persistent).
  const reader = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  reader.pragma('busy_timeout = 5000');
  const groupCommit = createGroupCommit(db, { exec: (sql) => void statements.prepare(sql).run([]), inTransaction: () => raw.inTransaction });
  const walIndex = walIndexWatch(`${file}-shm`);
  return {
    db,
    dialect: 'sqlite',
    pgPool: null,
    direct: directSqlite(reader, walIndex),
    groupCommit,
    async ping() {
      raw.prepare('select 1').get();
    },
    async close() {
      // Units already queued, and the open batch, commit (and are answered) before the connection closes.
      await groupCommit.close();
      await db.destroy();
      walIndex.close();
      reader.close();
    },
  };
}

function openPostgres(url: string, poolSize: number): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // While PostgreSQL is unreachable (or the pool stays exhausted) a request gets 503 within this, not a hang.
    connectionTimeoutMillis: 2000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // Server-side guards: no statement runs away, no forgotten transaction holds row locks (leases) forever.
    statement_timeout: 30_000,
    idle_in_transaction_session_timeout: 60_000,
    // BIGINT columns hold epoch milliseconds and sequence numbers, all far below 2^53.
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its connection emits here; without a listener it would crash the process.
  pool.on('error', () => {});
  // A client checked out (inside a transaction, between statements) has no pool listener; if the server
  // goes away then, pg emits 'error' on it, which unhandled would kill the process. Its next query fails
  // instead (answered 503), and the pool discards it on release.
  pool.on('connect', (client) => client.on('error', () => {}));
  // The hot queries (prepared.ts) run as named statements, parsed and planned once per connection.
  const db = withPreparedStatements(pool, new Kysely<DB>({ dialect: new PostgresDialect({ pool }) }));
  return {
    db,
    dialect: 'postgres',
    pgPool: pool,
    direct: null,
    groupCommit: null,
    async ping() {
      await pool.query('select 1');
    },
    async close() {
      await db.destroy();
    },
  };
}

/** The embedded database's file. */
export function sqliteFilePath(options: Pick<DatabaseOptions, 'dataDir' | 'sqliteFile'>): string {
  return path.resolve(options.sqliteFile ?? path.join(options.dataDir, 'workspace.db'));
}

export function openDatabase(options: DatabaseOptions): Database {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10);
  return openSqlite(sqliteFilePath(options));
}

/** Where the schema stands against this release's migrations (CONTRACT 12, `migrate --check`). */
export interface SchemaStatus {
  /** Applied, in order. */
  readonly applied: string[];
  /** This release's migrations not yet applied: the schema is behind. */
  readonly pending: string[];
  /** Applied by a newer release and unknown here: allowed, since migrations only add (docs/deployment.md). */
  readonly newer: string[];
}

const MIGRATION_TABLE = 'kysely_migration';

export async function appliedMigrations(db: Kysely<DB>, dialect: SqlDialect): Promise<string[]> {
  const exists =
    dialect === 'postgres'
      ? (await sql<{ present: boolean }>`select to_regclass(${MIGRATION_TABLE}) is not null as present`.execute(db)).rows[0]?.present
      : (await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name = ${MIGRATION_TABLE}`.execute(db)).rows.length > 0;
  if (!exists) return [];
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)} order by name`.execute(db);
  return rows.map((r) => r.name);
}

const knownNames = new Map<SqlDialect, Promise<string[]>>();

/** This release's migration names, in order; listed once per process (/readyz asks on every probe). */
export function knownMigrations(dialect: SqlDialect): Promise<string[]> {
  let names = knownNames.get(dialect);
  if (!names) knownNames.set(dialect, (names = migrationProvider(dialect).getMigrations().then(Object.keys)));
  return names;
}

/** Reads the applied migrations and compares them with this release's list; changes nothing. */
export async function schemaStatus(database: Pick<Database, 'db' | 'dialect'>): Promise<SchemaStatus> {
  const [applied, known] = await Promise.all([appliedMigrations(database.db, database.dialect), knownMigrations(database.dialect)]);
  const done = new Set(applied);
  const knownSet = new Set(known);
  return { applied, pending: known.filter((name) => !done.has(name)), newer: applied.filter((name) => !knownSet.has(name)) };
}

/**
 * The SQLite file's status without creating it: `migrate --check` on a fresh DATA_DIR reports every migration
 * pending and leaves nothing behind. Null when the file exists (open it and ask `schemaStatus`).
 */
export async function missingSqliteStatus(options: DatabaseOptions): Promise<SchemaStatus | null> {
  if (options.databaseUrl) return null;
  if (fs.existsSync(sqliteFilePath(options))) return null;
  return { applied: [], pending: [...(await knownMigrations('sqlite'))], newer: [] };
}

/** The schema lacks migrations this release needs; `serve`/`worker` with MIGRATE_ON_START=false stop on it. */
export class SchemaBehindError extends Error {
  constructor(readonly pending: readonly string[]) {
    super(
      `the database schema is behind this release: ${pending.length} migration(s) pending (${pending.join(', ')}). ` +
        'Run `workspace migrate` first (MIGRATE_ON_START=false is set, so this process does not migrate)',
    );
    this.name = 'SchemaBehindError';
  }
}

/**
 * Applies this release's pending migrations. A schema that a newer release already moved on is left as it is
 * (Kysely's migrator would refuse it as "corrupted"): that is release N-1 restarting during a rolling update,
 * and migrations only add, so it runs on N's schema.
 */
export async function migrateToLatest(database: Pick<Database, 'db' | 'dialect' | 'pgPool'>, known?: SchemaStatus): Promise<string[]> {
  // A caller that has just read the status passes it; Kysely's migrator re-checks under its lock anyway.
  const status = known ?? (await schemaStatus(database));
  if (status.newer.length > 0) {
    if (status.pending.length > 0) {
      throw new Error(
        `the database schema has migrations this release does not know (${status.newer.join(', ')}) and lacks some it needs ` +
          `(${status.pending.join(', ')}); it was migrated by a different line of releases`,
      );
    }
    return [];
  }
  if (status.pending.length === 0) return [];
  // The serving pool's statement timeout protects requests; a migration building an index on a large table
  // must not hit it, so on PostgreSQL migrations run on their own connection without one.
  const pool = database.pgPool
    ? new pg.Pool({ ...database.pgPool.options, max: 1, statement_timeout: 0, idle_in_transaction_session_timeout: 0 })
    : null;
  pool?.on('error', () => {});
  const db = pool ? new Kysely<DB>({ dialect: new PostgresDialect({ pool }) }) : database.db;
  try {
    const migrator = new Migrator({ db, provider: migrationProvider(database.dialect) });
    const { error, results } = await migrator.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  } finally {
    if (pool) await db.destroy();
  }
}

/** Unique-constraint violation in either dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
