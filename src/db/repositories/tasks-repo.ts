import { sql, type Updateable } from 'kysely';
import type { TaskRow, TasksTable } from '../schema.js';
import type { RepoContext } from './executor.js';
import { readQuery } from './prepared.js';
import { underVisibleProject } from './project-visibility.js';

export type { TaskRow };

export interface TaskFilter {
  assigneeId?: string | undefined;
  projectId?: string | undefined;
  status?: TaskRow['status'] | undefined;
  /** The person whose visibility applies (CONTRACT 15); absent or null for those who see every project. */
  viewer?: string | null | undefined;
}

// Listed, not `*`: a column added by a later migration must not change the rows a prepared text returns.
const TASK_COLUMNS = [
  'seq', 'id', 'org_id', 'project_id', 'workflow_id', 'run_id', 'run_step', 'title', 'description', 'kind', 'status', 'decision',
  'assignee_id', 'due_at', 'completed_by', 'completed_at', 'created_at', 'updated_at',
] as const;

export function tasksRepository(ctx: RepoContext) {
  const { db, dialect } = ctx;
  return {
    async insert(row: Omit<TaskRow, 'seq'>): Promise<TaskRow> {
      return db.insertInto('tasks').values(row).returningAll().executeTakeFirstOrThrow();
    },

    async findById(orgId: string, taskId: string): Promise<TaskRow | undefined> {
      return db.selectFrom('tasks').selectAll().where('org_id', '=', orgId).where('id', '=', taskId).executeTakeFirst();
    },

    /**
     * Reads the task for a read-then-write inside a transaction: PostgreSQL locks the row so concurrent
     * changes see each other's result; SQLite write transactions already hold the database lock.
     */
    async findByIdForUpdate(orgId: string, taskId: string): Promise<TaskRow | undefined> {
      let query = db.selectFrom('tasks').selectAll().where('org_id', '=', orgId).where('id', '=', taskId);
      if (dialect === 'postgres') query = query.forUpdate();
      return query.executeTakeFirst();
    },

    async findByIds(orgId: string, taskIds: readonly string[]): Promise<TaskRow[]> {
      if (taskIds.length === 0) return [];
      return db.selectFrom('tasks').selectAll().where('org_id', '=', orgId).where('id', 'in', taskIds).execute();
    },

    /** A project's tasks, open ones first, then newest first; bounded. */
    async listForProject(orgId: string, projectId: string, limit: number): Promise<TaskRow[]> {
      return db
        .selectFrom('tasks')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('project_id', '=', projectId)
        .orderBy((eb) => eb.case().when('status', '=', 'open').then(0).else(1).end())
        .orderBy('seq', 'desc')
        .limit(limit)
        .execute();
    },

    /** How many open tasks a user has, and how many of them are past due (the overview's "Your tasks"). */
    async countOpenForAssignee(orgId: string, userId: string, now: number, viewer: string | null): Promise<{ open: number; overdue: number }> {
      let query = db
        .selectFrom('tasks')
        .select((eb) => [eb.fn.countAll<number | string>().as('open'), eb.fn.sum<number | string | null>(sql`CASE WHEN due_at < ${now} THEN 1 ELSE 0 END`).as('overdue')])
        .where('org_id', '=', orgId)
        .where('assignee_id', '=', userId)
        .where('status', '=', 'open');
      if (viewer !== null) query = query.where(underVisibleProject('tasks.project_id', viewer));
      const row = await query.executeTakeFirstOrThrow();
      return { open: Number(row.open), overdue: Number(row.overdue ?? 0) };
    },

    /**
     * A user's open tasks as My tasks lists them (DASHBOARD 1): by due date, so overdue ones come first, then
     * those without one; oldest first within each (tasks_assignee_idx finds them; a person's open tasks are few).
     */
    async listOpenForAssignee(orgId: string, userId: string, limit: number, viewer: string | null): Promise<TaskRow[]> {
      let query = db.selectFrom('tasks').selectAll().where('org_id', '=', orgId).where('assignee_id', '=', userId).where('status', '=', 'open');
      if (viewer !== null) query = query.where(underVisibleProject('tasks.project_id', viewer));
      return query
        .orderBy(sql`CASE WHEN due_at IS NULL THEN 1 ELSE 0 END`)
        .orderBy('due_at')
        .orderBy('seq')
        .limit(limit)
        .execute();
    },

    /** A page of tasks, newest first, under the API's filters (each has an index ending in `seq`). */
    async page(orgId: string, filter: TaskFilter, limit: number, beforeSeq: number | null): Promise<TaskRow[]> {
      let query = db.selectFrom('tasks').select(TASK_COLUMNS).where('org_id', '=', orgId);
      if (filter.assigneeId !== undefined) query = query.where('assignee_id', '=', filter.assigneeId);
      if (filter.projectId !== undefined) query = query.where('project_id', '=', filter.projectId);
      if (filter.status !== undefined) query = query.where('status', '=', filter.status);
      if (filter.viewer) query = query.where(underVisibleProject('tasks.project_id', filter.viewer));
      if (beforeSeq !== null) query = query.where('seq', '<', beforeSeq);
      return readQuery(ctx, query.orderBy('seq', 'desc').limit(limit));
    },

    async update(orgId: string, taskId: string, changes: Updateable<TasksTable>): Promise<TaskRow | undefined> {
      return db.updateTable('tasks').set(changes).where('org_id', '=', orgId).where('id', '=', taskId).returningAll().executeTakeFirst();
    },

    /** A run that ends early cancels its open tasks (no event: the run's own event says why). */
    async cancelOpenForRun(orgId: string, runId: string, at: number): Promise<void> {
      await db
        .updateTable('tasks')
        .set({ status: 'cancelled', completed_at: at, updated_at: at })
        .where('org_id', '=', orgId)
        .where('run_id', '=', runId)
        .where('status', '=', 'open')
        .execute();
    },

    /** A removed member's open assignments become unassigned rather than pointing at nobody. */
    async unassignUser(orgId: string, userId: string, at: number): Promise<void> {
      await db
        .updateTable('tasks')
        .set({ assignee_id: null, updated_at: at })
        .where('org_id', '=', orgId)
        .where('assignee_id', '=', userId)
        .where('status', '=', 'open')
        .execute();
    },

    /** The users named by a project's open tasks (the check before it goes private). */
    async openAssignees(orgId: string, projectId: string): Promise<string[]> {
      const rows = await db
        .selectFrom('tasks')
        .select('assignee_id')
        .distinct()
        .where('org_id', '=', orgId)
        .where('project_id', '=', projectId)
        .where('status', '=', 'open')
        .where('assignee_id', 'is not', null)
        .execute();
      return rows.map((r) => r.assignee_id!);
    },

    /** A collaborator leaves a private project: their open tasks there become unassigned (no event). */
    async unassignUserInProject(orgId: string, projectId: string, userId: string, at: number): Promise<number> {
      const result = await db
        .updateTable('tasks')
        .set({ assignee_id: null, updated_at: at })
        .where('org_id', '=', orgId)
        .where('project_id', '=', projectId)
        .where('assignee_id', '=', userId)
        .where('status', '=', 'open')
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** Tasks of finished runs outlive a deleted workflow as plain tasks. */
    async detachWorkflow(orgId: string, workflowId: string, at: number): Promise<void> {
      await db
        .updateTable('tasks')
        .set({ workflow_id: null, run_id: null, run_step: null, updated_at: at })
        .where('org_id', '=', orgId)
        .where('workflow_id', '=', workflowId)
        .execute();
    },
  };
}
