import { hash } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { errors } from '../../errors.js';
import { migrateToLatest, openDatabase, schemaStatus } from '../database.js';
import { migrateOver, openSqliteExclusive, statusOver } from './sqlite-files.js';
import { COPIED_TABLES, type CopiedTablePlan } from './table-plan.js';

export interface CopiedTableReport {
  table: string;
  rows: number;
  seconds: number;
  /** Sum of a 64-bit hash of each row's key (and id), computed on both sides and compared. */
  checksum: string;
}

export interface CopyReport {
  source: string;
  /** The target URL without its password. */
  target: string;
  migrated_source: string[];
  migrated_target: string[];
  tables: CopiedTableReport[];
  rows: number;
  seconds: number;
  rows_per_second: number;
  verified: true;
  memory: { rss_start_bytes: number; peak_rss_bytes: number };
}

export interface CopyOptions {
  /** A line of progress (stderr in the CLI). */
  progress?: (line: string) => void;
  /** Rows per INSERT; a batch also ends at `batchBytes` of JSON, whichever comes first. */
  batchRows?: number;
  batchBytes?: number;
}

/** Taken for the copy's transaction: two copies into one database cannot both see it empty. */
const COPY_LOCK = 7_212_021;

function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Key columns plus `id` where the key is `seq`: what the checksum covers. */
function identityColumns(plan: CopiedTablePlan, columns: readonly string[]): string[] {
  return columns.includes('id') && !plan.key.includes('id') ? [...plan.key, 'id'] : [...plan.key];
}

/**
 * The row identity hash, spelled identically on both sides: the values as text joined by U+001F, MD5, its
 * first 64 bits as a signed integer; the checksum is their exact sum. Order-free, so the two databases'
 * collations never matter.
 */
function rowHash(values: readonly unknown[]): bigint {
  return BigInt.asIntN(64, BigInt(`0x${hash('md5', values.map(String).join('\x1f'), 'hex').slice(0, 16)}`));
}

function targetChecksumSql(table: string, identity: readonly string[]): string {
  const joined = `concat_ws(chr(31), ${identity.map((c) => `${quote(c)}::text`).join(', ')})`;
  return `select count(*)::bigint as rows, coalesce(sum(('x' || left(md5(${joined}), 16))::bit(64)::bigint), 0)::text as checksum from ${quote(table)}`;
}

async function targetColumns(client: pg.Client, table: string): Promise<Map<string, string>> {
  const { rows } = await client.query<{ column_name: string; data_type: string }>(
    'select column_name, data_type from information_schema.columns where table_schema = current_schema() and table_name = $1',
    [table],
  );
  return new Map(rows.map((r) => [r.column_name, r.data_type]));
}

function sourceColumns(source: BetterSqlite3.Database, table: string): string[] {
  return source.prepare('select name from pragma_table_info(?) order by cid').pluck().all(table) as string[];
}

async function nonEmptyTables(client: pg.Client): Promise<string[]> {
  const present = new Set(
    (await client.query<{ table_name: string }>('select table_name from information_schema.tables where table_schema = current_schema()')).rows.map(
      (r) => r.table_name,
    ),
  );
  const found: string[] = [];
  for (const { table } of COPIED_TABLES) {
    if (!present.has(table)) continue;
    const { rows } = await client.query<{ any: boolean }>(`select exists (select 1 from ${quote(table)}) as any`);
    if (rows[0]!.any) found.push(table);
  }
  return found;
}

function refuseNonEmpty(tables: string[], target: string): void {
  if (tables.length === 0) return;
  throw errors.refused(
    'target_not_empty',
    `the PostgreSQL database ${target} already holds rows (${tables.join(', ')}); copy-to-postgres only fills an empty database. ` +
      'Create a new database (createdb) or empty this one, then run it again',
  );
}

function unreachable(target: string, err: unknown) {
  return errors.refused('target_unreachable', `cannot connect to PostgreSQL at ${target}: ${(err as Error).message}`);
}

