import type { ProjectRow, ProjectStatus, ProjectUpdate } from '../schema.js';
import { toPage, type Page, type RepoContext } from './executor.js';

export function projectsRepository({ db }: RepoContext) {
  return {
    async insert(row: Omit<ProjectRow, 'seq'>): Promise<ProjectRow> {
      return db.insertInto('projects').values(row).returningAll().executeTakeFirstOrThrow();
    },

    async findById(orgId: string, projectId: string): Promise<ProjectRow | undefined> {
      return db
        .selectFrom('projects')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('id', '=', projectId)
        .executeTakeFirst();
    },

    async list(orgId: string, limit: number, beforeSeq: number | null, status: ProjectStatus | null): Promise<Page<ProjectRow>> {
      let query = db.selectFrom('projects').selectAll().where('org_id', '=', orgId);
      if (status !== null) query = query.where('status', '=', status);
      if (beforeSeq !== null) query = query.where('seq', '<', beforeSeq);
      const rows = await query.orderBy('seq', 'desc').limit(limit + 1).execute();
      return toPage(rows, limit);
    },

    async update(orgId: string, projectId: string, changes: ProjectUpdate): Promise<ProjectRow | undefined> {
      return db
        .updateTable('projects')
        .set(changes)
        .where('org_id', '=', orgId)
        .where('id', '=', projectId)
        .returningAll()
        .executeTakeFirst();
    },

    /** Removes the project and everything under it; the caller runs this inside its transaction. */
    async deleteWithChildren(orgId: string, projectId: string): Promise<boolean> {
      await db.deleteFrom('tasks').where('org_id', '=', orgId).where('project_id', '=', projectId).execute();
      await db.deleteFrom('workflows').where('org_id', '=', orgId).where('project_id', '=', projectId).execute();
      const result = await db
        .deleteFrom('projects')
        .where('org_id', '=', orgId)
        .where('id', '=', projectId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
