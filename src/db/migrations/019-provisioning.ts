import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { seqColumn } from './helpers.js';

/**
 * Provisioning with SCIM 2.0 and key lifetimes (issue 44, CONTRACT 16).
 * - `scim_tokens`: an organisation's provider credentials, only the SHA-256 kept (two live at once for rotation).
 * - `scim_groups`, `scim_group_members`: the groups the provider pushed and who is in them;
 *   `scim_groups.org_role` and `scim_group_projects` are the owner's mapping of a group to roles.
 * - `users`: what a provider sends about a person (`external_id`, the name parts) and `provisioned_at`, set
 *   once SCIM created or claimed the member: from then on the provider manages their role.
 * - `organizations.scim_default_role`: the role of a provisioned member in no mapped group;
 *   `organizations.max_key_lifetime_days`: the owner's ceiling on API key lifetimes (null: none).
 * - `api_keys.expires_at` (null: never) and `expiry_mailed_at` (the 7-day notice went out).
 * Additive: release N-1 ignores the new columns, which take their defaults.
 */
export function provisioningMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('scim_tokens')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('token_prefix', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema.createIndex('scim_tokens_org_idx').on('scim_tokens').columns(['org_id', 'seq']).execute();

      await db.schema
        .createTable('scim_groups')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('display_name_normalized', 'text', (c) => c.notNull())
        .addColumn('external_id', 'text')
        .addColumn('org_role', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('scim_groups_org_name_uq').on('scim_groups').columns(['org_id', 'display_name_normalized']).unique().execute();
      await db.schema.createIndex('scim_groups_org_seq_idx').on('scim_groups').columns(['org_id', 'seq']).execute();

      await db.schema
        .createTable('scim_group_members')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('group_id', 'text', (c) => c.notNull().references('scim_groups.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('scim_group_members_group_user_uq').on('scim_group_members').columns(['group_id', 'user_id']).unique().execute();
      await db.schema.createIndex('scim_group_members_user_idx').on('scim_group_members').columns(['user_id']).execute();
      await db.schema.createIndex('scim_group_members_org_idx').on('scim_group_members').columns(['org_id']).execute();

      await db.schema
        .createTable('scim_group_projects')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('group_id', 'text', (c) => c.notNull().references('scim_groups.id').onDelete('cascade'))
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('scim_group_projects_group_project_uq').on('scim_group_projects').columns(['group_id', 'project_id']).unique().execute();
      await db.schema.createIndex('scim_group_projects_org_idx').on('scim_group_projects').columns(['org_id']).execute();
      await db.schema.createIndex('scim_group_projects_project_idx').on('scim_group_projects').columns(['project_id']).execute();

      await db.schema.alterTable('users').addColumn('external_id', 'text').execute();
      await db.schema.alterTable('users').addColumn('given_name', 'text').execute();
      await db.schema.alterTable('users').addColumn('family_name', 'text').execute();
      await db.schema.alterTable('users').addColumn('formatted_name', 'text').execute();
      await db.schema.alterTable('users').addColumn('provisioned_at', 'bigint').execute();
      await db.schema.createIndex('users_org_external_idx').on('users').columns(['org_id', 'external_id']).execute();

      await db.schema.alterTable('organizations').addColumn('scim_default_role', 'text', (c) => c.notNull().defaultTo('member')).execute();
      await db.schema.alterTable('organizations').addColumn('max_key_lifetime_days', 'integer').execute();

      await db.schema.alterTable('api_keys').addColumn('expires_at', 'bigint').execute();
      await db.schema.alterTable('api_keys').addColumn('expiry_mailed_at', 'bigint').execute();
      await db.schema.createIndex('api_keys_expires_idx').on('api_keys').columns(['expires_at']).execute();
    },
  };
}
