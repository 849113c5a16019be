import type { SessionRow, UserRow, Workspace } from '../schema.js';
import type { RepoContext } from './executor.js';
import { prepared } from './prepared.js';

/** A session with what every dashboard request needs about its user and organisation, read in one query. */
export interface SessionWithUser {
  session: SessionRow;
  user: UserRow;
  organizationName: string;
  workspace: Workspace;
  /** Since when the organisation requires two-step verification, or null. */
  twoStepRequiredAt: number | null;
}

// Runs on every dashboard request: built and compiled once (prepared.ts), not per click.
const sessionByTokenHash = prepared(1, (db, tokenHash: string) =>
  db
    .selectFrom('sessions as s')
    .innerJoin('users as u', (join) => join.onRef('u.id', '=', 's.user_id').onRef('u.org_id', '=', 's.org_id'))
    .innerJoin('organizations as o', 'o.id', 's.org_id')
    .select([
      's.seq as s_seq', 's.id as s_id', 's.org_id as s_org_id', 's.user_id as s_user_id', 's.token_hash as s_token_hash',
      's.created_at as s_created_at', 's.last_seen_at as s_last_seen_at', 's.expires_at as s_expires_at', 's.ip as s_ip',
      's.user_agent as s_user_agent', 's.flash as s_flash', 's.stage as s_stage', 's.method as s_method',
      's.confirmed_at as s_confirmed_at', 's.failures as s_failures',
      'u.seq', 'u.id', 'u.org_id', 'u.email', 'u.email_normalized', 'u.name', 'u.role', 'u.status', 'u.password_hash',
      'u.created_at', 'u.updated_at', 'u.external_id', 'u.given_name', 'u.family_name', 'u.formatted_name', 'u.provisioned_at',
      'o.name as organization_name', 'o.state as org_state', 'o.deletion_at as org_deletion_at',
      'o.two_step_required_at as org_two_step_required_at',
    ])
    .where('s.token_hash', '=', tokenHash),
);

export function sessionsRepository(ctx: RepoContext) {
  const { db } = ctx;
  return {
    async insert(row: Omit<SessionRow, 'seq' | 'flash' | 'failures'>): Promise<void> {
      await db.insertInto('sessions').values(row).execute();
    },

    /** Tokens are unguessable and global, so this lookup is by the token's hash alone. */
    async findByTokenHash(tokenHash: string): Promise<SessionWithUser | undefined> {
      const row = await sessionByTokenHash.first(ctx, tokenHash);
      if (!row) return undefined;
      return {
        session: {
          seq: row.s_seq, id: row.s_id, org_id: row.s_org_id, user_id: row.s_user_id, token_hash: row.s_token_hash,
          created_at: row.s_created_at, last_seen_at: row.s_last_seen_at, expires_at: row.s_expires_at, ip: row.s_ip,
          user_agent: row.s_user_agent, flash: row.s_flash, stage: row.s_stage, method: row.s_method,
          confirmed_at: row.s_confirmed_at, failures: row.s_failures,
        },
        user: {
          seq: row.seq, id: row.id, org_id: row.org_id, email: row.email, email_normalized: row.email_normalized, name: row.name,
          role: row.role, status: row.status, password_hash: row.password_hash, created_at: row.created_at, updated_at: row.updated_at,
          external_id: row.external_id, given_name: row.given_name, family_name: row.family_name, formatted_name: row.formatted_name, provisioned_at: row.provisioned_at,
        },
        organizationName: row.organization_name,
        workspace: { state: row.org_state, deletionAt: row.org_deletion_at },
        twoStepRequiredAt: row.org_two_step_required_at,
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

    /**
     * A two-step session that gave its second factor: a new token (a new one at every sign-in), how it
     * signed in, its full lifetime. Only from the `two_step` stage, so it happens once.
     */
    async promote(orgId: string, sessionId: string, change: { tokenHash: string; method: SessionRow['method']; confirmedAt: number | null; now: number; expiresAt: number }): Promise<boolean> {
      const result = await db
        .updateTable('sessions')
        .set({ token_hash: change.tokenHash, stage: 'active', method: change.method, confirmed_at: change.confirmedAt, failures: 0, last_seen_at: change.now, expires_at: change.expiresAt })
        .where('org_id', '=', orgId)
        .where('id', '=', sessionId)
        .where('stage', '=', 'two_step')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** "Confirm it's you" passed (or a strong sign-in): sensitive actions are open for a while. */
    async confirm(orgId: string, sessionId: string, at: number): Promise<void> {
      await db.updateTable('sessions').set({ confirmed_at: at }).where('org_id', '=', orgId).where('id', '=', sessionId).execute();
    },

    /** One more wrong code at the two-step stage; the count after it. */
    async addFailure(orgId: string, sessionId: string): Promise<number> {
      const row = await db
        .updateTable('sessions')
        .set((eb) => ({ failures: eb('failures', '+', 1) }))
        .where('org_id', '=', orgId)
        .where('id', '=', sessionId)
        .returning('failures')
        .executeTakeFirst();
      // Gone meanwhile (signed out, ended): as good as over the limit.
      return row?.failures ?? Number.MAX_SAFE_INTEGER;
    },

    /** The user's signed-in sessions (not those still owing a second factor), newest first. */
    async listForUser(orgId: string, userId: string): Promise<SessionRow[]> {
      return db
        .selectFrom('sessions')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('user_id', '=', userId)
        .where('stage', '=', 'active')
        .orderBy('last_seen_at', 'desc')
        .orderBy('seq', 'desc')
        .execute();
    },

    /** Ends one of the user's sessions (theirs only). */
    async deleteOfUser(orgId: string, userId: string, sessionId: string): Promise<boolean> {
      const result = await db.deleteFrom('sessions').where('org_id', '=', orgId).where('user_id', '=', userId).where('id', '=', sessionId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
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
