import { sql } from 'kysely';
import type { RepoContext } from './executor.js';

export interface PruneCutoffs {
  deliveredBefore: number;
  failedBefore: number;
  batchSize: number;
}

/** Retention (DELIVERY_RETENTION_*): the janitor's batched prunes of old history, across organisations. */
export function deliveryRetentionRepository(ctx: RepoContext) {
  const { db } = ctx;

  return {
    /** Roll-up hours before `beforeHour`, across organisations. */
    async pruneHourlyAcrossOrgs(beforeHour: number): Promise<number> {
      const result = await db.deleteFrom('delivery_hourly').where('hour', '<', beforeHour).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /**
     * Deletes one batch of expired history across organisations: delivered deliveries finished before
     * `deliveredBefore`, failed and cancelled ones before `failedBefore`, with their attempts. Returns how
     * many deliveries went; the caller repeats while a full batch went.
     */
    async pruneHistoryBatchAcrossOrgs(cutoffs: PruneCutoffs): Promise<number> {
      // One range of deliveries_status_updated_idx per status, each stopping at the batch: an OR of the three
      // makes PostgreSQL build a bitmap of every row due (a million: a second per batch) before it can stop.
      const expired: { id: string }[] = [];
      for (const [status, before] of [
        ['delivered', cutoffs.deliveredBefore],
        ['failed', cutoffs.failedBefore],
        ['cancelled', cutoffs.failedBefore],
      ] as const) {
        const room = cutoffs.batchSize - expired.length;
        if (room <= 0) break;
        expired.push(...(await db.selectFrom('deliveries').select('id').where('status', '=', sql.lit(status)).where('updated_at', '<', before).limit(room).execute()));
      }
      if (expired.length === 0) return 0;
      const ids = expired.map((r) => r.id);
      // Re-checked in the DELETE: a replay may have re-opened one since the SELECT.
      const deleted = await db
        .deleteFrom('deliveries')
        .where('id', 'in', ids)
        .where('status', '!=', 'pending')
        .returning('id')
        .execute();
      if (deleted.length > 0) {
        await db.deleteFrom('delivery_attempts').where('delivery_id', 'in', deleted.map((r) => r.id)).execute();
      }
      return expired.length;
    },

    /** Events older than `before` that no delivery refers to any more (none were due, or all were pruned). */
    async pruneOrphanEventsBatchAcrossOrgs(before: number, batchSize: number): Promise<number> {
      const orphans = await db
        .selectFrom('events as e')
        .select('e.id')
        .where('e.occurred_at', '<', before)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('deliveries as d').select(sql.lit(1).as('one')).whereRef('d.event_id', '=', 'e.id'))))
        .limit(batchSize)
        .execute();
      if (orphans.length === 0) return 0;
      await db.deleteFrom('events').where('id', 'in', orphans.map((r) => r.id)).execute();
      return orphans.length;
    },
  };
}
