import { sql, type Kysely, type Migration } from 'kysely';
import { AUTH_CHANNEL } from './008-auth-changes.js';
import type { SqlDialect } from '../dialect.js';
import { seqColumn } from './helpers.js';

/**
 * Apps and AI agents (issue 45, CONTRACT 17): what the OAuth 2.1 authorization server keeps.
 * - `oauth_clients`: registered apps (RFC 7591); `metadata` is the client's JSON, a client secret in it sealed.
 * - `oauth_grants`: a person's consent for an app in their organisation, the "connected app" the dashboard
 *   lists and revokes; `resource` is `mcp` or `v1`, `scope` the consented scopes.
 * - `oauth_entries`: everything else the server stores (codes, access and refresh tokens, its sessions and
 *   interactions), keyed by the SHA-256 of the id, so a leaked table holds no usable token.
 * - `oauth_server_secrets`: the cookie-signing secret every instance shares (sealed with WEBHOOK_SECRETS_KEY).
 * - `organizations.members_may_connect_apps` (on) and `agents_may_delete` (off): the owners' switches.
 * Like keys (migration 008), a grant revoked or deleted, an access token deleted and the members' switch are
 * announced by triggers in the changing transaction, so every instance drops its cached principals whatever
 * path made the change. Additive: release N-1 ignores the new tables and columns.
 */
export function connectedAppsMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('oauth_clients')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('oauth_grants')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
        .addColumn('resource', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema.createIndex('oauth_grants_org_idx').on('oauth_grants').columns(['org_id', 'seq']).execute();
      await db.schema.createIndex('oauth_grants_user_idx').on('oauth_grants').columns(['user_id']).execute();

      await db.schema
        .createTable('oauth_entries')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id_hash', 'text', (c) => c.notNull().unique())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('grant_id', 'text')
        .addColumn('uid', 'text')
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('consumed_at', 'bigint')
        .execute();
      await db.schema.createIndex('oauth_entries_grant_idx').on('oauth_entries').columns(['grant_id']).execute();
      await db.schema.createIndex('oauth_entries_uid_idx').on('oauth_entries').columns(['uid']).execute();
      await db.schema.createIndex('oauth_entries_expires_idx').on('oauth_entries').columns(['expires_at']).execute();

      await db.schema
        .createTable('oauth_server_secrets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema.alterTable('organizations').addColumn('members_may_connect_apps', 'integer', (c) => c.notNull().defaultTo(1)).execute();
      await db.schema.alterTable('organizations').addColumn('agents_may_delete', 'integer', (c) => c.notNull().defaultTo(0)).execute();

      if (dialect === 'sqlite') {
        const bump = 'UPDATE auth_changes SET version = version + 1 WHERE id = 1;';
        await sql.raw(`CREATE TRIGGER auth_changes_oauth_grants_update AFTER UPDATE OF revoked_at ON oauth_grants WHEN OLD.revoked_at IS NOT NEW.revoked_at BEGIN ${bump} END`).execute(db);
        await sql.raw(`CREATE TRIGGER auth_changes_oauth_grants_delete AFTER DELETE ON oauth_grants BEGIN ${bump} END`).execute(db);
        await sql.raw(`CREATE TRIGGER auth_changes_oauth_entries_delete AFTER DELETE ON oauth_entries WHEN OLD.model = 'AccessToken' BEGIN ${bump} END`).execute(db);
        await sql
          .raw(`CREATE TRIGGER auth_changes_organizations_apps AFTER UPDATE OF members_may_connect_apps ON organizations WHEN OLD.members_may_connect_apps IS NOT NEW.members_may_connect_apps BEGIN ${bump} END`)
          .execute(db);
      } else {
        // A grant's id is the key id of its tokens' principals; an organisation's switch drops its principals.
        await sql
          .raw(
            `CREATE FUNCTION workspace_app_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'oauth_entries' THEN
    IF OLD.model = 'AccessToken' AND OLD.grant_id IS NOT NULL THEN PERFORM pg_notify('${AUTH_CHANNEL}', 'k:' || OLD.grant_id); END IF;
  ELSIF TG_TABLE_NAME = 'organizations' THEN
    PERFORM pg_notify('${AUTH_CHANNEL}', 'o:' || OLD.id);
  ELSE
    PERFORM pg_notify('${AUTH_CHANNEL}', 'k:' || OLD.id);
  END IF;
  RETURN NULL;
END
$$`,
          )
          .execute(db);
        await sql
          .raw('CREATE TRIGGER auth_changed_oauth_grants_update AFTER UPDATE OF revoked_at ON oauth_grants FOR EACH ROW WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at) EXECUTE FUNCTION workspace_app_auth_changed()')
          .execute(db);
        await sql.raw('CREATE TRIGGER auth_changed_oauth_grants_delete AFTER DELETE ON oauth_grants FOR EACH ROW EXECUTE FUNCTION workspace_app_auth_changed()').execute(db);
        await sql.raw('CREATE TRIGGER auth_changed_oauth_entries_delete AFTER DELETE ON oauth_entries FOR EACH ROW EXECUTE FUNCTION workspace_app_auth_changed()').execute(db);
        await sql
          .raw(
            'CREATE TRIGGER auth_changed_organizations_apps AFTER UPDATE OF members_may_connect_apps ON organizations FOR EACH ROW WHEN (OLD.members_may_connect_apps IS DISTINCT FROM NEW.members_may_connect_apps) EXECUTE FUNCTION workspace_app_auth_changed()',
          )
          .execute(db);
      }
    },
  };
}
