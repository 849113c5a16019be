import type { Kysely, Migration } from 'kysely';

/**
 * The dashboard's one-time slot (issue 23, DASHBOARD 1): `sessions.flash` holds what the next page shows once
 * (a notice, a refusal, a secret shown once), sealed with a key only the session's cookie can derive, so the
 * database never holds a new key or signing secret in a readable form. Nullable: release N-1 ignores it.
 */
export function sessionFlashMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('sessions').addColumn('flash', 'text').execute();
    },
  };
}
