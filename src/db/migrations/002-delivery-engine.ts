import type { Kysely, Migration } from 'kysely';

/**
 * The delivery engine's additions: a replay marker (a replayed attempt runs outside the automatic
 * schedule, so the worker must know which kind it is claiming), and indexes for the worker's queue scan
 * and the per-subscription history views.
 */
export function deliveryEngineMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('deliveries').addColumn('replay_requested_at', 'bigint').execute();
      // Covers the claim scan (due, unleased, subscription not saturated) without touching the table.
      await db.schema
        .createIndex('deliveries_queue_idx')
        .on('deliveries')
        .columns(['status', 'next_attempt_at', 'webhook_id', 'lease_expires_at'])
        .execute();
      await db.schema
        .createIndex('deliveries_org_webhook_status_seq_idx')
        .on('deliveries')
        .columns(['org_id', 'webhook_id', 'status', 'seq'])
        .execute();
      // Pruning walks finished deliveries by age.
      await db.schema.createIndex('deliveries_status_updated_idx').on('deliveries').columns(['status', 'updated_at']).execute();
    },
  };
}
