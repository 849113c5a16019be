import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import pg from 'pg';

/**
 * Named prepared statements for the hot queries on PostgreSQL, and fewer round trips per transaction.
 *
 * Kysely's PostgresDialect sends every statement unnamed (`client.query(sql, params)`), which PostgreSQL
 * parses, analyses and plans on every call. The SQL texts that prepared.ts compiles once are registered
 * here and get a stable name (a hash of the text); every pooled client is patched so that a registered
 * text runs as `{ name, text, values }`. pg parses a named statement once per connection and then only
 * binds and executes it, inside transactions too (the client is the same). A new connection (reconnect,
 * pool growth) prepares again on first use; pg only marks a name parsed on ParseComplete, so a failed
 * parse is retried. statement_timeout applies to each execution as before (the extended protocol times
 * each Execute). Only registered texts are named, and registration is capped, so a connection holds a
 * fixed, small set of statements whatever the workload; everything else stays unnamed.
 *
 * Round trips: inside a transaction nothing needs `BEGIN`'s answer, nor the answer of a registered
 * *deferrable* statement (an insert whose result nobody reads: the audit row). So on a client that
 * has both already prepared, Kysely's `begin` is held back and sent in the same network write as the
 * transaction's first statement, and a deferrable insert in the same write as the next statement (most
 * often `commit`): Bind/Execute messages in front of that statement's own, one Sync, one answer. The
 * server runs them in order exactly as if sent one by one; an error in a held-back statement fails the
 * statement it travels with (the transaction is lost either way), and a rollback drops what was held.
 * A create with its outbox event and audit row is then three round trips: begin + insert, the event
 * with its fan-out (events-repo.ts), audit + commit.
 *
 * Two server answers mean a name is no longer usable, and are repaired for the next call:
 * - 0A000 "cached plan must not change result type" (a column changed type under a running process):
 *   the text gets a new name, which every connection prepares afresh. Hot queries list their columns, so
 *   adding a column does not trigger it.
 * - 26000 (no such statement) / 42P05 (already exists): a pooler in transaction mode that does not track
 *   prepared statements (PgBouncer before 1.21, or `max_prepared_statements = 0`) moved the session to
 *   another server connection. Named statements are then switched off for the process.
 * The failing call itself fails (inside a transaction nothing else is possible); prepared.ts retries it
 * once when it ran outside a transaction (`queryPrepared`).
 */

interface Statement {
  readonly base: string;
  readonly deferrable: boolean;
  name: string;
  generation: number;
}

/** Far above the hot set (about 30 statements per dialect): a defect cannot make names grow without bound. */
const MAX_STATEMENTS = 200;

const statements = new Map<string, Statement>();
let enabled = true;

const nameOf = (sql: string) => `ws_${createHash('sha256').update(sql).digest('hex').slice(0, 16)}`;

// Kysely's transaction control texts (PostgresDriver), run as named statements so that they can be
// pipelined as Bind/Execute alone.
const BEGIN = 'begin';
const COMMIT = 'commit';
const ROLLBACK = 'rollback';
const BEGIN_NAME = nameOf(BEGIN);
const COMMIT_NAME = nameOf(COMMIT);

export interface RegisterOptions {
  /**
   * The statement returns no rows and its caller reads nothing of its result (not even a row count):
   * inside a transaction it may be sent together with the transaction's next statement.
   */
  deferrable?: boolean;
}

/** Names `sql` if there is room; prepared.ts calls this once per compiled hot query. */
export function registerPreparedStatement(sql: string, options: RegisterOptions = {}): void {
  if (statements.has(sql) || statements.size >= MAX_STATEMENTS) return;
  const base = nameOf(sql);
  statements.set(sql, { base, name: base, generation: 0, deferrable: options.deferrable === true });
}

/** The name a registered text runs under, or undefined when it runs unnamed (diagnostics, tests). */
export function preparedStatementName(sql: string): string | undefined {
  return enabled ? statements.get(sql)?.name : undefined;
}

/** False after a pooler without prepared-statement support was detected (tests, diagnostics). */
export function preparedStatementsEnabled(): boolean {
  return enabled;
}

type Staleness = 'result-type' | 'no-pooler-support' | null;

function staleness(err: unknown): Staleness {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  // 0A000 is "feature not supported" in general: only this message is about a cached statement.
  if (code === '0A000' && typeof message === 'string' && message.includes('cached plan must not change result type')) return 'result-type';
  if (code === '26000' || code === '42P05') return 'no-pooler-support';
  return null;
}

