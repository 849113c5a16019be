import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { seqColumn } from './helpers.js';

/**
 * The dashboard's accounts and the audit log: browser sessions, single-use password and sign-in-choice
 * tokens (stored hashed, like every credential), the audit log, and when each API key was last used.
 */
export function accountsAuditMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('sessions')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('ip', 'text')
        .addColumn('user_agent', 'text')
        .execute();
      await db.schema.createIndex('sessions_org_user_idx').on('sessions').columns(['org_id', 'user_id']).execute();
      await db.schema.createIndex('sessions_expires_idx').on('sessions').column('expires_at').execute();

      // purpose: 'setup' (first password, 72 h), 'reset' (forgot password, 1 h), 'choice' (a password that
      // matched several organisations: one row per candidate user under one token, a few minutes).
      await db.schema
        .createTable('auth_tokens')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('purpose', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .execute();
      await db.schema.createIndex('auth_tokens_hash_idx').on('auth_tokens').column('token_hash').execute();
      await db.schema.createIndex('auth_tokens_user_idx').on('auth_tokens').columns(['org_id', 'user_id', 'purpose']).execute();

      await db.schema
        .createTable('audit_log')
        .addColumn('seq', ...seqColumn(dialect))
        // No unique index: ids are 124 random bits and nothing looks a row up by id, while a unique index on
        // random text is the costliest part of the insert every change makes (docs/benchmarks.md).
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('occurred_at', 'bigint', (c) => c.notNull())
        .addColumn('actor_type', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text')
        .addColumn('actor_label', 'text')
        .addColumn('api_key_id', 'text')
        .addColumn('session_id', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target_type', 'text')
        .addColumn('target_id', 'text')
        .addColumn('target_label', 'text')
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('ip', 'text')
        .addColumn('user_agent', 'text')
        .addColumn('request_id', 'text')
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('changes', 'text')
        .execute();
      await db.schema.createIndex('audit_log_org_seq_idx').on('audit_log').columns(['org_id', 'seq']).execute();
      await db.schema.createIndex('audit_log_occurred_idx').on('audit_log').column('occurred_at').execute();

      await db.schema.alterTable('api_keys').addColumn('last_used_at', 'bigint').execute();
    },
  };
}
