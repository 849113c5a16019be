import type { AppResource, OauthEntryRow, OauthGrantRow, OrgState, Role, UserStatus } from '../schema.js';
import type { RepoContext } from './executor.js';

/** What authentication needs about an access token, read in one indexed query (the app-token twin of KeyPrincipalRow). */
export interface AppTokenPrincipalRow {
  payload: string;
  expires_at: number;
  grant_id: string;
  org_id: string;
  user_id: string;
  email: string;
  role: Role;
  user_status: UserStatus;
  org_state: OrgState;
  deletion_at: number | null;
  client_name: string;
  members_may_connect_apps: number;
}

/** A connected app as the dashboard and the CLI list it: the grant, its app's name and its person. */
export interface ConnectedAppRow extends OauthGrantRow {
  client_name: string;
  email: string;
  user_name: string | null;
}

/**
 * The authorization server's storage (CONTRACT 17). Clients are global (dynamic registration is anonymous);
 * grants belong to an organisation and every grant method takes it; entries (codes, tokens, sessions) are
 * found by the hash of their unguessable id, as API keys are.
 */
export function oauthRepository({ db }: RepoContext) {
  return {
    async insertClient(row: { id: string; name: string; metadata: string; created_at: number }): Promise<void> {
      await db.insertInto('oauth_clients').values(row).execute();
    },

    async upsertClient(row: { id: string; name: string; metadata: string; created_at: number }): Promise<void> {
      await db
        .insertInto('oauth_clients')
        .values(row)
        .onConflict((oc) => oc.column('id').doUpdateSet({ name: row.name, metadata: row.metadata }))
        .execute();
    },

    async findClient(id: string): Promise<{ id: string; name: string; metadata: string } | undefined> {
      return db.selectFrom('oauth_clients').select(['id', 'name', 'metadata']).where('id', '=', id).executeTakeFirst();
    },

    async deleteClient(id: string): Promise<void> {
      await db.deleteFrom('oauth_clients').where('id', '=', id).execute();
    },

    /** The grant's organisation comes from its user: a grant is always made in the user's own organisation. */
    async upsertGrant(row: Omit<OauthGrantRow, 'seq' | 'last_used_at' | 'revoked_at' | 'org_id'> & { org_id?: string }): Promise<boolean> {
      const user = await db.selectFrom('users').select(['org_id']).where('id', '=', row.user_id).executeTakeFirst();
      if (!user) return false;
      await db
        .insertInto('oauth_grants')
        .values({ ...row, org_id: user.org_id })
        .onConflict((oc) => oc.column('id').doUpdateSet({ scope: row.scope, resource: row.resource, payload: row.payload, expires_at: row.expires_at }))
        .execute();
      return true;
    },

    /** A live grant's stored payload, for the authorization server. */
    async findGrantPayload(id: string, now: number): Promise<string | undefined> {
      const row = await db
        .selectFrom('oauth_grants')
        .select(['payload'])
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row?.payload;
    },

    async findGrant(orgId: string, id: string): Promise<ConnectedAppRow | undefined> {
      return connected().where('g.org_id', '=', orgId).where('g.id', '=', id).where('g.revoked_at', 'is', null).executeTakeFirst();
    },

    async findGrantAnyOrg(id: string): Promise<OauthGrantRow | undefined> {
      return db.selectFrom('oauth_grants').selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** Live grants of the organisation, newest first; one person's when `userId` is given. */
    async listGrants(orgId: string, userId: string | null, now: number): Promise<ConnectedAppRow[]> {
      let query = connected().where('g.org_id', '=', orgId).where('g.revoked_at', 'is', null).where('g.expires_at', '>', now);
      if (userId !== null) query = query.where('g.user_id', '=', userId);
      return query.orderBy('g.seq', 'desc').execute();
    },

    /** Ends a grant and everything issued under it; whether it was live. */
    async revokeGrant(id: string, at: number): Promise<boolean> {
      const result = await db.updateTable('oauth_grants').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
      await db.deleteFrom('oauth_entries').where('grant_id', '=', id).execute();
      return Number(result.numUpdatedRows) > 0;
    },

    /** The person's other live grants to the same app for the same resource: a new consent replaces them. */
    async olderGrants(orgId: string, grant: { id: string; user_id: string; client_id: string; resource: AppResource }): Promise<string[]> {
      const rows = await db
        .selectFrom('oauth_grants')
        .select('id')
        .where('org_id', '=', orgId)
        .where('user_id', '=', grant.user_id)
        .where('client_id', '=', grant.client_id)
        .where('resource', '=', grant.resource)
        .where('id', '!=', grant.id)
        .where('revoked_at', 'is', null)
        .execute();
      return rows.map((r) => r.id);
    },

    /** Ends every grant of a person (deprovisioning, CONTRACT 16 and 17), and what they issued; the ids that were live. */
    async revokeGrantsForUser(orgId: string, userId: string, at: number): Promise<string[]> {
      const live = await db
        .updateTable('oauth_grants')
        .set({ revoked_at: at })
        .where('org_id', '=', orgId)
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .returning('id')
        .execute();
      const ids = live.map((g) => g.id);
      if (ids.length > 0) await db.deleteFrom('oauth_entries').where('grant_id', 'in', ids).execute();
      return ids;
    },

    async touchGrant(orgId: string, id: string, at: number): Promise<void> {
      await db.updateTable('oauth_grants').set({ last_used_at: at }).where('org_id', '=', orgId).where('id', '=', id).execute();
    },

    async upsertEntry(row: Omit<OauthEntryRow, 'seq' | 'consumed_at'>): Promise<void> {
      await db
        .insertInto('oauth_entries')
        .values(row)
        .onConflict((oc) => oc.column('id_hash').doUpdateSet({ payload: row.payload, expires_at: row.expires_at, grant_id: row.grant_id, uid: row.uid }))
        .execute();
    },

    async findEntry(model: string, idHash: string, now: number): Promise<Pick<OauthEntryRow, 'payload' | 'consumed_at' | 'grant_id'> | undefined> {
      return db
        .selectFrom('oauth_entries')
        .select(['payload', 'consumed_at', 'grant_id'])
        .where('id_hash', '=', idHash)
        .where('model', '=', model)
        .where('expires_at', '>', now)
        .executeTakeFirst();
    },

    async findEntryByUid(model: string, uid: string, now: number): Promise<Pick<OauthEntryRow, 'payload' | 'consumed_at'> | undefined> {
      return db
        .selectFrom('oauth_entries')
        .select(['payload', 'consumed_at'])
        .where('uid', '=', uid)
        .where('model', '=', model)
        .where('expires_at', '>', now)
        .executeTakeFirst();
    },

    /** The grant an entry belongs to (to announce its revocation), then the entry gone. */
    async deleteEntry(idHash: string): Promise<string | null> {
      const row = await db.deleteFrom('oauth_entries').where('id_hash', '=', idHash).returning(['grant_id']).executeTakeFirst();
      return row?.grant_id ?? null;
    },

    async consumeEntry(idHash: string, at: number): Promise<void> {
      await db.updateTable('oauth_entries').set({ consumed_at: at }).where('id_hash', '=', idHash).execute();
    },

    /** Expired entries go (the worker's lifecycle pass); how many. */
    async deleteExpiredEntries(now: number): Promise<number> {
      const result = await db.deleteFrom('oauth_entries').where('expires_at', '<=', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** An access token's principal by the hash of its value: the token, its live grant, person, organisation and app. */
    async findAccessPrincipal(idHash: string): Promise<AppTokenPrincipalRow | undefined> {
      return db
        .selectFrom('oauth_entries as e')
        .innerJoin('oauth_grants as g', 'g.id', 'e.grant_id')
        .innerJoin('users as u', (join) => join.onRef('u.id', '=', 'g.user_id').onRef('u.org_id', '=', 'g.org_id'))
        .innerJoin('organizations as o', 'o.id', 'g.org_id')
        .innerJoin('oauth_clients as c', 'c.id', 'g.client_id')
        .select([
          'e.payload',
          'e.expires_at',
          'g.id as grant_id',
          'g.org_id',
          'g.user_id',
          'u.email',
          'u.role',
          'u.status as user_status',
          'o.state as org_state',
          'o.deletion_at',
          'c.name as client_name',
          'o.members_may_connect_apps',
        ])
        .where('e.id_hash', '=', idHash)
        .where('e.model', '=', 'AccessToken')
        .where('g.revoked_at', 'is', null)
        .executeTakeFirst();
    },

    /** The shared secret named `id`, or the one given when there is none yet (the first instance to start writes it). */
    async serverSecret(id: string, fresh: string, at: number): Promise<string> {
      await db
        .insertInto('oauth_server_secrets')
        .values({ id, value: fresh, created_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      const row = await db.selectFrom('oauth_server_secrets').select('value').where('id', '=', id).executeTakeFirstOrThrow();
      return row.value;
    },
  };

  function connected() {
    return db
      .selectFrom('oauth_grants as g')
      .innerJoin('oauth_clients as c', 'c.id', 'g.client_id')
      .innerJoin('users as u', (join) => join.onRef('u.id', '=', 'g.user_id').onRef('u.org_id', '=', 'g.org_id'))
      .selectAll('g')
      .select(['c.name as client_name', 'u.email', 'u.name as user_name']);
  }
}

export type { AppResource };
