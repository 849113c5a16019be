import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { seqColumn } from './helpers.js';

/**
 * Account security (issue 32, DASHBOARD 11). Second factors live beside the user, never in `users`: an
 * authenticator app's secret (sealed like webhook secrets, CONTRACT 12) with the last time step it accepted
 * (a code is good once), recovery codes as hashes, and passkeys (public keys and their signature counters).
 * A sign-in that still owes its second factor is a session at the `two_step` stage, which opens no page but
 * the two-step one; `method` says how a session signed in, `confirmed_at` when it last proved it was its
 * user (sign-in or "Confirm it's you"). WebAuthn challenges are single use and short-lived, kept by their
 * value. Columns with defaults and new tables: release N-1 reads and writes the same rows.
 */
export function accountSecurityMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('sessions').addColumn('stage', 'text', (c) => c.notNull().defaultTo('active')).execute();
      await db.schema.alterTable('sessions').addColumn('method', 'text', (c) => c.notNull().defaultTo('password')).execute();
      await db.schema.alterTable('sessions').addColumn('confirmed_at', 'bigint').execute();
      await db.schema.alterTable('sessions').addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('organizations').addColumn('two_step_required_at', 'bigint').execute();

      await db.schema
        .createTable('totp_factors')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().unique().references('users.id').onDelete('cascade'))
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('last_step', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        // Null while being set up: the secret is shown, the first code has not been given yet.
        .addColumn('enabled_at', 'bigint')
        .execute();
      await db.schema.createIndex('totp_factors_org_idx').on('totp_factors').column('org_id').execute();

      await db.schema
        .createTable('recovery_codes')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .execute();
      await db.schema.createIndex('recovery_codes_user_idx').on('recovery_codes').columns(['user_id', 'code_hash']).execute();
      await db.schema.createIndex('recovery_codes_org_idx').on('recovery_codes').column('org_id').execute();

      await db.schema
        .createTable('passkeys')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('credential_id', 'text', (c) => c.notNull().unique())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('counter', 'bigint', (c) => c.notNull())
        .addColumn('transports', 'text')
        .addColumn('device_type', 'text', (c) => c.notNull())
        .addColumn('backed_up', 'integer', (c) => c.notNull())
        .addColumn('aaguid', 'text')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema.createIndex('passkeys_user_idx').on('passkeys').columns(['org_id', 'user_id']).execute();

      await db.schema
        .createTable('webauthn_challenges')
        .addColumn('challenge', 'text', (c) => c.primaryKey())
        .addColumn('purpose', 'text', (c) => c.notNull())
        // What the browser that asked holds (the session's or the sign-in page's secret), hashed.
        .addColumn('binding', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text')
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webauthn_challenges_expires_idx').on('webauthn_challenges').column('expires_at').execute();
    },
  };
}
