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
