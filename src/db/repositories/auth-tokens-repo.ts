import type { AuthTokenPurpose, AuthTokenRow } from '../schema.js';
import type { RepoContext } from './executor.js';

/**
 * Single-use account tokens, stored as SHA-256: password links ('setup', 'reset') and sign-in choices
 * ('choice', one row per candidate user under one token, so one token can span organisations).
 */
export function authTokensRepository({ db }: RepoContext) {
  return {
    async insert(rows: readonly Omit<AuthTokenRow, 'seq'>[]): Promise<void> {
      if (rows.length === 0) return;
      await db.insertInto('auth_tokens').values([...rows]).execute();
    },

    /** Tokens are unguessable and global, so this lookup is by the token's hash alone (every row of it). */
    async findByTokenHash(tokenHash: string, purposes: readonly AuthTokenPurpose[]): Promise<AuthTokenRow[]> {
      return db
        .selectFrom('auth_tokens')
        .selectAll()
        .where('token_hash', '=', tokenHash)
        .where('purpose', 'in', [...purposes])
        .orderBy('seq')
        .execute();
    },

    /** Kills every open token of a user with these purposes (a newer link supersedes the older ones). */
    async closeOpenForUser(orgId: string, userId: string, purposes: readonly AuthTokenPurpose[], at: number): Promise<void> {
      await db
        .updateTable('auth_tokens')
        .set({ used_at: at })
        .where('org_id', '=', orgId)
        .where('user_id', '=', userId)
        .where('purpose', 'in', [...purposes])
        .where('used_at', 'is', null)
        .execute();
    },

    /** Marks one token row used; false if another request used it first. */
    async markUsed(orgId: string, tokenId: string, at: number): Promise<boolean> {
      const result = await db
        .updateTable('auth_tokens')
        .set({ used_at: at })
        .where('org_id', '=', orgId)
        .where('id', '=', tokenId)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /**
     * Marks every still open row of a token used, across organisations (a sign-in choice is used once,
     * whichever organisation is picked); the number of rows this call closed, 0 if another got there first.
     */
    async markUsedByHash(tokenHash: string, purpose: AuthTokenPurpose, at: number): Promise<number> {
      const result = await db
        .updateTable('auth_tokens')
        .set({ used_at: at })
        .where('token_hash', '=', tokenHash)
        .where('purpose', '=', purpose)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** Housekeeping, across organisations: tokens past their end, used or not. */
    async deleteExpired(now: number): Promise<number> {
      const result = await db.deleteFrom('auth_tokens').where('expires_at', '<=', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
