import type { Kysely, Migration } from 'kysely';

/**
 * Webhook health counted in deliveries (issue 46, review 5 OV2): the overview's figure counts the
 * organisation's deliveries of the last 24 hours by their status, read from this index alone (it holds every
 * column the count reads), so the count walks a day of index entries, never the organisation's history. A
 * subscription's own count uses `deliveries_history_idx`. Additive: release N-1 ignores it.
 */
export function deliveryOutcomesMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('deliveries_org_created_idx').on('deliveries').columns(['org_id', 'created_at', 'webhook_id', 'status', 'test']).execute();
    },
  };
}
