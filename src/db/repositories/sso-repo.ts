import type { SsoAttemptRow, SsoConnectionRow, SsoDomainRow, SsoIdentityRow } from '../schema.js';
import { SEALED_PREFIX } from '../../lib/secret-box.js';
import type { RepoContext } from './executor.js';

export type SsoConnectionSave = Pick<SsoConnectionRow, 'issuer' | 'client_id' | 'client_secret' | 'jit' | 'default_role' | 'updated_at'> & {
  /** Cleared when the issuer or client changes: a test of the old one proves nothing about the new. */
  resetTest: boolean;
};

/**
 * Single sign-on (DASHBOARD 12): the organisation's connection, its e-mail domains, the identities it has
 * signed in (kept across a replaced connection), and the round trips under way. Every method but the daily re-check's and the callback's look-up
 * by `state` takes the organisation.
 */
export function ssoRepository({ db }: RepoContext) {
  return {
    async findConnection(orgId: string): Promise<SsoConnectionRow | undefined> {
      return db.selectFrom('sso_connections').selectAll().where('org_id', '=', orgId).executeTakeFirst();
    },

    async insertConnection(row: Omit<SsoConnectionRow, 'seq'>): Promise<void> {
      await db.insertInto('sso_connections').values(row).execute();
    },

    async updateConnection(orgId: string, changes: SsoConnectionSave): Promise<void> {
      const { resetTest, ...values } = changes;
      await db
        .updateTable('sso_connections')
        .set({ ...values, ...(resetTest ? { tested_at: null, test_subject: null, test_email: null, test_email_verified: null } : {}) })
        .where('org_id', '=', orgId)
        .execute();
    },

    async deleteConnection(orgId: string): Promise<boolean> {
      const result = await db.deleteFrom('sso_connections').where('org_id', '=', orgId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** A successful "Test single sign-on", unless the connection changed meanwhile (then nothing is recorded). */
    async recordTest(orgId: string, connectionId: string, updatedAt: number, result: { at: number; subject: string; email: string | null; emailVerified: boolean | null }): Promise<boolean> {
      const done = await db
        .updateTable('sso_connections')
        .set({
          tested_at: result.at,
          test_subject: result.subject,
          test_email: result.email,
          test_email_verified: result.emailVerified === null ? null : result.emailVerified ? 1 : 0,
        })
        .where('org_id', '=', orgId)
        .where('id', '=', connectionId)
        .where('updated_at', '=', updatedAt)
        .executeTakeFirst();
      return Number(done.numUpdatedRows) === 1;
    },

    async setRequired(orgId: string, requiredAt: number | null): Promise<void> {
      await db.updateTable('sso_connections').set({ required_at: requiredAt }).where('org_id', '=', orgId).execute();
    },

    /**
     * Whether the organisation requires single sign-on of this e-mail domain (a requirement and the domain
     * verified): the sign-in gate's one question, one statement.
     */
    async requiresSso(orgId: string, domain: string): Promise<boolean> {
      const row = await db
        .selectFrom('sso_connections as c')
        .innerJoin('sso_domains as d', 'd.org_id', 'c.org_id')
        .select('d.id')
        .where('c.org_id', '=', orgId)
        .where('c.required_at', 'is not', null)
        .where('d.domain', '=', domain)
        .where('d.verified_at', 'is not', null)
        .executeTakeFirst();
      return row !== undefined;
    },

    async secretsNotInFormAcrossOrgs(prefix: string | null): Promise<{ org_id: string; client_secret: string }[]> {
      let query = db.selectFrom('sso_connections').select(['org_id', 'client_secret']);
      if (prefix !== null) query = query.where('client_secret', 'not like', `${prefix}%`);
      else query = query.where('client_secret', 'like', `${SEALED_PREFIX}%`);
      return query.execute();
    },

    async resealSecret(orgId: string, expected: string, sealed: string): Promise<void> {
      await db.updateTable('sso_connections').set({ client_secret: sealed }).where('org_id', '=', orgId).where('client_secret', '=', expected).execute();
    },

    // Domains

    async listDomains(orgId: string): Promise<SsoDomainRow[]> {
      return db.selectFrom('sso_domains').selectAll().where('org_id', '=', orgId).orderBy('domain').execute();
    },

    async findDomain(orgId: string, domain: string): Promise<SsoDomainRow | undefined> {
      return db.selectFrom('sso_domains').selectAll().where('org_id', '=', orgId).where('domain', '=', domain).executeTakeFirst();
    },

    async insertDomain(row: Omit<SsoDomainRow, 'seq'>): Promise<void> {
      await db.insertInto('sso_domains').values(row).execute();
    },

    async deleteDomain(orgId: string, domain: string): Promise<void> {
      await db.deleteFrom('sso_domains').where('org_id', '=', orgId).where('domain', '=', domain).execute();
    },

    /** The organisation that has verified this domain, if any (at most one: a unique index). */
    async verifiedDomainAnyOrg(domain: string): Promise<SsoDomainRow | undefined> {
      return db.selectFrom('sso_domains').selectAll().where('domain', '=', domain).where('verified_at', 'is not', null).executeTakeFirst();
    },

    async markVerified(orgId: string, domain: string, verifiedAt: number, checkedAt: number): Promise<void> {
      await db
        .updateTable('sso_domains')
        .set({ verified_at: verifiedAt, last_checked_at: checkedAt, missing_since: null })
        .where('org_id', '=', orgId)
        .where('domain', '=', domain)
        .execute();
    },

    /** The daily re-check's result: found, missing since a time, or unverified (7 days missing). */
    async recordCheck(orgId: string, domain: string, changes: Pick<SsoDomainRow, 'last_checked_at' | 'missing_since' | 'verified_at'>): Promise<void> {
      await db.updateTable('sso_domains').set(changes).where('org_id', '=', orgId).where('domain', '=', domain).execute();
    },

    /** Verified domains not checked since `before`, oldest first (the daily re-check, across organisations). */
    async dueForCheckAcrossOrgs(before: number, limit: number): Promise<SsoDomainRow[]> {
      return db
        .selectFrom('sso_domains')
        .selectAll()
        .where('verified_at', 'is not', null)
        .where('last_checked_at', '<', before)
        .orderBy('last_checked_at')
        .limit(limit)
        .execute();
    },

    // Identities: by (organisation, issuer, subject), whatever connection made them (migration 017).

    async findIdentity(orgId: string, issuer: string, subject: string): Promise<SsoIdentityRow | undefined> {
      return db
        .selectFrom('sso_identities')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('issuer', '=', issuer)
        .where('subject', '=', subject)
        .executeTakeFirst();
    },

    async insertIdentity(row: Omit<SsoIdentityRow, 'seq'>): Promise<void> {
      await db.insertInto('sso_identities').values(row).execute();
    },

    /** The user's link at this issuer, if any (a user has at most one per provider). */
    async identityOfUser(orgId: string, issuer: string, userId: string): Promise<SsoIdentityRow | undefined> {
      return db
        .selectFrom('sso_identities')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('user_id', '=', userId)
        .where('issuer', '=', issuer)
        .orderBy('seq', 'desc')
        .executeTakeFirst();
    },

    async touchIdentity(orgId: string, id: string, email: string | null, at: number): Promise<void> {
      await db.updateTable('sso_identities').set({ email, last_sign_in_at: at }).where('org_id', '=', orgId).where('id', '=', id).execute();
    },

    /** Of these users, those linked at this issuer (the members table's "Single sign-on"). */
    async identitiesOfUsers(orgId: string, issuer: string, userIds: readonly string[]): Promise<Set<string>> {
      if (userIds.length === 0) return new Set();
      const rows = await db
        .selectFrom('sso_identities')
        .select('user_id')
        .where('org_id', '=', orgId)
        .where('issuer', '=', issuer)
        .where('user_id', 'in', userIds)
        .execute();
      return new Set(rows.map((r) => r.user_id));
    },

    // Round trips under way

    async insertAttempt(row: SsoAttemptRow): Promise<void> {
      await db.insertInto('sso_attempts').values(row).execute();
    },

    /** The attempt, deleted by this call: a `state` is good once, whatever the outcome. */
    async takeAttempt(stateHash: string, now: number): Promise<SsoAttemptRow | undefined> {
      const row = await db.deleteFrom('sso_attempts').where('state_hash', '=', stateHash).returningAll().executeTakeFirst();
      if (!row || row.expires_at <= now) return undefined;
      return row;
    },

    async deleteExpiredAttempts(now: number, batch: number): Promise<number> {
      const doomed = db.selectFrom('sso_attempts').select('state_hash').where('expires_at', '<=', now).limit(batch);
      const result = await db.deleteFrom('sso_attempts').where('state_hash', 'in', doomed).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
