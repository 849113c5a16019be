import type { Kysely, Migration } from 'kysely';

/**
 * The delivery engine's additions: a replay marker (a replayed attempt runs outside the automatic
 * schedule, so the worker must know which kind it is claiming), the worker's queue index, and the index
 * pruning walks. History views use the initial (org_id, webhook_id, seq) index.
 */
export function deliveryEngineMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('deliveries').addColumn('replay_requested_at', 'bigint').execute();
      // Covers the claim scan (due, unleased, subscription not saturated) without touching the table. It
      // replaces the initial (status, next_attempt_at) index: every index on deliveries is paid on each
      // state change of every delivery, so the queue keeps only the indexes it reads.
      await db.schema
        .createIndex('deliveries_queue_idx')
        .on('deliveries')
        .columns(['status', 'next_attempt_at', 'webhook_id', 'lease_expires_at'])
        .execute();
      await db.schema.dropIndex('deliveries_due_idx').execute();
      // Pruning walks finished deliveries by age.
      await db.schema.createIndex('deliveries_status_updated_idx').on('deliveries').columns(['status', 'updated_at']).execute();
    },
  };
}
