import { sql, type RawBuilder } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import type { ProjectRow, ProjectStatus, ProjectUpdate } from '../schema.js';
import { runsRepository } from './runs-repo.js';
import { toPage, type Executor, type Page, type RepoContext } from './executor.js';
import { prepared, type PreparedQuery } from './prepared.js';

/** What a list page needs: the list item's fields and the keyset position. */
export type ProjectListRow = Pick<ProjectRow, 'seq' | 'id' | 'name' | 'status' | 'created_at'>;

// Listed, not `*`: on PostgreSQL these are named prepared statements (pg-prepared.ts), and a column added
// by a later migration must not change the result type of a statement a running process has prepared.
const PROJECT_COLUMNS = ['seq', 'id', 'org_id', 'name', 'description', 'status', 'created_at', 'updated_at'] as const satisfies readonly (keyof ProjectRow)[];

// The API's hot paths, compiled once (prepared.ts); one prepared query per shape of the list query.
const insertProject = prepared(
  7,
  (db, id: string, orgId: string, name: string, description: string | null, status: ProjectStatus, createdAt: number, updatedAt: number) =>
    db
      .insertInto('projects')
      .values({ id, org_id: orgId, name, description, status, created_at: createdAt, updated_at: updatedAt })
      .returning(PROJECT_COLUMNS),
);

const projectById = prepared(2, (db, orgId: string, projectId: string) =>
  db.selectFrom('projects').select(PROJECT_COLUMNS).where('org_id', '=', orgId).where('id', '=', projectId),
);

const LIST_COLUMNS = ['seq', 'id', 'name', 'status', 'created_at'] as const;

/**
 * The page size. On PostgreSQL it is written `LIMIT (SELECT $n)`: the planner cannot see through the
 * sub-select, so it plans for an unknown limit (a tenth of the rows) and picks the plan that starts
 * fastest, the backward scan of the (org_id, [status,] seq) index that stops after one page, whether or
 * not the table has statistics. With a literal limit and no statistics (a fresh database, before the
 * first ANALYZE) it estimates an organisation at 0.5% of the table, fewer rows than one page, and
 * prefers a bitmap scan of all the organisation's rows plus a sort. docs/decisions.md, issue 11.
 */
type PageLimit = number | RawBuilder<number>;
const pgLimit = (fetch: number): PageLimit => sql<number>`(select cast(${fetch} as bigint))`;

const listFirstQuery = (db: Executor, orgId: string, limit: PageLimit) =>
  db.selectFrom('projects').select(LIST_COLUMNS).where('org_id', '=', orgId).orderBy('seq', 'desc').limit(limit);
const listAfterQuery = (db: Executor, orgId: string, beforeSeq: number, limit: PageLimit) =>
  db.selectFrom('projects').select(LIST_COLUMNS).where('org_id', '=', orgId).where('seq', '<', beforeSeq).orderBy('seq', 'desc').limit(limit);
const listByStatusFirstQuery = (db: Executor, orgId: string, status: ProjectStatus, limit: PageLimit) =>
  db.selectFrom('projects').select(LIST_COLUMNS).where('org_id', '=', orgId).where('status', '=', status).orderBy('seq', 'desc').limit(limit);
const listByStatusAfterQuery = (db: Executor, orgId: string, status: ProjectStatus, beforeSeq: number, limit: PageLimit) =>
  db
    .selectFrom('projects')
    .select(LIST_COLUMNS)
    .where('org_id', '=', orgId)
    .where('status', '=', status)
    .where('seq', '<', beforeSeq)
    .orderBy('seq', 'desc')
    .limit(limit);

const listFirst: Record<SqlDialect, PreparedQuery<[string, number], ProjectListRow>> = {
  sqlite: prepared(2, (db, orgId: string, fetch: number) => listFirstQuery(db, orgId, fetch)),
  postgres: prepared(2, (db, orgId: string, fetch: number) => listFirstQuery(db, orgId, pgLimit(fetch))),
};
const listAfter: Record<SqlDialect, PreparedQuery<[string, number, number], ProjectListRow>> = {
  sqlite: prepared(3, (db, orgId: string, beforeSeq: number, fetch: number) => listAfterQuery(db, orgId, beforeSeq, fetch)),
  postgres: prepared(3, (db, orgId: string, beforeSeq: number, fetch: number) => listAfterQuery(db, orgId, beforeSeq, pgLimit(fetch))),
};
const listByStatusFirst: Record<SqlDialect, PreparedQuery<[string, ProjectStatus, number], ProjectListRow>> = {
  sqlite: prepared(3, (db, orgId: string, status: ProjectStatus, fetch: number) => listByStatusFirstQuery(db, orgId, status, fetch)),
  postgres: prepared(3, (db, orgId: string, status: ProjectStatus, fetch: number) => listByStatusFirstQuery(db, orgId, status, pgLimit(fetch))),
};
const listByStatusAfter: Record<SqlDialect, PreparedQuery<[string, ProjectStatus, number, number], ProjectListRow>> = {
  sqlite: prepared(4, (db, orgId: string, status: ProjectStatus, beforeSeq: number, fetch: number) =>
    listByStatusAfterQuery(db, orgId, status, beforeSeq, fetch),
  ),
  postgres: prepared(4, (db, orgId: string, status: ProjectStatus, beforeSeq: number, fetch: number) =>
    listByStatusAfterQuery(db, orgId, status, beforeSeq, pgLimit(fetch)),
  ),
};

export function projectsRepository(ctx: RepoContext) {
  const { db } = ctx;
  return {
    async insert(row: Omit<ProjectRow, 'seq'>): Promise<ProjectRow> {
      const inserted = await insertProject.first(ctx, row.id, row.org_id, row.name, row.description, row.status, row.created_at, row.updated_at);
      if (!inserted) throw new Error('insert into projects returned no row');
      return inserted;
    },

    findById(orgId: string, projectId: string): Promise<ProjectRow | undefined> {
      return projectById.first(ctx, orgId, projectId);
    },

    async list(orgId: string, limit: number, beforeSeq: number | null, status: ProjectStatus | null): Promise<Page<ProjectListRow>> {
      const fetch = limit + 1;
      const rows =
        status === null
          ? beforeSeq === null
            ? await listFirst[ctx.dialect].all(ctx, orgId, fetch)
            : await listAfter[ctx.dialect].all(ctx, orgId, beforeSeq, fetch)
          : beforeSeq === null
            ? await listByStatusFirst[ctx.dialect].all(ctx, orgId, status, fetch)
            : await listByStatusAfter[ctx.dialect].all(ctx, orgId, status, beforeSeq, fetch);
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
