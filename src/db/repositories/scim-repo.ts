import type { Selectable, SelectQueryBuilder } from 'kysely';
import type { DB, ProjectRole, ScimGroupRole, ScimGroupRow, ScimTokenRow, UserRow } from '../schema.js';
import type { RepoContext } from './executor.js';

/** What a SCIM list asks of users: each field compared for equality (`userName` case-insensitively, by the caller). */
export interface ScimUserQuery {
  emailNormalized?: string;
  externalId?: string;
  id?: string;
}

export interface ScimGroupQuery {
  displayNameNormalized?: string;
  externalId?: string;
  id?: string;
}

export interface GroupMapping {
  groupId: string;
  orgRole: ScimGroupRole | null;
  projects: { projectId: string; role: ProjectRole }[];
}

/** A SCIM list's page (by index, oldest first) and how many rows match in all: `totalResults`. */
async function countedPage<T extends 'users' | 'scim_groups'>(base: SelectQueryBuilder<DB, T, object>, offset: number, limit: number) {
  const [count, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    limit === 0 ? Promise.resolve([]) : base.selectAll().orderBy('seq').offset(offset).limit(limit).execute(),
  ]);
  return { total: Number((count as { n: number | string }).n), rows: rows as unknown as Selectable<DB[T]>[] };
}

