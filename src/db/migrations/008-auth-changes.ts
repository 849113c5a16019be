import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';

/** PostgreSQL channel of the triggers below (src/db/pg-auth-events.ts listens on it). */
export const AUTH_CHANNEL = 'workspace_auth';

/**
 * Every change that can alter what an API key authenticates as — a key revoked or deleted, a user's role,
 * status or e-mail changed or the user removed, an organisation's state changed or the organisation
 * deleted — is announced by a trigger, in the changing transaction itself, so no code path (a service, the
 * CLI, the deletion job, a cascade, an operator's hand-written UPDATE) can forget it and the announcement
 * commits or rolls back with the change.
 *
 * SQLite: the trigger bumps the one-row `auth_changes` counter; each request compares it (after the cheap
 * PRAGMA data_version says some connection committed) and drops the principal cache when it moved.
 * PostgreSQL: the trigger sends NOTIFY on `workspace_auth` (delivered at commit), naming the key, the user
 * or, for deletions, the organisation (identical payloads in one transaction collapse into one).
 */
export function authChangesMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect === 'sqlite') await sqliteUp(db);
      else await postgresUp(db);
    },
  };
}

const KEY_COLUMNS = ['revoked_at', 'scope', 'key_hash', 'user_id', 'org_id'];
const USER_COLUMNS = ['role', 'status', 'email', 'org_id'];
const ORG_COLUMNS = ['state', 'deletion_at'];

function changed(columns: string[], distinct: string): string {
  return columns.map((c) => `OLD.${c} ${distinct} NEW.${c}`).join(' OR ');
}

async function sqliteUp(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE auth_changes (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`.execute(db);
  await sql`INSERT INTO auth_changes (id, version) VALUES (1, 0)`.execute(db);
  const bump = 'UPDATE auth_changes SET version = version + 1 WHERE id = 1;';
  const triggers: [name: string, table: string, columns: string[]][] = [
    ['auth_changes_api_keys', 'api_keys', KEY_COLUMNS],
    ['auth_changes_users', 'users', USER_COLUMNS],
    ['auth_changes_organizations', 'organizations', ORG_COLUMNS],
  ];
  for (const [name, table, columns] of triggers) {
    await sql
      .raw(`CREATE TRIGGER ${name}_update AFTER UPDATE OF ${columns.join(', ')} ON ${table} WHEN ${changed(columns, 'IS NOT')} BEGIN ${bump} END`)
      .execute(db);
    await sql.raw(`CREATE TRIGGER ${name}_delete AFTER DELETE ON ${table} BEGIN ${bump} END`).execute(db);
  }
}

async function postgresUp(db: Kysely<unknown>): Promise<void> {
  // A deleted key or user names its organisation: one notification per organisation and transaction
  // however many rows a removal or the deletion job's batch takes with it.
  await sql
    .raw(
      `CREATE FUNCTION workspace_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE payload text;
BEGIN
  IF TG_TABLE_NAME = 'organizations' THEN
    payload := 'o:' || OLD.id;
  ELSIF TG_OP = 'DELETE' THEN
    payload := 'o:' || OLD.org_id;
  ELSIF TG_TABLE_NAME = 'users' THEN
    payload := 'u:' || OLD.id;
  ELSE
    payload := 'k:' || OLD.id;
  END IF;
  PERFORM pg_notify('${AUTH_CHANNEL}', payload);
  RETURN NULL;
END
$$`,
    )
    .execute(db);
  const triggers: [name: string, table: string, columns: string[]][] = [
    ['auth_changed_api_keys', 'api_keys', KEY_COLUMNS],
    ['auth_changed_users', 'users', USER_COLUMNS],
    ['auth_changed_organizations', 'organizations', ORG_COLUMNS],
  ];
  for (const [name, table, columns] of triggers) {
    await sql
      .raw(
        `CREATE TRIGGER ${name}_update AFTER UPDATE OF ${columns.join(', ')} ON ${table} FOR EACH ROW WHEN (${changed(columns, 'IS DISTINCT FROM')}) EXECUTE FUNCTION workspace_auth_changed()`,
      )
      .execute(db);
    await sql.raw(`CREATE TRIGGER ${name}_delete AFTER DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION workspace_auth_changed()`).execute(db);
  }
}
