import type { PasskeyRow, TotpFactorRow } from '../schema.js';
import type { RepoContext } from './executor.js';
import { SEALED_PREFIX } from '../../lib/secret-box.js';

/** A user's second factors (DASHBOARD 11): the authenticator app, recovery codes and passkeys. */
export function secondFactorsRepository({ db }: RepoContext) {
  return {
    /** Whether the user has a factor that signs in: an authenticator app turned on, or a passkey (one statement). */
    async hasAny(orgId: string, userId: string): Promise<boolean> {
      const row = await db
        .selectFrom('totp_factors')
        .select('user_id')
        .where('org_id', '=', orgId)
        .where('user_id', '=', userId)
        .where('enabled_at', 'is not', null)
        .unionAll(db.selectFrom('passkeys').select('user_id').where('org_id', '=', orgId).where('user_id', '=', userId))
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    /**
     * Of the given users, those with a factor that signs in (the members table's "2-step" column): one
     * statement over the organisation's factors, whose rows are few, rather than a list of ids per page.
     */
    async usersWithAny(orgId: string, userIds: readonly string[]): Promise<Set<string>> {
      if (userIds.length === 0) return new Set();
      const rows = await db
        .selectFrom('totp_factors')
        .select('user_id')
        .where('org_id', '=', orgId)
        .where('enabled_at', 'is not', null)
        .union(db.selectFrom('passkeys').select('user_id').where('org_id', '=', orgId))
        .execute();
      const wanted = new Set(userIds);
      return new Set(rows.map((r) => r.user_id).filter((id) => wanted.has(id)));
    },

    async findTotp(orgId: string, userId: string): Promise<TotpFactorRow | undefined> {
      return db.selectFrom('totp_factors').selectAll().where('org_id', '=', orgId).where('user_id', '=', userId).executeTakeFirst();
    },

    /** A new secret being set up (replacing one being set up before; never one that is on). */
    async startTotp(orgId: string, userId: string, secret: string, at: number): Promise<void> {
      await db.deleteFrom('totp_factors').where('org_id', '=', orgId).where('user_id', '=', userId).where('enabled_at', 'is', null).execute();
      await db.insertInto('totp_factors').values({ org_id: orgId, user_id: userId, secret, last_step: null, created_at: at, enabled_at: null }).execute();
    },

    async enableTotp(orgId: string, userId: string, at: number): Promise<boolean> {
      const result = await db
        .updateTable('totp_factors')
        .set({ enabled_at: at })
        .where('org_id', '=', orgId)
        .where('user_id', '=', userId)
        .where('enabled_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /**
     * Takes a time step for the user's code: true only for the first use of a step later than the last one
     * taken, decided by one conditional UPDATE, so two requests with the same code cannot both pass.
     */
    async takeTotpStep(orgId: string, userId: string, step: number): Promise<boolean> {
      const result = await db
        .updateTable('totp_factors')
        .set({ last_step: step })
        .where('org_id', '=', orgId)
        .where('user_id', '=', userId)
        .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async deleteTotp(orgId: string, userId: string): Promise<boolean> {
      const result = await db.deleteFrom('totp_factors').where('org_id', '=', orgId).where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** Every stored secret not in the current sealed form, across organisations (start-up sealing). */
    async totpSecretsNotInFormAcrossOrgs(prefix: string | null): Promise<{ org_id: string; user_id: string; secret: string }[]> {
      let query = db.selectFrom('totp_factors').select(['org_id', 'user_id', 'secret']);
      if (prefix !== null) query = query.where('secret', 'not like', `${prefix}%`);
      else query = query.where('secret', 'like', `${SEALED_PREFIX}%`);
      return query.execute();
    },

    async resealTotpSecret(orgId: string, userId: string, expected: string, sealed: string): Promise<void> {
      await db.updateTable('totp_factors').set({ secret: sealed }).where('org_id', '=', orgId).where('user_id', '=', userId).where('secret', '=', expected).execute();
    },

    /** The user's recovery codes, all new: the old ones stop working in the same transaction. */
    async replaceRecoveryCodes(orgId: string, userId: string, hashes: readonly string[], at: number): Promise<void> {
      await db.deleteFrom('recovery_codes').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
      await db
        .insertInto('recovery_codes')
        .values(hashes.map((code_hash) => ({ org_id: orgId, user_id: userId, code_hash, created_at: at, used_at: null })))
        .execute();
    },

    /** Uses one recovery code: true only for the request that marked it used. */
    async useRecoveryCode(orgId: string, userId: string, hash: string, at: number): Promise<boolean> {
      const result = await db
        .updateTable('recovery_codes')
        .set({ used_at: at })
        .where('org_id', '=', orgId)
        .where('user_id', '=', userId)
        .where('code_hash', '=', hash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async unusedRecoveryCodes(orgId: string, userId: string): Promise<number> {
      const row = await db
        .selectFrom('recovery_codes')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('org_id', '=', orgId)
        .where('user_id', '=', userId)
        .where('used_at', 'is', null)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async deleteRecoveryCodes(orgId: string, userId: string): Promise<void> {
      await db.deleteFrom('recovery_codes').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
    },

    async insertPasskey(row: Omit<PasskeyRow, 'seq'>): Promise<void> {
      await db.insertInto('passkeys').values(row).execute();
    },

    async listPasskeys(orgId: string, userId: string): Promise<PasskeyRow[]> {
      return db.selectFrom('passkeys').selectAll().where('org_id', '=', orgId).where('user_id', '=', userId).orderBy('seq').execute();
    },

    /** A passkey by the credential id a browser returned: global, since a discoverable sign-in names no one. */
    async findPasskeyByCredentialAnyOrg(credentialId: string): Promise<PasskeyRow | undefined> {
      return db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
    },

    /** Records a use: the authenticator's new signature counter and when. */
    async passkeyUsed(orgId: string, id: string, counter: number, at: number): Promise<void> {
      await db.updateTable('passkeys').set({ counter, last_used_at: at }).where('org_id', '=', orgId).where('id', '=', id).execute();
    },

    async deletePasskey(orgId: string, userId: string, id: string): Promise<PasskeyRow | undefined> {
      const row = await db.selectFrom('passkeys').selectAll().where('org_id', '=', orgId).where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
      if (!row) return undefined;
      await db.deleteFrom('passkeys').where('org_id', '=', orgId).where('id', '=', id).execute();
      return row;
    },

    async deletePasskeys(orgId: string, userId: string): Promise<number> {
      const result = await db.deleteFrom('passkeys').where('org_id', '=', orgId).where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
