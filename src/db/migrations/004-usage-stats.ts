import type { Kysely, Migration } from 'kysely';

/**
 * The dashboard overview's figures: API requests per organisation and UTC day (written by each API
 * process every 30 seconds, adding to what is stored), and the index the webhook health chart reads
 * (an organisation's attempts of the last 24 hours, with their outcome, without touching the table).
 */
export function usageStatsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('request_counts')
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        // The UTC day, 'YYYY-MM-DD': readable in a SQL shell, and ordered as text.
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('count', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('request_counts_pk', ['org_id', 'day'])
        .execute();

      // IF NOT EXISTS: on a large PostgreSQL history an operator may build it beforehand with CREATE INDEX
      // CONCURRENTLY under this name, so the migration does not hold up the worker's writes (docs/decisions.md).
      await db.schema
        .createIndex('delivery_attempts_org_started_idx')
        .ifNotExists()
        .on('delivery_attempts')
        .columns(['org_id', 'started_at', 'outcome'])
        .execute();
    },
  };
}
