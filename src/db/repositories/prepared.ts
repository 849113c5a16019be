import { CompiledQuery, type Compilable } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { poolOf, queryPrepared, registerPreparedStatement } from '../pg-prepared.js';
import type { Executor, RepoContext } from './executor.js';

/**
 * Hot-path queries, built and compiled by Kysely once per dialect instead of on every call (building
 * and compiling cost more than SQLite's own work for a one-row lookup). The builder runs with sentinel
 * values in place of the arguments; each compiled parameter is then either an argument slot or a
 * constant of the query. Only values may vary between calls: the shape of the query must not depend on
 * the arguments (write one prepared query per shape).
 *
 * On SQLite, a read outside any transaction runs synchronously on a second, read-only connection
 * (database.ts). In WAL mode it sees exactly the committed data, so it neither queues behind a write
 * transaction on the main connection nor sees that transaction's uncommitted rows. Writes, and
 * everything inside a transaction (repositories bound to `trx`), run through Kysely as before.
 *
 * On PostgreSQL every compiled text is registered as a named prepared statement (pg-prepared.ts): each
 * pooled connection parses and plans it once, inside transactions too. Outside a transaction the query
 * goes straight to `pool.query` (the pool's own checkout), not through Kysely's connection provider.
 * Only registered texts are named: one per `prepared` call and dialect, a fixed set.
 */
export interface PreparedQuery<A extends unknown[], R> {
  all(ctx: RepoContext, ...args: A): Promise<R[]>;
  first(ctx: RepoContext, ...args: A): Promise<R | undefined>;
}

const SENTINEL = '\u0000prepared-arg:';

interface Compiled {
  sql: string;
  /** For each parameter: the argument index, or -1 for a constant of the query. */
  slots: number[];
  constants: unknown[];
}

export interface PreparedOptions {
  /**
   * PostgreSQL: the statement returns no rows and callers read nothing of its result, so inside a
   * transaction it may travel with the transaction's next statement (pg-prepared.ts). An error then
   * fails that next statement, or the commit, instead: the transaction is lost either way.
   */
  deferrable?: boolean;
}

export function prepared<A extends unknown[], R>(
  arity: A['length'],
  build: (db: Executor, ...args: A) => Compilable<R>,
  options: PreparedOptions = {},
): PreparedQuery<A, R> {
  const byDialect = new Map<SqlDialect, Compiled>();

  function compiled(ctx: RepoContext): Compiled {
    let entry = byDialect.get(ctx.dialect);
    if (!entry) {
      const sentinels = Array.from({ length: arity }, (_, i) => `${SENTINEL}${i}`) as unknown as A;
      const query = build(ctx.db, ...sentinels).compile();
      const slots = query.parameters.map((p) => (typeof p === 'string' && p.startsWith(SENTINEL) ? Number(p.slice(SENTINEL.length)) : -1));
      for (let i = 0; i < arity; i++) {
        if (!slots.includes(i)) throw new Error(`prepared query does not use argument ${i}: ${query.sql}`);
      }
      entry = { sql: query.sql, slots, constants: [...query.parameters] };
      if (ctx.dialect === 'postgres') registerPreparedStatement(query.sql, options);
      byDialect.set(ctx.dialect, entry);
    }
    return entry;
  }

  /** The rows at once from SQLite's read connection, or undefined where the query takes the other path. */
  function readNow(ctx: RepoContext, sql: string, parameters: unknown[]): R[] | undefined {
    return ctx.db.isTransaction ? undefined : (ctx.direct?.read(sql, parameters) as R[] | undefined);
  }

  async function viaDatabase(ctx: RepoContext, sql: string, parameters: unknown[]): Promise<R[]> {
    if (!ctx.db.isTransaction) {
      const pool = poolOf(ctx.db);
      if (pool) return queryPrepared<R>(pool, sql, parameters);
    }
    const result = await ctx.db.executeQuery<R>(CompiledQuery.raw(sql, parameters));
    return result.rows as R[];
  }

  function parametersOf(ctx: RepoContext, args: A): { sql: string; parameters: unknown[] } {
    const { sql, slots, constants } = compiled(ctx);
    return { sql, parameters: slots.map((slot, i) => (slot >= 0 ? args[slot] : constants[i])) };
  }

  // Not async: a read answered at once on SQLite (every read by id) costs one settled promise, not a chain.
  function all(ctx: RepoContext, ...args: A): Promise<R[]> {
    const { sql, parameters } = parametersOf(ctx, args);
    const rows = readNow(ctx, sql, parameters);
    return rows ? Promise.resolve(rows) : viaDatabase(ctx, sql, parameters);
  }

  return {
    all,
    first(ctx, ...args) {
      const { sql, parameters } = parametersOf(ctx, args);
      const rows = readNow(ctx, sql, parameters);
      return rows ? Promise.resolve(rows[0]) : viaDatabase(ctx, sql, parameters).then((found) => found[0]);
    },
  };
}

/**
 * A list read whose text depends on which filters are given (one of a small fixed set of shapes): compiled
 * on each call, then run the way `prepared` runs its queries, on SQLite's read connection outside a
 * transaction, and as a named prepared statement on PostgreSQL (each shape is one registered text).
 */
export function readQuery<R>(ctx: RepoContext, query: Compilable<R>): Promise<R[]> {
  const { sql, parameters } = query.compile();
  if (!ctx.db.isTransaction) {
    const rows = ctx.direct?.read(sql, parameters as unknown[]);
    if (rows) return Promise.resolve(rows as R[]);
    if (ctx.dialect === 'postgres') {
      registerPreparedStatement(sql);
      const pool = poolOf(ctx.db);
      if (pool) return queryPrepared<R>(pool, sql, parameters as unknown[]);
    }
  }
  return ctx.db.executeQuery<R>(CompiledQuery.raw(sql, parameters as unknown[])).then((result) => result.rows as R[]);
}