async function connectTarget(url: string, target: string): Promise<pg.Client> {
  // The copy is one long transaction; the serving pool's statement and idle-in-transaction timeouts do not apply.
  const client = new pg.Client({ connectionString: url, statement_timeout: 0, idle_in_transaction_session_timeout: 0 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    throw unreachable(target, err);
  }
  return client;
}

/** Brings the target to this release's schema (the source is at it too), refusing anything but an empty database. */
async function migrateTarget(url: string, target: string): Promise<string[]> {
  const database = openDatabase({ databaseUrl: url, dataDir: '.', poolSize: 1 });
  try {
    try {
      await database.ping();
    } catch (err) {
      throw unreachable(target, err);
    }
    const status = await schemaStatus(database);
    if (status.newer.length > 0) {
      throw errors.refused('schema_mismatch', `${target} was migrated by a newer release (${status.newer.join(', ')}); copy with that release`);
    }
    if (status.applied.length > 0) {
      // Checked before migrating, so a database with someone's data is refused untouched.
      const client = await connectTarget(url, target);
      try {
        refuseNonEmpty(await nonEmptyTables(client), target);
      } finally {
        await client.end();
      }
    }
    return await migrateToLatest(database, status);
  } finally {
    await database.close();
  }
}

interface TableCopy {
  rows: number;
  checksum: bigint;
}

async function copyTable(
  source: BetterSqlite3.Database,
  client: pg.Client,
  plan: CopiedTablePlan,
  columns: readonly string[],
  byteaColumns: ReadonlySet<string>,
  options: Required<Pick<CopyOptions, 'batchRows' | 'batchBytes'>> & { tick(done: number): void },
): Promise<TableCopy> {
  const identity = identityColumns(plan, columns);
  const identityIndex = identity.map((c) => columns.indexOf(c));
  const list = columns.map(quote).join(', ');
  const insert = `insert into ${quote(plan.table)} (${list}) select ${list} from json_populate_recordset(null::${quote(plan.table)}, $1::json)`;
  // In key order: the primary key's own index, so SQLite streams the rows without sorting them.
  const rows = source
    .prepare(`select ${list} from ${quote(plan.table)} order by ${plan.key.map(quote).join(', ')}`)
    .raw(true)
    .iterate() as IterableIterator<unknown[]>;

  let checksum = 0n;
  let count = 0;
  let parts: string[] = [];
  let bytes = 0;
  // One batch is written while the next is read: at most two batches are in memory at any time.
  let inFlight: Promise<unknown> | null = null;
  const flush = async () => {
    const body = `[${parts.join(',')}]`;
    parts = [];
    bytes = 0;
    if (inFlight) await inFlight;
    const query = client.query(insert, [body]);
    // Handled when awaited at the next flush; marked now so a failure while the next batch is read is not "unhandled".
    query.catch(() => {});
    inFlight = query;
  };
  for (const values of rows) {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) {
      const value = values[i];
      // bytea's text form; JSON has no bytes.
      row[columns[i]!] = byteaColumns.has(columns[i]!) && value instanceof Uint8Array ? `\\x${Buffer.from(value).toString('hex')}` : value;
    }
    checksum += rowHash(identityIndex.map((i) => values[i]));
    const json = JSON.stringify(row);
    parts.push(json);
    bytes += json.length;
    count++;
    if (parts.length >= options.batchRows || bytes >= options.batchBytes) {
      await flush();
      options.tick(count);
    }
  }
  if (parts.length > 0) await flush();
  if (inFlight) await inFlight;
  return { rows: count, checksum };
}

/**
 * `workspace copy-to-postgres URL` (CONTRACT 12): every row of every table of the embedded database into an
 * empty PostgreSQL database migrated to the same version.
 *
 * The whole copy is one PostgreSQL transaction: a copy that fails or is killed leaves no rows behind (only
 * the empty, migrated schema), so running it again starts over on a database it accepts as empty. The
 * source is held with an exclusive lock throughout (refused while `serve` or `worker` has it open).
 */