/** True for the errors after which a registered statement is renamed or names are switched off. */
export function isStalePreparedStatement(err: unknown): boolean {
  return staleness(err) !== null;
}

function repair(statement: Statement | undefined, err: unknown): void {
  const kind = staleness(err);
  if (kind === 'result-type' && statement) {
    statement.generation++;
    statement.name = `${statement.base}_${statement.generation}`;
  } else if (kind === 'no-pooler-support') {
    enabled = false;
  }
}

// ---------------------------------------------------------------- pipelining

/** The parts of pg's Connection and Query that pipelining uses (the same ones pg-cursor uses). */
interface PgConnection {
  parsedStatements: Record<string, string>;
  stream: { cork?(): void; uncork?(): void };
  bind(config: { portal: string; statement: string; values: unknown[]; valueMapper: (value: unknown, index: number) => unknown }): void;
  execute(config: { portal: string; rows: number }): void;
}

interface PgQuery {
  prepare(connection: PgConnection): void;
  handleCommandComplete(message: unknown, connection: PgConnection): void;
}

type QueryCallback = (err: Error | null, result?: pg.QueryResult) => void;

interface QueryConfig {
  name?: string;
  text: string;
  values: unknown[];
  callback: QueryCallback;
}

const QueryBase = pg.Query as unknown as new (config: QueryConfig) => PgQuery;
const prepareValue = (pg as unknown as { utils: { prepareValue(value: unknown, seen?: unknown): unknown } }).utils.prepareValue;

/** A statement already prepared on the connection, returning no rows, sent ahead of another. */
interface HeldBack {
  name: string;
  text: string;
  values: unknown[];
}

/**
 * One statement preceded, in the same write, by Bind/Execute of statements held back; one Sync ends
 * them all. The held-back ones answer BindComplete and CommandComplete only (no Parse, no rows), so
 * their CommandCompletes are skipped and the result is the last statement's.
 */
class PipelinedQuery extends QueryBase {
  #ahead: HeldBack[];
  #skip: number;

  constructor(config: QueryConfig, ahead: HeldBack[]) {
    super(config);
    this.#ahead = ahead;
    this.#skip = ahead.length;
  }

