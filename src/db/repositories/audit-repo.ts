import { sql, type Expression, type SqlBool } from 'kysely';
import type { AuditLogRow } from '../schema.js';
import { toPage, type Page, type RepoContext } from './executor.js';
import { prepared } from './prepared.js';

const AUDIT_COLUMNS = [
  'id', 'org_id', 'occurred_at', 'actor_type', 'actor_id', 'actor_label', 'api_key_id', 'session_id', 'action', 'target_type',
  'target_id', 'target_label', 'source', 'ip', 'user_agent', 'request_id', 'outcome', 'changes',
] as const satisfies readonly (keyof Omit<AuditLogRow, 'seq'>)[];

// Every change writes one, on the API's write path: compiled once (prepared.ts), not built per call.
// Nothing reads its result, so on PostgreSQL it travels with the transaction's next statement, usually
// the commit (deferrable: pg-prepared.ts): one round trip less per change.
const insertAuditRow = prepared(
  AUDIT_COLUMNS.length,
  (db, ...values: unknown[]) =>
    db.insertInto('audit_log').values(Object.fromEntries(AUDIT_COLUMNS.map((column, i) => [column, values[i]])) as Omit<AuditLogRow, 'seq'>),
  { deferrable: true },
);

export interface AuditFilter {
  /** A prefix of the action (CONTRACT 13): `project` or `project.` every project action, `project.created` that one. */
  action?: string | undefined;
  /** An actor id (`user_...`), or `cli` / `system`, or part of the actor's label. */
  actor?: string | undefined;
  /** A target id, or part of the target's label. */
  target?: string | undefined;
  from?: number | undefined;
  /** Exclusive. */
  to?: number | undefined;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

/** Case-insensitive LIKE with an explicit escape character: the dialects differ on both by default. */
function likeText(column: 'action' | 'actor_label' | 'target_label', pattern: string): Expression<SqlBool> {
  return sql<SqlBool>`lower(${sql.ref(column)}) like ${pattern.toLowerCase()} escape '\\'`;
}

export function auditRepository(ctx: RepoContext) {
  const { db } = ctx;
  function filtered(orgId: string, filter: AuditFilter) {
    let query = db.selectFrom('audit_log').selectAll().where('org_id', '=', orgId);
    if (filter.action) query = query.where(likeText('action', `${escapeLike(filter.action)}%`));
    if (filter.actor) {
      const actor = filter.actor;
      query = query.where((eb) =>
        eb.or([eb('actor_id', '=', actor), eb('actor_type', '=', actor as never), likeText('actor_label', `%${escapeLike(actor)}%`)]),
      );
    }
    if (filter.target) {
      const target = filter.target;
      query = query.where((eb) => eb.or([eb('target_id', '=', target), likeText('target_label', `%${escapeLike(target)}%`)]));
    }
    if (filter.from !== undefined) query = query.where('occurred_at', '>=', filter.from);
    if (filter.to !== undefined) query = query.where('occurred_at', '<', filter.to);
    return query;
  }

  return {
    async insert(row: Omit<AuditLogRow, 'seq'>): Promise<void> {
      await insertAuditRow.all(ctx, ...AUDIT_COLUMNS.map((column) => row[column]));
    },

    /** Newest first, keyset by seq. */
    async list(orgId: string, filter: AuditFilter, limit: number, beforeSeq: number | null): Promise<Page<AuditLogRow>> {
      let query = filtered(orgId, filter);
      if (beforeSeq !== null) query = query.where('seq', '<', beforeSeq);
      const rows = await query.orderBy('seq', 'desc').limit(limit + 1).execute();
      return toPage(rows, limit);
    },

    /** Every row of the filter, newest first, in batches: memory stays flat however many rows match. */
    async *stream(orgId: string, filter: AuditFilter, batchSize = 500): AsyncGenerator<AuditLogRow> {
      let before: number | null = null;
      for (;;) {
        let query = filtered(orgId, filter);
        if (before !== null) query = query.where('seq', '<', before);
        const rows = await query.orderBy('seq', 'desc').limit(batchSize).execute();
        yield* rows;
        if (rows.length < batchSize) return;
        before = rows[rows.length - 1]!.seq;
      }
    },

    /** Retention: removes up to `batch` rows older than `cutoff` across organisations; returns how many. */
    async pruneOlderThan(cutoff: number, batch: number): Promise<number> {
      const doomed = db.selectFrom('audit_log').select('seq').where('occurred_at', '<', cutoff).orderBy('seq').limit(batch);
      const result = await db.deleteFrom('audit_log').where('seq', 'in', doomed).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
