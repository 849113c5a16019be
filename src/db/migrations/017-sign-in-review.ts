import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';

/**
 * After the sign-in security review (issue 41):
 * - `sso_identities` outlive the connection that made them: a person is found by (organisation, issuer,
 *   subject), so deleting or replacing the connection forgets nobody's link (the links were the only thing
 *   that kept an owner's account from being claimed by e-mail at a new provider). `connection_id` stays, as
 *   the connection that made the link, without a foreign key. SQLite cannot drop a foreign key, so the table
 *   is rebuilt (same columns, same rows) in one transaction; PostgreSQL alters it in place.
 * - `sso_attempts.invitation_id`: "Accept with single sign-on" round trips carry the invitation they accept.
 * - `service_instances`: each `serve` process says it is alive, so one that shares the database with another
 *   can tell when the sign-in limits are counted per process (no REDIS_URL) and say so.
 * Release N-1 reads and writes the same columns of `sso_identities` and `sso_attempts`, and never the new table.
 */
export function signInReviewMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect === 'postgres') {
        const fk = await sql<{ name: string }>`
          SELECT conname AS name FROM pg_constraint
          WHERE conrelid = 'sso_identities'::regclass AND contype = 'f' AND confrelid = 'sso_connections'::regclass`.execute(db);
        for (const { name } of fk.rows) await sql`ALTER TABLE sso_identities DROP CONSTRAINT ${sql.id(name)}`.execute(db);
        await sql`ALTER TABLE sso_identities ALTER COLUMN connection_id DROP NOT NULL`.execute(db);
        await sql`DROP INDEX IF EXISTS sso_identities_subject_uniq`.execute(db);
        await db.schema.createIndex('sso_identities_org_subject_uniq').on('sso_identities').columns(['org_id', 'issuer', 'subject']).unique().execute();
      } else {
        // The rebuild SQLite documents for a changed constraint, in one transaction: a crash leaves the old table.
        await sql`BEGIN IMMEDIATE`.execute(db);
        try {
          await sql`DROP TABLE IF EXISTS sso_identities_rebuilt`.execute(db);
          await sql`
            CREATE TABLE sso_identities_rebuilt (
              seq integer PRIMARY KEY AUTOINCREMENT,
              id text NOT NULL UNIQUE,
              org_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
              connection_id text,
              issuer text NOT NULL,
              subject text NOT NULL,
              user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
              email text,
              created_at bigint NOT NULL,
              last_sign_in_at bigint
            )`.execute(db);
          await sql`
            INSERT INTO sso_identities_rebuilt (seq, id, org_id, connection_id, issuer, subject, user_id, email, created_at, last_sign_in_at)
            SELECT seq, id, org_id, connection_id, issuer, subject, user_id, email, created_at, last_sign_in_at FROM sso_identities`.execute(db);
          await sql`DROP TABLE sso_identities`.execute(db);
          await sql`ALTER TABLE sso_identities_rebuilt RENAME TO sso_identities`.execute(db);
          await db.schema.createIndex('sso_identities_org_subject_uniq').on('sso_identities').columns(['org_id', 'issuer', 'subject']).unique().execute();
          await db.schema.createIndex('sso_identities_user_idx').on('sso_identities').columns(['org_id', 'user_id']).execute();
          await sql`COMMIT`.execute(db);
        } catch (error) {
          await sql`ROLLBACK`.execute(db).catch(() => {});
          throw error;
        }
      }

      await db.schema.alterTable('sso_attempts').addColumn('invitation_id', 'text').execute();

      await db.schema
        .createTable('service_instances')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hostname', 'text', (c) => c.notNull())
        .addColumn('pid', 'integer', (c) => c.notNull())
        // 1 when the instance counts sign-in attempts in Redis (shared), 0 when in its own memory.
        .addColumn('shared_limits', 'integer', (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('seen_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('service_instances_seen_idx').on('service_instances').column('seen_at').execute();
    },
  };
}