  submit(connection: PgConnection): null {
    connection.stream.cork?.();
    try {
      for (const held of this.#ahead) {
        connection.bind({ portal: '', statement: held.name, values: held.values, valueMapper: prepareValue });
        connection.execute({ portal: '', rows: 0 });
      }
      // The statement itself, always in the extended protocol: Parse when needed, Bind, Describe, Execute, Sync.
      this.prepare(connection);
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  override handleCommandComplete(message: unknown, connection: PgConnection): void {
    if (this.#skip > 0) {
      this.#skip--;
      return;
    }
    super.handleCommandComplete(message, connection);
  }
}

interface ClientState {
  inTransaction: boolean;
  /** `begin` not sent yet: it goes ahead of the transaction's first statement. */
  beginHeld: boolean;
  held: HeldBack[];
}

const clientStates = new WeakMap<object, ClientState>();

function emptyResult(command: string): pg.QueryResult {
  return { command, rowCount: null, oid: 0, rows: [], fields: [] };
}

type AnyQuery = (this: pg.ClientBase, ...args: unknown[]) => unknown;

function patchClient(client: pg.ClientBase): void {
  const original = client.query as unknown as AnyQuery;
  const state: ClientState = { inTransaction: false, beginHeld: false, held: [] };
  clientStates.set(client, state);
  const connection = (client as unknown as { connection: PgConnection }).connection;
  const isParsed = (name: string, text: string) => connection.parsedStatements[name] === text;

  function answer(callback: QueryCallback | undefined, result: pg.QueryResult): unknown {
    if (callback) {
      process.nextTick(callback, null, result);
      return undefined;
    }
    return Promise.resolve(result);
  }

  function takeAhead(): HeldBack[] {
    const ahead = state.beginHeld ? [{ name: BEGIN_NAME, text: BEGIN, values: [] }, ...state.held] : state.held;
    state.beginHeld = false;
    state.held = [];
    return ahead;
  }

  function send(self: pg.ClientBase, config: Omit<QueryConfig, 'callback'>, ahead: HeldBack[], callback: QueryCallback | undefined, statement?: Statement): unknown {
    let done = callback;
    const promise = callback ? undefined : new Promise<pg.QueryResult>((resolve, reject) => (done = (err, result) => (err ? reject(err) : resolve(result!))));
    const onResult: QueryCallback = (err, result) => {
      if (err) repair(statement, err);
      done!(err, result);
    };
    original.call(self, ahead.length > 0 ? new PipelinedQuery({ ...config, callback: onResult }, ahead) : { ...config, callback: onResult });
    return promise;
  }

  /** Sends what was held back on its own (before a cursor or stream, which cannot carry it). */
  function flushHeld(self: pg.ClientBase): void {
    const ahead = takeAhead();
    const last = ahead.pop();
    // A failure aborts the transaction, so the statement that follows fails too and the caller rolls back.
    if (last) send(self, { name: last.name, text: last.text, values: last.values }, ahead, () => {});
  }

  const patched: AnyQuery = function (this: pg.ClientBase, ...args: unknown[]) {
    const [text] = args;
    if (typeof text !== 'string') {
      if (state.beginHeld || state.held.length > 0) flushHeld(this);
      return original.apply(this, args);
    }
    let values = args[1];
    let callback = args[2] as QueryCallback | undefined;
    if (typeof values === 'function') {
      callback = values as QueryCallback;
      values = undefined;
    }
    const params = (values ?? []) as unknown[];
    // A transaction begun here carries on here even if names were switched off meanwhile.
    if (!enabled && !state.inTransaction) return original.apply(this, args);

    if (params.length === 0 && (text === BEGIN || text === COMMIT || text === ROLLBACK)) {
      if (text === BEGIN && !state.inTransaction) {
        state.inTransaction = true;
        if (isParsed(BEGIN_NAME, BEGIN)) {
          state.beginHeld = true;
          return answer(callback, emptyResult('BEGIN'));
        }
        return send(this, { name: BEGIN_NAME, text, values: params }, [], callback);
      }
      if (text !== BEGIN && state.inTransaction) {
        const nothingSent = state.beginHeld;
        const ahead = takeAhead();
        state.inTransaction = false;
        // Nothing reached the server: there is nothing to end. A rollback drops what was held back.
        if (nothingSent && (text === ROLLBACK || ahead.length === 1)) return answer(callback, emptyResult(text.toUpperCase()));
        if (text === ROLLBACK) return send(this, { text, values: params }, [], callback);
        return send(this, { name: COMMIT_NAME, text, values: params }, ahead, callback);
      }
    }

    const statement = enabled ? statements.get(text) : undefined;
    if (statement?.deferrable && state.inTransaction && isParsed(statement.name, text)) {
      state.held.push({ name: statement.name, text, values: params });
      return answer(callback, emptyResult(''));
    }
    const config = statement ? { name: statement.name, text, values: params } : { text, values: params };
    return send(this, config, takeAhead(), callback, statement);
  };
  client.query = patched as unknown as typeof client.query;
}

function resetClient(client: object): void {
  const state = clientStates.get(client);
  if (!state) return;
  state.inTransaction = false;
  state.beginHeld = false;
  state.held = [];
}

// ---------------------------------------------------------------- wiring

const pools = new WeakMap<object, pg.Pool>();

/**
 * Turns named statements and pipelining on for every client `pool` creates, and remembers the pool
 * behind `db` so that prepared.ts can run hot queries outside transactions on `pool.query`.
 */
export function withPreparedStatements<D>(pool: pg.Pool, db: Kysely<D>): Kysely<D> {
  pool.on('connect', patchClient);
  // A client goes back to the pool after commit or rollback; anything else (an error) leaves no state behind.
  pool.on('release', (_err: Error | undefined, client: pg.PoolClient) => resetClient(client));
  pools.set(db, pool);
  return db;
}

/** The pool behind a root (non-transaction) Kysely instance opened with `withPreparedStatements`. */
export function poolOf(db: object): pg.Pool | undefined {
  return pools.get(db);
}

/** Runs a registered statement on the pool (no explicit checkout), retrying once after a stale name. */
export async function queryPrepared<R>(pool: pg.Pool, sql: string, parameters: unknown[]): Promise<R[]> {
  try {
    return (await pool.query(sql, parameters)).rows as R[];
  } catch (err) {
    if (!isStalePreparedStatement(err)) throw err;
    return (await pool.query(sql, parameters)).rows as R[];
  }
}
