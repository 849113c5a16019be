import type { ProjectCollaboratorRow, ProjectRole, UserRow } from '../schema.js';
import type { RepoContext } from './executor.js';
import { prepared } from './prepared.js';

// On every project created by a person (its creator becomes the manager): on PostgreSQL it travels with the
// transaction's next statement, so a create keeps its three round trips (pg-hot-path.test.ts).
const insertRow = prepared(
  6,
  (db, orgId: string, projectId: string, userId: string, role: ProjectRole, createdAt: number, updatedAt: number) =>
    db.insertInto('project_collaborators').values({ org_id: orgId, project_id: projectId, user_id: userId, role, created_at: createdAt, updated_at: updatedAt }),
  { deferrable: true },
);

/** A collaborator with the user fields a list shows. */
export type CollaboratorListRow = Pick<ProjectCollaboratorRow, 'seq' | 'project_id' | 'user_id' | 'role' | 'created_at'> & Pick<UserRow, 'email' | 'name'>;

/** Project collaborators (CONTRACT 15): one row per (project, user), scoped to the organisation like every repository. */
export function collaboratorsRepository(ctx: RepoContext) {
  const { db } = ctx;
  const listed = (orgId: string, projectId: string) =>
    db
      .selectFrom('project_collaborators as c')
      .innerJoin('users as u', 'u.id', 'c.user_id')
      .select(['c.seq', 'c.project_id', 'c.user_id', 'c.role', 'c.created_at', 'u.email', 'u.name'])
      .where('c.org_id', '=', orgId)
      .where('c.project_id', '=', projectId)
      .orderBy('c.seq', 'desc');
  return {
    async roleOf(orgId: string, projectId: string, userId: string): Promise<ProjectRole | null> {
      const row = await db
        .selectFrom('project_collaborators')
        .select('role')
        .where('org_id', '=', orgId)
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row?.role ?? null;
    },

    /** A page of a project's collaborators, newest first, with their users' e-mail and name. */
    async page(orgId: string, projectId: string, limit: number, beforeSeq: number | null): Promise<CollaboratorListRow[]> {
      const query = listed(orgId, projectId);
      return (beforeSeq === null ? query : query.where('c.seq', '<', beforeSeq)).limit(limit).execute();
    },

    /** Every collaborator of a project (a project has few; the dashboard shows them all). */
    async all(orgId: string, projectId: string): Promise<CollaboratorListRow[]> {
      return listed(orgId, projectId).execute();
    },

    /** The user's role on each project they collaborate on. */
    async rolesOfUser(orgId: string, userId: string): Promise<Map<string, ProjectRole>> {
      const rows = await db.selectFrom('project_collaborators').select(['project_id', 'role']).where('org_id', '=', orgId).where('user_id', '=', userId).execute();
      return new Map(rows.map((r) => [r.project_id, r.role]));
    },

    async find(orgId: string, projectId: string, userId: string): Promise<ProjectCollaboratorRow | undefined> {
      return db
        .selectFrom('project_collaborators')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
    },

    async insert(row: Omit<ProjectCollaboratorRow, 'seq'>): Promise<void> {
      await insertRow.all(ctx, row.org_id, row.project_id, row.user_id, row.role, row.created_at, row.updated_at);
    },

    async setRole(orgId: string, projectId: string, userId: string, role: ProjectRole, at: number): Promise<void> {
      await db
        .updateTable('project_collaborators')
        .set({ role, updated_at: at })
        .where('org_id', '=', orgId)
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId)
        .execute();
    },

    async delete(orgId: string, projectId: string, userId: string): Promise<boolean> {
      const result = await db
        .deleteFrom('project_collaborators')
        .where('org_id', '=', orgId)
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** Which of `userIds` are collaborators of the project. */
    async usersAmong(orgId: string, projectId: string, userIds: readonly string[]): Promise<Set<string>> {
      if (userIds.length === 0) return new Set();
      const rows = await db
        .selectFrom('project_collaborators')
        .select('user_id')
        .where('org_id', '=', orgId)
        .where('project_id', '=', projectId)
        .where('user_id', 'in', [...userIds])
        .execute();
      return new Set(rows.map((r) => r.user_id));
    },

    /** A leaving user's rows, on every project of the organisation. */
    async deleteForUser(orgId: string, userId: string): Promise<void> {
      await db.deleteFrom('project_collaborators').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
    },

    async deleteForProject(orgId: string, projectId: string): Promise<void> {
      await db.deleteFrom('project_collaborators').where('org_id', '=', orgId).where('project_id', '=', projectId).execute();
    },
  };
}
