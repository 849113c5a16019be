import type { ChallengePurpose } from '../schema.js';
import type { RepoContext } from './executor.js';

/**
 * WebAuthn challenges, single use: kept by their value (random, 256 bits) with what they are for and the
 * browser that asked, and deleted by the verification that reads them, whatever its outcome.
 */
export function webauthnChallengesRepository({ db }: RepoContext) {
  return {
    async insert(row: { challenge: string; purpose: ChallengePurpose; binding: string; user_id: string | null; expires_at: number }): Promise<void> {
      await db.insertInto('webauthn_challenges').values(row).execute();
    },

    /** The challenge, deleted by this call; undefined when unknown, already taken, or past its end. */
    async take(challenge: string, now: number): Promise<{ purpose: ChallengePurpose; binding: string; user_id: string | null } | undefined> {
      const row = await db.selectFrom('webauthn_challenges').select(['purpose', 'binding', 'user_id', 'expires_at']).where('challenge', '=', challenge).executeTakeFirst();
      if (!row) return undefined;
      const taken = await db.deleteFrom('webauthn_challenges').where('challenge', '=', challenge).executeTakeFirst();
      if (Number(taken.numDeletedRows) !== 1 || row.expires_at <= now) return undefined;
      return row;
    },

    async deleteExpired(now: number, batch: number): Promise<number> {
      const doomed = db.selectFrom('webauthn_challenges').select('challenge').where('expires_at', '<=', now).limit(batch);
      const result = await db.deleteFrom('webauthn_challenges').where('challenge', 'in', doomed).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
