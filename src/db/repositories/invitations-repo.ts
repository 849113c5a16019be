import type { InvitationRow } from '../schema.js';
import type { RepoContext } from './executor.js';

export function invitationsRepository({ db }: RepoContext) {
  return {
    async insert(row: Omit<InvitationRow, 'seq'>): Promise<void> {
      await db.insertInto('invitations').values(row).execute();
    },

    /** Tokens are unguessable and global, so this is the one lookup that is not scoped by organisation. */
    async findByTokenHash(tokenHash: string): Promise<InvitationRow | undefined> {
      return db.selectFrom('invitations').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    },

    async findById(orgId: string, invitationId: string): Promise<InvitationRow | undefined> {
      return db.selectFrom('invitations').selectAll().where('org_id', '=', orgId).where('id', '=', invitationId).executeTakeFirst();
    },

    /** The latest open link's expiry for each of these users: the members page shows when an invitation lapses. */
    async openExpiries(orgId: string, userIds: readonly string[]): Promise<Map<string, number>> {
      if (userIds.length === 0) return new Map();
      const rows = await db
        .selectFrom('invitations')
        .select(['user_id', (eb) => eb.fn.max('expires_at').as('expires_at')])
        .where('org_id', '=', orgId)
        .where('user_id', 'in', [...userIds])
        .where('used_at', 'is', null)
        .groupBy('user_id')
        .execute();
      return new Map(rows.map((r) => [r.user_id, Number(r.expires_at)]));
    },

    /** Kills every open link of a user (a re-invitation supersedes the old one). */
    async closeOpenForUser(orgId: string, userId: string, at: number): Promise<void> {
      await db
        .updateTable('invitations')
        .set({ used_at: at })
        .where('org_id', '=', orgId)
        .where('user_id', '=', userId)
        .where('used_at', 'is', null)
        .execute();
    },

    /** Marks one invitation used; false if another request used it first. */
    async markUsed(orgId: string, invitationId: string, at: number): Promise<boolean> {
      const result = await db
        .updateTable('invitations')
        .set({ used_at: at })
        .where('org_id', '=', orgId)
        .where('id', '=', invitationId)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
  };
}
