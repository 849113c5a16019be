import type { ProjectRow, ProjectStatus, ProjectUpdate } from '../schema.js';
import { runsRepository } from './runs-repo.js';
import { toPage, type Page, type RepoContext } from './executor.js';
import { prepared } from './prepared.js';

/** What a list page needs: the list item's fields and the keyset position. */
export type ProjectListRow = Pick<ProjectRow, 'seq' | 'id' | 'name' | 'status' | 'created_at'>;

// The API's hot paths, compiled once (prepared.ts); one prepared query per shape of the list query.
const insertProject = prepared(
  7,
  (db, id: string, orgId: string, name: string, description: string | null, status: ProjectStatus, createdAt: number, updatedAt: number) =>
    db
      .insertInto('projects')
      .values({ id, org_id: orgId, name, description, status, created_at: createdAt, updated_at: updatedAt })
      .returningAll(),
);

const projectById = prepared(2, (db, orgId: string, projectId: string) =>
  db.selectFrom('projects').selectAll().where('org_id', '=', orgId).where('id', '=', projectId),
);

const LIST_COLUMNS = ['seq', 'id', 'name', 'status', 'created_at'] as const;
const listFirst = prepared(2, (db, orgId: string, fetch: number) =>
  db.selectFrom('projects').select(LIST_COLUMNS).where('org_id', '=', orgId).orderBy('seq', 'desc').limit(fetch),
);
const listAfter = prepared(3, (db, orgId: string, beforeSeq: number, fetch: number) =>
  db.selectFrom('projects').select(LIST_COLUMNS).where('org_id', '=', orgId).where('seq', '<', beforeSeq).orderBy('seq', 'desc').limit(fetch),
);
const listByStatusFirst = prepared(3, (db, orgId: string, status: ProjectStatus, fetch: number) =>
  db.selectFrom('projects').select(LIST_COLUMNS).where('org_id', '=', orgId).where('status', '=', status).orderBy('seq', 'desc').limit(fetch),
);
const listByStatusAfter = prepared(4, (db, orgId: string, status: ProjectStatus, beforeSeq: number, fetch: number) =>
  db
    .selectFrom('projects')
    .select(LIST_COLUMNS)
    .where('org_id', '=', orgId)
    .where('status', '=', status)
    .where('seq', '<', beforeSeq)
    .orderBy('seq', 'desc')
    .limit(fetch),
);

export function projectsRepository(ctx: RepoContext) {
  const { db } = ctx;
  return {
    async insert(row: Omit<ProjectRow, 'seq'>): Promise<ProjectRow> {
      const inserted = await insertProject.first(ctx, row.id, row.org_id, row.name, row.description, row.status, row.created_at, row.updated_at);
      if (!inserted) throw new Error('insert into projects returned no row');
      return inserted;
    },

    async findById(orgId: string, projectId: string): Promise<ProjectRow | undefined> {
      return projectById.first(ctx, orgId, projectId);
    },

    async list(orgId: string, limit: number, beforeSeq: number | null, status: ProjectStatus | null): Promise<Page<ProjectListRow>> {
      const fetch = limit + 1;
      const rows =
        status === null
          ? beforeSeq === null
            ? await listFirst.all(ctx, orgId, fetch)
            : await listAfter.all(ctx, orgId, beforeSeq, fetch)
          : beforeSeq === null
            ? await listByStatusFirst.all(ctx, orgId, status, fetch)
            : await listByStatusAfter.all(ctx, orgId, status, beforeSeq, fetch);
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
      await runsRepository(ctx).deleteWhere(orgId, { projectId });
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
