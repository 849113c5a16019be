import { sql } from 'kysely';
import type { OrganizationRow } from '../schema.js';
import type { RepoContext } from './executor.js';

export function organizationsRepository({ db, dialect }: RepoContext) {
  return {
    async insert(row: { id: string; name: string; created_at: number }): Promise<void> {
      await db.insertInto('organizations').values({ ...row, updated_at: row.created_at }).execute();
    },

    async findById(orgId: string): Promise<OrganizationRow | undefined> {
      return db.selectFrom('organizations').selectAll().where('id', '=', orgId).executeTakeFirst();
    },

    /**
     * Serialises writers of one organisation for rules that read then write (the last-owner guard).
     * PostgreSQL locks the organisation row; SQLite write transactions already hold the database lock.
     */
    async lock(orgId: string): Promise<void> {
      if (dialect === 'postgres') {
        await sql`select id from organizations where id = ${orgId} for update`.execute(db);
      }
    },

    /** The overview's figures, one round trip. */
    async counts(orgId: string): Promise<{ projects: number; members: number; webhooks: number }> {
      const count = (table: 'projects' | 'users' | 'webhooks') =>
        db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId);
      const row = await db
        .selectNoFrom(() => [count('projects').as('projects'), count('users').as('members'), count('webhooks').as('webhooks')])
        .executeTakeFirstOrThrow();
      return { projects: Number(row.projects), members: Number(row.members), webhooks: Number(row.webhooks) };
    },
  };
}