export async function copyToPostgres(sourceFile: string, url: string, options: CopyOptions = {}): Promise<CopyReport> {
  const started = performance.now();
  const rssStart = process.memoryUsage().rss;
  const progress = options.progress ?? (() => {});
  const batchRows = options.batchRows ?? 1000;
  const batchBytes = options.batchBytes ?? 1024 * 1024;
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw errors.refused('invalid_target', 'the target must be a PostgreSQL URL: postgres://user:password@host:5432/database');
  }
  const target = redact(url);

  const source = openSqliteExclusive(sourceFile, '`workspace copy-to-postgres`');
  let client: pg.Client | null = null;
  try {
    const status = await statusOver(source);
    if (status.newer.length > 0) {
      throw errors.refused('schema_mismatch', `the embedded database was migrated by a newer release (${status.newer.join(', ')}); copy with that release`);
    }
    const migratedSource = await migrateOver(source, status);
    if (migratedSource.length) progress(`migrated the embedded database: ${migratedSource.join(', ')}`);
    const migratedTarget = await migrateTarget(url, target);
    if (migratedTarget.length) progress(`migrated ${target}: ${migratedTarget.length} migration(s)`);

    client = await connectTarget(url, target);
    await client.query('begin');
    await client.query('select pg_advisory_xact_lock($1)', [COPY_LOCK]);
    refuseNonEmpty(await nonEmptyTables(client), target);

    const tables: CopiedTableReport[] = [];
    for (const plan of COPIED_TABLES) {
      const tableStarted = performance.now();
      const columns = sourceColumns(source, plan.table);
      const targetTypes = await targetColumns(client, plan.table);
      const missing = columns.filter((c) => !targetTypes.has(c));
      const extra = [...targetTypes.keys()].filter((c) => !columns.includes(c));
      if (columns.length === 0 || missing.length || extra.length) {
        throw errors.refused(
          'schema_mismatch',
          `${plan.table} differs between the two databases (only in the embedded one: ${missing.join(', ') || 'none'}; only in PostgreSQL: ${extra.join(', ') || 'none'})`,
        );
      }
      const byteaColumns = new Set(columns.filter((c) => targetTypes.get(c) === 'bytea'));
      const total = source.prepare(`select count(*) from ${quote(plan.table)}`).pluck().get() as number;
      let lastTick = performance.now();
      const copied = await copyTable(source, client, plan, columns, byteaColumns, {
        batchRows,
        batchBytes,
        tick(done) {
          if (performance.now() - lastTick < 5000) return;
          lastTick = performance.now();
          progress(`  ${plan.table}: ${done.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} rows`);
        },
      });
      if (plan.sequence) {
        // New rows follow the copied ones: `seq` orders every list and keys every cursor.
        await client.query(
          `select setval(pg_get_serial_sequence($1, 'seq'), coalesce(max(seq), 0) + 1, false) from ${quote(plan.table)}`,
          [plan.table],
        );
      }
      const { rows: check } = await client.query<{ rows: number; checksum: string }>(targetChecksumSql(plan.table, identityColumns(plan, columns)));
      const targetRows = Number(check[0]!.rows);
      const sourceChecksum = copied.checksum.toString();
      if (copied.rows !== total || targetRows !== total || check[0]!.checksum !== sourceChecksum) {
        throw new Error(
          `verification failed for ${plan.table}: ${total} rows in the embedded database, ${copied.rows} read, ${targetRows} in PostgreSQL ` +
            `(checksums ${sourceChecksum} and ${check[0]!.checksum}); nothing was kept`,
        );
      }
      const seconds = Math.round(performance.now() - tableStarted) / 1000;
      tables.push({ table: plan.table, rows: total, seconds, checksum: sourceChecksum });
      progress(`  ${plan.table}: ${total.toLocaleString('en-US')} rows in ${seconds.toFixed(1)} s, verified`);
    }
    await client.query('commit');

    const rows = tables.reduce((sum, t) => sum + t.rows, 0);
    const seconds = Math.round(performance.now() - started) / 1000;
    return {
      source: sourceFile,
      target,
      migrated_source: migratedSource,
      migrated_target: migratedTarget,
      tables,
      rows,
      seconds,
      rows_per_second: seconds > 0 ? Math.round(rows / seconds) : rows,
      verified: true,
      memory: { rss_start_bytes: rssStart, peak_rss_bytes: process.resourceUsage().maxRSS * 1024 },
    };
  } finally {
    // Without a commit, ending the connection rolls the transaction back: nothing half-copied stays.
    await client?.end().catch(() => {});
    source.close();
  }
}
