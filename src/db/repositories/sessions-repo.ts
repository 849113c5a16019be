import type { SessionRow, UserRow, Workspace } from '../schema.js';
import type { RepoContext } from './executor.js';

/** A session with what every dashboard request needs about its user and organisation, read in one query. */
export interface SessionWithUser {
  session: SessionRow;
  user: UserRow;
  organizationName: string;
  workspace: Workspace;
}

export function sessionsRepository({ db }: RepoContext) {
  return {
    async insert(row: Omit<SessionRow, 'seq' | 'flash'>): Promise<void> {
      await db.insertInto('sessions').values(row).execute();
    },

    /** Tokens are unguessable and global, so this lookup is by the token's hash alone. */
    async findByTokenHash(tokenHash: string): Promise<SessionWithUser | undefined> {
      const row = await db
        .selectFrom('sessions as s')
        .innerJoin('users as u', (join) => join.onRef('u.id', '=', 's.user_id').onRef('u.org_id', '=', 's.org_id'))
        .innerJoin('organizations as o', 'o.id', 's.org_id')
        .select([
          's.seq as s_seq', 's.id as s_id', 's.org_id as s_org_id', 's.user_id as s_user_id', 's.token_hash as s_token_hash',
          's.created_at as s_created_at', 's.last_seen_at as s_last_seen_at', 's.expires_at as s_expires_at', 's.ip as s_ip',
          's.user_agent as s_user_agent', 's.flash as s_flash',
          'u.seq', 'u.id', 'u.org_id', 'u.email', 'u.email_normalized', 'u.name', 'u.role', 'u.status', 'u.password_hash',
          'u.created_at', 'u.updated_at',
          'o.name as organization_name', 'o.state as org_state', 'o.deletion_at as org_deletion_at',
        ])
        .where('s.token_hash', '=', tokenHash)
        .executeTakeFirst();
      if (!row) return undefined;
      return {
        session: {
          seq: row.s_seq, id: row.s_id, org_id: row.s_org_id, user_id: row.s_user_id, token_hash: row.s_token_hash,
          created_at: row.s_created_at, last_seen_at: row.s_last_seen_at, expires_at: row.s_expires_at, ip: row.s_ip,
          user_agent: row.s_user_agent, flash: row.s_flash,
        },
        user: {
          seq: row.seq, id: row.id, org_id: row.org_id, email: row.email, email_normalized: row.email_normalized, name: row.name,
          role: row.role, status: row.status, password_hash: row.password_hash, created_at: row.created_at, updated_at: row.updated_at,
        },
        organizationName: row.organization_name,
        workspace: { state: row.org_state, deletionAt: row.org_deletion_at },
      };
    },

    async touch(orgId: string, sessionId: string, at: number): Promise<void> {
      await db.updateTable('sessions').set({ last_seen_at: at }).where('org_id', '=', orgId).where('id', '=', sessionId).execute();
    },

    /** Fills the one-time slot (replacing what an unread one held: only the latest action's outcome is shown). */
    async setFlash(orgId: string, sessionId: string, flash: string): Promise<void> {
      await db.updateTable('sessions').set({ flash }).where('org_id', '=', orgId).where('id', '=', sessionId).execute();
    },

    /**
     * Empties the slot if it still holds `expected` (read with the session); true when this call emptied it,
     * so of two tabs showing a page at once, one shows what it held.
     */
    async clearFlash(orgId: string, sessionId: string, expected: string): Promise<boolean> {
      const cleared = await db
        .updateTable('sessions')
        .set({ flash: null })
        .where('org_id', '=', orgId)
        .where('id', '=', sessionId)
        .where('flash', '=', expected)
        .executeTakeFirst();
      return Number(cleared.numUpdatedRows) === 1;
    },

    async delete(orgId: string, sessionId: string): Promise<boolean> {
      const result = await db.deleteFrom('sessions').where('org_id', '=', orgId).where('id', '=', sessionId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** Ends every session of a user, except one (the one that changed the password). */
    async deleteForUser(orgId: string, userId: string, exceptSessionId: string | null): Promise<number> {
      let query = db.deleteFrom('sessions').where('org_id', '=', orgId).where('user_id', '=', userId);
      if (exceptSessionId !== null) query = query.where('id', '!=', exceptSessionId);
      const result = await query.executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** Housekeeping: sessions past their absolute end or idle too long, across organisations. */
    async deleteExpired(now: number, idleCutoff: number, batch: number): Promise<number> {
      const doomed = db
        .selectFrom('sessions')
        .select('seq')
        .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleCutoff)]))
        .limit(batch);
      const result = await db.deleteFrom('sessions').where('seq', 'in', doomed).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
