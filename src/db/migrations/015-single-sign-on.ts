import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { seqColumn } from './helpers.js';

/**
 * Single sign-on per organisation (issue 33, DASHBOARD 12). One OpenID Connect connection per organisation
 * (its client secret sealed like webhook secrets), the e-mail domains it proves by a DNS TXT record (a domain
 * is verified for one organisation at a time: a partial unique index), the identities it has signed in, keyed
 * by (connection, issuer, subject) and never by e-mail, and the round trips under way: `state` kept here by its
 * hash with the PKCE verifier and nonce, so the callback may land on any instance. New tables only: release
 * N-1 reads and writes the same rows.
 */
export function singleSignOnMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('sso_connections')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull().unique().references('organizations.id').onDelete('cascade'))
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('client_secret', 'text', (c) => c.notNull())
        .addColumn('jit', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('default_role', 'text', (c) => c.notNull().defaultTo('member'))
        .addColumn('required_at', 'bigint')
        .addColumn('tested_at', 'bigint')
        .addColumn('test_subject', 'text')
        .addColumn('test_email', 'text')
        .addColumn('test_email_verified', 'integer')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('sso_domains')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('domain', 'text', (c) => c.notNull())
        .addColumn('token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('verified_at', 'bigint')
        .addColumn('last_checked_at', 'bigint')
        // Set when a daily re-check no longer finds the record; 7 days later the domain is unverified.
        .addColumn('missing_since', 'bigint')
        .execute();
      await db.schema.createIndex('sso_domains_org_domain_uniq').on('sso_domains').columns(['org_id', 'domain']).unique().execute();
      await db.schema.createIndex('sso_domains_verified_uniq').on('sso_domains').column('domain').unique().where(sql.ref('verified_at'), 'is not', null).execute();
      await db.schema.createIndex('sso_domains_checked_idx').on('sso_domains').column('last_checked_at').execute();

      await db.schema
        .createTable('sso_identities')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('connection_id', 'text', (c) => c.notNull().references('sso_connections.id').onDelete('cascade'))
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('email', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_sign_in_at', 'bigint')
        .execute();
      await db.schema.createIndex('sso_identities_subject_uniq').on('sso_identities').columns(['connection_id', 'issuer', 'subject']).unique().execute();
      await db.schema.createIndex('sso_identities_user_idx').on('sso_identities').columns(['org_id', 'user_id']).execute();

      await db.schema
        .createTable('sso_attempts')
        .addColumn('state_hash', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('connection_id', 'text', (c) => c.notNull())
        .addColumn('purpose', 'text', (c) => c.notNull())
        // What the browser that started it holds (its session's or sign-in page's secret), hashed.
        .addColumn('binding', 'text', (c) => c.notNull())
        .addColumn('code_verifier', 'text', (c) => c.notNull())
        .addColumn('nonce', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text')
        .addColumn('next', 'text')
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sso_attempts_expires_idx').on('sso_attempts').column('expires_at').execute();
      await db.schema.createIndex('sso_attempts_org_idx').on('sso_attempts').column('org_id').execute();
    },
  };
}