/** SCIM tokens, groups, their members and the owner's mapping of groups to roles (CONTRACT 16); always within one organisation. */
export function scimRepository({ db }: RepoContext) {
  return {
    async insertToken(row: Omit<ScimTokenRow, 'seq'>): Promise<ScimTokenRow> {
      return db.insertInto('scim_tokens').values(row).returningAll().executeTakeFirstOrThrow();
    },

    /** A live token by the hash of its secret: tokens are global and unguessable, so the hash alone finds it. */
    async findLiveTokenByHash(tokenHash: string): Promise<(ScimTokenRow & { org_state: string }) | undefined> {
      return db
        .selectFrom('scim_tokens as t')
        .innerJoin('organizations as o', 'o.id', 't.org_id')
        .selectAll('t')
        .select('o.state as org_state')
        .where('t.token_hash', '=', tokenHash)
        .where('t.revoked_at', 'is', null)
        .executeTakeFirst();
    },

    async liveTokens(orgId: string): Promise<ScimTokenRow[]> {
      return db.selectFrom('scim_tokens').selectAll().where('org_id', '=', orgId).where('revoked_at', 'is', null).orderBy('seq', 'desc').execute();
    },

    async revokeToken(orgId: string, tokenId: string, at: number): Promise<ScimTokenRow | undefined> {
      return db
        .updateTable('scim_tokens')
        .set({ revoked_at: at })
        .where('org_id', '=', orgId)
        .where('id', '=', tokenId)
        .where('revoked_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
    },

    async touchToken(orgId: string, tokenId: string, at: number): Promise<void> {
      await db.updateTable('scim_tokens').set({ last_used_at: at }).where('org_id', '=', orgId).where('id', '=', tokenId).execute();
    },

    /** A page of the organisation's members for a SCIM list, oldest first (SCIM pages by index), and how many match. */
    async users(orgId: string, query: ScimUserQuery, offset: number, limit: number): Promise<{ total: number; rows: UserRow[] }> {
      let base = db.selectFrom('users').where('org_id', '=', orgId);
      if (query.emailNormalized !== undefined) base = base.where('email_normalized', '=', query.emailNormalized);
      if (query.externalId !== undefined) base = base.where('external_id', '=', query.externalId);
      if (query.id !== undefined) base = base.where('id', '=', query.id);
      return countedPage(base, offset, limit);
    },

    async groups(orgId: string, query: ScimGroupQuery, offset: number, limit: number): Promise<{ total: number; rows: ScimGroupRow[] }> {
      let base = db.selectFrom('scim_groups').where('org_id', '=', orgId);
      if (query.displayNameNormalized !== undefined) base = base.where('display_name_normalized', '=', query.displayNameNormalized);
      if (query.externalId !== undefined) base = base.where('external_id', '=', query.externalId);
      if (query.id !== undefined) base = base.where('id', '=', query.id);
      return countedPage(base, offset, limit);
    },

    async allGroups(orgId: string): Promise<ScimGroupRow[]> {
      return db.selectFrom('scim_groups').selectAll().where('org_id', '=', orgId).orderBy('display_name_normalized').execute();
    },

    async findGroup(orgId: string, groupId: string): Promise<ScimGroupRow | undefined> {
      return db.selectFrom('scim_groups').selectAll().where('org_id', '=', orgId).where('id', '=', groupId).executeTakeFirst();
    },

    async findGroupByName(orgId: string, displayNameNormalized: string): Promise<ScimGroupRow | undefined> {
      return db.selectFrom('scim_groups').selectAll().where('org_id', '=', orgId).where('display_name_normalized', '=', displayNameNormalized).executeTakeFirst();
    },

    async insertGroup(row: Omit<ScimGroupRow, 'seq'>): Promise<ScimGroupRow> {
      return db.insertInto('scim_groups').values(row).returningAll().executeTakeFirstOrThrow();
    },

    async updateGroup(orgId: string, groupId: string, changes: Partial<Pick<ScimGroupRow, 'display_name' | 'display_name_normalized' | 'external_id' | 'org_role' | 'updated_at'>>): Promise<ScimGroupRow | undefined> {
      return db.updateTable('scim_groups').set(changes).where('org_id', '=', orgId).where('id', '=', groupId).returningAll().executeTakeFirst();
    },

    async deleteGroup(orgId: string, groupId: string): Promise<void> {
      await db.deleteFrom('scim_group_members').where('org_id', '=', orgId).where('group_id', '=', groupId).execute();
      await db.deleteFrom('scim_group_projects').where('org_id', '=', orgId).where('group_id', '=', groupId).execute();
      await db.deleteFrom('scim_groups').where('org_id', '=', orgId).where('id', '=', groupId).execute();
    },

    /** The members of these groups, as (group, user, e-mail) in the order they were added. */
    async membersOf(orgId: string, groupIds: readonly string[]): Promise<{ group_id: string; user_id: string; email: string }[]> {
      if (groupIds.length === 0) return [];
      return db
        .selectFrom('scim_group_members as m')
        .innerJoin('users as u', 'u.id', 'm.user_id')
        .select(['m.group_id', 'm.user_id', 'u.email'])
        .where('m.org_id', '=', orgId)
        .where('m.group_id', 'in', [...groupIds])
        .orderBy('m.seq')
        .execute();
    },

    async addMembers(orgId: string, groupId: string, userIds: readonly string[], at: number): Promise<void> {
      // In slices: a group pushed with thousands of members would pass SQLite's limit of bound values.
      for (let i = 0; i < userIds.length; i += 500) {
        await db
          .insertInto('scim_group_members')
          .values(userIds.slice(i, i + 500).map((userId) => ({ org_id: orgId, group_id: groupId, user_id: userId, created_at: at })))
          .onConflict((oc) => oc.columns(['group_id', 'user_id']).doNothing())
          .execute();
      }
    },

    async removeMembers(orgId: string, groupId: string, userIds: readonly string[]): Promise<void> {
      if (userIds.length === 0) return;
      await db.deleteFrom('scim_group_members').where('org_id', '=', orgId).where('group_id', '=', groupId).where('user_id', 'in', [...userIds]).execute();
    },

    /** The ids among `userIds` that are members of the organisation (any status). */
    async knownUsers(orgId: string, userIds: readonly string[]): Promise<Set<string>> {
      if (userIds.length === 0) return new Set();
      const rows = await db.selectFrom('users').select('id').where('org_id', '=', orgId).where('id', 'in', [...userIds]).execute();
      return new Set(rows.map((r) => r.id));
    },

    /** The groups each of these users is in (the users' role is derived from them). */
    async groupsOfUsers(orgId: string, userIds: readonly string[]): Promise<Map<string, string[]>> {
      const byUser = new Map<string, string[]>(userIds.map((id) => [id, []]));
      if (userIds.length === 0) return byUser;
      const rows = await db.selectFrom('scim_group_members').select(['user_id', 'group_id']).where('org_id', '=', orgId).where('user_id', 'in', [...userIds]).execute();
      for (const row of rows) byUser.get(row.user_id)?.push(row.group_id);
      return byUser;
    },

    /** Every group's mapping: its organisation role and its project roles. */
    async mappings(orgId: string): Promise<Map<string, GroupMapping>> {
      const [groups, projects] = await Promise.all([
        db.selectFrom('scim_groups').select(['id', 'org_role']).where('org_id', '=', orgId).execute(),
        db.selectFrom('scim_group_projects').select(['group_id', 'project_id', 'role']).where('org_id', '=', orgId).orderBy('seq').execute(),
      ]);
      const map = new Map<string, GroupMapping>(groups.map((g) => [g.id, { groupId: g.id, orgRole: g.org_role, projects: [] }]));
      for (const p of projects) map.get(p.group_id)?.projects.push({ projectId: p.project_id, role: p.role });
      return map;
    },

    async setProjectRole(orgId: string, groupId: string, projectId: string, role: ProjectRole, at: number): Promise<void> {
      await db
        .insertInto('scim_group_projects')
        .values({ org_id: orgId, group_id: groupId, project_id: projectId, role, created_at: at })
        .onConflict((oc) => oc.columns(['group_id', 'project_id']).doUpdateSet({ role }))
        .execute();
    },

    async removeProjectRole(orgId: string, groupId: string, projectId: string): Promise<void> {
      await db.deleteFrom('scim_group_projects').where('org_id', '=', orgId).where('group_id', '=', groupId).where('project_id', '=', projectId).execute();
    },

    /** The organisation's provisioned members (a change of the default role reaches them all). */
    async provisionedUserIds(orgId: string): Promise<string[]> {
      const rows = await db.selectFrom('users').select('id').where('org_id', '=', orgId).where('provisioned_at', 'is not', null).execute();
      return rows.map((r) => r.id);
    },
  };
}
