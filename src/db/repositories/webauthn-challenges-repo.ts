import type { ChallengePurpose } from '../schema.js';
import type { RepoContext } from './executor.js';

/**
 * WebAuthn challenges, single use: kept by their value (random, 256 bits) with what they are for and the
 * browser that asked, and deleted, in a statement committed on its own, before the verification that reads
 * them: spent whatever its outcome (services/identity/webauthn.ts).
 */
export function webauthnChallengesRepository({ db }: RepoContext) {
  return {
    async insert(row: { challenge: string; purpose: ChallengePurpose; binding: string; user_id: string | null; expires_at: number }): Promise<void> {
      await db.insertInto('webauthn_challenges').values(row).execute();
    },

    /** The challenge, deleted by this call (one statement); undefined when unknown, already taken, or past its end. */
    async take(challenge: string, now: number): Promise<{ challenge: string; purpose: ChallengePurpose; binding: string; user_id: string | null } | undefined> {
      const row = await db.deleteFrom('webauthn_challenges').where('challenge', '=', challenge).returning(['challenge', 'purpose', 'binding', 'user_id', 'expires_at']).executeTakeFirst();
      if (!row || row.expires_at <= now) return undefined;
      return { challenge: row.challenge, purpose: row.purpose, binding: row.binding, user_id: row.user_id };
    },

    async deleteExpired(now: number, batch: number): Promise<number> {
      const doomed = db.selectFrom('webauthn_challenges').select('challenge').where('expires_at', '<=', now).limit(batch);
      const result = await db.deleteFrom('webauthn_challenges').where('challenge', 'in', doomed).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
