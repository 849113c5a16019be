import type { Insertable } from 'kysely';
import type { ApiKeyRow, ApiKeysTable, OrgState, Role, UserStatus } from '../schema.js';
import type { RepoContext } from './executor.js';
import { prepared } from './prepared.js';

/** What authentication needs about a key, read in one indexed query. */
export interface KeyPrincipalRow {
  key_id: string;
  org_id: string;
  user_id: string;
  email: string;
  scope: string;
  role: Role;
  user_status: UserStatus;
  org_state: OrgState;
  deletion_at: number | null;
  expires_at: number | null;
}

// Runs on every authenticated request.
const principalByHash = prepared(1, (db, keyHash: string) =>
  db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', (join) => join.onRef('u.id', '=', 'k.user_id').onRef('u.org_id', '=', 'k.org_id'))
    .innerJoin('organizations as o', 'o.id', 'k.org_id')
    .select(['k.id as key_id', 'k.org_id', 'k.user_id', 'u.email', 'k.scope', 'u.role', 'u.status as user_status', 'o.state as org_state', 'o.deletion_at', 'k.expires_at'])
    .where('k.key_hash', '=', keyHash)
    .where('k.revoked_at', 'is', null),
);

export function apiKeysRepository(ctx: RepoContext) {
  const { db } = ctx;
  /** The organisation's live keys with their owners' e-mails and names; only one user's when `userId` is given. */
  function withOwners(orgId: string, userId: string | null) {
    let query = db
      .selectFrom('api_keys as k')
      .innerJoin('users as u', (join) => join.onRef('u.id', '=', 'k.user_id').onRef('u.org_id', '=', 'k.org_id'))
      .selectAll('k')
      .select(['u.email as owner_email', 'u.name as owner_name'])
      .where('k.org_id', '=', orgId)
      .where('k.revoked_at', 'is', null);
    if (userId !== null) query = query.where('k.user_id', '=', userId);
    return query;
  }

  return {
    async insert(row: Insertable<ApiKeysTable>): Promise<ApiKeyRow> {
      return db.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow();
    },

    /** Looks a live key up by the hash of its secret; the user's role is read fresh every time. */
    async findPrincipalByHash(keyHash: string): Promise<KeyPrincipalRow | undefined> {
      return principalByHash.first(ctx, keyHash);
    },

    async findByIdAnyOrg(keyId: string): Promise<ApiKeyRow | undefined> {
      return db.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirst();
    },

    async listByOrg(orgId: string): Promise<ApiKeyRow[]> {
      return db.selectFrom('api_keys').selectAll().where('org_id', '=', orgId).orderBy('seq', 'desc').execute();
    },

    /** Revokes every live key of the user (deprovisioning, CONTRACT 16); how many were live. */
    async revokeForUser(orgId: string, userId: string, at: number): Promise<number> {
      const result = await db.updateTable('api_keys').set({ revoked_at: at }).where('org_id', '=', orgId).where('user_id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** Live keys that expire before `until` and whose user has not been mailed yet, across organisations (the worker's job). */
    async expiringUnmailed(now: number, until: number, limit: number): Promise<(ApiKeyRow & { email: string; organization_name: string })[]> {
      return db
        .selectFrom('api_keys as k')
        .innerJoin('users as u', (join) => join.onRef('u.id', '=', 'k.user_id').onRef('u.org_id', '=', 'k.org_id'))
        .innerJoin('organizations as o', 'o.id', 'k.org_id')
        .selectAll('k')
        .select(['u.email', 'o.name as organization_name'])
        .where('k.revoked_at', 'is', null)
        .where('k.expiry_mailed_at', 'is', null)
        .where('k.expires_at', '>', now)
        .where('k.expires_at', '<=', until)
        .where('u.status', '=', 'active')
        .orderBy('k.expires_at')
        .limit(limit)
        .execute();
    },

    /** Marks the notice sent; false when another worker did first. */
    async markExpiryMailed(orgId: string, keyId: string, at: number): Promise<boolean> {
      const result = await db.updateTable('api_keys').set({ expiry_mailed_at: at }).where('org_id', '=', orgId).where('id', '=', keyId).where('expiry_mailed_at', 'is', null).executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async revoke(orgId: string, keyId: string, at: number): Promise<ApiKeyRow | undefined> {
      return db
        .updateTable('api_keys')
        .set({ revoked_at: at })
        .where('org_id', '=', orgId)
        .where('id', '=', keyId)
        .where('revoked_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
    },

    /** The live keys of these users (revoked together when "Require single sign-on" is asked to). */
    async liveForUsers(orgId: string, userIds: readonly string[]): Promise<ApiKeyRow[]> {
      if (userIds.length === 0) return [];
      return db.selectFrom('api_keys').selectAll().where('org_id', '=', orgId).where('user_id', 'in', userIds).where('revoked_at', 'is', null).orderBy('seq').execute();
    },

    /** Names and prefixes of a bounded list of keys (the audit log's page), revoked ones included. */
    async labels(orgId: string, keyIds: readonly string[]): Promise<Pick<ApiKeyRow, 'id' | 'name' | 'key_prefix'>[]> {
      if (keyIds.length === 0) return [];
      return db.selectFrom('api_keys').select(['id', 'name', 'key_prefix']).where('org_id', '=', orgId).where('id', 'in', [...keyIds]).execute();
    },

    async findById(orgId: string, keyId: string): Promise<ApiKeyRow | undefined> {
      return db.selectFrom('api_keys').selectAll().where('org_id', '=', orgId).where('id', '=', keyId).executeTakeFirst();
    },

    /** Live keys with their owner's e-mail, newest first; `userId` narrows to one user's keys. */
    async listWithOwners(orgId: string, userId: string | null): Promise<(ApiKeyRow & { owner_email: string; owner_name: string | null })[]> {
      return withOwners(orgId, userId).orderBy('k.seq', 'desc').execute();
    },

    /** A page of `listWithOwners`, newest first (api_keys_org_seq_idx). */
    async pageWithOwners(orgId: string, userId: string | null, limit: number, beforeSeq: number | null): Promise<(ApiKeyRow & { owner_email: string; owner_name: string | null })[]> {
      let query = withOwners(orgId, userId);
      if (beforeSeq !== null) query = query.where('k.seq', '<', beforeSeq);
      return query.orderBy('k.seq', 'desc').limit(limit).execute();
    },

    /** `last_used_at`, moved forward only. */
    async touch(orgId: string, keyId: string, at: number): Promise<void> {
      await db
        .updateTable('api_keys')
        .set({ last_used_at: at })
        .where('org_id', '=', orgId)
        .where('id', '=', keyId)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
        .execute();
    },
  };
}
