import { sql, type RawBuilder } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import type { ProjectRole, ProjectRow, ProjectStatus, ProjectUpdate, ProjectVisibility } from '../schema.js';
import { projectVisibleTo } from './project-visibility.js';
import { runsRepository } from './runs-repo.js';
import { toPage, type Executor, type Page, type RepoContext } from './executor.js';
import { prepared, type PreparedQuery } from './prepared.js';

/** What a list page needs: the list item's fields and the keyset position. */
export type ProjectListRow = Pick<ProjectRow, 'seq' | 'id' | 'name' | 'status' | 'visibility' | 'created_at'>;

// Listed, not `*`: on PostgreSQL these are named prepared statements (pg-prepared.ts), and a column added
// by a later migration must not change the result type of a statement a running process has prepared.
const PROJECT_COLUMNS = ['seq', 'id', 'org_id', 'name', 'description', 'status', 'visibility', 'created_at', 'updated_at'] as const satisfies readonly (keyof ProjectRow)[];

// The API's hot paths, compiled once (prepared.ts); one prepared query per shape of the list query.
const insertProject = prepared(
  8,
  (db, id: string, orgId: string, name: string, description: string | null, status: ProjectStatus, visibility: ProjectVisibility, createdAt: number, updatedAt: number) =>
    db
      .insertInto('projects')
      .values({ id, org_id: orgId, name, description, status, visibility, created_at: createdAt, updated_at: updatedAt })
      .returning(PROJECT_COLUMNS),
);

const projectById = prepared(2, (db, orgId: string, projectId: string) =>
  db.selectFrom('projects').select(PROJECT_COLUMNS).where('org_id', '=', orgId).where('id', '=', projectId),
);

const LIST_COLUMNS = ['seq', 'id', 'name', 'status', 'visibility', 'created_at'] as const;

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

/** What a list page filters on; each combination is one prepared query. */
export interface ProjectListFilter {
  status: ProjectStatus | null;
  visibility: ProjectVisibility | null;
  /** The person whose visibility applies (CONTRACT 15); null for those who see every project. */
  viewer: string | null;
}

type ListArgs = unknown[];

/**
 * One prepared query per shape of the list: which of status, visibility, viewer and cursor are given. The
 * arguments come in that order, then the page size; a viewer adds the visibility predicate, which the
 * backward scan of (org_id, seq) checks row by row until the page is full (docs/benchmarks.md, issue 43).
 */
const listQueries = new Map<string, PreparedQuery<ListArgs, ProjectListRow>>();

function listQuery(dialect: SqlDialect, filter: ProjectListFilter, after: boolean): PreparedQuery<ListArgs, ProjectListRow> {
  const shape = { status: filter.status !== null, visibility: filter.visibility !== null, viewer: filter.viewer !== null, after };
  const key = `${dialect}:${shape.status ? 's' : ''}${shape.visibility ? 'v' : ''}${shape.viewer ? 'w' : ''}${after ? 'a' : ''}`;
  let query = listQueries.get(key);
  if (!query) {
    const arity = 2 + Number(shape.status) + Number(shape.visibility) + Number(shape.viewer) + Number(after);
    query = prepared(arity, (db: Executor, ...args: ListArgs) => {
      let i = 0;
      let q = db.selectFrom('projects').select(LIST_COLUMNS).where('org_id', '=', args[i++] as string);
      if (shape.status) q = q.where('status', '=', args[i++] as ProjectStatus);
      if (shape.visibility) q = q.where('visibility', '=', args[i++] as ProjectVisibility);
      if (shape.viewer) q = q.where(projectVisibleTo(args[i++] as string));
      if (after) q = q.where('seq', '<', args[i++] as number);
      const fetch = args[i++] as number;
      return q.orderBy('seq', 'desc').limit(dialect === 'postgres' ? pgLimit(fetch) : fetch);
    });
    listQueries.set(key, query);
  }
  return query;
}

/** A project with the viewer's own role on it, if they are a collaborator. */
export type ProjectWithRole = ProjectRow & { project_role: ProjectRole | null };

// The role as a scalar sub-select, not a LEFT JOIN: SQLite 3.54 runs the join form at five times the cost of
// the plain read by id (21 µs against 4.3; the sub-select is 4.5), PostgreSQL plans both as one index probe.
const projectWithRole = prepared(3, (db, orgId: string, projectId: string, userId: string) =>
  db
    .selectFrom('projects')
    .select(PROJECT_COLUMNS)
    .select((eb) =>
      eb
        .selectFrom('project_collaborators as pc')
        .select('pc.role')
        .whereRef('pc.project_id', '=', 'projects.id')
        .where('pc.user_id', '=', userId)
        .as('project_role'),
    )
    .where('org_id', '=', orgId)
    .where('id', '=', projectId),
);

export function projectsRepository(ctx: RepoContext) {
  const { db } = ctx;
  return {
    async insert(row: Omit<ProjectRow, 'seq' | 'visibility'> & { visibility?: ProjectVisibility }): Promise<ProjectRow> {
      const visibility = row.visibility ?? 'organization';
      const inserted = await insertProject.first(ctx, row.id, row.org_id, row.name, row.description, row.status, visibility, row.created_at, row.updated_at);
      if (!inserted) throw new Error('insert into projects returned no row');
      return inserted;
    },

    findById(orgId: string, projectId: string): Promise<ProjectRow | undefined> {
      return projectById.first(ctx, orgId, projectId);
    },

    async findByIds(orgId: string, projectIds: readonly string[]): Promise<ProjectRow[]> {
      if (projectIds.length === 0) return [];
      return db.selectFrom('projects').selectAll().where('org_id', '=', orgId).where('id', 'in', [...projectIds]).execute();
    },

    /** A project and the user's own project role on it (null: not a collaborator), in one read. */
    findWithRole(orgId: string, projectId: string, userId: string): Promise<ProjectWithRole | undefined> {
      return projectWithRole.first(ctx, orgId, projectId, userId) as Promise<ProjectWithRole | undefined>;
    },

    async list(orgId: string, limit: number, beforeSeq: number | null, filter: ProjectListFilter): Promise<Page<ProjectListRow>> {
      const args: unknown[] = [orgId];
      if (filter.status !== null) args.push(filter.status);
      if (filter.visibility !== null) args.push(filter.visibility);
      if (filter.viewer !== null) args.push(filter.viewer);
      if (beforeSeq !== null) args.push(beforeSeq);
      args.push(limit + 1);
      const rows = await listQuery(ctx.dialect, filter, beforeSeq !== null).all(ctx, ...args);
      return toPage(rows, limit);
    },

    /** The projects a person may see, by name, for pickers (the dashboard's selects); bounded. */
    async visibleNames(orgId: string, viewer: string | null, limit: number): Promise<Pick<ProjectRow, 'id' | 'name' | 'visibility'>[]> {
      let query = db.selectFrom('projects').select(['id', 'name', 'visibility']).where('org_id', '=', orgId);
      if (viewer !== null) query = query.where(projectVisibleTo(viewer));
      return query.orderBy('seq', 'desc').limit(limit).execute();
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
      await db.deleteFrom('project_collaborators').where('org_id', '=', orgId).where('project_id', '=', projectId).execute();
      const result = await db
        .deleteFrom('projects')
        .where('org_id', '=', orgId)
        .where('id', '=', projectId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
