import type { Selectable } from 'kysely';
import type { TasksTable } from '../schema.js';
import type { RepoContext } from './executor.js';

export type TaskRow = Selectable<TasksTable>;

export function tasksRepository({ db, dialect }: RepoContext) {
  return {
    async insert(row: Omit<TaskRow, 'seq'>): Promise<TaskRow> {
      return db.insertInto('tasks').values(row).returningAll().executeTakeFirstOrThrow();
    },

    async findById(orgId: string, taskId: string): Promise<TaskRow | undefined> {
      return db.selectFrom('tasks').selectAll().where('org_id', '=', orgId).where('id', '=', taskId).executeTakeFirst();
    },

    /**
     * Reads the task for a read-then-write inside a transaction: PostgreSQL locks the row so concurrent
     * re-assignments see each other's result; SQLite write transactions already hold the database lock.
     */
    async findByIdForUpdate(orgId: string, taskId: string): Promise<TaskRow | undefined> {
      let query = db.selectFrom('tasks').selectAll().where('org_id', '=', orgId).where('id', '=', taskId);
      if (dialect === 'postgres') query = query.forUpdate();
      return query.executeTakeFirst();
    },

    async listForProject(orgId: string, projectId: string): Promise<TaskRow[]> {
      return db
        .selectFrom('tasks')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('project_id', '=', projectId)
        .orderBy('seq')
        .execute();
    },

    async setAssignee(orgId: string, taskId: string, assigneeId: string | null, at: number): Promise<TaskRow | undefined> {
      return db
        .updateTable('tasks')
        .set({ assignee_id: assigneeId, updated_at: at })
        .where('org_id', '=', orgId)
        .where('id', '=', taskId)
        .returningAll()
        .executeTakeFirst();
    },

    /** A removed member's open assignments become unassigned rather than pointing at nobody. */
    async unassignUser(orgId: string, userId: string, at: number): Promise<void> {
      await db.updateTable('tasks').set({ assignee_id: null, updated_at: at }).where('org_id', '=', orgId).where('assignee_id', '=', userId).execute();
    },
  };
}
