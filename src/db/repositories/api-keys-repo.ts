import type { ApiKeyRow, Role, UserStatus } from '../schema.js';
import type { RepoContext } from './executor.js';
import { prepared } from './prepared.js';

/** What authentication needs about a key, read in one indexed query. */
export interface KeyPrincipalRow {
  key_id: string;
  org_id: string;
  user_id: string;
  scope: string;
  role: Role;
  user_status: UserStatus;
}

// Runs on every authenticated request.
const principalByHash = prepared(1, (db, keyHash: string) =>
  db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', (join) => join.onRef('u.id', '=', 'k.user_id').onRef('u.org_id', '=', 'k.org_id'))
    .select(['k.id as key_id', 'k.org_id', 'k.user_id', 'k.scope', 'u.role', 'u.status as user_status'])
    .where('k.key_hash', '=', keyHash)
    .where('k.revoked_at', 'is', null),
);

export function apiKeysRepository(ctx: RepoContext) {
  const { db } = ctx;
  return {
    async insert(row: Omit<ApiKeyRow, 'seq'>): Promise<ApiKeyRow> {
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
  };
}
