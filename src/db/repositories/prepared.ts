import { CompiledQuery, type Compilable } from 'kysely';
import type { SqlDialect } from '../dialect.js';
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

export function prepared<A extends unknown[], R>(arity: A['length'], build: (db: Executor, ...args: A) => Compilable<R>): PreparedQuery<A, R> {
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
      byDialect.set(ctx.dialect, entry);
    }
    return entry;
  }

  async function all(ctx: RepoContext, ...args: A): Promise<R[]> {
    const { sql, slots, constants } = compiled(ctx);
    const parameters = slots.map((slot, i) => (slot >= 0 ? args[slot] : constants[i]));
    const direct = ctx.direct;
    if (direct && !ctx.db.isTransaction) {
      const rows = direct.read(sql, parameters);
      if (rows) return rows as R[];
    }
    const result = await ctx.db.executeQuery<R>(CompiledQuery.raw(sql, parameters));
    return result.rows as R[];
  }

  return {
    all,
    async first(ctx, ...args) {
      const rows = await all(ctx, ...args);
      return rows[0];
    },
  };
}
