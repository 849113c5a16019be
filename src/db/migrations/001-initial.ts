import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { seqColumn } from './helpers.js';

/** The whole initial schema; written with Kysely's schema builder so both dialects run it. */
export function initialMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('organizations')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('users')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('email_normalized', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('users_org_email_uq').on('users').columns(['org_id', 'email_normalized']).unique().execute();
      await db.schema.createIndex('users_org_seq_idx').on('users').columns(['org_id', 'seq']).execute();

      await db.schema
        .createTable('projects')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('projects_org_seq_idx').on('projects').columns(['org_id', 'seq']).execute();
      await db.schema.createIndex('projects_org_status_seq_idx').on('projects').columns(['org_id', 'status', 'seq']).execute();

      await db.schema
        .createTable('workflows')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('workflows_org_project_idx').on('workflows').columns(['org_id', 'project_id']).execute();

      await db.schema
        .createTable('tasks')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('workflow_id', 'text')
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('assignee_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tasks_org_project_idx').on('tasks').columns(['org_id', 'project_id']).execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text')
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('key_prefix', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema.createIndex('api_keys_org_seq_idx').on('api_keys').columns(['org_id', 'seq']).execute();

      await db.schema
        .createTable('invitations')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .execute();
      await db.schema.createIndex('invitations_org_user_idx').on('invitations').columns(['org_id', 'user_id']).execute();

      await db.schema
        .createTable('webhooks')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhooks_org_seq_idx').on('webhooks').columns(['org_id', 'seq']).execute();

      await db.schema
        .createTable('idempotency_keys')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('api_key_id', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('response_status', 'integer')
        .addColumn('response_body', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['api_key_id', 'key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_expires_idx').on('idempotency_keys').column('expires_at').execute();

      await db.schema
        .createTable('events')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('occurred_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('events_org_seq_idx').on('events').columns(['org_id', 'seq']).execute();

      await db.schema
        .createTable('deliveries')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('webhook_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('failure_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'bigint')
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', 'bigint')
        .addColumn('last_status_code', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      // The worker's queue scan: due pending deliveries in time order.
      await db.schema.createIndex('deliveries_due_idx').on('deliveries').columns(['status', 'next_attempt_at']).execute();
      await db.schema.createIndex('deliveries_org_webhook_seq_idx').on('deliveries').columns(['org_id', 'webhook_id', 'seq']).execute();
      await db.schema.createIndex('deliveries_event_idx').on('deliveries').column('event_id').execute();

      await db.schema
        .createTable('delivery_attempts')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('delivery_id', 'text', (c) => c.notNull())
        .addColumn('attempt_number', 'integer', (c) => c.notNull())
        .addColumn('trigger', 'text', (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('request_headers', 'text', (c) => c.notNull())
        .addColumn('response_status', 'integer')
        .addColumn('response_headers', 'text')
        .addColumn('response_body', 'text')
        .addColumn('error', 'text')
        .addColumn('outcome', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('delivery_attempts_delivery_idx').on('delivery_attempts').columns(['delivery_id', 'seq']).execute();
    },
  };
}
