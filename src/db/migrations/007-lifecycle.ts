import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { seqColumn } from './helpers.js';

/**
 * The organisation's lifecycle (DASHBOARD 10) and data export (DASHBOARD 9). An organisation is
 * `active`, `read_only` (cancelled, with its deletion date) or `deleting` (the deletion job has begun:
 * its keys and sessions are dead). When the job ends, the row is gone and a tombstone keeps only the id
 * and the dates. Stripe events are remembered by id so a replay applies once. An export's ZIP is stored
 * in the database in chunks, so any instance can serve the download without a shared disk.
 */
export function lifecycleMigration(dialect: SqlDialect): Migration {
  const bytes = dialect === 'postgres' ? 'bytea' : 'blob';
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('organizations').addColumn('state', 'text', (c) => c.notNull().defaultTo('active')).execute();
      await db.schema.alterTable('organizations').addColumn('cancelled_at', 'bigint').execute();
      await db.schema.alterTable('organizations').addColumn('deletion_at', 'bigint').execute();
      await db.schema.alterTable('organizations').addColumn('reminded_7d_at', 'bigint').execute();
      await db.schema.alterTable('organizations').addColumn('reminded_1d_at', 'bigint').execute();
      await db.schema.alterTable('organizations').addColumn('deletion_started_at', 'bigint').execute();
      await db.schema.alterTable('organizations').addColumn('lease_owner', 'text').execute();
      await db.schema.alterTable('organizations').addColumn('lease_expires_at', 'bigint').execute();
      await db.schema.alterTable('organizations').addColumn('stripe_customer_id', 'text').execute();
      await db.schema.alterTable('organizations').addColumn('stripe_subscription_id', 'text').execute();
      await db.schema.alterTable('organizations').addColumn('stripe_event_at', 'bigint').execute();
      // The lifecycle job's queue: only cancelled organisations have a deletion date.
      await sql`CREATE INDEX organizations_deletion_idx ON organizations (deletion_at) WHERE deletion_at IS NOT NULL`.execute(db);
      // The export reads each collection of one organisation in `seq` order (keyset pages).
      await db.schema.createIndex('workflows_org_seq_idx').on('workflows').columns(['org_id', 'seq']).execute();
      await db.schema.createIndex('tasks_org_seq_idx').on('tasks').columns(['org_id', 'seq']).execute();
      await db.schema.createIndex('workflow_runs_org_seq_idx').on('workflow_runs').columns(['org_id', 'seq']).execute();
      await db.schema.createIndex('organizations_stripe_customer_idx').on('organizations').column('stripe_customer_id').execute();

      await db.schema
        .createTable('organization_tombstones')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('cancelled_at', 'bigint')
        .addColumn('deletion_at', 'bigint')
        .addColumn('deleted_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('stripe_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text')
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('created', 'bigint', (c) => c.notNull())
        .addColumn('received_at', 'bigint', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('stripe_events_org_idx').on('stripe_events').column('org_id').execute();

      await db.schema
        .createTable('exports')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('requested_by', 'text')
        .addColumn('requested_by_label', 'text', (c) => c.notNull())
        .addColumn('format_version', 'integer', (c) => c.notNull())
        .addColumn('size_bytes', 'bigint')
        .addColumn('counts', 'text')
        .addColumn('error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('started_at', 'bigint')
        .addColumn('ready_at', 'bigint')
        .addColumn('expires_at', 'bigint')
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('exports_org_idx').on('exports').columns(['org_id', 'seq']).execute();
      await db.schema.createIndex('exports_status_idx').on('exports').columns(['status', 'created_at']).execute();

      await db.schema
        .createTable('export_chunks')
        .addColumn('export_id', 'text', (c) => c.notNull())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('data', bytes, (c) => c.notNull())
        .addPrimaryKeyConstraint('export_chunks_pk', ['export_id', 'position'])
        .execute();
      await db.schema.createIndex('export_chunks_org_idx').on('export_chunks').column('org_id').execute();

      // The schema's ON DELETE CASCADE finds a deleted project's or user's rows by these. Without them each
      // parent row deleted scans the whole child table: an organisation's deletion removes its projects and
      // users a thousand at a time (a batch of 100 projects took 0.7 s against 1M tasks without, 10 ms with).
      await db.schema.createIndex('workflows_project_idx').on('workflows').column('project_id').execute();
      await db.schema.createIndex('tasks_project_idx').on('tasks').column('project_id').execute();
      await db.schema.createIndex('api_keys_user_idx').on('api_keys').column('user_id').execute();
      await db.schema.createIndex('invitations_user_idx').on('invitations').column('user_id').execute();
      await db.schema.createIndex('sessions_user_idx').on('sessions').column('user_id').execute();
      await db.schema.createIndex('auth_tokens_user_id_idx').on('auth_tokens').column('user_id').execute();
    },
  };
}
