import { sql, type Kysely, type Migration } from 'kysely';

const HOUR_MS = 3_600_000;

/**
 * The dashboard's delivery history (DASHBOARD 6) at any size of history:
 * - `deliveries_history_idx` (org_id, webhook_id, created_at, seq) replaces (org_id, webhook_id, seq): the
 *   history is paged newest first by (created_at, seq), and a time range is a range of the same index.
 * - `deliveries_failed_idx` and `deliveries_cancelled_idx`, partial on one status each: the "Failed" and
 *   "Cancelled" filters and the bulk replay's count read only those rows. Rows enter them once, when they fail
 *   for good or are cancelled, so the queue's writes never touch them.
 * - `delivery_hourly`: attempts per subscription and UTC hour by outcome, added to in the same transaction
 *   that records the attempts. The health charts read at most 24 rows per subscription instead of counting
 *   attempts, so the (org_id, started_at, outcome) index on every attempt insert (004) is dropped.
 * - `replay_jobs` and their items: a bulk replay is a job whose set of deliveries is fixed when it is asked
 *   for, so its count is exactly what it replays, and progress is read from the items.
 */
export function deliveryHistoryMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('deliveries_history_idx').on('deliveries').columns(['org_id', 'webhook_id', 'created_at', 'seq']).execute();
      await db.schema.dropIndex('deliveries_org_webhook_seq_idx').execute();
      await sql`CREATE INDEX deliveries_failed_idx ON deliveries (org_id, webhook_id, created_at, seq) WHERE status = 'failed'`.execute(db);
      await sql`CREATE INDEX deliveries_cancelled_idx ON deliveries (org_id, webhook_id, created_at, seq) WHERE status = 'cancelled'`.execute(db);

      await db.schema
        .createTable('delivery_hourly')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('webhook_id', 'text', (c) => c.notNull())
        // Epoch hour: started_at integer-divided by 3,600,000.
        .addColumn('hour', 'bigint', (c) => c.notNull())
        .addColumn('delivered', 'bigint', (c) => c.notNull())
        .addColumn('failed', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('delivery_hourly_pk', ['org_id', 'webhook_id', 'hour'])
        .execute();
      // What the history already holds, so the charts read the same after the upgrade as before it.
      await sql`
        INSERT INTO delivery_hourly (org_id, webhook_id, hour, delivered, failed)
        SELECT a.org_id, d.webhook_id, a.started_at / ${sql.lit(HOUR_MS)},
               SUM(CASE WHEN a.outcome = 'success' THEN 1 ELSE 0 END),
               SUM(CASE WHEN a.outcome = 'success' THEN 0 ELSE 1 END)
        FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
        GROUP BY a.org_id, d.webhook_id, a.started_at / ${sql.lit(HOUR_MS)}
      `.execute(db);
      await db.schema.dropIndex('delivery_attempts_org_started_idx').ifExists().execute();

      await db.schema
        .createTable('replay_jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('webhook_id', 'text', (c) => c.notNull())
        .addColumn('since', 'bigint', (c) => c.notNull())
        // 'running' while items wait, then 'done'.
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('total', 'integer', (c) => c.notNull())
        .addColumn('queued', 'integer', (c) => c.notNull())
        .addColumn('skipped', 'integer', (c) => c.notNull())
        // More failed deliveries matched than one job takes (the bound); a second request takes the next ones.
        .addColumn('more', 'integer', (c) => c.notNull())
        .addColumn('requested_by', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('finished_at', 'bigint')
        .execute();
      await db.schema.createIndex('replay_jobs_webhook_idx').on('replay_jobs').columns(['org_id', 'webhook_id', 'created_at']).execute();
      await db.schema.createIndex('replay_jobs_running_idx').on('replay_jobs').columns(['status', 'created_at']).execute();
      await db.schema
        .createTable('replay_job_items')
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('delivery_id', 'text', (c) => c.notNull())
        // 'waiting', then 'queued' (sent again) or 'skipped' (no longer failed when its turn came).
        .addColumn('state', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('replay_job_items_pk', ['job_id', 'delivery_id'])
        .execute();
    },
  };
}
